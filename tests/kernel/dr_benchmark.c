/* SPDX-License-Identifier: MIT */
/* dr suite: cycles per context switch with and without debug state, lazy and eager. */
#include "arch/x86/cpu.h"
#include "arch/x86/debugreg.h"
#include "arch/x86/tsc.h"
#include "lib/sort.h"
#include "runner/test.h"
#include "sched/sched.h"
#include "tests/kernel/dr_targets.h"

/* Up to SAMPLES_MAX samples or BUDGET_MS per case: sized by time under KVM-PVM. */
#define SAMPLES_MAX 10000
#define BUDGET_MS 600
#define RATIO_SCALE 1000

static uint64_t samples[SAMPLES_MAX];

struct timing {
	unsigned int count;
	volatile bool done;
};

/* One sample: from before a yield to after it, over two switches (there and back). */
static void time_yields(void *arg)
{
	struct timing *timing = arg;
	uint64_t deadline;

	sched_yield();
	deadline = rdtsc_ordered() + tsc_cycles_from_ms(BUDGET_MS);
	for (timing->count = 0; timing->count < SAMPLES_MAX && rdtsc_ordered() < deadline;
	     timing->count++) {
		uint64_t start = rdtsc_ordered();

		sched_yield();
		samples[timing->count] = (rdtsc_ordered() - start) / 2;
	}
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

/* Median cycles per switch for a configuration and mode, printed as a metric. */
static uint64_t measure(const char *name, enum configuration configuration, bool lazy)
{
	struct timing timing = { 0, false };
	struct task *a = task_create("timer", time_yields, &timing, TASK_START_STOPPED);
	struct task *b = task_create("partner", yield_until_timed, &timing, TASK_START_STOPPED);
	bool was_lazy = dr_is_lazy();
	uint64_t median;

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
	check(timing.count >= 100, "%s: only %u samples", name, timing.count);
	return median ? median : 1;
}

TEST(dr, benchmark_switch_cost_by_configuration)
{
	uint64_t no_state = measure("no_state", NO_STATE, true);
	uint64_t lazy_identical = measure("lazy_identical", IDENTICAL, true);
	uint64_t lazy_different = measure("lazy_different", DIFFERENT, true);
	uint64_t eager_identical = measure("eager_identical", IDENTICAL, false);
	uint64_t eager_different = measure("eager_different", DIFFERENT, false);
	uint64_t identical_ratio = lazy_identical * RATIO_SCALE / no_state;
	uint64_t eager_ratio = eager_identical * RATIO_SCALE / lazy_identical;

	/* The goal for lazy-identical / no-state is at most 1.05; reported, not asserted. */
	test_diag("metric dr.switch_ratio lazy_identical_over_no_state=%llu.%03llu "
		  "eager_over_lazy_identical=%llu.%03llu goal_lazy_identical_over_no_state=1.050",
		  (unsigned long long)(identical_ratio / RATIO_SCALE),
		  (unsigned long long)(identical_ratio % RATIO_SCALE),
		  (unsigned long long)(eager_ratio / RATIO_SCALE),
		  (unsigned long long)(eager_ratio % RATIO_SCALE));
	check(lazy_different >= 1 && eager_different >= 1, "no samples");
}
