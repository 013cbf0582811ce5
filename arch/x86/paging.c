/* SPDX-License-Identifier: MIT */
/* The kernel page tables built by boot/entry.asm. */
#include <stdint.h>

#include "arch/x86/cpu.h"
#include "arch/x86/paging.h"

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
