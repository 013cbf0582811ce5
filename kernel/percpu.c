/* SPDX-License-Identifier: MIT */
/* Per-CPU data for the CPUs to start: sized at boot, from the page allocator. */
#include <stdint.h>

#include "arch/x86/paging.h"
#include "arch/x86/percpu.h"
#include "kernel/percpu.h"
#include "kernel/pfa.h"
#include "lib/panic.h"

/* What pfa_alloc_pages() gives at most in one piece: one CPU's copy must fit. */
#define PERCPU_PAGES_MAX 64

unsigned int percpu_setup(unsigned int wanted)
{
	unsigned int pages = (unsigned int)((percpu_size() + PAGE_SIZE - 1) / PAGE_SIZE);
	unsigned int table_pages =
		(unsigned int)((wanted * sizeof(uintptr_t) + PAGE_SIZE - 1) / PAGE_SIZE);
	unsigned int count = 1;
	uintptr_t *offsets;
	uint64_t table;

	if (percpu_count() != 1)
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
	percpu_install(offsets, count);
	return count;
}
