/* SPDX-License-Identifier: MIT */
/* ds suite: PEBS records of a counted loop, drained at the threshold and at detach. */
#include "arch/x86/msr.h"
#include "lib/format.h"
#include "lib/string.h"
#include "tests/kernel/lib/ds_util.h"
#include "tests/kernel/lib/emulator_util.h"
#include "tests/kernel/lib/handler_margin.h"
#include "tests/kernel/lib/nmi_margin.h"

/*
 * A record every PERIOD kernel instructions. The loops are counted in fractions of a period, so
 * what is counted around them (from the counter's start in pmu_add_sampling_event() to its stop
 * at the start of pmu_release(): the kernel's own path, 200 to 300 instructions since pmu/ counts
 * its writes and plays AMD parts: 2.5 periods then gave a third record) and whether the
 * instruction that takes the assist counts (the SDM leaves it open) never move a record across
 * the loop's end: the detach test's loop covers 2.25 periods, leaving 3/4 of one. Stated
 * tolerance, where the loop covers 7.5 periods: 7 or 8 records, and one more for each PMI whose
 * handler's counted instructions cross a period.
 *
 * The PMIs: the counter is PEBS-enabled, so its INT bit is clear ("Do NOT set local counter
 * PMI/INT bit", SDM "Requirements to Program PEBS") and its overflows raise none; the one PMI
 * PEBS raises is the DS interrupt when the index reaches the interrupt threshold (SDM "DS Save
 * Area": "PEBS interrupt threshold"), after which ds/ drains the buffer back to its base. So a
 * loop that writes n records raises exactly n / THRESHOLD PMIs (integer division), each
 * crediting THRESHOLD records.
 */
#define PERIOD 400
#define RECORDS 8
#define THRESHOLD 3
#define SEVEN_AND_A_HALF_PERIODS (15 * PERIOD / 4) /* iterations: 2 instructions each */
#define TWO_AND_A_HALF_PERIODS (5 * PERIOD / 4)
#define TWO_AND_A_QUARTER_PERIODS (9 * PERIOD / 8)

/* PEBS on counter 0 over a counted loop (tests/kernel/lib/ds_util.h). */
static void sample_loop(const struct ds_pebs_config *config, unsigned long iterations,
			struct pebs_sampled *out)
{
	pebs_sample_loop(config, iterations, PERIOD, 0, out);
}

TEST_OBSERVING(ds, pebs_records_are_drained_at_each_threshold, 3500)
{
	struct ds_pebs_config config;
	struct pebs_sampled seen;
	uint64_t most;

	require_pebs();
	config = pebs_config(RECORDS, THRESHOLD, PERIOD);
	sample_loop(&config, SEVEN_AND_A_HALF_PERIODS, &seen);
	/*
	 * Each PMI's handler counts too until it stops the counters and once it restarts them
	 * (rule 21): at most PMI_HANDLER_INSTRUCTIONS_MAX, under a period, so at most one record
	 * more a PMI; and each tick its own (tests/kernel/lib/handler_margin.h). 9 records came
	 * with 3 PMIs once the model stepped them.
	 */
	most = pebs_records_max(8, seen.pmis, seen.ticks, PERIOD);
	check(seen.total >= 7 && seen.total <= most,
	      "%llu records in 7.5 periods, expected 7 to %llu (%llu PMIs, %llu ticks)",
	      (unsigned long long)seen.total, (unsigned long long)most,
	      (unsigned long long)seen.pmis, (unsigned long long)seen.ticks);
	check_eq(seen.total / THRESHOLD, seen.pmis); /* at the 3rd, the 6th (and the 9th) record */
	check_eq(seen.pmis * THRESHOLD, seen.credited); /* the rest, 1 or 2, at the detach */
}

