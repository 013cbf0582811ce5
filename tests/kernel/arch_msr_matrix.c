/* SPDX-License-Identifier: MIT */
/* arch suite: every PMU, DS, LBR and debug MSR exists exactly where CPUID promises it. */
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/arch-pebs.h"
#include "arch/x86/cpuid.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/extable.h"
#include "arch/x86/msr.h"
#include "emulator/emulator.h"
#include "emulator/registers.h"
#include "lib/format.h"
#include "lib/string.h"
#include "runner/identity.h"
#include "runner/test.h"

/*
 * What the CPU's own enumeration says of one MSR: it exists, it raises #GP, or the enumeration
 * does not decide (reported, not judged). Sources: SDM Vol. 4 Table 2-2 ("If CPUID..." column)
 * and Vol. 3B "Architectural Performance Monitoring"; AMD APM Vol. 2 §13.2 and §13.1.1.6, APM
 * Vol. 3 Appendix E; docs/hardware-facts.md §1, §5.
 */
enum promise { ABSENT, PRESENT, OPEN };

/*
 * An MSR no part and no hypervisor defines (KVM's own are 0x4b564d00-0x4b564d08): where its
 * RDMSR does not fault, the platform reads unknown MSRs without #GP (QEMU TCG returns 0), and
 * an absent MSR can be judged only where the emulated CPU answers for it.
 */
#define MSR_NOWHERE 0x4b564dffu
static bool platform_faults_unknown_msrs;

/*
 * KVM reads and takes the P6 and K7 counter MSRs (0xC1-0xC2, 0x186-0x187, 0xC0010000-7) even
 * without a vPMU, "for compatibility with old guests" (kvm_get_msr_common(), kvm_set_msr_common():
 * they read 0). Where the emulated CPU does not answer for them, a KVM guest cannot judge them.
 */
static bool kvm_answers_anyway(uint32_t msr)
{
	return strncmp(platform_identity(), "kvm", 3) == 0 &&
	       (msr == MSR_IA32_PMC0 || msr == MSR_IA32_PMC0 + 1 || msr == MSR_IA32_PERFEVTSEL0 ||
		msr == MSR_IA32_PERFEVTSEL0 + 1 ||
		(msr >= MSR_K7_EVNTSEL0 && msr < MSR_K7_PERFCTR0 + AMD_K7_COUNTERS));
}

struct part {
	bool intel, amd;
	/* Intel */
	bool ds, pdcm, pebs, baseline, full_width, misc_known;
	bool arch_pebs; /* PERF_CAPABILITIES PEBS_FMT 0xF: PEBS_BASE/INDEX/CFG_C, no PEBS_ENABLE */
	unsigned int version, gp, fixed_count;
	uint32_t fixed_bitmap;
	/* AMD */
	bool perfctr_core, perfmon_v2, lbr_v2, bpext;
	unsigned int amd_counters, lbr_v2_depth;
};

static struct part find_part(void)
{
	struct part p = { 0 };
	struct cpuid_result leaf1 = cpuid(CPUID_LEAF_FEATURES, 0), pm = { 0 };
	uint32_t highest = cpuid(CPUID_LEAF_VENDOR, 0).eax;
	uint32_t extended = cpuid(CPUID_LEAF_EXTENDED, 0).eax;
	uint64_t misc = 0, caps = 0;
	char vendor[13];

