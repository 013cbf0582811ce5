/* SPDX-License-Identifier: MIT */
/* The kernel's address-space layout and the boot page tables. */
#ifndef ARCH_X86_PAGING_H
#define ARCH_X86_PAGING_H

#include <stdbool.h>
#include <stdint.h>

#define PAGE_SIZE 4096ul
#define PAGE_SHIFT 12

/*
 * Lower half (PML4 0-255): user tasks, one address space each. Upper half, shared by every
 * address space: PML4 256 maps all physical memory below DIRECT_MAP_LIMIT at DIRECT_MAP_BASE
 * (3-4 GiB uncached, for MMIO); PML4 510 holds the guarded kernel stacks at KERNEL_STACKS_BASE;
 * PML4 511 maps the kernel image at KERNEL_VIRTUAL_BASE.
 */
#define DIRECT_MAP_BASE 0xffff800000000000ul
#define DIRECT_MAP_LIMIT 0x100000000ul
#define DIRECT_MAP_UNCACHED 0xc0000000ul /* from here to the limit: PCD|PWT, for MMIO */
#define KERNEL_VIRTUAL_BASE 0xffffffff80000000ul
#define PML4_FIRST_KERNEL_ENTRY 256

/*
 * Kernel stacks with a guard below: slot s is KERNEL_STACK_GUARD_PAGES unmapped pages, then
 * KERNEL_STACK_PAGES mapped ones, at KERNEL_STACKS_BASE + s * KERNEL_STACK_SLOT_SIZE. Running off
 * the bottom of a stack faults in its guard (a #PF whose delivery faults again: #DF, on its IST
 * stack) instead of writing what lies below. A guard as large as the stack also catches a frame
 * that jumps up to that far past the bottom. Slot s < KERNEL_STACK_RUNNER is task index s's
 * (sched/); the runner, the boot context, has KERNEL_STACK_RUNNER.
 */
#define KERNEL_STACKS_BASE 0xffffff0000000000ul /* PML4 510 */
#define KERNEL_STACK_PAGES 4
#define KERNEL_STACK_GUARD_PAGES 4
#define KERNEL_STACK_SLOT_SIZE ((KERNEL_STACK_GUARD_PAGES + KERNEL_STACK_PAGES) * PAGE_SIZE)
#define KERNEL_STACK_SLOTS 128 /* two page tables */
#define KERNEL_STACK_RUNNER (KERNEL_STACK_SLOTS - 1)

#define PTE_PRESENT (1ul << 0)
#define PTE_WRITE (1ul << 1)
#define PTE_USER (1ul << 2)
#define PTE_PWT (1ul << 3)
#define PTE_PCD (1ul << 4)
#define PTE_ACCESSED (1ul << 5)
#define PTE_DIRTY (1ul << 6)
#define PTE_HUGE (1ul << 7)
#define PTE_GLOBAL (1ul << 8)
#define PTE_NO_EXECUTE (1ul << 63)
#define PTE_ADDRESS_MASK 0x000ffffffffff000ul

static inline void *phys_to_virt(uint64_t phys)
{
	return (void *)(phys + DIRECT_MAP_BASE);
}

/* For direct-map and kernel-image addresses only. */
static inline uint64_t virt_to_phys(const void *virt)
{
	uint64_t address = (uint64_t)virt;

	if (address >= KERNEL_VIRTUAL_BASE)
		return address - KERNEL_VIRTUAL_BASE;
	return address - DIRECT_MAP_BASE;
}

/* A software PTE bit: the frame belongs to the address space and is freed with it. */
#define PTE_OWNED (1ul << 9)

/*
 * Zero count pages at virt with REP STOSQ: one instruction, where a C loop would be thousands,
 * which matters where every ring-0 instruction is emulated (docs/platforms.md). Never faults on
 * a mapped page.
 */
static inline void clear_pages(void *virt, unsigned long count)
{
	unsigned long words = count * (PAGE_SIZE / 8);

	asm volatile("rep stosq" : "+D"(virt), "+c"(words) : "a"(0ul) : "memory");
}

/* Remove the boot identity map of the lower half: from here on it belongs to user tasks. */
void paging_init(void);

/*
 * Map the KERNEL_STACK_PAGES frames from phys as stack slot slot, above its guard pages, and
 * return the slot's top; 0 when slot is no slot. Once per slot (kernel/address_space.h's
 * kernel_stack_top() keeps the frames).
 */
uint64_t kernel_stack_map(unsigned int slot, uint64_t phys);

/* The slot whose guard holds address, or -1. */
int kernel_stack_guard_slot(uint64_t address);

/* The physical address of the kernel PML4, whose upper half every address space copies. */
uint64_t paging_kernel_root(void);

/* Reload CR3 if it holds root, flushing its non-global TLB entries (SDM Vol. 3 §4.10.4). */
void paging_flush_if_loaded(uint64_t root);

#endif