TEST_OBSERVING(ds, partial_pebs_buffer_is_drained_when_its_user_detaches, 1500)
{
	struct ds_pebs_config config;
	struct pebs_sampled seen;

	require_pebs();
	config = pebs_config(RECORDS, RECORDS - 2, PERIOD); /* 2: ds_threshold_room() */
	sample_loop(&config, TWO_AND_A_QUARTER_PERIODS, &seen);
	check_eq(2, seen.total); /* drained at the detach */
	check_eq(0, seen.pmis); /* 2 records, below the threshold of 6: no DS interrupt */
	check_eq(0, seen.credited); /* below the threshold: still in the buffer */
	check_last_pebs_ip(seen.credit.last_pebs_ip, &seen.loop, seen.nmis, seen.ticks,
			   "the second record");
}

static void stay_stopped(void *unused)
{
	(void)unused;
}

/*
 * The reset value of GP counter i sits in slot i; fixed counter i's, in slot 8 + i up to format
 * 4 and 32 + i from format 5 (docs/hardware-facts.md §2). Fixed counters sample from format 4
 * (baseline).
 */
TEST(ds, pebs_reset_values_sit_in_the_format_dependent_slot)
{
	struct ds_pebs_config config;
	unsigned int fixed_slot;
	struct ds_target target;
	struct ds_area *area;
	struct task *task;

	if (ds_support()->pebs_reason[0])
		test_skip("%s", ds_support()->pebs_reason);
	config = pebs_config(RECORDS, THRESHOLD, PERIOD);
	config.reset_value = 0x1234;
	if (ds_support()->pebs_enable_valid & (1ull << 32))
		config.enable |= 1ull << 32;
	fixed_slot = config.format < PEBS_FORMAT_5 ? 8 : 32;
	/* A task that never runs: its area is laid out, never handed to the CPU. */
	task = task_create("never runs", stay_stopped, NULL, TASK_START_STOPPED);
	if (!task)
		test_abort("task_create failed");
	target = task_target(task);
	check_attached(ds_attach_pebs(&target, &config));
	area = ds_area_get(&target);
	check_eq(0x1234, area->pebs_reset[0]);
	if (config.enable & (1ull << 32))
		check_eq(0x1234, area->pebs_reset[fixed_slot]);
	else
		test_diag("format %u: no fixed counter samples", config.format);
	check_eq(DS_OK, ds_detach(&target, DS_USER_PEBS));
	task_continue(task);
	check_eq(0, task_join(task, NULL));
}

/*
 * PEBS through ds/ on each counter PEBS_ENABLE takes here (ds_support()->pebs_enable_valid: GP
 * counter 0 on Core 2, 0-3 to Skylake, every GP and fixed counter with baseline), its event on
 * that counter (pmu_add_sampling_event_on()): 2.25 periods give 2 records, the last one's IP in
 * the loop and, from format 1, its status naming that counter alone. Fixed counters 1 and 2
 * count cycles: a quarter of the period, at least one record. Fixed counter 3 (topdown slots)
 * counts no architectural event a loop can predict (SDM §20.2.2): not driven.
 */
#define FIXED_SHIFT 32
#define FIXED_DRIVEN 3 /* instructions, core cycles, reference cycles */

