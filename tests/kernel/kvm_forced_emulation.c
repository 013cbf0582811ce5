/* SPDX-License-Identifier: MIT */
/* kvm suite: what KVM's own instruction emulator does to a guest's counters (issue 29 item 8). */
#include <stdint.h>

#include "arch/x86/cpu.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/extable.h"
#include "arch/x86/msr.h"
#include "pmu/pmu.h"
#include "runner/test.h"

#define INSTRUCTIONS_SELECT 0x00c0 /* architectural events (SDM Vol. 3B Table 20-1) */
#define BRANCHES_SELECT 0x00c4

/*
 * Item 8: instructions a hypervisor emulates are counted. kvm-unit-tests forces KVM's emulator
 * with its prefix (UD2 "kvm", honoured only with kvm.force_emulation_prefix=1); anywhere else the
 * prefix is a plain UD2 and the test skips. Two JNE, not taken, and a NOP, each prefixed, with
 * the counters started EMULATED_* events below overflow: each must have counted them all and
 * overflowed (kvm-unit-tests' check).
 */
#define EMULATED_INSTRUCTIONS 3
#define EMULATED_BRANCHES 2

static uint32_t forced_emulation_probe(void)
{
	uint64_t fault = 0;

	asm volatile("1: ud2; .ascii \"kvm\"; nop\n2:\n" _ASM_EXTABLE(1b, 2b) : "+D"(fault));
	return (uint32_t)fault;
}

static void counter_start(unsigned int i, uint64_t select, uint64_t events_to_overflow)
{
	wrmsr(MSR_IA32_PERFEVTSEL0 + i, 0);
	/* A legacy PMCx write sign-extends bit 31: this many events below the width's top. */
	wrmsr(MSR_IA32_PMC0 + i, (0 - events_to_overflow) & 0xffffffffull);
	wrmsr(MSR_IA32_PERFEVTSEL0 + i, select | PERFEVTSEL_OS | PERFEVTSEL_USR | PERFEVTSEL_EN);
}

static void counters_stop(void)
{
	wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 0);
	for (unsigned int i = 0; i < 2; i++) {
		wrmsr(MSR_IA32_PERFEVTSEL0 + i, 0);
		wrmsr(MSR_IA32_PMC0 + i, 0);
	}
	wrmsr(MSR_IA32_PERF_GLOBAL_OVF_CTRL, rdmsr(MSR_IA32_PERF_GLOBAL_STATUS));
}

TEST(kvm, instructions_its_emulator_runs_are_counted_by_the_guest_pmu)
{
	uint64_t instructions, branches, status;
	unsigned long flags;

	if (forced_emulation_probe() != 0)
		test_skip("no forced emulation: KVM's prefix (UD2 \"kvm\") raises #UD here "
			  "(kvm.force_emulation_prefix=0, or no KVM)");
	if (!pmu_usable())
		test_skip("%s", pmu_info()->reason);
	if (pmu_info()->version < 2 || pmu_info()->gp_counters < 2)
		test_skip(
			"perfmon version %u with %u GP counters: GLOBAL_CTRL and 2 counters needed",
			pmu_info()->version, pmu_info()->gp_counters);
	flags = local_irq_save();
	counter_start(0, BRANCHES_SELECT, EMULATED_BRANCHES);
	counter_start(1, INSTRUCTIONS_SELECT, EMULATED_INSTRUCTIONS);
	wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 3);
	asm volatile("xor %%eax, %%eax\n\t"
		     "ud2; .ascii \"kvm\"; jne 1f\n\t"
		     "ud2; .ascii \"kvm\"; jne 1f\n\t"
		     "ud2; .ascii \"kvm\"; nop\n"
		     "1:"
		     :
		     :
		     : "eax", "cc");
	wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 0);
	branches = rdmsr(MSR_IA32_PMC0);
	instructions = rdmsr(MSR_IA32_PMC0 + 1);
	status = rdmsr(MSR_IA32_PERF_GLOBAL_STATUS);
	counters_stop();
	local_irq_restore(flags);
	test_diag("after the overflow: branches %llu, instructions %llu, status 0x%llx",
		  (unsigned long long)branches, (unsigned long long)instructions,
		  (unsigned long long)status);
	/* Both started exactly the emulated events below overflow: both overflowed. */
	check_eq(3, status & 3);
}
