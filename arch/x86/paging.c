/* SPDX-License-Identifier: MIT */
/* The kernel page tables boot/entry.asm built, and the kernel stacks' tables in the upper half. */
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/cpu.h"
#include "arch/x86/paging.h"

#define ENTRIES 512
#define PML4_KERNEL_STACKS 510
#define TABLE_FLAGS (PTE_PRESENT | PTE_WRITE | PTE_ACCESSED)
#define STACK_PAGE_FLAGS (TABLE_FLAGS | PTE_DIRTY | PTE_NO_EXECUTE)
#define STACK_TABLES (KERNEL_STACK_SLOTS * KERNEL_STACK_SLOT_SIZE / PAGE_SIZE / ENTRIES)

_Static_assert(KERNEL_STACKS_BASE ==
		       0xffff000000000000ul + (uint64_t)PML4_KERNEL_STACKS * (1ul << 39),
	       "KERNEL_STACKS_BASE is PML4 entry 510");
_Static_assert(STACK_TABLES *ENTRIES *PAGE_SIZE == KERNEL_STACK_SLOTS * KERNEL_STACK_SLOT_SIZE,
	       "whole page tables of slots");

/* PML4 510's tables: in the image, linked before any address space copies the upper half. */
static uint64_t stacks_pdpt[ENTRIES] __attribute__((aligned(PAGE_SIZE)));
static uint64_t stacks_pd[ENTRIES] __attribute__((aligned(PAGE_SIZE)));
static uint64_t stacks_pt[STACK_TABLES][ENTRIES] __attribute__((aligned(PAGE_SIZE)));
/* boot/entry.asm's PML4, as CR3 held it at paging_init(). */
static uint64_t kernel_root;

void paging_init(void)
{
	uint64_t *pml4;

	kernel_root = read_cr3() & PTE_ADDRESS_MASK;
	pml4 = phys_to_virt(kernel_root);
	stacks_pdpt[0] = virt_to_phys(stacks_pd) | TABLE_FLAGS;
	for (unsigned int i = 0; i < STACK_TABLES; i++)
		stacks_pd[i] = virt_to_phys(stacks_pt[i]) | TABLE_FLAGS;
	pml4[PML4_KERNEL_STACKS] = virt_to_phys(stacks_pdpt) | TABLE_FLAGS;
	pml4[0] = 0;
	write_cr3(read_cr3()); /* flush the identity map's TLB entries */
}

/*
 * Each slot is mapped by its owner alone (a task index belongs to one live task, the runner's
 * slot to the boot CPU), once: a not-present entry is never cached (SDM Vol. 3 §4.10.2.3), so
 * mapping needs no flush.
 */
uint64_t kernel_stack_map(unsigned int slot, uint64_t phys)
{
	uint64_t *ptes = &stacks_pt[0][0];
	unsigned int first = slot * (KERNEL_STACK_SLOT_SIZE / PAGE_SIZE) + KERNEL_STACK_GUARD_PAGES;

	if (slot >= KERNEL_STACK_SLOTS)
		return 0;
	for (unsigned int i = 0; i < KERNEL_STACK_PAGES; i++)
		ptes[first + i] = (phys + i * PAGE_SIZE) | STACK_PAGE_FLAGS;
	return KERNEL_STACKS_BASE + (uint64_t)(slot + 1) * KERNEL_STACK_SLOT_SIZE;
}

int kernel_stack_guard_slot(uint64_t address)
{
	uint64_t offset = address - KERNEL_STACKS_BASE;

	if (address < KERNEL_STACKS_BASE || offset >= KERNEL_STACK_SLOTS * KERNEL_STACK_SLOT_SIZE ||
	    offset % KERNEL_STACK_SLOT_SIZE >= KERNEL_STACK_GUARD_PAGES * PAGE_SIZE)
		return -1;
	return (int)(offset / KERNEL_STACK_SLOT_SIZE);
}

uint64_t paging_kernel_root(void)
{
	return kernel_root;
}

void paging_flush_if_loaded(uint64_t root)
{
	uint64_t loaded = read_cr3();

	if ((loaded & PTE_ADDRESS_MASK) == root)
		write_cr3(loaded);
}
