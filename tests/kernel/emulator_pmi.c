/* SPDX-License-Identifier: MIT */
/* emulator suite: PMI delivery through LVTPC (rule 13) and its acknowledgement (rule 14). */
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/apic.h"
#include "arch/x86/cpu.h"
#include "arch/x86/cpuid.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/msr.h"
#include "arch/x86/probe.h"
#include "arch/x86/traps.h"
#include "arch/x86/tsc.h"
#include "emulator/emulator.h"
#include "lib/format.h"
#include "lib/string.h"
#include "runner/test.h"
#include "tests/kernel/lib/emulator_util.h"

#define EVENT_INSTRUCTIONS 0xc0
#define OVERFLOW_AFTER 64 /* instructions */
#define PMI_WAIT_MS 2000
#define LOOP 100 /* iterations: 200 instructions, 136 past the overflow (steps: see below) */

static volatile unsigned int test_pmis;
static volatile uint32_t lvtpc_in_handler;

/* A PMI handler that does nothing a driver must: no acknowledgement, no unmask. */
static void lazy_pmi(struct cpu_regs *regs)
{
	(void)regs;
	lvtpc_in_handler = apic_read_lvtpc();
	test_pmis++;
}

/* Count kernel instructions on the test counter, overflowing after OVERFLOW_AFTER, with a PMI. */
static void arm(void)
{
	unsigned int counter = emulator_test_counter();

	wrmsr(MSR_IA32_PMC0 + counter, (0 - OVERFLOW_AFTER) & emulator_counter_width_mask());
	wrmsr(MSR_IA32_PERFEVTSEL0 + counter,
	      EVENT_INSTRUCTIONS | PERFEVTSEL_OS | PERFEVTSEL_INT | PERFEVTSEL_EN);
	wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 1ull << counter);
}

/* Back to what pmu/'s shadow says: controls 0, the overflow acknowledged, LVTPC as it was. */
static void disarm(uint32_t lvtpc)
{
	unsigned int counter = emulator_test_counter();

	wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 0);
	wrmsr(MSR_IA32_PERFEVTSEL0 + counter, 0);
	wrmsr(MSR_IA32_PERF_GLOBAL_OVF_CTRL, rdmsr(MSR_IA32_PERF_GLOBAL_STATUS));
	apic_write_lvtpc(lvtpc);
}

/*
 * Each loop is single-stepped, with the arming and disarming around it: about 650 steps for
 * rule 13's two loops, 270 for rule 14's one (docs/platforms.md: what a step costs).
 */
/* An overflow with LVTPC as the test set it; then everything back, the lazy handler removed. */
static void overflow_once(uint32_t lvtpc)
{
	unsigned long flags;

	unsigned int pmis = test_pmis;
	uint64_t deadline;

	arm();
	probe_instruction_loop(LOOP);
	/*
	 * The self-IPI may come later: some platforms deliver interrupts to a single-stepped guest
	 * only now and then (docs/platforms.md). So wait counting ring 3 only, as the same enabled
	 * counter: the wait is not stepped, and GLOBAL_CTRL stays as the PMI found it (rule 14
	 * compares it).
	 */
	wrmsr(MSR_IA32_PERFEVTSEL0 + emulator_test_counter(),
	      EVENT_INSTRUCTIONS | PERFEVTSEL_USR | PERFEVTSEL_INT | PERFEVTSEL_EN);
	deadline = rdtsc_ordered() + tsc_cycles_from_ms(PMI_WAIT_MS);
	while (test_pmis == pmis && rdtsc_ordered() < deadline)
		cpu_relax();
	flags = local_irq_save();
	disarm(lvtpc);
	local_irq_restore(flags);
	interrupt_register(VECTOR_TEST, NULL);
}

