/* SPDX-License-Identifier: MIT */
/* arch suite: the page-frame allocator. */
#include "arch/x86/paging.h"
#include "kernel/pfa.h"
#include "runner/test.h"

#define PAGES 16

TEST(arch, allocated_pages_are_zeroed_distinct_and_returned)
{
	size_t free_before = pfa_free_count();
	uint64_t pages[PAGES];

	for (unsigned int i = 0; i < PAGES; i++) {
		const uint64_t *words;

		pages[i] = pfa_alloc();
		check(pages[i] != 0 && (pages[i] & (PAGE_SIZE - 1)) == 0, "page %u at 0x%llx", i,
		      (unsigned long long)pages[i]);
		words = phys_to_virt(pages[i]);
		for (unsigned int w = 0; w < PAGE_SIZE / 8; w++)
			if (words[w]) {
				check_eq(0, words[w]);
				break;
			}
		/* Dirty it, so that a later allocation must zero it again. */
		*(uint64_t *)phys_to_virt(pages[i]) = ~0ull;
		for (unsigned int j = 0; j < i; j++)
			check(pages[i] != pages[j], "page 0x%llx given out twice",
			      (unsigned long long)pages[i]);
	}
	check_eq(free_before - PAGES, pfa_free_count());
	for (unsigned int i = 0; i < PAGES; i++)
		pfa_free(pages[i]);
	check_eq(free_before, pfa_free_count());
	pages[0] = pfa_alloc();
	check_eq(0, *(const uint64_t *)phys_to_virt(pages[0]));
	pfa_free(pages[0]);
}

TEST(arch, allocator_never_gives_out_the_kernel_or_low_memory)
{
	extern const char __kernel_physical_start[], __kernel_physical_end[];
	uint64_t page = pfa_alloc();

	check(page >= 0x100000, "page at 0x%llx", (unsigned long long)page);
	check(page >= (uint64_t)__kernel_physical_end ||
		      page + PAGE_SIZE <= (uint64_t)__kernel_physical_start,
	      "page 0x%llx inside the kernel image", (unsigned long long)page);
	pfa_free(page);
}

/* Run lengths across pfa_alloc_pages()'s range, short and long, odd and even. */
static const unsigned int run_lengths[] = { 1, 2, 3, 5, 8, 13, 31, 63, 64 };
#define RUNS (sizeof(run_lengths) / sizeof(run_lengths[0]))

static bool runs_overlap(uint64_t a, unsigned int a_pages, uint64_t b, unsigned int b_pages)
{
	return a < b + b_pages * PAGE_SIZE && b < a + a_pages * PAGE_SIZE;
}

/* Each run is its length in pages, zeroed, apart from every other; 0 and 65 pages are refused. */
TEST(arch, page_runs_are_contiguous_zeroed_apart_and_refused_past_64)
{
	size_t free_before = pfa_free_count();
	uint64_t runs[RUNS];

	check_eq(0, pfa_alloc_pages(0));
	check_eq(0, pfa_alloc_pages(65));
	check_eq(free_before, pfa_free_count());
	for (unsigned int i = 0; i < RUNS; i++) {
		size_t free_now = pfa_free_count();
		const uint64_t *words;

		runs[i] = pfa_alloc_pages(run_lengths[i]);
		if (!check(runs[i] != 0, "no run of %u pages", run_lengths[i]))
			return;
		check_eq(free_now - run_lengths[i], pfa_free_count());
		check_eq(0, runs[i] & (PAGE_SIZE - 1));
		words = phys_to_virt(runs[i]);
		for (unsigned int w = 0; w < run_lengths[i] * PAGE_SIZE / 8; w++)
			if (words[w]) {
				check_eq(0, words[w]);
				break;
			}
		for (unsigned int j = 0; j < i; j++)
			check(!runs_overlap(runs[i], run_lengths[i], runs[j], run_lengths[j]),
			      "%u pages at 0x%llx overlap %u at 0x%llx", run_lengths[i],
			      (unsigned long long)runs[i], run_lengths[j],
			      (unsigned long long)runs[j]);
	}
	for (unsigned int i = 0; i < RUNS; i++)
		pfa_free_pages(runs[i], run_lengths[i]);
	check_eq(free_before, pfa_free_count());
}
