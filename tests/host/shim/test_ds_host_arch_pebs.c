/* SPDX-License-Identifier: MIT */
/* Host tests of ds/'s architectural-PEBS detection on the model's leaf 23H (rule 25). */
#include <stdint.h>

#include "ds/ds.h"
#include "tests/host/shim/shim.h"

/* Bitmaps typed in PEBS_ENABLE numbering: GP i at bit i, fixed i at bit 32 + i. */
#define GP_0_TO_7 0xffull
#define FIXED_0_TO_3 (0xfull << 32)
#define FIXED_0_TO_2 (0x7ull << 32)
/* 23H.4 EBX << 32: CFG_C bits 35-37, 40-41, 49, 61, 62 (arch/x86/arch-pebs.h, typed again). */
#define MODEL_CAPS                                                                                 \
	((1ull << 35) | (1ull << 36) | (1ull << 37) | (1ull << 40) | (1ull << 41) | (1ull << 49) | \
	 (1ull << 61) | (1ull << 62))

SHIM_TEST(ds_host_arch_pebs_is_detected_with_its_counters_and_groups, "pantherlake")
{
	const struct ds_arch_pebs_support *a = &ds_support()->arch_pebs;

	shim_boot();
	host_checkf(a->usable, "refused: %s", a->reason);
	host_check_str("", a->reason);
	host_check_eq_u64(GP_0_TO_7 | FIXED_0_TO_3, a->counters);
	host_check_eq_u64(GP_0_TO_7 | FIXED_0_TO_2, a->pebs);
	host_check_eq_u64(0x3ull | (0x1ull << 32), a->pdist);
	host_check_eq_u64(MODEL_CAPS, a->caps);
	/* The DS-area PEBS is not this part's: its exact reason; BTS stays. */
	host_check_str("PEBS format 0xF is architectural PEBS: not in the DS area",
		       ds_support()->pebs_reason);
	host_check_str("", ds_support()->bts_reason);
	shim_check_clean();
}

/* Linux update_pmu_cap(): a PEBS counter 23H.1 lacks disables arch-PEBS. */
SHIM_TEST(ds_host_arch_pebs_with_a_stray_counter_is_refused, "pantherlake,arch_pebs_stray:1")
{
	const struct ds_arch_pebs_support *a = &ds_support()->arch_pebs;

	shim_boot();
	host_check(!a->usable);
	host_check_str("CPUID.23H.5 names counters 0x100 that the counters (0xf000000ff) lack",
		       a->reason);
	shim_check_clean();
}

SHIM_TEST(ds_host_arch_pebs_is_absent_before_format_0xf, "arrowlake")
{
	const struct ds_arch_pebs_support *a = &ds_support()->arch_pebs;

	shim_boot();
	host_check(!a->usable);
	host_check_str("IA32_PERF_CAPABILITIES.PEBS_FMT=6, not 0xF", a->reason);
	host_check_eq_u64(0, a->pebs);
	host_check_str("", ds_support()->pebs_reason);
	shim_check_clean();
}

SHIM_TEST(ds_host_arch_pebs_needs_pdcm, "zen4")
{
	shim_boot();
	host_check(!ds_support()->arch_pebs.usable);
	host_check_str("CPUID.1:ECX.PDCM=0 (no IA32_PERF_CAPABILITIES)",
		       ds_support()->arch_pebs.reason);
	shim_check_clean();
}