TEST_OBSERVING(ds, pebs_records_on_each_counter_pebs_enable_takes, 11000)
{
	uint64_t valid;
	unsigned int counters = 0;

	require_pebs();
	valid = ds_support()->pebs_enable_valid;
	for (unsigned int bit = 0; bit < 64; bit++) {
		bool fixed = bit >= FIXED_SHIFT;
		bool instructions = !fixed || bit == FIXED_SHIFT;
		uint64_t period = instructions ? PERIOD : PERIOD / 4;
		struct ds_target target = self_target();
		struct pmu_event event = instructions_retired();
		struct ds_pebs_config config = pebs_config(16, 12, period);
		struct loop_span loop;
		struct ds_credit credit;
		unsigned long nmis;
		uint64_t ticks;
		int added;

		if (!(valid & (1ull << bit)) || (fixed && bit - FIXED_SHIFT >= FIXED_DRIVEN) ||
		    (fixed && bit - FIXED_SHIFT >= pmu_info()->fixed_counters))
			continue;
		counters++;
		config.enable = 1ull << bit;
		ds_credit_reset(target.index);
		check_attached(ds_attach_pebs(&target, &config));
		nmis = nmi_count();
		ticks = tick_count();
		added = pmu_add_sampling_event_on(target.index, bit, &event, period);
		counted_loop(TWO_AND_A_QUARTER_PERIODS, &loop);
		pmu_release(target.index);
		nmis = nmi_count() - nmis;
		ticks = tick_count() - ticks;
		check_eq(DS_OK, ds_detach(&target, DS_USER_PEBS));
		credit = ds_credit(target.index);
		test_diag("counter bit %u: %llu records, the last naming 0x%llx at 0x%llx", bit,
			  (unsigned long long)credit.pebs_records,
			  (unsigned long long)credit.last_pebs_counters,
			  (unsigned long long)credit.last_pebs_ip);
		check(added >= 0, "pmu/ refused a PEBS event on counter bit %u", bit);
		if (instructions)
			check_eq(2, credit.pebs_records);
		else
			check(credit.pebs_records >= 1, "counter bit %u: no record", bit);
		check_eq(0, credit.pebs_dropped);
		if (config.format != PEBS_FORMAT_0)
			check_eq(1ull << bit, credit.last_pebs_counters);
		/* An NMI's or a tick's handler (its IRETQ, on the model) may hold the last. */
		if (instructions) {
			char what[32];

			format(what, sizeof(what), "counter bit %u", bit);
			check_last_pebs_ip(credit.last_pebs_ip, &loop, nmis, ticks, what);
		}
	}
	test_diag("%u counters", counters);
	check(counters > 0, "PEBS_ENABLE takes 0x%llx: no counter pmu/ drives",
	      (unsigned long long)valid);
}

/*
 * ds_pebs_check() on a DS-area part: a configuration the attach takes passes with no reason; a
 * PEBS_ENABLE bit the CPU lacks, and precise distribution (which only leaf 23H enumerates), are
 * refused with the rule and the value that decide it, as the attach refuses them.
 */
TEST(ds, pebs_check_names_the_rule_a_refused_configuration_breaks)
{
	struct ds_target target = self_target();
	struct ds_pebs_config config;
	char reason[160], expected[160];
	uint64_t lacking;

	if (ds_support()->pebs_reason[0])
		test_skip("%s", ds_support()->pebs_reason);
	config = pebs_config(RECORDS, THRESHOLD, PERIOD);
	check_eq(DS_OK, ds_pebs_check(&config, reason, sizeof(reason)));
	check_eq(0, strlen(reason));
	config.pdist = 1;
	check_eq(DS_ERROR_CONFIG, ds_pebs_check(&config, reason, sizeof(reason)));
	check(strcmp(reason, "pdist 0x1: only CPUID leaf 23H (architectural PEBS) enumerates "
			     "precise distribution") == 0,
	      "reason '%s'", reason);
	check_eq(DS_ERROR_CONFIG, ds_attach_pebs(&target, &config));
	config = pebs_config(RECORDS, THRESHOLD, PERIOD);
	lacking = ~ds_support()->pebs_enable_valid & -~ds_support()->pebs_enable_valid;
	config.enable = lacking;
	format(expected, sizeof(expected), "enable 0x%llx: PEBS_ENABLE takes 0x%llx here",
	       (unsigned long long)lacking, (unsigned long long)ds_support()->pebs_enable_valid);
	check_eq(DS_ERROR_CONFIG, ds_pebs_check(&config, reason, sizeof(reason)));
	check(strcmp(reason, expected) == 0, "reason '%s', expected '%s'", reason, expected);
	check_eq(DS_ERROR_CONFIG, ds_attach_pebs(&target, &config));
	check_eq(DS_ERROR_NOT_ATTACHED, ds_detach(&target, DS_USER_PEBS));
}

