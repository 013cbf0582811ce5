/* SPDX-License-Identifier: MIT */
/* emulator suite: the AMD profiles (rule 26) through the kernel's own accessors: CPUID, the
 * MSRs that exist and those that raise #GP, counting by AMD's encodings, and an AMD PMI. */
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/apic.h"
#include "arch/x86/cpu.h"
#include "arch/x86/cpuid.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/extable.h"
#include "arch/x86/msr.h"
#include "arch/x86/probe.h"
#include "arch/x86/traps.h"
#include "arch/x86/tsc.h"
#include "emulator/emulator.h"
#include "lib/string.h"
#include "runner/test.h"
#include "tests/kernel/lib/emulator_util.h"

/* Linux amd_perfmon_event_map, unit mask 0. */
#define AMD_EVENT_CYCLES 0x76
#define AMD_EVENT_INSTRUCTIONS 0xc0
#define AMD_EVENT_BRANCHES 0xc2
#define AMD_EVENT_NOT_MODELLED \
	0x3c /* Intel's cycles; on AMD another event the model does not count */
#define LOOP 100 /* iterations: 200 instructions, 100 branches (each a step of the model) */
/* Instructions between the enabling and the disabling WRMSR besides the loop: the accessor's
 * msr_diverted() check and the diversion (49 and 16 branches on TCG; slack). */
#define AROUND_LOOP 64
#define OVERFLOW_AFTER 64
#define RELOAD_PERIOD (1ull << 20) /* the handler's reload: no second overflow in the loop */
#define PMI_LOOP 100
#define PMI_WAIT_MS 2000

/* The AMD part the model plays, from CPUID alone, as Linux amd_core_pmu_init() reads it. */
struct amd_pmu_enum {
	bool perfctr_core, perfmon_v2;
	unsigned int counters;
};

static struct amd_pmu_enum require_amd_profile(void)
{
	struct amd_pmu_enum e = { 0 };
	char vendor[13];

	require_emulator();
	cpuid_vendor(vendor);
	if (strcmp(vendor, "AuthenticAMD") != 0)
		test_skip("the emulated CPU plays %s (%s), not an AMD part", vendor,
			  emulator_describe());
	e.perfctr_core = cpuid(CPUID_LEAF_AMD_FEATURES, 0).ecx & CPUID_80000001_ECX_PERFCTR_CORE;
	e.perfmon_v2 = cpuid(CPUID_LEAF_EXTENDED, 0).eax >= CPUID_LEAF_AMD_PERFMON &&
		       (cpuid(CPUID_LEAF_AMD_PERFMON, 0).eax & CPUID_80000022_EAX_PERFMON_V2);
	e.counters =
		e.perfmon_v2
			? CPUID_80000022_EBX_CORE_COUNTERS(cpuid(CPUID_LEAF_AMD_PERFMON, 0).ebx)
		: e.perfctr_core ? AMD_CORE_COUNTERS
				 : AMD_K7_COUNTERS;
	return e;
}

static uint32_t ctl_msr(const struct amd_pmu_enum *e, unsigned int i)
{
	return e->perfctr_core ? MSR_F15H_PERF_CTL0 + 2 * i : MSR_K7_EVNTSEL0 + i;
}

static uint32_t ctr_msr(const struct amd_pmu_enum *e, unsigned int i)
{
	return e->perfctr_core ? MSR_F15H_PERF_CTR0 + 2 * i : MSR_K7_PERFCTR0 + i;
}

static bool gp_faults_read(uint32_t msr)
{
	uint64_t value;

	return rdmsr_safe(msr, &value) == EXINFO(X86_EXC_GP, 0);
}

TEST(emulator, amd_cpuid_and_msrs_enumerate_the_profiles_pmu)
{
	struct amd_pmu_enum e = require_amd_profile();
	uint64_t value;

	test_diag("PerfCtrExtCore=%u PerfMonV2=%u counters=%u", e.perfctr_core, e.perfmon_v2,
		  e.counters);
	check_eq(0, cpuid(CPUID_LEAF_FEATURES, 0).edx & CPUID_1_EDX_DS);
	check_eq(0, cpuid(CPUID_LEAF_PERFMON, 0).eax);
	check_eq(0, cpuid(CPUID_LEAF_AMD_FEATURES, 0).ecx & CPUID_80000001_ECX_BPEXT);
	for (unsigned int i = 0; i < AMD_K7_COUNTERS; i++) {
		check_eq(0, rdmsr_safe(MSR_K7_EVNTSEL0 + i, &value));
		check_eq(0, rdmsr_safe(MSR_K7_PERFCTR0 + i, &value));
	}
	for (unsigned int i = 0; i < AMD_CORE_COUNTERS; i++) {
		bool exists = e.perfctr_core && i < e.counters;

		check_eq(!exists, gp_faults_read(MSR_F15H_PERF_CTL0 + 2 * i));
		check_eq(!exists, gp_faults_read(MSR_F15H_PERF_CTR0 + 2 * i));
	}
	for (uint32_t msr = MSR_AMD64_PERF_CNTR_GLOBAL_STATUS;
	     msr <= MSR_AMD64_PERF_CNTR_GLOBAL_STATUS_SET; msr++)
		check_eq(!e.perfmon_v2, gp_faults_read(msr));
}

