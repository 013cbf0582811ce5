/* SPDX-License-Identifier: MIT */
/* Per-CPU variables: the boot CPU's link-time copy, the others' where kernel/percpu.c put them. */
#include "arch/x86/percpu.h"
#include "arch/x86/msr.h"
#include "lib/panic.h"

#include <stddef.h>

_Static_assert(offsetof(struct cpu, kernel_stack_top) == CPU_KERNEL_STACK_TOP, "syscall entry");
_Static_assert(offsetof(struct cpu, user_rsp) == CPU_USER_RSP, "syscall entry");
_Static_assert(offsetof(struct cpu, index) == CPU_INDEX, "this_cpu_index()");
_Static_assert(offsetof(struct cpu, percpu_offset) == CPU_PERCPU_OFFSET, "this_cpu_offset()");

extern char __percpu_start[], __percpu_end[]; /* boot/kernel.ld, page-aligned */

static DEFINE_PER_CPU(struct cpu, cpu_structs);
/* offsets[cpu]: from the link-time copy to CPU cpu's; CPU 0's is 0 before and after set-up. */
static uintptr_t boot_offsets[1];
static uintptr_t *offsets = boot_offsets;
static unsigned int count = 1;

uintptr_t percpu_start(void)
{
	return (uintptr_t)__percpu_start;
}

uintptr_t percpu_size(void)
{
	return (uintptr_t)(__percpu_end - __percpu_start);
}

unsigned int percpu_count(void)
{
	return count;
}

void *percpu_address(const void *address, unsigned int cpu)
{
	if (cpu >= count)
		panic("per-CPU data of CPU %u asked for: %u CPUs have some", cpu, count);
	return (void *)((uintptr_t)address + offsets[cpu]);
}

void percpu_install(uintptr_t *table, unsigned int cpus)
{
	offsets = table;
	count = cpus;
}

void percpu_init(unsigned int index)
{
	struct cpu *cpu = percpu_get(index);

	cpu->self = cpu;
	cpu->index = index;
	cpu->percpu_offset = offsets[index];
	write_gs_base_uncounted((uint64_t)cpu);
}

struct cpu *percpu_get(unsigned int index)
{
	return per_cpu_ptr(cpu_structs, index);
}
