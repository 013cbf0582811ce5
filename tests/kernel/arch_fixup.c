/* SPDX-License-Identifier: MIT */
/* arch suite: faults taken through .extable fix-ups report the right vector and error code. */
#include "arch/x86/apic.h"
#include "arch/x86/cpu.h"
#include "arch/x86/debug-registers.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/extable.h"
#include "arch/x86/gdt.h"
#include "arch/x86/msr-index.h"
#include "arch/x86/msr.h"
#include "arch/x86/nmi.h"
#include "arch/x86/probe.h"
#include "arch/x86/processor-flags.h"
#include "arch/x86/traps.h"
#include "runner/test.h"

/* x2APIC MSRs #GP(0) while the APIC is in xAPIC mode (SDM Vol. 3 §11.12.1); in x2APIC mode
 * 0x801 is reserved, and #GP(0) too (§11.12.1.2, Table 11-6). */
#define MSR_X2APIC_VERSION 0x803
#define MSR_X2APIC_RESERVED 0x801
/* IA32_PKRS bits 63:32 are reserved: #GP(0) with PKS, and without it the MSR is absent. */
#define MSR_IA32_PKRS 0x6e1
#define PKRS_RESERVED_BIT (1ull << 32)
/* Lower half, never mapped in the kernel's address space. */
#define UNMAPPED_ADDRESS 0x1000ul
#define NON_CANONICAL_ADDRESS 0x8000000000000000ul

TEST(arch, invalid_opcode_is_reported_as_ud)
{
	check_eq(EXINFO(X86_EXC_UD, 0), probe_invalid_opcode_safe());
}

TEST(arch, divide_by_zero_is_reported_as_de)
{
	uint64_t quotient = 0;

	check_eq(EXINFO(X86_EXC_DE, 0), probe_divide_safe(1, 0, &quotient));
	check_eq(0, probe_divide_safe(84, 2, &quotient));
	check_eq(42, quotient);
}

TEST(arch, unmapped_write_is_reported_as_pf_with_write_bit)
{
	check_eq(EXINFO(X86_EXC_PF, PF_ERROR_WRITE), probe_write_safe((void *)UNMAPPED_ADDRESS, 1));
}

TEST(arch, unmapped_read_is_reported_as_pf)
{
	uint8_t value;

	check_eq(EXINFO(X86_EXC_PF, 0), probe_read_safe((const void *)UNMAPPED_ADDRESS, &value));
}

TEST(arch, non_canonical_read_is_reported_as_gp)
{
	uint8_t value;

	check_eq(EXINFO(X86_EXC_GP, 0),
		 probe_read_safe((const void *)NON_CANONICAL_ADDRESS, &value));
}

TEST(arch, rdmsr_safe_reports_gp_for_an_msr_that_faults)
{
	uint64_t value = 0xdead;

	if (apic_mode() == APIC_MODE_X2APIC)
		check_eq(EXINFO(X86_EXC_GP, 0), rdmsr_safe(MSR_X2APIC_RESERVED, &value));
	else
		check_eq(EXINFO(X86_EXC_GP, 0), rdmsr_safe(MSR_X2APIC_VERSION, &value));
	check_eq(0, value);
}

TEST(arch, rdmsr_safe_reads_an_msr_that_exists)
{
	uint64_t value = 0;

	check_eq(0, rdmsr_safe(MSR_EFER, &value));
	check_eq(rdmsr(MSR_EFER), value);
}

TEST(arch, wrmsr_safe_reports_gp_and_counts_the_write)
{
	uint64_t before = this_cpu()->writes.msr;

	check_eq(EXINFO(X86_EXC_GP, 0), wrmsr_safe(MSR_IA32_PKRS, PKRS_RESERVED_BIT));
	check_eq(before + 1, this_cpu()->writes.msr);
}

TEST(arch, dr7_write_with_upper_bits_set_is_reported_as_gp)
{
	uint64_t before = this_cpu()->writes.dr;

	/* SDM Vol. 2B MOV DR: 1s in bits 63:32 of DR6/DR7 raise #GP(0). */
	check_eq(EXINFO(X86_EXC_GP, 0), write_dr7_safe(DR7_RESET | (1ul << 40)));
	check_eq(DR7_RESET, read_dr7());
	check_eq(before + 1, this_cpu()->writes.dr);
}

static volatile bool fixup_nmi_armed;

/* Claims one NMI while armed (the test's own frame); every other goes on. */
static bool claim_fixup_nmi(struct cpu_regs *regs)
{
	bool armed = true;

	(void)regs;
	return __atomic_compare_exchange_n(&fixup_nmi_armed, &armed, false, false, __ATOMIC_ACQ_REL,
					   __ATOMIC_RELAXED);
}

/* The address of an instruction with a fix-up (_ASM_EXTABLE), and of its fix-up. */
static void fixup_site(uint64_t *site, uint64_t *fixup)
{
	asm volatile("lea 1f(%%rip), %0\n\t"
		     "lea 2f(%%rip), %1\n\t"
		     "jmp 2f\n"
		     "1: nop\n"
		     "2:\n" _ASM_EXTABLE(1b, 2b)
		     : "=r"(*site), "=r"(*fixup));
}

/*
 * An NMI comes between any two instructions, also just before one that has a fix-up (a _safe
 * accessor's). It is no fault of that instruction: the dispatcher must hand it to the NMI
 * handlers and return to the instruction, which then runs. An NMI frame at such a site, given
 * to the real dispatcher (handle_exception()), must come back with its RIP unchanged, the NMI
 * claimed by its handler. Before, the dispatcher took the fix-up for the NMI: a wrmsr_safe()
 * of DEBUGCTL returned 0x80000002 (an "NMI" fault) and skipped its WRMSR, when the watchdog's
 * NMI happened to come right before it.
 */
TEST(arch, an_nmi_at_an_instruction_with_a_fixup_returns_to_it)
{
	static bool registered;
	struct cpu_regs regs = { 0 };
	uint64_t site, fixup;
	unsigned long flags;

	fixup_site(&site, &fixup);
	if (!registered)
		nmi_register(claim_fixup_nmi);
	registered = true;
	regs.vector = X86_EXC_NMI;
	regs.rip = site;
	regs.cs = GDT_KERNEL_CODE;
	regs.rflags = read_rflags() & ~RFLAGS_IF;
	regs.rsp = (uint64_t)&regs;
	regs.ss = GDT_KERNEL_DATA;
	flags = local_irq_save();
	__atomic_store_n(&fixup_nmi_armed, true, __ATOMIC_RELEASE);
	handle_exception(&regs);
	local_irq_restore(flags);
	check(!fixup_nmi_armed, "the NMI was not handed to the NMI handlers");
	fixup_nmi_armed = false;
	check(regs.rip == site, "the NMI at 0x%llx resumes at 0x%llx (the fix-up is 0x%llx)",
	      (unsigned long long)site, (unsigned long long)regs.rip, (unsigned long long)fixup);
}
