/* SPDX-License-Identifier: MIT */
/* The breakpoint system calls of user tasks. */
#ifndef DR_SYSCALL_H
#define DR_SYSCALL_H

/* Register SYSCALL_DR_INSTALL, _UNINSTALL, _READ_HITS and _SET_HANDLER (arch/x86/user-abi.h). */
void dr_syscalls_init(void);

#endif