TEST(emulator, amd_intel_only_msrs_raise_gp)
{
	static const uint32_t intel[] = {
		MSR_IA32_PERFEVTSEL0,
		MSR_IA32_PMC0,
		MSR_IA32_A_PMC0,
		MSR_IA32_FIXED_CTR0,
		MSR_IA32_FIXED_CTR_CTRL,
		MSR_IA32_PERF_GLOBAL_STATUS,
		MSR_IA32_PERF_GLOBAL_CTRL,
		MSR_IA32_PERF_GLOBAL_OVF_CTRL,
		MSR_IA32_PERF_CAPABILITIES,
		MSR_IA32_PEBS_ENABLE,
		MSR_PEBS_DATA_CFG,
		MSR_IA32_DS_AREA,
		MSR_IA32_MISC_ENABLE,
	};

	require_amd_profile();
	for (unsigned int i = 0; i < sizeof(intel) / sizeof(intel[0]); i++) {
		check(gp_faults_read(intel[i]), "RDMSR 0x%x did not raise #GP", intel[i]);
		check_eq(EXINFO(X86_EXC_GP, 0), wrmsr_safe(intel[i], 0));
	}
}

/* Count LOOP iterations on the last counter, which pmu/ leaves alone, with select ctl. */
static uint64_t count_loop(const struct amd_pmu_enum *e, uint64_t event)
{
	unsigned int i = e->counters - 1;
	uint64_t global = 0, count;

	if (e->perfmon_v2) {
		global = rdmsr(MSR_AMD64_PERF_CNTR_GLOBAL_CTL);
		wrmsr(MSR_AMD64_PERF_CNTR_GLOBAL_CTL, global | (1ull << i));
	}
	wrmsr(ctr_msr(e, i), 0);
	wrmsr(ctl_msr(e, i), event | PERFEVTSEL_OS | PERFEVTSEL_EN);
	probe_instruction_loop(LOOP);
	wrmsr(ctl_msr(e, i), 0);
	count = rdmsr(ctr_msr(e, i));
	if (e->perfmon_v2)
		wrmsr(MSR_AMD64_PERF_CNTR_GLOBAL_CTL, global);
	return count;
}

TEST_OBSERVING(emulator, amd_counters_count_by_amds_event_encodings, 3 * (2 * LOOP + AROUND_LOOP))
{
	struct amd_pmu_enum e = require_amd_profile();
	uint64_t instructions = count_loop(&e, AMD_EVENT_INSTRUCTIONS);
	uint64_t branches = count_loop(&e, AMD_EVENT_BRANCHES);
	uint64_t other = count_loop(&e, AMD_EVENT_NOT_MODELLED);

	test_diag("instructions %llu branches %llu event 0x3c %llu",
		  (unsigned long long)instructions, (unsigned long long)branches,
		  (unsigned long long)other);
	check(instructions >= 2 * LOOP && instructions <= 2 * LOOP + AROUND_LOOP,
	      "expected %u to %u instructions, got %llu", 2 * LOOP, 2 * LOOP + AROUND_LOOP,
	      (unsigned long long)instructions);
	check(branches >= LOOP && branches <= LOOP + AROUND_LOOP,
	      "expected %u to %u branches, got %llu", LOOP, LOOP + AROUND_LOOP,
	      (unsigned long long)branches);
	check_eq(0, other);
}

static volatile unsigned int amd_pmis;
static volatile uint32_t lvtpc_in_handler;
static volatile uint64_t status_in_handler, counter_in_handler;
static struct amd_pmu_enum pmi_enum;
static bool pmi_acknowledges;

/*
 * As Linux: amd_pmu_v2_handle_irq() reads GlobalStatus and clears it through GlobalStatusClr;
 * amd_pmu_handle_irq() (no PerfMonV2) finds the overflowed counter by its clear sign bit and
 * reloads it. Neither unmasks LVTPC on AMD (nothing masked it).
 */
