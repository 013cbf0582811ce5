/* SPDX-License-Identifier: MIT */
/* ds_synth suite: one DS area shared by BTS and PEBS, independent teardown, and no leaks. */
#include "arch/x86/cpu.h"
#include "arch/x86/pfa.h"
#include "arch/x86/tsc.h"
#include "tests/kernel/ds_synth_util.h"

#define CYCLES 10000
#define CYCLE_BUDGET_MS 5000

static const struct ds_bts_config bts = { .records = 16, .threshold_records = 8 };
static const struct ds_pebs_config pebs = {
	.format = 3, .record_size = 200, .records = 8, .threshold_records = 4, .enable = 1
};

TEST(ds_synth, bts_and_pebs_users_share_one_ds_area)
{
	struct ds_target target = self_target();
	struct ds_area *area;

	check_attached(ds_attach_bts(&target, &bts));
	area = ds_area_get(&target);
	check_attached(ds_attach_pebs(&target, &pebs));
	check(ds_area_get(&target) == area, "the PEBS user got a second area");
	check(area->bts_base && area->pebs_base && area->bts_base != area->pebs_base,
	      "buffers 0x%llx and 0x%llx", (unsigned long long)area->bts_base,
	      (unsigned long long)area->pebs_base);
	check_eq(DS_ERROR_BUSY, ds_attach_bts(&target, &bts));
	check_eq((uint64_t)area, ds_registers().ds_area);
	ds_detach(&target, DS_USER_PEBS);
	ds_detach(&target, DS_USER_BTS);
}

TEST(ds_synth, bts_user_keeps_working_after_the_pebs_user_leaves)
{
	struct ds_target target = self_target();

	require_synthetic_backend();
	ds_credit_reset(target.index);
	check_attached(ds_attach_bts(&target, &bts));
	check_attached(ds_attach_pebs(&target, &pebs));
	check_eq(DS_OK, ds_detach(&target, DS_USER_PEBS));
	check(ds_area_get(&target) != NULL, "the area went with the PEBS user");
	check_eq(0, ds_area_get(&target)->pebs_base);
	for (unsigned int i = 0; i < 8; i++)
		check(ds_synth_branch(SYNTH_FROM + i, SYNTH_TO + i), "record %u dropped", i);
	check_eq(8, ds_credit(target.index).bts_records);
	check_eq(DS_OK, ds_detach(&target, DS_USER_BTS));
	check(ds_area_get(&target) == NULL, "the area outlived its last user");
	check_eq(DS_ERROR_NOT_ATTACHED, ds_detach(&target, DS_USER_BTS));
}

TEST(ds_synth, ten_thousand_attach_and_detach_cycles_leak_nothing)
{
	struct ds_target target = self_target();
	size_t free_before = pfa_free_count();
	uint64_t start = rdtsc_ordered(), deadline = start + tsc_cycles_from_ms(CYCLE_BUDGET_MS);
	unsigned int cycles = 0;

	for (; cycles < CYCLES && rdtsc_ordered() < deadline; cycles++) {
		if (ds_attach_bts(&target, &bts) != DS_OK ||
		    ds_attach_pebs(&target, &pebs) != DS_OK)
			break;
		ds_detach(&target, cycles % 2 ? DS_USER_BTS : DS_USER_PEBS);
		ds_detach(&target, cycles % 2 ? DS_USER_PEBS : DS_USER_BTS);
	}
	test_diag("metric ds.attach_detach_cycles cycles=%u milliseconds=%llu", cycles,
		  (unsigned long long)((rdtsc_ordered() - start) * 1000 / tsc_hz()));
	check(cycles == CYCLES || rdtsc_ordered() >= deadline, "attach failed at cycle %u", cycles);
	check_eq(free_before, pfa_free_count());
	check(ds_area_get(&target) == NULL, "an area was left behind");
}

TEST(ds_synth, impossible_buffers_are_refused)
{
	struct ds_target target = self_target();
	struct ds_bts_config empty = { .records = 0, .circular = true };
	struct ds_bts_config threshold = { .records = 4, .threshold_records = 5 };
	struct ds_pebs_config huge = { .format = 3,
				       .record_size = 200,
				       .records = 100000,
				       .threshold_records = 1,
				       .enable = 1 };

	check_eq(DS_ERROR_CONFIG, ds_attach_bts(&target, &empty));
	check_eq(DS_ERROR_CONFIG, ds_attach_bts(&target, &threshold));
	check_eq(DS_ERROR_NO_MEMORY, ds_attach_pebs(&target, &huge));
	check(ds_area_get(&target) == NULL, "a refused request left an area");
}
