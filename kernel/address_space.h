/* SPDX-License-Identifier: MIT */
/* User address spaces over the kernel's upper half, and the kernel stacks' frames. */
#ifndef KERNEL_ADDRESS_SPACE_H
#define KERNEL_ADDRESS_SPACE_H

#include <stdbool.h>
#include <stdint.h>

/*
 * The top of stack slot slot, mapped on its first use (frames from pfa_alloc_pages()) and kept
 * for good: a slot's translation never changes, so no CPU's TLB ever holds a stale one. 0 when
 * out of memory or slot is no slot.
 */
uint64_t kernel_stack_top(unsigned int slot);

/* A new address space: an empty lower half and the kernel's upper half. 0 when out of memory. */
uint64_t address_space_create(void);

/*
 * Map the 4 KiB page at user address virt to phys with flags (PTE_USER, PTE_WRITE,
 * PTE_NO_EXECUTE, PTE_OWNED ...). Intermediate tables are made user-accessible; the leaf
 * decides. False when a table could not be allocated or virt is not a lower-half address.
 */
bool address_space_map(uint64_t root, uint64_t virt, uint64_t phys, uint64_t flags);

/* Remove the mapping of the page at virt (a PTE_OWNED frame is freed); false if none. */
bool address_space_unmap(uint64_t root, uint64_t virt);
/*
 * address_space_unmap() flushes the calling CPU's TLB only. Another CPU running root (CR3)
 * calls this after the unmap, before the pages are reused: it reloads CR3 (SDM Vol. 3 §4.10.4).
 */
void address_space_flush_if_loaded(uint64_t root);

/* Free the lower-half tables of root, the PTE_OWNED frames they map, and root itself. */
void address_space_destroy(uint64_t root);

#endif
