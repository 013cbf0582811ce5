/* SPDX-License-Identifier: MIT */
/* pebs suite: real PEBS records; runs on hardware (or KVM with PEBS passthrough), skips elsewhere.
 */
#include "arch/x86/paging.h"
#include "arch/x86/probe.h"
#include "ds/ds.h"
#include "pmu/pmu.h"
#include "runner/test.h"
#include "sched/sched.h"

#define INST_RETIRED 0xc0
/*
 * The counter counts the kernel's instructions, pmu/'s and ds/'s around the loop too (about 900
 * where the CPU is emulated): the period is long enough that they make at most one record.
 */
#define PERIOD 1000ull
#define ITERATIONS 5000ull /* 10,000 instructions: 10 records */
#define RECORDS 64
#define RECORD_SLACK 2 /* stated tolerance: the first and last period are partial */

static const struct pmu_event instructions = { .event = INST_RETIRED, .kernel = true };

/* PEBS needs the Debug Store conditions, and a counter to drive it (pmu/). */
static void require_pebs(void)
{
	if (ds_support()->pebs_reason[0])
		test_skip("%s", ds_support()->pebs_reason);
	if (!pmu_usable())
		test_skip("%s", pmu_info()->reason);
}

/* PEBS on GP counter 0 counting kernel instructions, reloaded with -PERIOD after each record. */
static struct ds_pebs_config pebs_config(void)
{
	unsigned int format = ds_support()->pebs_format;
	size_t size = pebs_format_is_adaptive((enum pebs_format)format)
			      ? PEBS_BASIC_GROUP_SIZE
			      : pebs_record_size((enum pebs_format)format);
	uint64_t width =
		pmu_info()->gp_width >= 64 ? UINT64_MAX : (1ull << pmu_info()->gp_width) - 1;

	/* Format 0 buffers fit one page (Linux: larger ones hang Core 2). */
	size_t records =
		format == PEBS_FORMAT_0 && RECORDS * size > PAGE_SIZE ? PAGE_SIZE / size : RECORDS;

	return (struct ds_pebs_config){ .format = format,
					.record_size = size,
					.records = records,
					.threshold_records = records - ds_threshold_room(records),
					.enable = 1,
					.reset_value = (0 - PERIOD) & width };
}

static void run_counted_loop(void)
{
	struct ds_pebs_config config = pebs_config();
	struct ds_target target = { false, sched_current()->index, 0 };

	if (ds_attach_pebs(&target, &config) != DS_OK)
		test_abort("ds_attach_pebs failed");
	/* Armed with -PERIOD: a counter left at 0 would overflow only after 2^width events. */
	if (pmu_add_sampling_event(sched_current()->index, &instructions, PERIOD) != 0)
		test_abort("pmu_add_sampling_event did not get counter 0");
	probe_instruction_loop(ITERATIONS);
	pmu_release(sched_current()->index);
	ds_detach(&target, DS_USER_PEBS); /* drains the partial buffer, credits this task */
}

/* Twice: the second run must start from a full period again, whatever the first left. */
TEST_OBSERVING(pebs, record_count_follows_the_counter_period, 22000)
{
	uint64_t records, expected = ITERATIONS * PROBE_LOOP_INSTRUCTIONS_PER_ITERATION / PERIOD;

	require_pebs();
	for (int run = 1; run <= 2; run++) {
		ds_credit_reset(sched_current()->index);
		run_counted_loop();
		records = ds_credit(sched_current()->index).pebs_records;
		check(records + RECORD_SLACK >= expected && records <= expected + RECORD_SLACK,
		      "run %d: %llu records, expected %llu +- %u", run, (unsigned long long)records,
		      (unsigned long long)expected, RECORD_SLACK);
	}
}

TEST_OBSERVING(pebs, bts_and_pebs_are_active_at_once_on_one_ds_area, 12000)
{
	struct ds_bts_config bts = { .records = 4096,
				     .threshold_records = 4096 - ds_threshold_room(4096) };
	struct ds_target target = { false, sched_current()->index, 0 };
	struct ds_credit credit;

	require_pebs();
	if (ds_support()->bts_reason[0])
		test_skip("%s", ds_support()->bts_reason);
	ds_credit_reset(target.index);
	if (ds_attach_bts(&target, &bts) != DS_OK)
		test_abort("ds_attach_bts failed");
	run_counted_loop(); /* the loop's taken JNZs fill BTS while PEBS samples them */
	ds_detach(&target, DS_USER_BTS);
	credit = ds_credit(target.index);
	check(credit.bts_records > 0 && credit.pebs_records > 0, "bts %llu, pebs %llu records",
	      (unsigned long long)credit.bts_records, (unsigned long long)credit.pebs_records);
}