/*
 * A PEBS counter is stopped before pmu/ writes it: "Counters MUST be stopped before writing"
 * (SDM PEBS facility; "PEBS behavior is unpredictable if IA32_PERFEVTSELx or IA32_PMCx is
 * changed for a PEBS-enabled counter while an event is being counted"). An event added beside a
 * PEBS sampling event makes pmu/ reprogram the task's counters and reload the sampling one; the
 * emulated CPU reports a write to it while it counts (rule 17).
 */
TEST_OBSERVING(ds, an_event_added_beside_a_pebs_event_reloads_its_counter_stopped, 1500)
{
	struct pmu_event event = instructions_retired(), other = instructions_retired();
	struct ds_target target = self_target();
	char text[EMULATOR_VIOLATION_MAX];
	struct ds_pebs_config config;
	unsigned int reported;
	int index;

	require_pebs();
	require_emulator();
	other.pebs = false;
	other.kernel = false;
	other.user = true;
	config = pebs_config(RECORDS, THRESHOLD, PERIOD);
	check_attached(ds_attach_pebs(&target, &config));
	if (pmu_add_sampling_event(target.index, &event, PERIOD) != 0)
		test_abort("pmu_add_sampling_event did not get counter 0");
	emulator_take_violations(NULL, 0);
	index = pmu_add_event(target.index, &other);
	reported = emulator_take_violations(text, sizeof(text));
	pmu_release(target.index);
	check_eq(DS_OK, ds_detach(&target, DS_USER_PEBS));
	test_diag("reported: %s", reported ? text : "nothing");
	check_eq(1, index);
	check_eq(0, reported);
}

/*
 * ds_drain() of a PEBS buffer while its task's PEBS counter counts: PEBS_ENABLE may change only
 * with the counter stopped (Linux drains PEBS with GLOBAL_CTRL cleared; rule 18). A counter that
 * overflows while its PEBS bit is off is not reloaded, and its records stop. After the drain the
 * counter sees the loop, 2.5 periods, and less than one period of kernel code around it (the
 * drain's tail, pmu_release() up to its stop): stated tolerance 2 to 4 records. A counter left
 * unreloaded brings none.
 */
TEST_OBSERVING(ds, a_pebs_buffer_drained_mid_count_keeps_the_counter_order, 3500)
{
	struct pmu_event event = instructions_retired();
	struct ds_target target = self_target();
	char text[EMULATOR_VIOLATION_MAX];
	struct ds_pebs_config config;
	struct loop_span loop;
	unsigned int reported;
	uint64_t drained, after;

	require_pebs();
	require_emulator();
	config = pebs_config(RECORDS, RECORDS - 2, PERIOD);
	ds_credit_reset(target.index);
	check_attached(ds_attach_pebs(&target, &config));
	if (pmu_add_sampling_event(target.index, &event, PERIOD) != 0)
		test_abort("pmu_add_sampling_event did not get counter 0");
	counted_loop(TWO_AND_A_HALF_PERIODS, &loop);
	emulator_take_violations(NULL, 0);
	ds_drain(&target);
	reported = emulator_take_violations(text, sizeof(text));
	drained = ds_credit(target.index).pebs_records;
	counted_loop(TWO_AND_A_HALF_PERIODS, &loop);
	pmu_release(target.index);
	check_eq(DS_OK, ds_detach(&target, DS_USER_PEBS));
	test_diag("reported: %s", reported ? text : "nothing");
	check_eq(0, reported);
	after = ds_credit(target.index).pebs_records - drained;
	test_diag("%llu records drained, %llu after", (unsigned long long)drained,
		  (unsigned long long)after);
	check(after >= 2 && after <= 4, "%llu records after the drain", (unsigned long long)after);
}
