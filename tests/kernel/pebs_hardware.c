/* SPDX-License-Identifier: MIT */
/* pebs suite: real PEBS records; runs on hardware (or KVM with PEBS passthrough), skips elsewhere.
 */
#include "arch/x86/cpu.h"
#include "arch/x86/msr.h"
#include "arch/x86/paging.h"
#include "arch/x86/probe.h"
#include "arch/x86/witness_marker.h"
#include "ds/buffer.h"
#include "ds/ds.h"
#include "ds/records.h"
#include "pmu/pmu.h"
#include "runner/test.h"
#include "sched/sched.h"
#include "tests/kernel/lib/user_programs.h"

#define INST_RETIRED 0xc0
/*
 * The record count: a user task's ring-3 instructions, counted USR only, so the kernel's own
 * (pmu/'s and ds/'s, and the switches) neither count nor, where the CPU is emulated, are
 * single-stepped. The task runs USER_ROUNDS rounds of USER_ITERATIONS DEC/JNZ and a yield,
 * about 70 instructions a round, fewer than a period: a period must go on across switches
 * (a switch that reloaded the full period would leave no record at all). With the few
 * instructions around the rounds (tests/kernel/lib/user_programs.asm, user_counted_rounds), 5
 * periods and some: 5 records. Stated tolerance: 1, as the SDM leaves open whether the instruction
 * that takes the assist counts. 128 is the shortest period Linux allows for some PEBS events
 * (bdw_limit_period()). About 690 ring-3 steps a run where the CPU is emulated; a platform that
 * loses some (docs/platforms.md) is a known defect (tests/known-defects.toml).
 */
#define USER_PERIOD 128ull
#define USER_ROUNDS 10ull
#define USER_ITERATIONS 32ull
#define USER_LOOP_INSTRUCTIONS (2 * USER_ITERATIONS * USER_ROUNDS) /* DEC/JNZ */
#define USER_RECORD_SLACK 1
/*
 * BTS and PEBS at once: a kernel loop, counted OS, so pmu/'s and ds/'s instructions around it
 * (about 900 where the CPU is emulated) count too; they and the loop make 2 periods or more.
 */
#define KERNEL_PERIOD 1000ull
#define KERNEL_ITERATIONS 600ull
#define RECORDS 64

static const struct pmu_event instructions = { .event = INST_RETIRED,
					       .kernel = true,
					       .pebs = true };
static const struct pmu_event user_instructions = { .event = INST_RETIRED,
						    .user = true,
						    .pebs = true };

/* PEBS needs the Debug Store conditions, and a counter to drive it (pmu/). */
static void require_pebs(void)
{
	if (ds_support()->pebs_reason[0])
		test_skip("%s", ds_support()->pebs_reason);
	if (!pmu_usable())
		test_skip("%s", pmu_info()->reason);
}

/* PEBS on GP counter 0, reloaded with -period after each record. */
static struct ds_pebs_config pebs_config(uint64_t period)
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
					.reset_value = (0 - period) & width };
}

/* The other task on the CPU: each yield of the counted task switches to it and back. */
static void yield_until_done(void *arg)
{
	const struct counted_rounds *rounds = arg;

	while (!rounds->done)
		sched_yield();
}

/*
 * The PEBS records of one run of a user task's counted loop: attached while it is stopped, and
 * drained when it exits (ds/ detaches what a task leaves and credits it). A kernel task beside it
 * takes the CPU at each of its yields; the runner waits in task_join().
 */
static uint64_t count_user_records(void)
{
	struct ds_pebs_config config = pebs_config(USER_PERIOD);
	struct task *task = task_create_user("counted", user_counted_rounds, USER_DATA_BASE,
					     TASK_START_STOPPED);
	struct counted_rounds *rounds;
	struct ds_target target;
	struct task *partner;
	unsigned int index;

	if (!task)
		test_abort("task_create_user failed");
	rounds = task_user_data(task);
	*rounds = (struct counted_rounds){ .iterations = USER_ITERATIONS,
					   .rounds = USER_ROUNDS,
					   .exit_when_done = 1 };
	index = task->index;
	target = (struct ds_target){ false, index };
	ds_credit_reset(index);
	if (ds_attach_pebs(&target, &config) != DS_OK)
		test_abort("ds_attach_pebs failed");
	/* Armed with -period: a counter left at 0 would overflow only after 2^width events. */
	if (pmu_add_sampling_event(index, &user_instructions, USER_PERIOD) != 0)
		test_abort("pmu_add_sampling_event did not get counter 0");
	partner = task_create("partner", yield_until_done, rounds, TASK_START_STOPPED);
	if (!partner)
		test_abort("task_create failed");
	task_continue(task);
	task_continue(partner);
	check_eq(0, task_join(task, NULL)); /* its exit drained the buffer */
	check_eq(0, task_join(partner, NULL));
	return ds_credit(index).pebs_records;
}

/* Twice on this CPU: the second run must start from a full period again, whatever the first
 * left in the counter. */
TEST_OBSERVING_USER(pebs, record_count_follows_the_counter_period, 1400)
{
	uint64_t records, expected = USER_LOOP_INSTRUCTIONS / USER_PERIOD;

	require_pebs();
	for (int run = 1; run <= 2; run++) {
		records = count_user_records();
		test_diag("run %d: %llu records", run, (unsigned long long)records);
		check(records + USER_RECORD_SLACK >= expected &&
			      records <= expected + USER_RECORD_SLACK,
		      "run %d: %llu records, expected %llu +- %u", run, (unsigned long long)records,
		      (unsigned long long)expected, USER_RECORD_SLACK);
	}
}

