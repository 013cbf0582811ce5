/* SPDX-License-Identifier: MIT */
/* AMD LbrExtV2 for lbr/: detection from CPUID 0x80000022 and the entries' encoding. */
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/cpuid.h"
#include "arch/x86/msr-index.h"
#include "arch/x86/msr.h"
#include "lbr/amd.h"
#include "lbr/lbr.h"
#include "lib/format.h"

/*
 * Sources: AMD APM Vol. 2 §13.1.1 and Linux arch/x86/events/amd/lbr.c (amd_pmu_lbr_init(),
 * amd_pmu_lbr_read(), struct branch_entry, lbr_select_map, amd_pmu_lbr_enable_all());
 * docs/hardware-facts.md §12.
 */

#define ADDRESS_BITS 58 /* an entry's address field, bits 57:0 */

static bool amd(void)
{
	struct cpuid_result leaf = cpuid(0, 0);

	return leaf.ebx == CPUID_VENDOR_AMD_EBX && leaf.edx == CPUID_VENDOR_AMD_EDX &&
	       leaf.ecx == CPUID_VENDOR_AMD_ECX;
}

static bool msr_reads(uint32_t index)
{
	uint64_t value;

	return rdmsr_safe(index, &value) == 0;
}

/* The first condition that fails, in the order Linux amd_pmu_lbr_init() meets them. */
void lbr_amd_detect(struct lbr_support *s)
{
	uint32_t highest = cpuid(CPUID_LEAF_EXTENDED, 0).eax;
	static const uint32_t named[] = { MSR_AMD64_LBR_SELECT, MSR_AMD_DBG_EXTN_CFG };
	struct cpuid_result leaf;
	unsigned int depth;

	if (!amd()) {
		format(s->reason, sizeof(s->reason),
		       "neither GenuineIntel nor AuthenticAMD: no LBR lbr/ drives");
		return;
	}
	if (highest < CPUID_LEAF_AMD_PERFMON) {
		format(s->reason, sizeof(s->reason),
		       "AuthenticAMD, highest extended CPUID leaf 0x%x: no leaf 0x80000022, no "
		       "LbrExtV2",
		       highest);
		return;
	}
	leaf = cpuid(CPUID_LEAF_AMD_PERFMON, 0);
	if (!(leaf.eax & CPUID_80000022_EAX_LBR_EXT_V2)) {
		format(s->reason, sizeof(s->reason),
		       "AuthenticAMD, CPUID 0x80000022 EAX[1]=0: no LbrExtV2");
		return;
	}
	if (!(leaf.eax & CPUID_80000022_EAX_PERFMON_V2)) {
		format(s->reason, sizeof(s->reason),
		       "CPUID 0x80000022 EAX[1]=1 but EAX[0]=0: LbrExtV2 without PerfMonV2, which "
		       "Linux does not drive");
		return;
	}
	depth = CPUID_80000022_EBX_LBR_STACK(leaf.ebx);
	if (!depth || depth > LBR_LEGACY_MAX_DEPTH) {
		format(s->reason, sizeof(s->reason),
		       "CPUID 0x80000022 EBX[9:4]=%u: lbr/ keeps 1 to %u entries", depth,
		       LBR_LEGACY_MAX_DEPTH);
		return;
	}
	for (unsigned int i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		if (!msr_reads(named[i])) {
			format(s->reason, sizeof(s->reason),
			       "RDMSR 0x%x raises #GP although CPUID 0x80000022 EAX[1]=1",
			       named[i]);
			return;
		}
	}
	if (!msr_reads(lbr_amd_from_msr(depth - 1)) || !msr_reads(lbr_amd_to_msr(depth - 1))) {
		format(s->reason, sizeof(s->reason),
		       "RDMSR of LBR entry %u (0x%x) raises #GP although CPUID 0x80000022 "
		       "EBX[9:4]=%u",
		       depth - 1, lbr_amd_from_msr(depth - 1), depth);
		return;
	}
	s->amd = true;
	s->depth = depth;
	s->from_msr = lbr_amd_from_msr(0);
	s->to_msr = lbr_amd_to_msr(0);
	s->select = true;
	s->call_stack = false; /* no call-stack mode: Linux lbr_select_map has none */
	s->freeze = leaf.eax & CPUID_80000022_EAX_LBR_PMC_FREEZE;
	s->freeze_by_status = s->freeze; /* PerfCntrGlobalStatus bit 58 */
	s->present = true;
}

static uint64_t sign_extended(uint64_t address)
{
	return (uint64_t)((int64_t)(address << (64 - ADDRESS_BITS)) >> (64 - ADDRESS_BITS));
}

struct lbr_entry lbr_amd_decode(uint64_t from, uint64_t to)
{
	return (struct lbr_entry){ .from = sign_extended(from),
				   .to = sign_extended(to),
				   .mispredicted = (from & AMD_LBR_FROM_MISPREDICT) != 0 };
}
