/* SPDX-License-Identifier: MIT */
/* The per-CPU struct, reached through the GS base. */
#ifndef ARCH_X86_PERCPU_H
#define ARCH_X86_PERCPU_H

#include <stdint.h>

#define MAX_CPUS 8

/* Hardware writes made through the arch accessors, counted on the CPU that made them. */
struct write_counts {
	uint64_t msr; /* WRMSR, all MSRs */
	uint64_t dr; /* MOV to DR0-DR7 */
};

/* Offsets that arch/x86/syscall_entry.asm and this_cpu_index() use; checked by
 * _Static_assert in percpu.c. */
#define CPU_KERNEL_STACK_TOP 8
#define CPU_USER_RSP 16
#define CPU_INDEX 24

struct cpu {
	struct cpu *self; /* must stay first: this_cpu() reads %gs:0 */
	uint64_t kernel_stack_top; /* the current task's, as in TSS.RSP0: SYSCALL switches to it */
	uint64_t user_rsp; /* scratch for the SYSCALL entry */
	unsigned int index;
	unsigned int apic_id;
	struct write_counts writes;
	uint64_t ticks; /* timer interrupts taken on this CPU */
	/* Exceptions (vectors 0-31) taken from a context with RFLAGS.TF set: single steps, and the
	 * faults of code being stepped. A CPU model that steps code tells them apart by it. */
	uint64_t stepped_exceptions;
	/* Interrupt handlers under way in the running task's flow (saved per task at a switch). */
	unsigned int interrupt_depth;
	/* Spinlocks this CPU holds (arch/x86/spinlock.h): a frame cannot be unwound past one. */
	unsigned int spinlocks_held;
};

/* Valid once percpu_init() ran on this CPU; before that %gs:0 is not ours. */
static inline struct cpu *this_cpu(void)
{
	struct cpu *cpu;

	asm volatile("mov %%gs:0, %0" : "=r"(cpu));
	return cpu;
}

/* this_cpu_index() in one load: the lock and switch paths take it often. */
static inline unsigned int this_cpu_index(void)
{
	unsigned int index;

	asm volatile("movl %%gs:%c1, %0" : "=r"(index) : "i"(CPU_INDEX));
	return index;
}

/* Point the GS base of the calling CPU at cpus[index]. The GS-base write is not counted. */
void percpu_init(unsigned int index);
struct cpu *percpu_get(unsigned int index);

#endif
