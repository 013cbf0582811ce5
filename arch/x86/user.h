/* SPDX-License-Identifier: MIT */
/* Entering ring 3, and the .user_text section that user address spaces map. */
#ifndef ARCH_X86_USER_H
#define ARCH_X86_USER_H

#include <stdint.h>

#include "arch/x86/regs.h"
#include "arch/x86/user-abi.h"

/*
 * A user task's first frame: ring-3 selectors, rip, rsp, rdi = arg, RFLAGS.IF set and every other
 * register 0. It sits where every later entry from ring 3 puts its frame (the top of the task's
 * kernel stack), so that switch hooks can edit it (TF) before the task first runs.
 */
void user_frame_init(struct cpu_regs *frame, uint64_t rip, uint64_t rsp, uint64_t arg);

/*
 * Make frame return to rip in 64-bit ring 3, with the 64-bit user selectors, whatever mode the
 * task was in (compatibility mode through GDT_USER_CODE32): as Linux enters a 64-bit signal
 * handler with __USER_CS.
 */
void user_frame_redirect(struct cpu_regs *frame, uint64_t rip);

/*
 * IRET to ring 3 through frame. The caller has loaded the task's CR3 and TSS.RSP0, and turned
 * interrupts off. Does not return: the task comes back only by an interrupt, an exception or a
 * system call.
 */
void __attribute__((noreturn)) return_to_user_mode(struct cpu_regs *frame);

/* The .user_text section: mapped at USER_TEXT_BASE in every user address space. */
extern const char __user_text_start[], __user_text_end[];

/* Where a .user_text symbol appears in user space. */
static inline uint64_t user_text_address(const void *symbol)
{
	return USER_TEXT_BASE + (uint64_t)((const char *)symbol - __user_text_start);
}

/*
 * The kernel's own code in .user_text (arch/x86/user_gate.asm): every user program's system
 * calls go through user_syscall_gate (patched by syscall_use_trap()); user_exit(code) exits with
 * code. The tests' programs are in tests/kernel/lib/user_programs.h.
 */
extern const char user_exit[];

#endif
