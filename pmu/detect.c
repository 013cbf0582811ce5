/* SPDX-License-Identifier: MIT */
/*
 * Detecting architectural perfmon (SDM Vol. 3 §20.2, CPUID leaf 0xA;
 * docs/hardware-facts.md §1, §5).
 */
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/cpuid.h"
#include "arch/x86/msr.h"
#include "lib/format.h"
#include "lib/string.h"
#include "pmu/detect.h"

static struct pmu_info info;

/* IA32_MISC_ENABLE bit 7 (SDM Vol. 4 Table 2-2, read-only): 1 = performance monitoring enabled. */
static bool perfmon_available(void)
{
	uint64_t misc = 0;

	return rdmsr_safe(MSR_IA32_MISC_ENABLE, &misc) == 0 &&
	       (misc & MISC_ENABLE_PERFMON_AVAILABLE);
}

/*
 * AMD's core PMU from the extended leaves, as Linux amd_core_pmu_init() reads them. pmu/ drives
 * PerfCtrExtCore's MSRs, with PerfMonV2's global control and status where it exists.
 */
static void detect_amd(struct pmu_info *info)
{
	uint32_t highest = cpuid(CPUID_LEAF_EXTENDED, 0).eax;
	struct cpuid_result v2 = { 0 };

	if (highest >= CPUID_LEAF_AMD_FEATURES)
		info->amd_perfctr_core =
			cpuid(CPUID_LEAF_AMD_FEATURES, 0).ecx & CPUID_80000001_ECX_PERFCTR_CORE;
	if (highest >= CPUID_LEAF_AMD_PERFMON)
		v2 = cpuid(CPUID_LEAF_AMD_PERFMON, 0);
	info->amd_perfmon_v2 = v2.eax & CPUID_80000022_EAX_PERFMON_V2;
	info->gp_counters = info->amd_perfmon_v2     ? CPUID_80000022_EBX_CORE_COUNTERS(v2.ebx)
			    : info->amd_perfctr_core ? AMD_CORE_COUNTERS
						     : AMD_K7_COUNTERS;
	info->gp_width = AMD_COUNTER_WIDTH;
	if (!info->amd_perfctr_core)
		format(info->reason, sizeof(info->reason),
		       "AMD without PerfCtrExtCore (CPUID 0x80000001 ECX[23]=0): pmu/ drives "
		       "its six-counter MSRs only");
	else if (info->gp_counters == 0)
		format(info->reason, sizeof(info->reason),
		       "CPUID 0x80000022 EBX[3:0]=0 (no core counters)");
}

const struct pmu_info *pmu_info(void)
{
	return &info;
}

void pmu_detect(void)
{
	pmu_detect_cpu(&info);
}

void pmu_detect_cpu(struct pmu_info *out)
{
	struct pmu_info info = { 0 };
	struct cpuid_result leaf = { 0 };
	char vendor[13];

	cpuid_vendor(vendor);
	info.intel = strcmp(vendor, "GenuineIntel") == 0;
	info.amd = strcmp(vendor, "AuthenticAMD") == 0;
	if (info.amd) {
		detect_amd(&info);
		*out = info;
		return;
	}
	if (cpuid(0, 0).eax >= CPUID_LEAF_PERFMON)
		leaf = cpuid(CPUID_LEAF_PERFMON, 0);
	info.version = CPUID_PERFMON_VERSION(leaf.eax);
	info.gp_counters = CPUID_PERFMON_GP_COUNTERS(leaf.eax);
	info.gp_width = CPUID_PERFMON_GP_WIDTH(leaf.eax);
	info.unavailable_events = leaf.ebx;
	if (info.version >= 2) {
		/* Fixed counter i exists if ECX[i] (version 5 on) or EDX[4:0] > i (SDM Vol. 3B
		 * 21.2.5); pmu/ drives the ones from 0 up to the first missing. */
		while (info.fixed_counters < 32 &&
		       ((info.version >= 5 && (leaf.ecx & (1u << info.fixed_counters))) ||
			CPUID_PERFMON_FIXED_COUNTERS(leaf.edx) > info.fixed_counters))
			info.fixed_counters++;
		info.fixed_width = CPUID_PERFMON_FIXED_WIDTH(leaf.edx);
	}
	if (!info.intel)
		format(info.reason, sizeof(info.reason),
		       "CPU vendor %s: only Intel architectural perfmon and AMD PerfMonV2 are "
		       "supported",
		       vendor);
	else if (info.version == 0)
		format(info.reason, sizeof(info.reason),
		       "CPUID.0AH:EAX[7:0]=0 (no architectural performance monitoring)");
	else if (info.version == 1)
		format(info.reason, sizeof(info.reason),
		       "CPUID.0AH:EAX[7:0]=1: perfmon version 1 has no GLOBAL_CTRL, which pmu/ "
		       "uses");
	else if (info.gp_counters == 0)
		format(info.reason, sizeof(info.reason), "CPUID.0AH:EAX[15:8]=0 (no GP counters)");
	else if (!perfmon_available())
		format(info.reason, sizeof(info.reason),
		       "IA32_MISC_ENABLE.PERFMON_AVAILABLE=0 (firmware turned performance "
		       "monitoring off)");
	if (cpuid(0, 0).eax >= CPUID_LEAF_HYBRID &&
	    (cpuid(CPUID_LEAF_EXTENDED_FEATURES, 0).edx & CPUID_7_EDX_HYBRID))
		info.core_type = CPUID_HYBRID_CORE_TYPE(cpuid(CPUID_LEAF_HYBRID, 0).eax);
	*out = info;
}
