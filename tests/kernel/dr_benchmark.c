/* SPDX-License-Identifier: MIT */
/* dr suite: cycles per context switch with and without debug state, lazy and eager. */
#include "arch/x86/cpu.h"
#include "arch/x86/debugreg.h"
#include "arch/x86/percpu.h"
#include "arch/x86/tsc.h"
#include "arch/x86/witness_marker.h"
#include "lib/format.h"
#include "lib/sort.h"
#include "runner/host_sync.h"
#include "runner/test.h"
#include "sched/sched.h"
#include "tests/kernel/lib/budget.h"
#include "tests/kernel/lib/dr_targets.h"

/*
 * Per case, up to a number of samples or a time budget, whichever comes first (a slow platform
 * is held by the time; docs/platforms.md): budget=quick 150 samples (the p99 is the 2nd
 * largest) or 150 ms; budget=soak (make bench) 10,000 or 600 ms.
 */
#define SAMPLES_QUICK 150 /* a median and p99 need 100 (budget_skip_if_few_samples) */
#define SAMPLES_SOAK 10000
#define BUDGET_QUICK_MS 150
#define BUDGET_SOAK_MS 600
#define RATIO_SCALE 1000

static unsigned int fewest_samples; /* over the configurations measured */

static uint64_t samples[SAMPLES_SOAK];

struct timing {
	const char *name;
	unsigned int count, samples_max;
	uint64_t budget_ms;
	uint64_t dr_writes, switches; /* in the timed window */
	volatile bool done;
	bool host_answered; /* every host_sync() of the window */
};

/* The harness reads the host's counters at SUITE.NAME.begin and .end (runner/host_sync.h). */
static bool host_sync_window(const char *name, const char *edge)
{
	char label[64];

	format(label, sizeof(label), "dr.%s.%s", name, edge);
	return host_sync(label);
}

/* One sample: from before a yield to after it, over two switches (there and back). */
static void time_yields(void *arg)
{
	struct timing *timing = arg;
	uint64_t deadline, dr_writes, switches;

	sched_yield(); /* both have run once: their configurations are in place */
	timing->host_answered = host_sync_window(timing->name, "begin");
	dr_writes = this_cpu()->writes.dr;
	switches = sched_stats().switches;
	deadline = rdtsc_ordered() + tsc_cycles_from_ms(timing->budget_ms);
	witness_begin(WITNESS_DR_BENCHMARK);
	for (timing->count = 0; timing->count < timing->samples_max && rdtsc_ordered() < deadline;
	     timing->count++) {
		uint64_t start = rdtsc_ordered();

		sched_yield();
		samples[timing->count] = (rdtsc_ordered() - start) / 2;
	}
	witness_end(WITNESS_DR_BENCHMARK);
	timing->dr_writes = this_cpu()->writes.dr - dr_writes;
	timing->switches = sched_stats().switches - switches;
	timing->host_answered &= host_sync_window(timing->name, "end");
	timing->done = true;
}

static void yield_until_timed(void *arg)
{
	struct timing *timing = arg;

	while (!timing->done)
		sched_yield();
}

enum configuration {
	NO_STATE, /* neither task has breakpoints */
	IDENTICAL, /* both hold the same four */
	DIFFERENT, /* four each, all different */
};

/*
 * Median cycles per switch for a configuration and mode, printed as a metric. Checks that the
 * window measured what it is named after: DR writes per switch, none where both tasks hold the
 * same registers (lazily), all of them (DR7 off, DR0-DR3, DR7) where the registers change.
 */
