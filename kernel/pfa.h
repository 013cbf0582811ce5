/* SPDX-License-Identifier: MIT */
/* Page-frame allocator over the boot memory map. */
#ifndef KERNEL_PFA_H
#define KERNEL_PFA_H

#include <stddef.h>
#include <stdint.h>

struct memory_region {
	uint64_t base;
	uint64_t length;
	uint32_t type; /* MEMORY_AVAILABLE or another multiboot type */
};

#define MEMORY_AVAILABLE 1

/*
 * Make available every whole page of the MEMORY_AVAILABLE regions, except the first MiB, the
 * kernel image and anything at or above DIRECT_MAP_LIMIT. Returns the number of free pages.
 */
size_t pfa_init(const struct memory_region *regions, size_t count);

/* A zeroed page, as a physical address; 0 when memory is exhausted. */
uint64_t pfa_alloc(void);
/* count physically contiguous zeroed pages (count <= 64, within one bitmap word); 0 if none. */
uint64_t pfa_alloc_pages(unsigned int count);
void pfa_free_pages(uint64_t phys, unsigned int count);

/* Return a page from pfa_alloc(). Freeing a page twice or one never given out panics. */
void pfa_free(uint64_t phys);
size_t pfa_free_count(void);

#endif
