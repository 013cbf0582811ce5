/* SPDX-License-Identifier: MIT */
/* lbr suite: cycles and LBR MSR writes per switch of a call-stack task, lazy and eager. */
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/cpu.h"
#include "arch/x86/percpu.h"
#include "arch/x86/tsc.h"
#include "arch/x86/user.h"
#include "lbr/lbr.h"
#include "lib/sort.h"
#include "runner/test.h"
#include "sched/sched.h"
#include "sched/task.h"
#include "tests/kernel/lib/budget.h"
#include "tests/kernel/lib/lbr_probe.h"
#include "tests/kernel/lib/lbr_util.h"
#include "tests/kernel/lib/user_programs.h"

/*
 * Per configuration, a ring-3 task timing its yields (user_yield_timing: rdtsc, yield, rdtsc)
 * against a kernel partner on CPU 0, up to a number of samples or a time budget: budget=quick
 * 150 samples or 150 ms (400 eager, 600 against a recorder), budget=soak (make bench) 2,000 or
 * 600 ms (1,500 eager, 2,500 against a recorder). On the model every recorded
 * ring-3 instruction is a single step: its cycles say nothing of silicon; its writes do.
 */
#define SAMPLES_QUICK 150
#define SAMPLES_SOAK 2000
#define BUDGET_QUICK_MS 150
#define BUDGET_SOAK_MS 600
/* Eager, and against a ring-0 recorder (whose every instruction the model steps): longer. */
#define EAGER_QUICK_MS 400
#define EAGER_SOAK_MS 1500
#define RECORDER_QUICK_MS 600
#define RECORDER_SOAK_MS 2500

static unsigned int fewest_samples; /* over the configurations measured */
#define POLL_MS 5

static uint64_t samples[SAMPLES_SOAK];

enum configuration {
	NO_LBR, /* neither task records */
	CALL_STACK, /* the timed task is a call-stack user; the partner records nothing */
	AGAINST_RECORDER, /* the timed task is a call-stack user; the partner records ring 0 */
};

/* The partner: yields until told to stop, recording ring 0 if asked. */
struct partner {
	volatile bool stop;
	bool records;
};

static void partner_yields(void *arg)
{
	struct partner *p = arg;
	struct lbr_config config = { .kernel = true, .branches = LBR_BRANCH_ALL };

	if (p->records && lbr_attach(sched_current()->index, &config) != LBR_OK)
		return;
	while (!p->stop)
		sched_yield();
	if (p->records)
		lbr_detach(sched_current()->index);
}

struct window {
	struct lbr_stats before, after;
	uint64_t switches;
	unsigned int count;
};

static void run_window(enum configuration configuration, bool lazy, struct window *w)
{
	struct lbr_config call_stack = { .user = true,
					 .branches = LBR_BRANCH_CALLS_AND_RETURNS,
					 .call_stack = true };
	struct partner partner = { .records = configuration == AGAINST_RECORDER };
	unsigned int wanted = (unsigned int)budget_count(SAMPLES_QUICK, SAMPLES_SOAK);
	uint64_t deadline, switches, saves;
	struct yield_timing *timing;
	struct task *task, *other;
	bool was_lazy = lbr_is_lazy();

	task = task_create_user("lbr-timer", user_yield_timing, USER_DATA_BASE, TASK_START_STOPPED);
	other = task_create("lbr-partner", partner_yields, &partner, TASK_START_STOPPED);
	if (!task || !other || sched_migrate(task, 0) || sched_migrate(other, 0))
		test_abort("task_create or sched_migrate failed");
	timing = task_user_data(task);
	timing->capacity = wanted;
	if (configuration != NO_LBR && lbr_attach(task->index, &call_stack) != LBR_OK)
		test_abort("lbr_attach refused");
	lbr_set_lazy(lazy);
	saves = lbr_stats(0).saves;
	deadline = rdtsc_ordered() +
		   tsc_cycles_from_ms(configuration == AGAINST_RECORDER
					      ? budget_ms(RECORDER_QUICK_MS, RECORDER_SOAK_MS)
				      : !lazy ? budget_ms(EAGER_QUICK_MS, EAGER_SOAK_MS)
					      : budget_ms(BUDGET_QUICK_MS, BUDGET_SOAK_MS));
	task_continue(task);
	task_continue(other);
	/* The window opens after the call-stack task's first switch-out: its first switch-in
	 * wiped the stack, as Linux resets it for a new LBR user (intel_pmu_lbr_add()). */
	while (configuration != NO_LBR && lbr_stats(0).saves == saves && task->state != TASK_DEAD)
		sched_yield();
	w->before = lbr_stats(0);
	switches = sched_stats().switches;
	while (task->state != TASK_DEAD && rdtsc_ordered() < deadline)
		sched_sleep_ms(POLL_MS);
	timing->stop = 1;
	while (task->state != TASK_DEAD)
		sched_yield();
	w->after = lbr_stats(0);
	w->switches = sched_stats().switches - switches;
	partner.stop = true;
	check_eq(0, task_join(task, NULL));
	check_eq(0, task_join(other, NULL));
	lbr_set_lazy(was_lazy);
	w->count = (unsigned int)(timing->count < wanted ? timing->count : wanted);
	for (unsigned int i = 0; i < w->count; i++)
		samples[i] = timing->samples[i] / 2; /* there and back: two switches */
}