static void amd_pmi(struct cpu_regs *regs)
{
	unsigned int i = pmi_enum.counters - 1;

	(void)regs;
	lvtpc_in_handler = apic_read_lvtpc();
	counter_in_handler = rdmsr(ctr_msr(&pmi_enum, i));
	if (pmi_enum.perfmon_v2) {
		status_in_handler = rdmsr(MSR_AMD64_PERF_CNTR_GLOBAL_STATUS);
		if (pmi_acknowledges)
			wrmsr(MSR_AMD64_PERF_CNTR_GLOBAL_STATUS_CLR, status_in_handler);
	} else if (pmi_acknowledges) {
		wrmsr(ctr_msr(&pmi_enum, i),
		      (0 - RELOAD_PERIOD) & ((1ull << AMD_COUNTER_WIDTH) - 1));
	}
	amd_pmis++;
}

/* One overflow of the last counter with a PMI; then the counter off and LVTPC as it was. */
static void overflow_once(void)
{
	unsigned int i = pmi_enum.counters - 1;
	uint32_t lvtpc = apic_read_lvtpc();
	uint64_t global = 0, deadline;
	unsigned long flags;

	amd_pmis = 0;
	interrupt_register(VECTOR_TEST, amd_pmi);
	apic_write_lvtpc(VECTOR_TEST);
	if (pmi_enum.perfmon_v2) {
		global = rdmsr(MSR_AMD64_PERF_CNTR_GLOBAL_CTL);
		wrmsr(MSR_AMD64_PERF_CNTR_GLOBAL_CTL, global | (1ull << i));
	}
	wrmsr(ctr_msr(&pmi_enum, i),
	      (0 - (uint64_t)OVERFLOW_AFTER) & ((1ull << AMD_COUNTER_WIDTH) - 1));
	wrmsr(ctl_msr(&pmi_enum, i),
	      AMD_EVENT_INSTRUCTIONS | PERFEVTSEL_OS | PERFEVTSEL_INT | PERFEVTSEL_EN);
	probe_instruction_loop(PMI_LOOP);
	/* Wait counting ring 3 only: not stepped (emulator_pmi.c says why a wait is needed). */
	wrmsr(ctl_msr(&pmi_enum, i),
	      AMD_EVENT_INSTRUCTIONS | PERFEVTSEL_USR | PERFEVTSEL_INT | PERFEVTSEL_EN);
	deadline = rdtsc_ordered() + tsc_cycles_from_ms(PMI_WAIT_MS);
	while (amd_pmis == 0 && rdtsc_ordered() < deadline)
		cpu_relax();
	flags = local_irq_save();
	wrmsr(ctl_msr(&pmi_enum, i), 0);
	if (pmi_enum.perfmon_v2) {
		wrmsr(MSR_AMD64_PERF_CNTR_GLOBAL_STATUS_CLR,
		      rdmsr(MSR_AMD64_PERF_CNTR_GLOBAL_STATUS) & (1ull << i));
		wrmsr(MSR_AMD64_PERF_CNTR_GLOBAL_CTL, global);
	}
	wrmsr(ctr_msr(&pmi_enum, i), 0);
	apic_write_lvtpc(lvtpc);
	local_irq_restore(flags);
	interrupt_register(VECTOR_TEST, NULL);
}

TEST_OBSERVING(emulator, amd_a_pmi_leaves_lvtpc_unmasked_and_is_acknowledged_as_linux_does,
	       4 * PMI_LOOP)
{
	char text[EMULATOR_VIOLATION_MAX];
	unsigned int i;

	pmi_enum = require_amd_profile();
	i = pmi_enum.counters - 1;
	pmi_acknowledges = true;
	overflow_once();
	check_eq(1, amd_pmis);
	/* Intel's APIC would read VECTOR_TEST | APIC_LVT_MASKED here (rule 13). */
	check_eq((uint32_t)VECTOR_TEST, lvtpc_in_handler);
	/* Overflowed past 0: the sign bit (47) is clear, as amd_pmu_test_overflow_topbit() tests.
	 */
	check_eq(0, counter_in_handler & (1ull << (AMD_COUNTER_WIDTH - 1)));
	if (pmi_enum.perfmon_v2)
		check_eq(1ull << i, status_in_handler);
	check_eq(0, emulator_take_violations(text, sizeof(text)));
}

TEST_OBSERVING(emulator, amd_rule_14_a_pmi_handler_that_acknowledges_nothing_is_reported,
	       4 * PMI_LOOP)
{
	char text[EMULATOR_VIOLATION_MAX];
	unsigned int count;

	pmi_enum = require_amd_profile();
	pmi_acknowledges = false;
	overflow_once();
	count = emulator_take_violations(text, sizeof(text));
	test_diag("reported: %s", count ? text : "nothing");
	check_eq(1, amd_pmis);
	check(count >= 1 && strncmp(text, "rule 14:", 8) == 0,
	      "expected a rule 14 report, got %u: %s", count, text);
}
