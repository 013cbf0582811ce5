/* SPDX-License-Identifier: MIT */
/* The SYSCALL instruction's entry into the kernel (SDM Vol. 2B SYSCALL). */
#ifndef ARCH_X86_SYSCALL_H
#define ARCH_X86_SYSCALL_H

#include <stdbool.h>

#include "arch/x86/regs.h"

/*
 * Program EFER.SCE, STAR, LSTAR and SFMASK on the calling CPU. A SYSCALL from ring 3 then runs
 * the handler registered for rax on the task's kernel stack (this_cpu()->kernel_stack_top) with
 * a struct cpu_regs, interrupts off; its return value goes to rax and the task returns to ring 3
 * by IRET with the frame as the handler left it. (INT n from ring 3 raises #UD on one platform,
 * docs/platforms.md, so the ABI uses SYSCALL.) An unknown number returns SYSCALL_ERROR_NO_SYSCALL.
 */
void syscall_init_cpu(void);

/* The implementation of system call number (arch/x86/user-abi.h); subsystems register theirs. */
typedef long (*syscall_handler)(struct cpu_regs *regs);
void syscall_register(unsigned int number, syscall_handler handler);

/*
 * Turn user_syscall_gate's SYSCALL into UD2 and take system calls through the #UD they raise:
 * for platforms where SYSCALL from ring 3 never reaches ring 0 (docs/platforms.md). The handler
 * then sees vector #UD and the same registers.
 */
void syscall_use_trap(void);
bool syscall_uses_trap(void);

/* Called from arch/x86/syscall_entry.asm only. */
void handle_syscall(struct cpu_regs *regs);

#endif