TEST(emulator, rule_13_a_pmi_masks_lvtpc_and_a_masked_lvtpc_delivers_nothing)
{
	uint32_t lvtpc = apic_read_lvtpc();

	require_emulated_intel_pmu();
	test_pmis = 0;
	interrupt_register(VECTOR_TEST, lazy_pmi);
	/* Masked: the overflow sets its status bit, and no interrupt comes. */
	apic_write_lvtpc(VECTOR_TEST | APIC_LVT_MASKED);
	arm();
	probe_instruction_loop(LOOP);
	check_eq(1ull << emulator_test_counter(),
		 rdmsr(MSR_IA32_PERF_GLOBAL_STATUS) & (1ull << emulator_test_counter()));
	check_eq(0, test_pmis);
	disarm(VECTOR_TEST);
	/* Unmasked: one PMI, and LVTPC is masked when it is delivered, as on Intel. */
	overflow_once(lvtpc);
	emulator_take_violations(NULL, 0); /* lazy_pmi broke rule 14: not this test's subject */
	check_eq(1, test_pmis);
	check_eq((uint32_t)(VECTOR_TEST | APIC_LVT_MASKED), lvtpc_in_handler);
}

TEST(emulator, rule_14_a_pmi_handler_that_acknowledges_nothing_is_reported)
{
	uint32_t lvtpc = apic_read_lvtpc();

	require_emulated_intel_pmu();
	test_pmis = 0;
	interrupt_register(VECTOR_TEST, lazy_pmi);
	apic_write_lvtpc(VECTOR_TEST);
	overflow_once(lvtpc);
	expect_violation(14);
	check_eq(1, test_pmis);
}

/*
 * DEBUGCTL.FREEZE_PERFMON_ON_PMI: the counters stop at an overflow's PMI request (SDM Vol. 3B
 * "Freezing Performance Counters on PMI"): before perfmon v4 the CPU clears GLOBAL_CTRL, from v4
 * on it sets GLOBAL_STATUS.CTR_FRZ (bit 59). LVTPC is masked: the freeze comes with the
 * request, not with the interrupt, and interrupts stay off so nothing else runs meanwhile.
 */
TEST(emulator, freeze_on_pmi_stops_the_counter_at_its_overflow)
{
	unsigned int counter = emulator_test_counter(), version;
	uint32_t lvtpc = apic_read_lvtpc();
	uint64_t count, global_ctrl, status;
	unsigned long flags;

	require_emulator();
	version = CPUID_PERFMON_VERSION(cpuid(CPUID_LEAF_PERFMON, 0).eax);
	if (wrmsr_safe(MSR_IA32_DEBUGCTL, DEBUGCTL_FREEZE_PERFMON_ON_PMI))
		test_skip(
			"IA32_DEBUGCTL.FREEZE_PERFMON_ON_PMI raises #GP here (KVM does not support "
			"it: vmx_get_supported_debugctl())");
	wrmsr(MSR_IA32_DEBUGCTL, 0);
	flags = local_irq_save();
	apic_write_lvtpc(VECTOR_TEST | APIC_LVT_MASKED);
	wrmsr(MSR_IA32_DEBUGCTL, DEBUGCTL_FREEZE_PERFMON_ON_PMI);
	arm();
	probe_instruction_loop(LOOP);
	count = rdmsr(MSR_IA32_PMC0 + counter);
	global_ctrl = rdmsr(MSR_IA32_PERF_GLOBAL_CTRL);
	status = rdmsr(MSR_IA32_PERF_GLOBAL_STATUS);
	wrmsr(MSR_IA32_DEBUGCTL, 0);
	disarm(lvtpc);
	local_irq_restore(flags);
	test_diag("perfmon v%u: counter %llu after the loop, GLOBAL_CTRL 0x%llx, GLOBAL_STATUS "
		  "0x%llx",
		  version, (unsigned long long)count, (unsigned long long)global_ctrl,
		  (unsigned long long)status);
	/*
	 * The overflowing instruction wrapped it to 0. The freeze comes with the PMI request, which
	 * silicon's skid puts some instructions later; the SDM gives no bound, the model's profile
	 * gives its own (rule 22): 0 to that many may count after the wrap, no more.
	 */
	check(count <= emulator_pmi_skid(), "counter %llu after its overflow; the skid allows %u",
	      (unsigned long long)count, emulator_pmi_skid());
	check_eq(1ull << counter, status & (1ull << counter));
	if (version >= 4) {
		check_eq(1ull << counter, global_ctrl);
		check_eq(PERF_GLOBAL_STATUS_COUNTERS_FROZEN,
			 status & PERF_GLOBAL_STATUS_COUNTERS_FROZEN);
	} else {
		check_eq(0, global_ctrl);
	}
}

