/* SPDX-License-Identifier: MIT */
/* pmu suite: per-task counters on real hardware (or a vPMU); skips with the exact reason here. */
#include "arch/x86/percpu.h"
#include "arch/x86/probe.h"
#include "pmu/pmu.h"
#include "runner/test.h"
#include "sched/sched.h"

#define INST_RETIRED 0xc0 /* architectural event: instructions retired (SDM Vol. 3 §20.2.1.2) */
#define ITERATIONS 1000000ull
#define EXPECTED (ITERATIONS * PROBE_LOOP_INSTRUCTIONS_PER_ITERATION)
/* Stated tolerances: counting within 1% + 2,000 (the read path, an interrupt or two). */
#define COUNT_SLACK (EXPECTED / 100 + 2000)
/* Multiplexed estimates within 10% of the true count. */
#define MULTIPLEX_TOLERANCE_PERCENT 10
#define SAMPLE_PERIOD 100000ull

static const struct pmu_event instructions = { .event = INST_RETIRED, .kernel = true };

static void require_counters(void)
{
	if (!pmu_usable())
		test_skip("%s", pmu_info()->reason);
}

static unsigned int self(void)
{
	return sched_current()->index;
}

static bool near(uint64_t value, uint64_t expected, uint64_t slack)
{
	return value + slack >= expected && value <= expected + slack;
}

TEST(pmu, instructions_retired_by_a_known_loop)
{
	int index;
	uint64_t before, count;

	require_counters();
	index = pmu_add_event(self(), &instructions);
	check(index >= 0, "pmu_add_event failed");
	before = pmu_read(self(), (unsigned int)index).count;
	probe_instruction_loop(ITERATIONS);
	count = pmu_read(self(), (unsigned int)index).count - before;
	check(near(count, EXPECTED, COUNT_SLACK), "%llu instructions, expected %llu +- %llu",
	      (unsigned long long)count, (unsigned long long)EXPECTED,
	      (unsigned long long)COUNT_SLACK);
	pmu_release(self());
}

TEST(pmu, multiplexed_estimates_match_the_true_count)
{
	unsigned int events = pmu_info()->gp_counters + 2;

	require_counters();
	for (unsigned int i = 0; i < events; i++)
		check(pmu_add_event(self(), &instructions) == (int)i, "event %u", i);
	/* Long enough for many rotations: about 100 ticks of loop. */
	for (int round = 0; round < 100; round++)
		probe_instruction_loop(ITERATIONS);
	for (unsigned int i = 0; i < events; i++) {
		struct pmu_reading reading = pmu_read(self(), i);
		uint64_t expected = 100 * EXPECTED;

		test_diag("event %u: count %llu running %llu enabled %llu scaled %llu", i,
			  (unsigned long long)reading.count,
			  (unsigned long long)reading.time_running,
			  (unsigned long long)reading.time_enabled,
			  (unsigned long long)reading.scaled);
		check(reading.time_running < reading.time_enabled, "event %u never rotated off", i);
		check(near(reading.scaled, expected, expected * MULTIPLEX_TOLERANCE_PERCENT / 100),
		      "event %u: estimate %llu, true %llu +- %u%%", i,
		      (unsigned long long)reading.scaled, (unsigned long long)expected,
		      MULTIPLEX_TOLERANCE_PERCENT);
	}
	pmu_release(self());
}

struct looper {
	uint64_t iterations;
	uint64_t count;
	uint64_t writes;
};

static void count_own_loop(void *arg)
{
	struct looper *looper = arg;
	int index = pmu_add_event(self(), &instructions);
	uint64_t before = pmu_read(self(), (unsigned int)index).count;

	for (int i = 0; i < 10; i++) {
		probe_instruction_loop(looper->iterations / 10);
		sched_yield();
	}
	looper->count = pmu_read(self(), (unsigned int)index).count - before;
}

TEST(pmu, a_tasks_count_is_not_polluted_by_other_tasks)
{
	struct looper small = { ITERATIONS, 0, 0 }, big = { 10 * ITERATIONS, 0, 0 };
	struct task *a, *b;

	require_counters();
	a = task_create("small", count_own_loop, &small, TASK_START_RUNNABLE);
	b = task_create("big", count_own_loop, &big, TASK_START_RUNNABLE);
	task_join(a, NULL);
	task_join(b, NULL);
	check(near(small.count, EXPECTED, COUNT_SLACK + 10 * 2000), "small: %llu, expected %llu",
	      (unsigned long long)small.count, (unsigned long long)EXPECTED);
	check(near(big.count, 10 * EXPECTED, 10 * COUNT_SLACK), "big: %llu, expected %llu",
	      (unsigned long long)big.count, (unsigned long long)(10 * EXPECTED));
}

struct pair {
	uint64_t msr_writes;
	volatile bool done;
};

static void measure_writes(void *arg)
{
	struct pair *pair = arg;
	uint64_t before;

	pmu_add_event(self(), &instructions);
	sched_yield();
	before = this_cpu()->writes.msr;
	for (int i = 0; i < 100; i++)
		sched_yield();
	pair->msr_writes = this_cpu()->writes.msr - before;
	pair->done = true;
}

static void same_events_until_done(void *arg)
{
	struct pair *pair = arg;

	pmu_add_event(self(), &instructions);
	while (!pair->done)
		sched_yield();
}

TEST(pmu, identical_configurations_make_no_msr_writes_at_switch)
{
	struct pair pair = { 0, false };
	struct task *a, *b;

	require_counters();
	a = task_create("a", measure_writes, &pair, TASK_START_RUNNABLE);
	b = task_create("b", same_events_until_done, &pair, TASK_START_RUNNABLE);
	task_join(a, NULL);
	task_join(b, NULL);
	check_eq(0, pair.msr_writes);
}

TEST(pmu, each_overflow_raises_one_interrupt)
{
	int index;
	uint64_t overflows;

	require_counters();
	index = pmu_add_sampling_event(self(), &instructions, SAMPLE_PERIOD);
	check(index >= 0, "pmu_add_sampling_event failed");
	probe_instruction_loop(ITERATIONS);
	overflows = pmu_read(self(), (unsigned int)index).overflows;
	/* 2,000,000 instructions / 100,000: 20, give or take one at each end. */
	check(near(overflows, EXPECTED / SAMPLE_PERIOD, 2), "%llu PMIs, expected %llu",
	      (unsigned long long)overflows, (unsigned long long)(EXPECTED / SAMPLE_PERIOD));
	pmu_release(self());
}
