/* SPDX-License-Identifier: MIT */
/* sched suite: cycles per context switch, and the MSR and DR writes a switch makes. */
#include <stddef.h>

#include "arch/x86/apic.h"
#include "arch/x86/cpu.h"
#include "arch/x86/paging.h"
#include "arch/x86/percpu.h"
#include "arch/x86/tsc.h"
#include "arch/x86/witness_marker.h"
#include "lib/sort.h"
#include "runner/test.h"
#include "sched/sched.h"
#include "tests/kernel/lib/budget.h"
#include "tests/kernel/lib/user_programs.h"

/*
 * Each benchmark takes up to its sample count or runs for its time budget, whichever comes
 * first: where every ring-0 instruction is emulated, loops are sized by time.
 * budget=quick: 400 samples (the p99 is the 4th largest) or 150 ms for the yields; 200
 * preemptions (the p99 is the 2nd largest) or 500 ms. budget=soak (make bench): 10,000 samples
 * or 1.5 s. docs/platforms.md has what each takes.
 * The metric lines say how many samples were taken.
 */
#define SAMPLES_MAX 10000
#define SAMPLES_QUICK 400
#define PREEMPTIONS_QUICK 200
#define BUDGET_QUICK_MS 150
#define PREEMPT_BUDGET_QUICK_MS 500
#define BUDGET_SOAK_MS 1500
#define PREEMPT_HZ 20000 /* for the preemption benchmark only */
/* Looks in on the user yielders, each a switch inside a sample: under 1% of the samples. */
#define POLL_QUICK_MS 10
#define POLL_SOAK_MS 50
#define USER_TIMING_CAPACITY \
	((USER_DATA_PAGES * PAGE_SIZE - sizeof(struct yield_timing)) / sizeof(uint64_t))

static uint64_t samples[2 * SAMPLES_MAX];
static volatile unsigned int sample_count, samples_wanted;

struct write_snapshot {
	struct write_counts writes;
	uint64_t switches;
};

static struct write_snapshot snapshot(void)
{
	return (struct write_snapshot){ this_cpu()->writes, sched_stats().switches };
}

/* Print the metric lines, and check that no switch wrote an MSR or a debug register. */
static void report_switches(const char *name, unsigned int count, struct write_snapshot before)
{
	struct write_snapshot after = snapshot();
	uint64_t switches = after.switches - before.switches;
	uint64_t msr = after.writes.msr - before.writes.msr,
		 dr = after.writes.dr - before.writes.dr;

	sort_u64(samples, count);
	test_diag("metric sched.switch_cycles.%s median=%llu p99=%llu samples=%u", name,
		  (unsigned long long)percentile_u64(samples, count, 50),
		  (unsigned long long)percentile_u64(samples, count, 99), count);
	test_diag("metric sched.switch_writes.%s switches=%llu msr_writes=%llu dr_writes=%llu",
		  name, (unsigned long long)switches, (unsigned long long)msr,
		  (unsigned long long)dr);
	check_eq(0, msr);
	check_eq(0, dr);
	budget_skip_if_few_samples(name, count);
}

static void yield_until_stopped(void *arg)
{
	volatile bool *stop = arg;

	while (!*stop)
		sched_yield();
}

TEST(sched, benchmark_kernel_to_kernel_yield)
{
	volatile bool stop = false;
	struct task *partner =
		task_create("partner", yield_until_stopped, (void *)&stop, TASK_START_RUNNABLE);
	uint64_t deadline =
		rdtsc_ordered() + tsc_cycles_from_ms(budget_ms(BUDGET_QUICK_MS, BUDGET_SOAK_MS));
	unsigned int count = 0, wanted = (unsigned int)budget_count(SAMPLES_QUICK, SAMPLES_MAX);
	struct write_snapshot before = snapshot();

	witness_begin(WITNESS_SCHED_SWITCH_WRITES);
	/* One sample: this task to the partner and back, two switches. */
	while (count < wanted && rdtsc_ordered() < deadline) {
		uint64_t start = rdtsc_ordered();

		sched_yield();
		samples[count++] = (rdtsc_ordered() - start) / 2;
	}
	stop = true;
	witness_end(WITNESS_SCHED_SWITCH_WRITES);
	report_switches("kernel_yield", count, before);
	check_eq(0, task_join(partner, NULL));
}