/*
 * IA32_DEBUGCTL's BTF, LBR and freeze bits as the platform takes them. Silicon with PDCM and
 * perfmon v2 keeps BTF and both freeze bits (SDM Vol. 4 Table 2-2; LBR is not modelled). A KVM
 * guest without LBR (vmx_set_msr(), vmx_get_supported_debugctl()) drops BTF and LBR without a
 * fault and raises #GP for either freeze bit.
 */
TEST(emulator, debugctl_keeps_or_drops_btf_lbr_and_the_freeze_bits_as_the_platform_does)
{
	bool kvm = emulator_plays_kvm_guest();
	uint64_t value = ~0ull;
	uint32_t fault;

	require_emulator();
	if (!kvm && !(cpuid(CPUID_LEAF_FEATURES, 0).ecx & CPUID_1_ECX_PDCM))
		test_skip("CPUID.1:ECX.PDCM is 0: the freeze bits do not exist");
	check_eq(0, wrmsr_safe(MSR_IA32_DEBUGCTL, DEBUGCTL_BTF | DEBUGCTL_LBR));
	rdmsr_safe(MSR_IA32_DEBUGCTL, &value);
	wrmsr(MSR_IA32_DEBUGCTL, 0);
	check_eq(kvm ? 0 : DEBUGCTL_BTF, value & DEBUGCTL_BTF);
	if (kvm)
		check_eq(0, value & DEBUGCTL_LBR);
	fault = wrmsr_safe(MSR_IA32_DEBUGCTL, DEBUGCTL_FREEZE_PERFMON_ON_PMI);
	wrmsr(MSR_IA32_DEBUGCTL, 0);
	check_eq(kvm ? EXINFO(X86_EXC_GP, 0) : 0, fault);
	fault = wrmsr_safe(MSR_IA32_DEBUGCTL, DEBUGCTL_FREEZE_LBRS_ON_PMI);
	wrmsr(MSR_IA32_DEBUGCTL, 0);
	check_eq(kvm ? EXINFO(X86_EXC_GP, 0) : 0, fault);
	test_diag("%s: DEBUGCTL after BTF|LBR reads 0x%llx", kvm ? "KVM guest" : "silicon",
		  (unsigned long long)value);
}

/*
 * Rule 22: the model lets exactly its profile's skid of instructions retire between an overflow
 * and the PMI request (0 on the named profiles, skid:N on the skid boot). Seen through the
 * freeze, which comes with the request: the counter holds what it counted after the wrap.
 */
TEST(emulator, rule_22_a_pmi_is_requested_exactly_the_profiles_skid_after_its_overflow)
{
	unsigned int counter = emulator_test_counter();
	uint32_t lvtpc = apic_read_lvtpc();
	unsigned long flags;
	uint64_t count;

	require_emulator();
	if (wrmsr_safe(MSR_IA32_DEBUGCTL, DEBUGCTL_FREEZE_PERFMON_ON_PMI))
		test_skip("IA32_DEBUGCTL.FREEZE_PERFMON_ON_PMI raises #GP here: no freeze to see "
			  "the request by");
	wrmsr(MSR_IA32_DEBUGCTL, 0);
	flags = local_irq_save();
	apic_write_lvtpc(VECTOR_TEST | APIC_LVT_MASKED);
	wrmsr(MSR_IA32_DEBUGCTL, DEBUGCTL_FREEZE_PERFMON_ON_PMI);
	arm();
	probe_instruction_loop(LOOP); /* 136 instructions past the overflow, more than any skid */
	count = rdmsr(MSR_IA32_PMC0 + counter);
	wrmsr(MSR_IA32_DEBUGCTL, 0);
	disarm(lvtpc);
	local_irq_restore(flags);
	test_diag("skid %u: the counter froze at %llu after its wrap", emulator_pmi_skid(),
		  (unsigned long long)count);
	check_eq((uint64_t)emulator_pmi_skid(), count);
}
