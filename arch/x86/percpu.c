/* SPDX-License-Identifier: MIT */
/* Per-CPU variables: the boot CPU's link-time copy, the others' allocated at boot. */
#include "arch/x86/percpu.h"
#include "arch/x86/msr.h"
#include "arch/x86/paging.h"
#include "arch/x86/pfa.h"
#include "lib/panic.h"

#include <stddef.h>

_Static_assert(offsetof(struct cpu, kernel_stack_top) == CPU_KERNEL_STACK_TOP, "syscall entry");
_Static_assert(offsetof(struct cpu, user_rsp) == CPU_USER_RSP, "syscall entry");
_Static_assert(offsetof(struct cpu, index) == CPU_INDEX, "this_cpu_index()");
_Static_assert(offsetof(struct cpu, percpu_offset) == CPU_PERCPU_OFFSET, "this_cpu_offset()");

/* What pfa_alloc_pages() gives at most in one piece: one CPU's copy must fit. */
#define PERCPU_PAGES_MAX 64

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

unsigned int percpu_setup(unsigned int wanted)
{
	unsigned int pages = (unsigned int)((percpu_size() + PAGE_SIZE - 1) / PAGE_SIZE);
	unsigned int table_pages =
		(unsigned int)((wanted * sizeof(*offsets) + PAGE_SIZE - 1) / PAGE_SIZE);
	uint64_t table;

	if (count != 1)
		panic("percpu_setup() called twice");
	if (wanted <= 1)
		return count;
	if (pages > PERCPU_PAGES_MAX || table_pages > PERCPU_PAGES_MAX)
		panic("per-CPU data: %u pages per CPU and %u for the table, at most %u", pages,
		      table_pages, PERCPU_PAGES_MAX);
	table = pfa_alloc_pages(table_pages);
	if (!table)
		return count;
	offsets = phys_to_virt(table);
	offsets[0] = 0;
	for (unsigned int cpu = 1; cpu < wanted; cpu++) {
		uint64_t copy = pfa_alloc_pages(pages); /* zeroed */

		if (!copy)
			break;
		offsets[cpu] = (uintptr_t)phys_to_virt(copy) - percpu_start();
		count = cpu + 1;
	}
	return count;
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