TEST(sched, benchmark_user_to_user_yield)
{
	struct task *tasks[2];
	struct yield_timing *timing[2];
	struct write_snapshot before;
	unsigned int count = 0, wanted = (unsigned int)budget_count(SAMPLES_QUICK, SAMPLES_MAX);
	uint64_t deadline;

	for (unsigned int i = 0; i < 2; i++) {
		tasks[i] = task_create_user("yielder", user_yield_timing, USER_DATA_BASE,
					    TASK_START_STOPPED);
		if (!tasks[i])
			test_abort("task_create_user failed");
		timing[i] = task_user_data(tasks[i]);
		timing[i]->capacity =
			wanted / 2 < USER_TIMING_CAPACITY ? wanted / 2 : USER_TIMING_CAPACITY;
	}
	before = snapshot();
	witness_begin(WITNESS_SCHED_SWITCH_WRITES);
	deadline = rdtsc_ordered() + tsc_cycles_from_ms(budget_ms(BUDGET_QUICK_MS, BUDGET_SOAK_MS));
	task_continue(tasks[0]);
	task_continue(tasks[1]);
	/* Look in rarely (each look is a switch inside a sample): they stop at capacity. */
	while ((tasks[0]->state != TASK_DEAD || tasks[1]->state != TASK_DEAD) &&
	       rdtsc_ordered() < deadline)
		sched_sleep_ms(budget_count(POLL_QUICK_MS, POLL_SOAK_MS));
	for (unsigned int i = 0; i < 2; i++) {
		timing[i]->stop = 1;
		while (tasks[i]->state != TASK_DEAD)
			sched_yield();
		/* One sample: this task to the other and back, two switches. */
		for (uint64_t s = 0; s < timing[i]->count && count < 2 * SAMPLES_MAX; s++)
			samples[count++] = timing[i]->samples[s] / 2;
	}
	witness_end(WITNESS_SCHED_SWITCH_WRITES);
	report_switches("user_yield", count, before);
	for (unsigned int i = 0; i < 2; i++)
		check_eq(0, task_join(tasks[i], NULL));
}

static struct task *volatile benchmark_owner;

/* Preemption probe: interrupt context. Wakes the sleeping test task once the array is full. */
static void record_preemption(uint64_t cycles)
{
	if (sample_count < samples_wanted)
		samples[sample_count++] = cycles;
	else if (benchmark_owner)
		sched_wake(benchmark_owner);
}

static void spin_until_stopped(void *arg)
{
	volatile bool *stop = arg;

	while (!*stop)
		cpu_relax();
}

TEST(sched, benchmark_timer_preemption)
{
	volatile bool stop = false;
	unsigned int hz = timer_hz(), slice = sched_slice_ticks();
	struct task *spinners[2];
	struct write_snapshot before;

	for (unsigned int i = 0; i < 2; i++)
		spinners[i] = task_create("spinner", spin_until_stopped, (void *)&stop,
					  TASK_START_STOPPED);
	sample_count = 0;
	samples_wanted = (unsigned int)budget_count(PREEMPTIONS_QUICK, SAMPLES_MAX);
	benchmark_owner = sched_current();
	sched_set_preemption_probe(record_preemption);
	sched_set_slice_ticks(1);
	timer_set_hz(PREEMPT_HZ);
	before = snapshot();
	witness_begin(WITNESS_SCHED_SWITCH_WRITES);
	task_continue(spinners[0]);
	task_continue(spinners[1]);
	/* Asleep, so that only the two spinners take turns; woken early when the array is full. */
	sched_sleep_ms(budget_ms(PREEMPT_BUDGET_QUICK_MS, BUDGET_SOAK_MS));
	timer_set_hz(hz);
	benchmark_owner = NULL;
	sched_set_slice_ticks(slice);
	sched_set_preemption_probe(NULL);
	stop = true;
	test_diag("timer at %u Hz, slice 1 tick, during the measurement", PREEMPT_HZ);
	witness_end(WITNESS_SCHED_SWITCH_WRITES);
	report_switches("timer_preemption", sample_count, before);
	for (unsigned int i = 0; i < 2; i++)
		check_eq(0, task_join(spinners[i], NULL));
}
