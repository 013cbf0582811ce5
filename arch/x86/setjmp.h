/* SPDX-License-Identifier: MIT */
/* Non-local jumps, for aborting a test from an exception or a timer tick. */
#ifndef ARCH_X86_SETJMP_H
#define ARCH_X86_SETJMP_H

#include <stdint.h>

/* Layout fixed by arch/x86/setjmp.asm: callee-saved registers, then rsp and rip. */
struct jump_buffer {
	uint64_t rbx, rbp, r12, r13, r14, r15, rsp, rip;
};

/* Returns 0 when called, and the value given to longjmp() when jumped back to. */
int setjmp(struct jump_buffer *buffer) __attribute__((returns_twice));
/* value must not be 0. RFLAGS (IF included) is not restored: the caller sets it. */
void longjmp(struct jump_buffer *buffer, int value) __attribute__((noreturn));

#endif
