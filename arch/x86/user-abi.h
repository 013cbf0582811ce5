/* SPDX-License-Identifier: MIT */
/* The user-mode ABI: address layout and the SYSCALL system call (numbers used by user code). */
#ifndef ARCH_X86_USER_ABI_H
#define ARCH_X86_USER_ABI_H

/*
 * SYSCALL with rax = number and rdi, rsi, rdx = arguments; the result comes back in rax, rcx
 * and r11 are clobbered (by the instruction), every other register is preserved. Numbers are
 * fixed here because user code uses them (arch/x86/user_gate.asm, the tests' user programs);
 * sched/syscall.c implements them. Keep arch/x86/user-abi.inc in step. VECTOR_SYSCALL is what the
 * entry records as the frame's vector; it is not an IDT gate. The number and every argument are
 * read at their full 64-bit width: high bits are never dropped, so a value too large for its
 * argument is an error.
 */
#define VECTOR_SYSCALL 0x80
#define SYSCALL_YIELD 0
#define SYSCALL_EXIT 1
#define SYSCALL_WRITE 2 /* rdi = user address, rsi = length: one console diagnostic line */
#define SYSCALL_SLEEP 3 /* rdi = milliseconds; too many for 64 bits of TSC: until woken */
#define SYSCALL_GET_TASK_ID 4
#define SYSCALL_DR_INSTALL 5 /* rdi = address, rsi = enum dr_type, rdx = length: slot or -error */
#define SYSCALL_DR_UNINSTALL 6 /* rdi = slot: 0 or -error */
/* rdi = struct dr_hit array, rsi = capacity: hits copied; a hit taken in the kernel has rip 0.
 * Hits that do not reach the buffer (it faults part-way) stay for the next call. */
#define SYSCALL_DR_READ_HITS 7
#define SYSCALL_DR_SET_HANDLER 8 /* rdi = user handler for breakpoint hits, 0 for none */
#define SYSCALL_COUNT 9

/* Error returns (negative, in rax). */
#define SYSCALL_ERROR_FAULT (-14l) /* a bad user address */
#define SYSCALL_ERROR_INVALID (-22l)
#define SYSCALL_ERROR_NO_SYSCALL (-38l) /* an unknown number */

/* Lower-half layout of every user address space (the upper half is the kernel's). */
#define USER_SPACE_END 0x0000800000000000ul /* the first address that is not the user's */
#define USER_TEXT_BASE 0x0000000000400000ul /* .user_text, read-only, shared */
#define USER_DATA_BASE 0x0000000010000000ul /* per-task data pages, read-write */
#define USER_STACK_TOP 0x0000000020000000ul /* per-task stack pages below this */
/* A task's Debug Store, read-only: the DS area, then its BTS and PEBS buffers (ds/ds.h). */
#define USER_DS_BASE 0x0000000030000000ul
/* A task's self-monitoring page, read-only: where its counters are (pmu/pmu.h pmu_user_page). */
#define USER_PMU_BASE 0x0000000040000000ul
#define USER_DS_BTS_OFFSET 0x100000ul
#define USER_DS_PEBS_OFFSET 0x200000ul

#endif
