/* SPDX-License-Identifier: MIT */
/* Kernel-stack context switching between tasks (arch/x86/switch.asm). */
#ifndef ARCH_X86_CONTEXT_H
#define ARCH_X86_CONTEXT_H

#include <stdint.h>

/*
 * What switch_context() leaves on a stack it switches away from, lowest address first: the
 * callee-saved registers in the reverse of their push order (rbp, rbx, r12, r13, r14, r15 are
 * pushed), then the return address. Everything else is caller-saved and already on the stack.
 */
struct context {
	uint64_t r15, r14, r13, r12, rbx, rbp;
	uint64_t rip;
};

/*
 * Save the callee-saved registers on the current stack, store the stack pointer in *save,
 * switch to load and return into whatever it saved. Interrupts must be off.
 */
void switch_context(struct context **save, struct context *load);

/*
 * Build the first context of a new stack below stack_top: switching to it calls entry(arg)
 * with interrupts still off. entry must never return.
 */
struct context *context_init(uint64_t stack_top, void (*entry)(void *), void *arg);

/*
 * Leave the current stack for good: call fn on the stack below stack_top (16-byte aligned), with
 * no frame to return to. Nothing on the old stack may be used after.
 */
static inline void __attribute__((noreturn)) run_on_stack(uint64_t stack_top, void (*fn)(void))
{
	asm volatile("mov %0, %%rsp\n\t"
		     "xor %%ebp, %%ebp\n\t"
		     "call *%1\n\t"
		     "ud2"
		     :
		     : "r"(stack_top), "r"(fn)
		     : "memory");
	__builtin_unreachable();
}

#endif