static uint64_t measure(const char *name, enum configuration configuration, bool lazy)
{
	struct timing timing = { .name = name,
				 .samples_max =
					 (unsigned int)budget_count(SAMPLES_QUICK, SAMPLES_SOAK),
				 .budget_ms = budget_ms(BUDGET_QUICK_MS, BUDGET_SOAK_MS) };
	struct task *a = task_create("timer", time_yields, &timing, TASK_START_STOPPED);
	struct task *b = task_create("partner", yield_until_timed, &timing, TASK_START_STOPPED);
	bool was_lazy = dr_is_lazy();
	uint64_t median, writes_per_switch;

	for (unsigned int slot = 0; configuration != NO_STATE && slot < DR_SLOTS; slot++) {
		struct dr_breakpoint mine = { (uint64_t)&dr_target_unused[slot], DR_TYPE_WRITE, 8 };
		struct dr_breakpoint theirs = { (uint64_t)&dr_target_unused[4 + slot],
						DR_TYPE_WRITE, 8 };

		dr_install(a->index, &mine, NULL, NULL);
		dr_install(b->index, configuration == IDENTICAL ? &mine : &theirs, NULL, NULL);
	}
	dr_set_lazy(lazy);
	task_continue(a);
	task_continue(b);
	task_join(a, NULL);
	task_join(b, NULL);
	dr_set_lazy(was_lazy);
	sort_u64(samples, timing.count);
	median = percentile_u64(samples, timing.count, 50);
	test_diag("metric dr.switch_cycles.%s median=%llu p99=%llu samples=%u", name,
		  (unsigned long long)median,
		  (unsigned long long)percentile_u64(samples, timing.count, 99), timing.count);
	test_diag("%s: %llu DR writes in %llu switches", name, (unsigned long long)timing.dr_writes,
		  (unsigned long long)timing.switches);
	if (host_sync_enabled())
		test_diag("metric dr.host_window.%s switches=%llu", name,
			  (unsigned long long)timing.switches);
	check(timing.host_answered, "%s: the harness did not answer at host.sync", name);
	check(median > 0, "%s: the TSC did not advance over two switches", name);
	check(timing.switches >= 2 * (uint64_t)timing.count, "%s: %llu switches in %u samples",
	      name, (unsigned long long)timing.switches, timing.count);
	writes_per_switch = configuration == NO_STATE || (lazy && configuration == IDENTICAL)
				    ? 0
				    : DR_SLOTS + 2;
	check(timing.dr_writes == writes_per_switch * timing.switches,
	      "%s: %llu DR writes in %llu switches, expected %llu per switch", name,
	      (unsigned long long)timing.dr_writes, (unsigned long long)timing.switches,
	      (unsigned long long)writes_per_switch);
	fewest_samples = timing.count < fewest_samples ? timing.count : fewest_samples;
	return median;
}

/* numerator / denominator in thousandths, 0 for a denominator of 0 (a failed measurement). */
static uint64_t ratio(uint64_t numerator, uint64_t denominator)
{
	return denominator ? numerator * RATIO_SCALE / denominator : 0;
}

TEST(dr, benchmark_switch_cost_by_configuration)
{
	fewest_samples = ~0u;
	/* What the two waits of a window cost the host, with no switch between them. */
	check(host_sync_window("empty", "begin") && host_sync_window("empty", "end"),
	      "the harness did not answer at host.sync");
	uint64_t no_state = measure("no_state", NO_STATE, true);
	uint64_t lazy_identical = measure("lazy_identical", IDENTICAL, true);
	uint64_t identical_ratio, eager_ratio;

	measure("lazy_different", DIFFERENT, true);
	eager_ratio = ratio(measure("eager_identical", IDENTICAL, false), lazy_identical);
	measure("eager_different", DIFFERENT, false);
	identical_ratio = ratio(lazy_identical, no_state);

	/* The goal for lazy-identical / no-state is at most 1.05; reported, not asserted. */
	test_diag("metric dr.switch_ratio lazy_identical_over_no_state=%llu.%03llu "
		  "eager_over_lazy_identical=%llu.%03llu goal_lazy_identical_over_no_state=1.050",
		  (unsigned long long)(identical_ratio / RATIO_SCALE),
		  (unsigned long long)(identical_ratio % RATIO_SCALE),
		  (unsigned long long)(eager_ratio / RATIO_SCALE),
		  (unsigned long long)(eager_ratio % RATIO_SCALE));
	budget_skip_if_few_samples("the fewest of a configuration", fewest_samples);
}
