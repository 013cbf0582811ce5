/* SPDX-License-Identifier: MIT */
/* Architectural PEBS detection: which counters can PEBS, with which groups, or why none can. */
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/arch-pebs.h"
#include "arch/x86/cpuid.h"
#include "ds/arch_pebs.h"
#include "ds/ds.h"
#include "lib/format.h"

#define FIXED_SHIFT 32 /* PEBS_ENABLE numbering: fixed counter i at bit 32 + i */

static uint64_t counter_bits(uint32_t gp, uint32_t fixed)
{
	return (uint64_t)fixed << FIXED_SHIFT | gp;
}

/*
 * The counters that exist: CPUID.23H.1 when sub-leaf 0 enumerates it, else leaf 0AH's counts
 * (and, from version 5, its fixed-counter bitmap), as Linux's cntr_mask64 and
 * fixed_cntr_mask64 come to be.
 */
static uint64_t counters_that_exist(uint32_t sub0)
{
	struct cpuid_result leaf = cpuid(CPUID_LEAF_PERFMON, 0);
	unsigned int gp = CPUID_PERFMON_GP_COUNTERS(leaf.eax);
	unsigned int fixed = CPUID_PERFMON_FIXED_COUNTERS(leaf.edx);
	uint32_t fixed_bits = fixed >= 32 ? UINT32_MAX : (1u << fixed) - 1;

	if (sub0 & CPUID_23_EAX_COUNTERS_SUBLEAF) {
		leaf = cpuid(CPUID_LEAF_PERFMON_EXT, CPUID_23_SUBLEAF_COUNTERS);
		return counter_bits(leaf.eax, leaf.ebx);
	}
	if (CPUID_PERFMON_VERSION(leaf.eax) >= 5)
		fixed_bits |= leaf.ecx;
	return counter_bits(gp >= 32 ? UINT32_MAX : (1u << gp) - 1, fixed_bits);
}

void ds_arch_pebs_detect(bool pdcm, unsigned int pebs_format, struct ds_arch_pebs_support *out)
{
	uint32_t max_leaf = cpuid(CPUID_LEAF_VENDOR, 0).eax, sub0;
	struct cpuid_result caps, pebs;

	*out = (struct ds_arch_pebs_support){ 0 };
	if (!pdcm) {
		format(out->reason, sizeof(out->reason),
		       "CPUID.1:ECX.PDCM=0 (no IA32_PERF_CAPABILITIES)");
		return;
	}
	if (pebs_format != PERF_CAP_PEBS_FORMAT_ARCH) {
		format(out->reason, sizeof(out->reason),
		       "IA32_PERF_CAPABILITIES.PEBS_FMT=%u, not 0xF", pebs_format);
		return;
	}
	if (max_leaf < CPUID_LEAF_PERFMON_EXT) {
		format(out->reason, sizeof(out->reason),
		       "PEBS_FMT 0xF but CPUID leaf 23H is beyond the highest basic leaf 0x%x",
		       max_leaf);
		return;
	}
	sub0 = cpuid(CPUID_LEAF_PERFMON_EXT, 0).eax;
	/* Linux: "Bits[5:4] should be set simultaneously if arch-PEBS is supported". */
	if (!(sub0 & CPUID_23_EAX_PEBS_CAPS_SUBLEAF) ||
	    !(sub0 & CPUID_23_EAX_PEBS_COUNTERS_SUBLEAF)) {
		format(out->reason, sizeof(out->reason),
		       "CPUID.23H.0:EAX=0x%x does not enumerate both PEBS sub-leaves (bits 4, 5)",
		       sub0);
		return;
	}
	caps = cpuid(CPUID_LEAF_PERFMON_EXT, CPUID_23_SUBLEAF_PEBS_CAPS);
	pebs = cpuid(CPUID_LEAF_PERFMON_EXT, CPUID_23_SUBLEAF_PEBS_COUNTERS);
	out->caps = (uint64_t)caps.ebx << CPUID_23_PEBS_CAPS_SHIFT;
	out->counters = counters_that_exist(sub0);
	out->pebs = counter_bits(pebs.eax, pebs.ecx);
	out->pdist = counter_bits(pebs.ebx, pebs.edx);
	/* Linux: WARN_ON((pebs_mask | pdists_mask) & ~cntrs_mask) disables arch-PEBS. */
	if ((out->pebs | out->pdist) & ~out->counters) {
		format(out->reason, sizeof(out->reason),
		       "CPUID.23H.5 names counters 0x%llx that the counters (0x%llx) lack",
		       (unsigned long long)((out->pebs | out->pdist) & ~out->counters),
		       (unsigned long long)out->counters);
		return;
	}
	if (!out->pebs) {
		format(out->reason, sizeof(out->reason), "CPUID.23H.5 names no PEBS counter");
		return;
	}
	out->usable = true;
}