/*
 * Median cycles per switch, printed as a metric with the LBR MSR writes per switch, and checked
 * against what the configuration must write: none without LBR and none for the call-stack task
 * lazily (its restore is skipped: this CPU still holds its stack); a restore of depth entries
 * and TOS at each of its switch-ins eagerly (with XSAVES, one XRSTORS and no WRMSR), and
 * against a recorder, whose own switch-ins wipe.
 */
static void measure(const char *name, enum configuration configuration, bool lazy)
{
	uint64_t restores, wipes, writes;
	struct window w = { 0 };
	uint64_t median;

	run_window(configuration, lazy, &w);
	restores = w.after.restores - w.before.restores;
	wipes = w.after.wipes - w.before.wipes;
	writes = w.after.stack_writes - w.before.stack_writes;
	sort_u64(samples, w.count);
	median = percentile_u64(samples, w.count, 50);
	test_diag("metric lbr.switch_cycles.%s median=%llu p99=%llu samples=%u", name,
		  (unsigned long long)median,
		  (unsigned long long)percentile_u64(samples, w.count, 99), w.count);
	test_diag("metric lbr.switch_writes.%s stack_per_1000_switches=%llu "
		  "select_per_1000_switches=%llu debugctl_per_1000_switches=%llu "
		  "xrstors_per_1000_switches=%llu switches=%llu restores=%llu skipped=%llu "
		  "wipes=%llu",
		  name, (unsigned long long)(w.switches ? writes * 1000 / w.switches : 0),
		  (unsigned long long)(w.switches
					       ? (w.after.select_writes - w.before.select_writes) *
							 1000 / w.switches
					       : 0),
		  (unsigned long long)(w.switches ? (w.after.debugctl_writes -
						     w.before.debugctl_writes) *
							    1000 / w.switches
						  : 0),
		  (unsigned long long)(w.switches ? (w.after.xrstors - w.before.xrstors) * 1000 /
							    w.switches
						  : 0),
		  (unsigned long long)w.switches, (unsigned long long)restores,
		  (unsigned long long)(w.after.restores_elided - w.before.restores_elided),
		  (unsigned long long)wipes);
	check(median > 0, "%s: the TSC did not advance over two switches", name);
	check_eq(lbr_expected_stack_writes(&w.before, &w.after), writes);
	if (configuration == NO_LBR || (configuration == CALL_STACK && lazy)) {
		/* The first switch-in of a new task wipes or restores nothing but an empty stack.
		 */
		check(restores == 0 && wipes <= 1, "%s: %llu restores, %llu wipes", name,
		      (unsigned long long)restores, (unsigned long long)wipes);
	} else {
		check(restores + 2 >= w.count, "%s: %llu restores in %u round trips", name,
		      (unsigned long long)restores, w.count);
	}
	fewest_samples = w.count < fewest_samples ? w.count : fewest_samples;
}

TEST_OBSERVING(lbr, benchmark_switch_cost_by_configuration, 68000)
{
	require_call_stack();
	fewest_samples = ~0u;
	measure("no_lbr", NO_LBR, true);
	measure("call_stack_lazy", CALL_STACK, true);
	measure("call_stack_eager", CALL_STACK, false);
	if (lbr_support()->xsaves) {
		/* The fallback beside it: the same restores by the MSR loop, not XRSTORS. */
		bool was = lbr_uses_xsaves();

		lbr_set_xsaves(false);
		measure("call_stack_eager_msr_loop", CALL_STACK, false);
		lbr_set_xsaves(was);
	}
	measure("against_a_recorder", AGAINST_RECORDER, true);
	budget_skip_if_few_samples("the fewest of a configuration", fewest_samples);
}
