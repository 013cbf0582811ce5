/* SPDX-License-Identifier: MIT */
/* The user-mode ABI: address layout and the int 0x80 system call (numbers used by user code). */
#ifndef ARCH_X86_USER_ABI_H
#define ARCH_X86_USER_ABI_H

/*
 * SYSCALL with rax = number and rdi, rsi, rdx = arguments; the result comes back in rax, rcx
 * and r11 are clobbered (by the instruction), every other register is preserved. Numbers are
 * fixed here because arch/x86/user_probes.asm uses them; sched/syscall.c implements them. Keep
 * arch/x86/user-abi.inc in step. VECTOR_SYSCALL is what the entry records as the frame's vector;
 * it is not an IDT gate.
 */
#define VECTOR_SYSCALL 0x80
#define SYSCALL_YIELD 0
#define SYSCALL_EXIT 1
#define SYSCALL_WRITE 2 /* rdi = user address, rsi = length: one console diagnostic line */
#define SYSCALL_SLEEP 3 /* rdi = milliseconds */
#define SYSCALL_GET_TASK_ID 4
#define SYSCALL_COUNT 5

/* Lower-half layout of every user address space (the upper half is the kernel's). */
#define USER_TEXT_BASE 0x0000000000400000ul /* .user_text, read-only, shared */
#define USER_DATA_BASE 0x0000000010000000ul /* per-task data pages, read-write */
#define USER_STACK_TOP 0x0000000020000000ul /* per-task stack pages below this */

#endif
