/* SPDX-License-Identifier: MIT */
/* Page-frame allocator: one bit per page below DIRECT_MAP_LIMIT, set while the page is free. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/paging.h"
#include "kernel/pfa.h"
#include "kernel/spinlock.h"
#include "lib/bitops.h"
#include "lib/panic.h"

#define LOW_MEMORY_END 0x100000ul
#define FRAMES (DIRECT_MAP_LIMIT / PAGE_SIZE)
#define BITS_PER_WORD 64

extern const char __kernel_physical_start[], __kernel_physical_end[];

static uint64_t free_bitmap[FRAMES / BITS_PER_WORD];
static size_t free_count;
static size_t search_hint; /* no free frame below this word */
static struct spinlock pfa_lock = SPINLOCK_INIT("pfa");

static bool frame_is_free(uint64_t frame)
{
	return free_bitmap[frame / BITS_PER_WORD] & (1ull << (frame % BITS_PER_WORD));
}

static void frame_set_free(uint64_t frame, bool free)
{
	uint64_t bit = 1ull << (frame % BITS_PER_WORD);

	if (free)
		free_bitmap[frame / BITS_PER_WORD] |= bit;
	else
		free_bitmap[frame / BITS_PER_WORD] &= ~bit;
}

static bool frame_is_reserved(uint64_t phys)
{
	uint64_t kernel_start = (uint64_t)__kernel_physical_start;
	uint64_t kernel_end = (uint64_t)__kernel_physical_end;

	return phys < LOW_MEMORY_END || (phys + PAGE_SIZE > kernel_start && phys < kernel_end);
}

/* Mark frames [first, end) free a word at a time: emulated ring 0 pays per instruction. */
static void frames_set_free(uint64_t first, uint64_t end)
{
	while (first < end) {
		uint64_t word = first / BITS_PER_WORD, shift = first % BITS_PER_WORD;
		uint64_t bits =
			end - first < BITS_PER_WORD - shift ? end - first : BITS_PER_WORD - shift;
		uint64_t mask = (bits == BITS_PER_WORD ? ~0ull : ((1ull << bits) - 1)) << shift;

		free_count += bits_set(mask & ~free_bitmap[word]);
		free_bitmap[word] |= mask;
		first += bits;
	}
}

/* Free the page-aligned range [start, end) less the first MiB and the kernel image. */
static void range_set_free(uint64_t start, uint64_t end)
{
	uint64_t kernel_start = (uint64_t)__kernel_physical_start & ~(PAGE_SIZE - 1);
	uint64_t kernel_end = ((uint64_t)__kernel_physical_end + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);

	if (start < LOW_MEMORY_END)
		start = LOW_MEMORY_END;
	if (end > DIRECT_MAP_LIMIT)
		end = DIRECT_MAP_LIMIT;
	if (start >= end)
		return;
	if (start < kernel_end && end > kernel_start) {
		range_set_free(start, kernel_start);
		range_set_free(kernel_end, end);
		return;
	}
	frames_set_free(start / PAGE_SIZE, end / PAGE_SIZE);
}

size_t pfa_init(const struct memory_region *regions, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		uint64_t start = (regions[i].base + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
		uint64_t end = (regions[i].base + regions[i].length) & ~(PAGE_SIZE - 1);

		if (regions[i].type == MEMORY_AVAILABLE)
			range_set_free(start, end);
	}
	return free_count;
}

uint64_t pfa_alloc(void)
{
	unsigned long flags = spin_lock_irqsave(&pfa_lock);
	uint64_t frame = 0;

	for (size_t word = search_hint; word < FRAMES / BITS_PER_WORD; word++) {
		if (!free_bitmap[word])
			continue;
		frame = word * BITS_PER_WORD + (uint64_t)__builtin_ctzll(free_bitmap[word]);
		frame_set_free(frame, false);
		free_count--;
		search_hint = word;
		break;
	}
	spin_unlock_irqrestore(&pfa_lock, flags);
	if (frame)
		clear_pages(phys_to_virt(frame * PAGE_SIZE), 1);
	return frame * PAGE_SIZE;
}

uint64_t pfa_alloc_pages(unsigned int count)
{
	uint64_t run = count >= BITS_PER_WORD ? ~0ull : (1ull << count) - 1, found = 0;
	unsigned long flags;

	if (count == 0 || count > BITS_PER_WORD)
		return 0;
	flags = spin_lock_irqsave(&pfa_lock);
	for (size_t word = search_hint; word < FRAMES / BITS_PER_WORD; word++) {
		uint64_t starts = bits_run_starts(free_bitmap[word], count);
		unsigned int shift;

		if (!starts)
			continue;
		shift = (unsigned int)__builtin_ctzll(starts);
		free_bitmap[word] &= ~(run << shift);
		free_count -= count;
		found = word * BITS_PER_WORD + shift;
		break;
	}
	spin_unlock_irqrestore(&pfa_lock, flags);
	if (found)
		clear_pages(phys_to_virt(found * PAGE_SIZE), count);
	return found * PAGE_SIZE;
}

void pfa_free_pages(uint64_t phys, unsigned int count)
{
	for (unsigned int i = 0; i < count; i++)
		pfa_free(phys + i * PAGE_SIZE);
}

void pfa_free(uint64_t phys)
{
	uint64_t frame = phys / PAGE_SIZE;
	unsigned long flags = spin_lock_irqsave(&pfa_lock);

	if ((phys & (PAGE_SIZE - 1)) || frame >= FRAMES || frame_is_reserved(phys) ||
	    frame_is_free(frame))
		panic("pfa_free: 0x%lx was not allocated", phys);
	frame_set_free(frame, true);
	free_count++;
	if (frame / BITS_PER_WORD < search_hint)
		search_hint = frame / BITS_PER_WORD;
	spin_unlock_irqrestore(&pfa_lock, flags);
}

size_t pfa_free_count(void)
{
	return free_count;
}
