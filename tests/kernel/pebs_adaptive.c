/* SPDX-License-Identifier: MIT */
/* pebs suite: adaptive records carry exactly the groups PEBS_DATA_CFG selects (SDM "Adaptive
 * PEBS"). */
#include <stdint.h>

#include "arch/x86/probe.h"
#include "ds/buffer.h"
#include "ds/ds.h"
#include "pmu/pmu.h"
#include "runner/test.h"
#include "sched/sched.h"

/*
 * Each case single-steps what the counter counts (docs/platforms.md: what a step costs): the
 * loop's 400 instructions at a period of 100 make 4 records, and what
 * pmu_add_sampling_event() counts before it and pmu_release() before it stops the counter
 * (about 150 instructions) one or two more, under the threshold. RECORDS_MIN is the loop's own
 * 4. About 580 steps a case, 2,900 in all.
 */
#define PERIOD 100ull
#define ITERATIONS 200ull /* 400 instructions */
#define RECORDS 32
#define RECORDS_MIN (2 * ITERATIONS / PERIOD)

struct group_case {
	const char *name;
	uint64_t data_cfg;
};

static const struct group_case cases[] = {
	{ "basic", 0 },
	{ "memory", PEBS_DATA_CFG_MEMINFO },
	{ "gprs", PEBS_DATA_CFG_GPRS },
	{ "memory+gprs+xmm", PEBS_DATA_CFG_MEMINFO | PEBS_DATA_CFG_GPRS | PEBS_DATA_CFG_XMMS },
	{ "lbrs(4)", PEBS_DATA_CFG_LBRS | (3ull << PEBS_DATA_CFG_LBR_SHIFT) },
};

/* Walk the records in place (PEBS is off by then) and check each one's groups and size. */
static void check_records(const struct group_case *c, const struct ds_area *area, uint64_t cfg)
{
	const uint8_t *at = (const uint8_t *)area->pebs_base;
	const uint8_t *end = (const uint8_t *)area->pebs_index;
	size_t expected_size = pebs_adaptive_record_size(cfg), size = 0;
	unsigned int records = 0;
	struct pebs_sample sample;

	for (; at < end; at += size, records++) {
		if (!check(pebs_decode((enum pebs_format)ds_support()->pebs_format, at,
				       (size_t)(end - at), cfg, &sample, &size),
			   "%s: record %u does not decode", c->name, records))
			return;
		check_eq(expected_size, size);
		check_eq(!!(cfg & PEBS_DATA_CFG_MEMINFO), sample.has_memory);
		check_eq(!!(cfg & PEBS_DATA_CFG_GPRS), sample.has_gprs);
		check_eq(!!(cfg & PEBS_DATA_CFG_XMMS), sample.has_xmm);
		check_eq(cfg & PEBS_DATA_CFG_LBRS ? 4 : 0, sample.lbr_count);
		check_eq(1, sample.status); /* counter 0 */
		if (sample.has_gprs)
			check(sample.register_ip != sample.ip,
			      "%s: the GPR group's ip is the next "
			      "instruction's, the basic group's the eventing one",
			      c->name);
	}
	check(records >= RECORDS_MIN, "%s: %u records, expected at least %llu", c->name, records,
	      (unsigned long long)RECORDS_MIN);
}

/* PEBS, counters, and adaptive records: format 4 and up with baseline (SDM "Adaptive PEBS"). */
static void require_adaptive_pebs(void)
{
	if (ds_support()->pebs_reason[0])
		test_skip("%s", ds_support()->pebs_reason);
	if (!pmu_usable())
		test_skip("%s", pmu_info()->reason);
	if (ds_support()->pebs_format < PEBS_FORMAT_4 || !ds_support()->pebs_baseline)
		test_skip("PEBS format %u%s: no adaptive records", ds_support()->pebs_format,
			  ds_support()->pebs_baseline ? "" : " without baseline");
}

TEST_OBSERVING(pebs, adaptive_records_carry_exactly_the_groups_data_cfg_selects, 2900)
{
	struct pmu_event event = {
		.event = 0xc0, .kernel = true, .pebs_adaptive = true, .pebs = true
	};
	struct ds_target target = { false, sched_current()->index };

	require_adaptive_pebs();
	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t cfg = cases[i].data_cfg;
		size_t size = pebs_adaptive_record_size(cfg);
		struct ds_pebs_config config = {
			.format = ds_support()->pebs_format,
			.record_size = size,
			.records = RECORDS,
			.threshold_records = RECORDS - ds_threshold_room(RECORDS),
			.data_cfg = cfg,
			.enable = 1,
			.reset_value = (0 - PERIOD) & ((1ull << pmu_info()->gp_width) - 1),
		};

		check_eq(DS_OK, ds_attach_pebs(&target, &config));
		if (pmu_add_sampling_event(sched_current()->index, &event, PERIOD) != 0)
			test_abort("pmu_add_sampling_event did not get counter 0");
		probe_instruction_loop(ITERATIONS);
		pmu_release(sched_current()->index);
		test_diag("%s: data_cfg 0x%llx, %zu-byte records", cases[i].name,
			  (unsigned long long)cfg, size);
		check_records(&cases[i], ds_area_get(&target), cfg);
		check_eq(DS_OK, ds_detach(&target, DS_USER_PEBS));
	}
}

/*
 * PEBS_DATA_CFG applies to events that ask for adaptive records (EVTSEL bit 34); any other
 * event's records carry the basic group alone (SDM "Adaptive PEBS"; Linux sets the bit per event,
 * ICL_EVENTSEL_ADAPTIVE). In a buffer sized for the groups, with its threshold after an odd
 * number of them, such 32-byte records are stored and each one credited.
 */
TEST_OBSERVING(pebs, an_event_without_adaptive_records_writes_basic_ones_under_data_cfg, 600)
{
	struct pmu_event event = { .event = 0xc0, .kernel = true, .pebs = true };
	struct ds_target target = { false, sched_current()->index };
	uint64_t cfg = PEBS_DATA_CFG_GPRS;
	struct ds_pebs_config config;
	const struct ds_area *area;
	uint64_t stored;

	require_adaptive_pebs();
	config = (struct ds_pebs_config){
		.format = ds_support()->pebs_format,
		.record_size = pebs_adaptive_record_size(cfg),
		.records = RECORDS,
		.threshold_records = RECORDS - ds_threshold_room(RECORDS),
		.data_cfg = cfg,
		.enable = 1,
		.reset_value = (0 - PERIOD) & ((1ull << pmu_info()->gp_width) - 1),
	};
	/* An odd number of 176-byte records: a threshold between two 32-byte ones (rule 20). */
	config.threshold_records -= (config.threshold_records + 1) % 2;
	ds_credit_reset(target.index);
	check_eq(DS_OK, ds_attach_pebs(&target, &config));
	if (pmu_add_sampling_event(target.index, &event, PERIOD) != 0)
		test_abort("pmu_add_sampling_event did not get counter 0");
	probe_instruction_loop(ITERATIONS);
	pmu_release(target.index);
	area = ds_area_get(&target);
	stored = (area->pebs_index - area->pebs_base) / PEBS_BASIC_GROUP_SIZE;
	check_records(&(struct group_case){ "basic under data_cfg", 0 }, area, 0);
	check_eq(DS_OK, ds_detach(&target, DS_USER_PEBS));
	check_eq(stored, ds_credit(target.index).pebs_records);
}
