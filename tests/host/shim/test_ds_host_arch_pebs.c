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

/*
 * ds_pebs_check() on the model's leaf 23H: each rule a configuration breaks, first one first,
 * with the value that decides it; the attach refuses each alike. The model lists GP 0-7 and
 * fixed 0-2 for PEBS, GP 0-1 and fixed 0 for PDIST.
 */
static struct ds_pebs_config valid_config(void)
{
	return (struct ds_pebs_config){
		.format = 0xf,
		.record_size = 64,
		.records = 16,
		.threshold_records = 8,
		.enable = 1,
		.reset_value = 0xfffffc18, /* -1000 */
	};
}

static void check_refused(const struct ds_pebs_config *config, const char *expected)
{
	struct ds_target target = { false, 0 };
	char reason[160];

	host_check_eq_i64(DS_ERROR_CONFIG, ds_pebs_check(config, reason, sizeof(reason)));
	host_check_str(expected, reason);
	host_check_eq_i64(DS_ERROR_CONFIG, ds_attach_pebs(&target, config));
}

SHIM_TEST(ds_host_arch_pebs_check_names_each_rule_a_configuration_breaks, "pantherlake")
{
	struct ds_pebs_config c;
	char reason[160] = "x";

	shim_boot();
	c = valid_config();
	host_check_eq_i64(DS_OK, ds_pebs_check(&c, reason, sizeof(reason)));
	host_check_str("", reason);
	c.enable = 1ull << 34; /* fixed counter 2 */
	c.pdist = 0;
	host_check_eq_i64(DS_OK, ds_pebs_check(&c, reason, sizeof(reason)));
	c = valid_config();
	c.pdist = 1;
	host_check_eq_i64(DS_OK, ds_pebs_check(&c, reason, sizeof(reason)));

	c = valid_config();
	c.format = 5;
	check_refused(&c, "PEBS format 5: this CPU's is architectural PEBS (0xf)");
	c = valid_config();
	c.data_cfg = 1;
	check_refused(&c, "PEBS_DATA_CFG 0x1: no such MSR with architectural PEBS (CFG_C has the "
			  "groups)");
	c = valid_config();
	c.enable = 0;
	check_refused(&c, "enable 0x0: no counter, or a bit above fixed counter 15 (bit 47)");
	c.enable = 1ull << 48;
	check_refused(&c, "enable 0x1000000000000: no counter, or a bit above fixed counter 15 "
			  "(bit 47)");
	c.enable = 1ull << 8;
	check_refused(&c, "counters 0x100 do not exist: the CPU has 0xf000000ff");
	c.enable = 1ull << 35;
	check_refused(&c, "fixed counters 0x8 cannot PEBS: CPUID.23H.5:ECX is 0x7");
	c = valid_config();
	c.pdist = 2;
	check_refused(&c, "pdist 0x2 names counters enable (0x1) lacks");
	c.enable = c.pdist = 1ull << 2;
	check_refused(&c, "GP counters 0x4 lack precise distribution: CPUID.23H.5:EBX is 0x3");
	c.enable = c.pdist = 1ull << 33;
	check_refused(&c, "fixed counters 0x2 lack precise distribution: CPUID.23H.5:EDX is 0x1");
	c = valid_config();
	c.groups = 1ull << 38;
	check_refused(&c, "CFG_C group bits 0x4000000000: CPUID.23H.4:EBX (0x60020338) lacks them");
	c = valid_config();
	c.record_size = 48;
	check_refused(&c, "record size 48: at least 64 bytes (a header and the basic group), a "
			  "multiple of 16");
	c.record_size = 72;
	check_refused(&c, "record size 72: at least 64 bytes (a header and the basic group), a "
			  "multiple of 16");
	c = valid_config();
	c.reset_value = 1000;
	check_refused(&c, "reset value 0x3e8: bit 31 clear, so CFG_C's sign-extended reload is no "
			  "-period");
	c = valid_config();
	c.threshold_records = 15;
	check_refused(&c, "16 records with a threshold of 15: the threshold is 1, or leaves 2 "
			  "records of room below the end");
	c = valid_config();
	c.records = 4097;
	c.threshold_records = 1;
	check_refused(&c, "262208 bytes of records: beyond 262144 (size code 6)");
	shim_check_clean();
}
