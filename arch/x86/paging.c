/* SPDX-License-Identifier: MIT */
/* The kernel page tables built by boot/entry.asm, and the user address spaces that share them. */
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/cpu.h"
#include "arch/x86/paging.h"
#include "arch/x86/pfa.h"

extern uint64_t boot_pml4[512];

void paging_init(void)
{
	boot_pml4[0] = 0;
	write_cr3(read_cr3()); /* flush the identity map's TLB entries */
}

uint64_t paging_kernel_root(void)
{
	return virt_to_phys(boot_pml4);
}

#define ENTRIES 512
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