	cpuid_vendor(vendor);
	p.intel = strcmp(vendor, "GenuineIntel") == 0;
	p.amd = strcmp(vendor, "AuthenticAMD") == 0;
	p.ds = leaf1.edx & CPUID_1_EDX_DS;
	p.pdcm = leaf1.ecx & CPUID_1_ECX_PDCM;
	if (highest >= CPUID_LEAF_PERFMON)
		pm = cpuid(CPUID_LEAF_PERFMON, 0);
	p.version = CPUID_PERFMON_VERSION(pm.eax);
	p.gp = p.version ? CPUID_PERFMON_GP_COUNTERS(pm.eax) : 0;
	p.fixed_count = p.version >= 2 ? CPUID_PERFMON_FIXED_COUNTERS(pm.edx) : 0;
	p.fixed_bitmap = p.version >= 5 ? pm.ecx : 0;
	p.misc_known = p.intel && rdmsr_safe(MSR_IA32_MISC_ENABLE, &misc) == 0;
	p.pebs = p.ds && p.misc_known && !(misc & MISC_ENABLE_PEBS_UNAVAILABLE);
	if (p.pdcm && rdmsr_safe(MSR_IA32_PERF_CAPABILITIES, &caps) == 0) {
		p.baseline = caps & PERF_CAP_PEBS_BASELINE;
		p.full_width = caps & PERF_CAP_FULL_WIDTH_WRITE;
		p.arch_pebs = ((caps & PERF_CAP_PEBS_FORMAT_MASK) >> PERF_CAP_PEBS_FORMAT_SHIFT) ==
			      PERF_CAP_PEBS_FORMAT_ARCH;
	}
	if (extended >= CPUID_LEAF_AMD_FEATURES) {
		uint32_t ecx = cpuid(CPUID_LEAF_AMD_FEATURES, 0).ecx;

		p.perfctr_core = p.amd && (ecx & CPUID_80000001_ECX_PERFCTR_CORE);
		p.bpext = p.amd && (ecx & CPUID_80000001_ECX_BPEXT);
	}
	if (p.amd && extended >= CPUID_LEAF_AMD_PERFMON) {
		struct cpuid_result v2 = cpuid(CPUID_LEAF_AMD_PERFMON, 0);

		p.perfmon_v2 = v2.eax & CPUID_80000022_EAX_PERFMON_V2;
		p.lbr_v2 = v2.eax & CPUID_80000022_EAX_LBR_EXT_V2;
		p.lbr_v2_depth = p.lbr_v2 ? CPUID_80000022_EBX_LBR_STACK(v2.ebx) : 0;
		p.amd_counters = p.perfmon_v2 ? CPUID_80000022_EBX_CORE_COUNTERS(v2.ebx) : 0;
	}
	if (p.amd && !p.perfmon_v2)
		p.amd_counters = p.perfctr_core ? AMD_CORE_COUNTERS : AMD_K7_COUNTERS;
	return p;
}

static enum promise yes_no(bool present)
{
	return present ? PRESENT : ABSENT;
}

/* A row for an Intel MSR: on AMD it raises #GP (silicon, and KVM's AMD vPMU). */
static enum promise intel_msr(const struct part *p, bool present)
{
	if (p->amd)
		return ABSENT;
	return p->intel ? yes_no(present) : OPEN;
}

/* A row for an architectural-PEBS MSR (arch/x86/arch-pebs.h): present with it where counter. */
static enum promise arch_pebs_msr(const struct part *p, bool counter)
{
	if (p->arch_pebs)
		return intel_msr(p, counter);
	return emulator_active() || p->amd ? ABSENT : OPEN;
}

/* A row for an AMD MSR: on Intel it raises #GP. */
static enum promise amd_msr(const struct part *p, bool present)
{
	if (p->intel)
		return ABSENT;
	return p->amd ? yes_no(present) : OPEN;
}

static bool fixed_exists(const struct part *p, unsigned int i)
{
	return p->version >= 2 && (((p->fixed_bitmap >> i) & 1) || p->fixed_count > i);
}

static unsigned int checked, judged;

static void row(const char *name, unsigned int index, uint32_t msr, enum promise promise)
{
	static const char *const words[] = { "#GP", "exists", "not enumerated" };
	uint64_t value;
	uint32_t fault = rdmsr_safe(msr, &value);
	bool exists = fault == 0;
	bool held;

	if (promise == ABSENT && !(emulator_active() && emulator_owns_msr(msr)) &&
	    (!platform_faults_unknown_msrs || kvm_answers_anyway(msr)))
		promise = OPEN; /* the platform would read it as 0 whatever the part is */
	held = promise == OPEN || exists == (promise == PRESENT);

	checked++;
	judged += promise != OPEN;
	char label[32];

	if (index == ~0u)
		format(label, sizeof(label), "%s", name);
	else
		format(label, sizeof(label), "%s%u", name, index);
	test_diag("msr 0x%08x %-26s CPUID: %-14s found: %-6s %s", msr, label, words[promise],
		  exists			   ? "exists"
		  : fault == EXINFO(X86_EXC_GP, 0) ? "#GP"
						   : "fault",
		  held ? "ok" : "MISMATCH");
	check(held, "MSR 0x%x (%s): CPUID says %s, RDMSR found %s (fault 0x%x)", msr, name,
	      words[promise], exists ? "it exists" : "#GP", fault);
}

