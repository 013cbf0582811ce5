/* SPDX-License-Identifier: MIT */
/* boot suite: the CPU mode, paging and segments that start_kernel() set up. */
#include "arch/x86/cpu.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/gdt.h"
#include "arch/x86/msr-index.h"
#include "arch/x86/msr.h"
#include "arch/x86/paging.h"
#include "arch/x86/probe.h"
#include "arch/x86/processor-flags.h"
#include "runner/test.h"

TEST(boot, long_mode_is_active)
{
	uint64_t efer = rdmsr(MSR_EFER);

	check_eq(EFER_LME | EFER_LMA, efer & (EFER_LME | EFER_LMA));
}

TEST(boot, paging_and_protection_are_on)
{
	unsigned long cr0 = read_cr0();

	check_eq(CR0_PG | CR0_PE | CR0_WP, cr0 & (CR0_PG | CR0_PE | CR0_WP));
	check_eq(CR4_PAE, read_cr4() & CR4_PAE);
	check_eq(paging_kernel_root(), read_cr3() & PTE_ADDRESS_MASK);
}

TEST(boot, kernel_runs_in_the_upper_half)
{
	check((uint64_t) & __func__ >= KERNEL_VIRTUAL_BASE, "data at 0x%lx",
	      (unsigned long)__func__);
	check((uint64_t)__builtin_return_address(0) >= KERNEL_VIRTUAL_BASE, "code at %p",
	      __builtin_return_address(0));
}

TEST(boot, lower_half_is_unmapped_after_boot)
{
	uint8_t value;
	uint32_t fault = probe_read_safe((const void *)0x100000, &value);

	/* The kernel image sits at physical 1 MiB: the boot identity map must be gone. */
	check_eq(EXINFO(X86_EXC_PF, 0), fault);
}

TEST(boot, direct_map_reaches_physical_memory)
{
	const uint8_t *through_direct_map = phys_to_virt(virt_to_phys(&__func__[0]));

	check_eq(__func__[0], *through_direct_map);
}

TEST(boot, kernel_segments_are_loaded)
{
	uint16_t cs, ss;

	asm volatile("mov %%cs, %0; mov %%ss, %1" : "=r"(cs), "=r"(ss));
	check_eq(GDT_KERNEL_CODE, cs);
	check_eq(GDT_KERNEL_DATA, ss);
}
