/* SPDX-License-Identifier: MIT */
/* User address spaces over the kernel's upper half, and the kernel stacks' frames. */
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/cpu.h"
#include "arch/x86/paging.h"
#include "kernel/address_space.h"
#include "kernel/pfa.h"

#define ENTRIES 512
#define LOWER_HALF_END 0x0000800000000000ul

uint64_t kernel_stack_top(unsigned int slot)
{
	static uint64_t frames[KERNEL_STACK_SLOTS];

	if (slot >= KERNEL_STACK_SLOTS)
		return 0;
	if (!frames[slot]) {
		uint64_t phys = pfa_alloc_pages(KERNEL_STACK_PAGES);

		if (!phys)
			return 0;
		kernel_stack_map(slot, phys);
		frames[slot] = phys;
	}
	return KERNEL_STACKS_BASE + (uint64_t)(slot + 1) * KERNEL_STACK_SLOT_SIZE;
}

static unsigned int table_index(uint64_t virt, unsigned int level)
{
	return (virt >> (PAGE_SHIFT + 9 * (level - 1))) & (ENTRIES - 1);
}

uint64_t address_space_create(void)
{
	const uint64_t *kernel = phys_to_virt(paging_kernel_root());
	uint64_t root = pfa_alloc();
	uint64_t *entries;

	if (!root)
		return 0;
	entries = phys_to_virt(root);
	for (unsigned int i = PML4_FIRST_KERNEL_ENTRY; i < ENTRIES; i++)
		entries[i] = kernel[i];
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
	paging_flush_if_loaded(root);
}