TEST(arch, every_pmu_ds_lbr_and_debug_msr_exists_as_cpuid_promises)
{
	struct part p = find_part();
	const unsigned int single = ~0u;
	uint64_t value;

	platform_faults_unknown_msrs = rdmsr_safe(MSR_NOWHERE, &value) != 0;
	if (!platform_faults_unknown_msrs)
		test_diag("RDMSR 0x%x (defined nowhere) read 0x%llx without #GP: this platform "
			  "reads unknown MSRs, so absence is judged only where the emulated CPU "
			  "answers",
			  MSR_NOWHERE, (unsigned long long)value);

	test_diag("part: %s perfmon v%u gp=%u fixed=%u ds=%u pdcm=%u pebs=%u baseline=%u "
		  "full_width=%u | PerfCtrExtCore=%u PerfMonV2=%u counters=%u LbrExtV2=%u "
		  "BPEXT=%u | %s",
		  p.intel ? "Intel"
		  : p.amd ? "AMD"
			  : "other vendor",
		  p.version, p.gp, p.fixed_count, p.ds, p.pdcm, p.pebs, p.baseline, p.full_width,
		  p.perfctr_core, p.perfmon_v2, p.amd_counters, p.lbr_v2, p.bpext,
		  emulator_active() ? "the emulated CPU" : "no model");
	row("IA32_DEBUGCTL", single, MSR_IA32_DEBUGCTL, p.intel || p.amd ? PRESENT : OPEN);
	row("IA32_MISC_ENABLE", single, MSR_IA32_MISC_ENABLE, p.intel ? PRESENT : OPEN);
	row("IA32_DS_AREA", single, MSR_IA32_DS_AREA, intel_msr(&p, p.ds));
	row("IA32_PERF_CAPABILITIES", single, MSR_IA32_PERF_CAPABILITIES, intel_msr(&p, p.pdcm));
	/* Architectural PEBS has no PEBS_ENABLE or PEBS_DATA_CFG (Linux's arch-PEBS series). */
	row("IA32_PEBS_ENABLE", single, MSR_IA32_PEBS_ENABLE,
	    p.misc_known || p.amd ? intel_msr(&p, p.pebs && !p.arch_pebs) : OPEN);
	row("MSR_PEBS_DATA_CFG", single, MSR_PEBS_DATA_CFG,
	    intel_msr(&p, p.baseline && !p.arch_pebs));
	/*
	 * Its MSRs exist with it; without it the model raises #GP, and silicon is not judged (a
	 * perfmon-v6 part may have the 0x1900 block for other uses).
	 */
	row("IA32_PEBS_BASE", single, MSR_IA32_PEBS_BASE, arch_pebs_msr(&p, true));
	row("IA32_PEBS_INDEX", single, MSR_IA32_PEBS_INDEX, arch_pebs_msr(&p, true));
	for (unsigned int i = 0; i < 8; i++)
		row("IA32_PMC_GP_CFG_C", i, MSR_IA32_PMC_GP0_CFG_C + MSR_IA32_PMC_CFG_C_STRIDE * i,
		    arch_pebs_msr(&p, i < p.gp));
	for (unsigned int i = 0; i < 4; i++)
		row("IA32_PMC_FX_CFG_C", i, MSR_IA32_PMC_FX0_CFG_C + MSR_IA32_PMC_CFG_C_STRIDE * i,
		    arch_pebs_msr(&p, fixed_exists(&p, i)));
	for (unsigned int i = 0; i < 8; i++) {
		row("IA32_PERFEVTSEL", i, MSR_IA32_PERFEVTSEL0 + i, intel_msr(&p, i < p.gp));
		row("IA32_PMC", i, MSR_IA32_PMC0 + i, intel_msr(&p, i < p.gp));
		row("IA32_A_PMC", i, MSR_IA32_A_PMC0 + i, intel_msr(&p, i < p.gp && p.full_width));
	}
	for (unsigned int i = 0; i < 4; i++)
		row("IA32_FIXED_CTR", i, MSR_IA32_FIXED_CTR0 + i,
		    intel_msr(&p, fixed_exists(&p, i)));
	row("IA32_FIXED_CTR_CTRL", single, MSR_IA32_FIXED_CTR_CTRL, intel_msr(&p, p.version >= 2));
	row("IA32_PERF_GLOBAL_STATUS", single, MSR_IA32_PERF_GLOBAL_STATUS,
	    intel_msr(&p, p.version >= 2));
	row("IA32_PERF_GLOBAL_CTRL", single, MSR_IA32_PERF_GLOBAL_CTRL,
	    intel_msr(&p, p.version >= 2));
	row("IA32_PERF_GLOBAL_OVF_CTRL", single, MSR_IA32_PERF_GLOBAL_OVF_CTRL,
	    intel_msr(&p, p.version >= 2));
	for (unsigned int i = 0; i < AMD_K7_COUNTERS; i++) {
		row("PERF_CTL(K7)", i, MSR_K7_EVNTSEL0 + i, amd_msr(&p, i < p.amd_counters));
		row("PERF_CTR(K7)", i, MSR_K7_PERFCTR0 + i, amd_msr(&p, i < p.amd_counters));
	}
	for (unsigned int i = 0; i < AMD_CORE_COUNTERS; i++) {
		row("PERF_CTL", i, MSR_F15H_PERF_CTL0 + 2 * i,
		    amd_msr(&p, p.perfctr_core && i < p.amd_counters));
		row("PERF_CTR", i, MSR_F15H_PERF_CTR0 + 2 * i,
		    amd_msr(&p, p.perfctr_core && i < p.amd_counters));
	}
	row("PerfCntrGlobalStatus", single, MSR_AMD64_PERF_CNTR_GLOBAL_STATUS,
	    amd_msr(&p, p.perfmon_v2));
	row("PerfCntrGlobalCtl", single, MSR_AMD64_PERF_CNTR_GLOBAL_CTL, amd_msr(&p, p.perfmon_v2));
	row("PerfCntrGlobalStatusClr", single, MSR_AMD64_PERF_CNTR_GLOBAL_STATUS_CLR,
	    amd_msr(&p, p.perfmon_v2));
	row("PerfCntrGlobalStatusSet", single, MSR_AMD64_PERF_CNTR_GLOBAL_STATUS_SET,
	    amd_msr(&p, p.perfmon_v2));
	/* Without LbrExtV2 an older LBR may answer there: not judged. */
	row("LBR_SELECT", single, MSR_AMD64_LBR_SELECT, p.lbr_v2 ? PRESENT : OPEN);
	row("DBG_EXTN_CFG", single, MSR_AMD_DBG_EXTN_CFG, p.lbr_v2 ? PRESENT : OPEN);
	/* LbrExtV2: its first and last entry (EBX[9:4]); past it, or AMD without it: not judged */
	if (p.lbr_v2_depth) {
		unsigned int last = p.lbr_v2_depth - 1;

		row("LBR_FROM", 0, MSR_AMD_SAMP_BR_FROM, PRESENT);
		row("LBR_TO", 0, MSR_AMD_SAMP_BR_FROM + 1, PRESENT);
		row("LBR_FROM", last, MSR_AMD_SAMP_BR_FROM + 2 * last, PRESENT);
		row("LBR_TO", last, MSR_AMD_SAMP_BR_FROM + 2 * last + 1, PRESENT);
	}
	if (!p.lbr_v2) {
		row("LBR_FROM", 0, MSR_AMD_SAMP_BR_FROM, p.intel ? ABSENT : OPEN);
		row("LBR_TO", 0, MSR_AMD_SAMP_BR_FROM + 1, p.intel ? ABSENT : OPEN);
	}
	row("DR0_ADDR_MASK", single, MSR_F16H_DR0_ADDR_MASK, amd_msr(&p, p.bpext));
	for (unsigned int i = 1; i < 4; i++)
		row("DR_ADDR_MASK", i, MSR_F16H_DR1_ADDR_MASK + i - 1, amd_msr(&p, p.bpext));
	test_diag("%u MSRs read, %u judged by CPUID", checked, judged);
	checked = judged = 0;
}
