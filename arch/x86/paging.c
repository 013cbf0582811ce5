/* SPDX-License-Identifier: MIT */
/* The kernel page tables built by boot/entry.asm, and the user address spaces that share them. */
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/cpu.h"
#include "arch/x86/paging.h"
#include "arch/x86/pfa.h"

extern uint64_t boot_pml4[512];

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

void paging_init(void)
{
	stacks_pdpt[0] = virt_to_phys(stacks_pd) | TABLE_FLAGS;
	for (unsigned int i = 0; i < STACK_TABLES; i++)
		stacks_pd[i] = virt_to_phys(stacks_pt[i]) | TABLE_FLAGS;
	boot_pml4[PML4_KERNEL_STACKS] = virt_to_phys(stacks_pdpt) | TABLE_FLAGS;
	boot_pml4[0] = 0;
	write_cr3(read_cr3()); /* flush the identity map's TLB entries */
}

/*
 * Each slot is mapped by its owner alone (a task index belongs to one live task, the runner's
 * slot to the boot CPU), once: a not-present entry is never cached (SDM Vol. 3 §4.10.2.3), so
 * mapping needs no flush.
 */
uint64_t kernel_stack_top(unsigned int slot)
{
	static uint64_t frames[KERNEL_STACK_SLOTS];
	uint64_t *ptes = &stacks_pt[0][0];
	unsigned int first = slot * (KERNEL_STACK_SLOT_SIZE / PAGE_SIZE) + KERNEL_STACK_GUARD_PAGES;

	if (slot >= KERNEL_STACK_SLOTS)
		return 0;
	if (!frames[slot]) {
		uint64_t phys = pfa_alloc_pages(KERNEL_STACK_PAGES);

		if (!phys)
			return 0;
		for (unsigned int i = 0; i < KERNEL_STACK_PAGES; i++)
			ptes[first + i] = (phys + i * PAGE_SIZE) | STACK_PAGE_FLAGS;
		frames[slot] = phys;
	}
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
	return virt_to_phys(boot_pml4);
}

#define LOWER_HALF_END 0x0000800000000000ul

static unsigned int table_index(uint64_t virt, unsigned int level)
{
	return (virt >> (PAGE_SHIFT + 9 * (level - 1))) & (ENTRIES - 1);
}

uint64_t address_space_create(void)
{
	uint64_t root = pfa_alloc();
	uint64_t *entries;

	if (!root)
		return 0;
	entries = phys_to_virt(root);
	for (unsigned int i = PML4_FIRST_KERNEL_ENTRY; i < ENTRIES; i++)
		entries[i] = boot_pml4[i];
	return root;
}

bool address_space_map(uint64_t root, uint64_t virt, uint64_t phys, uint64_t flags)
{
	uint64_t *table = phys_to_virt(root);

	if (virt >= LOWER_HALF_END || (virt & (PAGE_SIZE - 1)))
		return false;
	for (unsigned int level = 4; level > 1; level--) {
		uint64_t *entry = &table[table_index(virt, level)];

		if (!(*entry & PTE_PRESENT)) {
			uint64_t next = pfa_alloc();

			if (!next)
				return false;
			*entry = next | PTE_PRESENT | PTE_WRITE | PTE_USER;
		}
		table = phys_to_virt(*entry & PTE_ADDRESS_MASK);
	}
	table[table_index(virt, 1)] = phys | flags | PTE_PRESENT;
	return true;
}

bool address_space_unmap(uint64_t root, uint64_t virt)
{
	uint64_t *table = phys_to_virt(root);

	if (virt >= LOWER_HALF_END)
		return false;
	for (unsigned int level = 4; level > 1; level--) {
		uint64_t entry = table[table_index(virt, level)];

		if (!(entry & PTE_PRESENT))
			return false;
		table = phys_to_virt(entry & PTE_ADDRESS_MASK);
	}
	if (!(table[table_index(virt, 1)] & PTE_PRESENT))
		return false;
	if (table[table_index(virt, 1)] & PTE_OWNED)
		pfa_free(table[table_index(virt, 1)] & PTE_ADDRESS_MASK);
	table[table_index(virt, 1)] = 0;
	invlpg(virt);
	return true;
}

static void table_destroy(uint64_t table_phys, unsigned int level)
{
	uint64_t *entries = phys_to_virt(table_phys);

	for (unsigned int i = 0; i < ENTRIES; i++) {
		if (!(entries[i] & PTE_PRESENT))
			continue;
		if (level > 1)
			table_destroy(entries[i] & PTE_ADDRESS_MASK, level - 1);
		else if (entries[i] & PTE_OWNED)
			pfa_free(entries[i] & PTE_ADDRESS_MASK);
	}
	pfa_free(table_phys);
}

void address_space_destroy(uint64_t root)
{
	uint64_t *entries = phys_to_virt(root);

	for (unsigned int i = 0; i < PML4_FIRST_KERNEL_ENTRY; i++)
		if (entries[i] & PTE_PRESENT)
			table_destroy(entries[i] & PTE_ADDRESS_MASK, 3);
	pfa_free(root);
}

void address_space_flush_if_loaded(uint64_t root)
{
	uint64_t loaded = read_cr3();

	if ((loaded & PTE_ADDRESS_MASK) == root)
		write_cr3(loaded);
}
