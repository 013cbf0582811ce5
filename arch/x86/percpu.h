/* SPDX-License-Identifier: MIT */
/* Per-CPU variables, sized at boot, and the per-CPU struct reached through the GS base. */
#ifndef ARCH_X86_PERCPU_H
#define ARCH_X86_PERCPU_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Per-CPU variables, after Linux's DEFINE_PER_CPU (include/linux/percpu-defs.h):
 *
 *	static DEFINE_PER_CPU(struct run_queue, run_queues);
 *	struct run_queue *queue = per_cpu_ptr(run_queues, cpu);
 *
 * The contract:
 * - Each variable is placed in .bss.percpu, which boot/kernel.ld gathers, page-aligned, between
 *   __percpu_start and __percpu_end. That link-time copy is CPU 0's (the boot CPU's), usable from
 *   the first instruction of start_kernel().
 * - percpu_setup(count) (kernel/percpu.h) runs once, after the MADT was parsed (smp_prepare()) and
 *before any other CPU starts or any subsystem's init: it gives CPUs 1 to count - 1 a zeroed copy
 *each, from the page allocator. Until then percpu_count() is 1 and only CPU 0's copy exists.
 * - Zero initial values only: GCC refuses any other initializer in a .bss.* section, and every
 *   CPU's copy starts zeroed, as the boot CPU's does (the loader clears .bss).
 * - per_cpu_ptr(var, cpu) is CPU cpu's copy, for cpu < percpu_count() (else the run bails out);
 *   this_cpu_ptr(var) is the calling CPU's, one %gs load, valid once percpu_init() ran on it.
 * - A copy never moves or goes away: pointers into it stay valid for the whole run.
 * There is no compile-time bound on the number of CPUs here; smp.cpus=N's bound (SMP_CPUS_MAX,
 * kernel/smp.h) is the only one.
 */
#define DEFINE_PER_CPU(type, name) __attribute__((section(".bss.percpu"))) __typeof__(type) name
#define per_cpu_ptr(var, cpu) ((__typeof__(&(var)))percpu_address((const void *)&(var), (cpu)))
#define this_cpu_ptr(var) ((__typeof__(&(var)))((uintptr_t) & (var) + this_cpu_offset()))

/* Hardware writes made through the arch accessors, counted on the CPU that made them. */
struct write_counts {
	uint64_t msr; /* WRMSR, all MSRs */
	uint64_t dr; /* MOV to DR0-DR7 */
	uint64_t xrstors; /* XRSTORS, of any components */
};

/* Offsets that arch/x86/syscall_entry.asm and this_cpu_index() use; checked by
 * _Static_assert in percpu.c. */
#define CPU_KERNEL_STACK_TOP 8
#define CPU_USER_RSP 16
#define CPU_INDEX 24
#define CPU_PERCPU_OFFSET 32

#define SPINLOCKS_NAMED 8
struct spinlock;

struct cpu {
	struct cpu *self; /* must stay first: this_cpu() reads %gs:0 */
	uint64_t kernel_stack_top; /* the current task's, as in TSS.RSP0: SYSCALL switches to it */
	uint64_t user_rsp; /* scratch for the SYSCALL entry */
	unsigned int index;
	unsigned int apic_id;
	uintptr_t percpu_offset; /* from a per-CPU variable's link-time copy to this CPU's */
	struct write_counts writes;
	uint64_t ticks; /* timer interrupts taken on this CPU */
	unsigned int task_id; /* the running task's id, as kernel/switch_hooks.c last set it */
	/* Exceptions (vectors 0-31) taken from a context with RFLAGS.TF set: single steps, and the
	 * faults of code being stepped. A CPU model that steps code tells them apart by it. */
	uint64_t stepped_exceptions;
	/* NMIs taken on this CPU, whatever their source (traps.c). */
	uint64_t nmis;
	/* Interrupt handlers under way in the running task's flow (saved per task at a switch). */
	unsigned int interrupt_depth;
	/* Spinlocks this CPU holds (kernel/spinlock.h): a frame cannot be unwound past one. The
	 * first SPINLOCKS_NAMED of them, in the order taken, for an unwind to release or name. */
	unsigned int spinlocks_held;
	struct spinlock *held_locks[SPINLOCKS_NAMED];
	/* The running test passed its time limit (set by the runner, on every CPU, until the next
	 * test starts): a CPU model stops stepping, so that the test can be ended and the CPU
	 * answers the runner's calls. */
	bool overrun;
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

/* this_cpu()->percpu_offset in one load, for this_cpu_ptr(). */
static inline uintptr_t this_cpu_offset(void)
{
	uintptr_t offset;

	asm volatile("movq %%gs:%c1, %0" : "=r"(offset) : "i"(CPU_PERCPU_OFFSET));
	return offset;
}

/*
 * Use table[cpu] as the offset from a per-CPU variable's link-time copy to CPU cpu's, for cpus
 * CPUs (table[0] is 0: CPU 0's copy is the link-time one). kernel/percpu.c's percpu_setup()
 * calls it once, before any other CPU starts; table and the copies stay for good.
 */
void percpu_install(uintptr_t *table, unsigned int cpus);
/* The CPUs that have a copy of the per-CPU variables: 1 until percpu_setup(). */
unsigned int percpu_count(void);
/* The address of CPU cpu's copy of the per-CPU object at link-time address address. */
void *percpu_address(const void *address, unsigned int cpu);
/* The bytes of one CPU's copy, and the link-time copy's start (CPU 0's). */
uintptr_t percpu_size(void);
uintptr_t percpu_start(void);

/* Point the GS base of the calling CPU at its struct cpu. The GS-base write is not counted. */
void percpu_init(unsigned int index);
/* CPU index's struct cpu: per_cpu_ptr() of it. */
struct cpu *percpu_get(unsigned int index);

#endif
