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
		       "CPU vendor %s: only Intel architectural perfmon is supported", vendor);
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