/*
 * Where each record of a known kernel loop points: PEBS on counter 0 (OS), interrupts off, in a
 * witness window (docs/witness.md). The counter is read once just after it starts: its value
 * says how many events came before that read, so the witness can number every instruction that
 * follows, and each record's eventing IP must be the instruction of the event after an overflow
 * (the assist's, which does not count: the counter reloads). 1,200 loop instructions, 5 periods
 * of 201 events: at least 5 records. About 1,300 steps where the CPU is emulated.
 */
#define EVENTING_PERIOD 200ull
#define EVENTING_ITERATIONS 600ull
#define EVENTING_RECORDS_MIN 5

static void print_records(const struct ds_target *target, const struct ds_pebs_config *config,
			  unsigned int *count)
{
	const struct ds_area *area = ds_area_get(target);
	uint64_t at = area->pebs_base;
	struct pebs_sample sample;
	size_t size;

	for (*count = 0; at < area->pebs_index; at += size, (*count)++) {
		if (!check(pebs_decode((enum pebs_format)config->format, (const void *)at,
				       area->pebs_index - at, config->data_cfg, &sample, &size),
			   "record %u does not decode", *count))
			return;
		test_diag("pebs record %u: eventing 0x%llx ip 0x%llx", *count,
			  (unsigned long long)(sample.has_eventing_ip ? sample.eventing_ip : 0),
			  (unsigned long long)sample.ip);
	}
}

TEST_OBSERVING(pebs, records_point_at_the_event_after_each_overflow, 1300)
{
	struct ds_pebs_config config = pebs_config(EVENTING_PERIOD);
	struct ds_target target = { false, sched_current()->index };
	uint64_t width =
		pmu_info()->gp_width >= 64 ? UINT64_MAX : (1ull << pmu_info()->gp_width) - 1;
	uint64_t value;
	unsigned long flags;
	unsigned int records;

	require_pebs();
	if (ds_attach_pebs(&target, &config) != DS_OK)
		test_abort("ds_attach_pebs failed");
	flags = local_irq_save();
	if (pmu_add_sampling_event(target.index, &instructions, EVENTING_PERIOD) != 0) {
		local_irq_restore(flags);
		test_abort("pmu_add_sampling_event did not get counter 0");
	}
	witness_begin(WITNESS_PEBS_EVENTING);
	value = rdmsr(MSR_IA32_PMC0);
	probe_instruction_loop(EVENTING_ITERATIONS);
	pmu_release(target.index);
	witness_end(WITNESS_PEBS_EVENTING);
	local_irq_restore(flags);
	test_diag("pebs: %llu events before the counter read, period %llu",
		  (unsigned long long)((value + EVENTING_PERIOD) & width), EVENTING_PERIOD);
	print_records(&target, &config, &records);
	check(records >= EVENTING_RECORDS_MIN, "%u records, expected at least %u", records,
	      EVENTING_RECORDS_MIN);
	check_eq(DS_OK, ds_detach(&target, DS_USER_PEBS));
}

/*
 * Attached in the order that, where the CPU is emulated, steps least: PEBS first, then BTS, which
 * traces everything from its attach to its detach, then the counter, which counts (and steps)
 * everything from its start to its release.
 */
TEST_OBSERVING(pebs, bts_and_pebs_are_active_at_once_on_one_ds_area, 3000)
{
	struct ds_bts_config bts = { .records = 4096,
				     .threshold_records = 4096 - ds_threshold_room(4096) };
	struct ds_pebs_config pebs = pebs_config(KERNEL_PERIOD);
	struct ds_target target = { false, sched_current()->index };
	struct ds_credit credit;

	require_pebs();
	if (ds_support()->bts_reason[0])
		test_skip("%s", ds_support()->bts_reason);
	ds_credit_reset(target.index);
	if (ds_attach_pebs(&target, &pebs) != DS_OK)
		test_abort("ds_attach_pebs failed");
	if (ds_attach_bts(&target, &bts) != DS_OK)
		test_abort("ds_attach_bts failed");
	/* Armed with -period: a counter left at 0 would overflow only after 2^width events. */
	if (pmu_add_sampling_event(target.index, &instructions, KERNEL_PERIOD) != 0)
		test_abort("pmu_add_sampling_event did not get counter 0");
	probe_instruction_loop(KERNEL_ITERATIONS); /* its taken JNZs fill BTS while PEBS samples */
	pmu_release(target.index);
	check_eq(DS_OK, ds_detach(&target, DS_USER_BTS));
	check_eq(DS_OK, ds_detach(&target, DS_USER_PEBS)); /* drains, credits this task */
	credit = ds_credit(target.index);
	test_diag("bts %llu, pebs %llu records", (unsigned long long)credit.bts_records,
		  (unsigned long long)credit.pebs_records);
	/* Every taken JNZ is stored (SDM), and a record per period of the loop's own instructions
	 * at least: none of either may be lost to the other. */
	check(credit.bts_records >= KERNEL_ITERATIONS - 1, "bts %llu records, the loop takes %llu",
	      (unsigned long long)credit.bts_records, KERNEL_ITERATIONS - 1);
	check(credit.pebs_records >= 2 * KERNEL_ITERATIONS / KERNEL_PERIOD,
	      "pebs %llu records, the loop alone makes %llu",
	      (unsigned long long)credit.pebs_records, 2 * KERNEL_ITERATIONS / KERNEL_PERIOD);
}
