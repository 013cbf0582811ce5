/* SPDX-License-Identifier: MIT */
/* sched suite: the timer preempts tasks that never yield, and shares the CPU fairly. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/apic.h"
#include "arch/x86/cpu.h"
#include "arch/x86/percpu.h"
#include "arch/x86/tsc.h"
#include "kernel/switch_hooks.h"
#include "runner/test.h"
#include "sched/sched.h"
#include "tests/kernel/lib/tolerance.h"

#define FAIR_TASKS 4
/*
 * The window lasts until each task had FAIR_SLICES slices, the tick at FAIR_HZ meanwhile, and
 * at most FAIR_WINDOW_MAX_MS: where a switch takes milliseconds the window grows with it
 * (docs/platforms.md).
 */
#define FAIR_SLICES 9
#define FAIR_HZ 1500
#define FAIR_WINDOW_MAX_MS 3000
#define FAIR_POLL_MS 2
/*
 * Each task's share of the spinners' CPU time within FAIR_SHARE_TOLERANCE_PERCENT of 1/N, and
 * slices at most FAIR_SLICES_SPREAD apart (tests/kernel/lib/tolerance.h, for FAIR_TASKS and
 * FAIR_SLICES as here).
 */
_Static_assert(FAIR_TASKS == 4 && FAIR_SLICES == 9, "tests/kernel/lib/tolerance.h: FAIR_*");

static void spin_until_released(void *arg)
{
	volatile bool *released = arg;

	while (!*released)
		cpu_relax();
}

TEST(sched, task_that_never_yields_is_preempted)
{
	volatile bool released = false;
	uint64_t preemptions = sched_stats().preemptions;
	struct task *spinner =
		task_create("spinner", spin_until_released, (void *)&released, TASK_START_RUNNABLE);

	/* The spinner gets the CPU now; only the timer can give it back to us. */
	sched_yield();
	released = true;
	check_eq(0, task_join(spinner, NULL));
	check(sched_stats().preemptions > preemptions, "no preemption counted");
}

/*
 * Switches that each take SLOW_SWITCH_PERIODS tick periods, as a switch does under KVM-PVM
 * (docs/platforms.md): SLOW_SWITCHES of them between the test and a counting task, then none,
 * so that whatever the scheduler does the test gets its CPU back.
 */
#define SLOW_SWITCHES 24
#define SLOW_SWITCH_PERIODS 3
#define SLOW_SWITCH_WAIT_MS 5000

static struct slow_switch {
	volatile uint64_t count; /* the counting task's progress */
	unsigned int test_id, counter_id;
	unsigned int left; /* slow switches still to make */
	uint64_t count_at_switch_in;
	unsigned int runs, runs_with_progress; /* of the counting task, switched in slowly */
	bool counting; /* the counting task was switched in slowly and has not left yet */
	volatile bool stop;
} slow;

static void slow_switch_out(const struct switch_task *prev, const struct switch_task *next)
{
	(void)next;
	if (prev->id != slow.counter_id || !slow.counting)
		return;
	slow.counting = false;
	slow.runs++;
	slow.runs_with_progress += slow.count != slow.count_at_switch_in;
}

static void slow_switch_in(const struct switch_task *prev, const struct switch_task *next)
{
	uint64_t start = rdtsc_ordered(), period = tsc_hz() / timer_hz();

	(void)prev;
	if ((next->id != slow.test_id && next->id != slow.counter_id) || !slow.left)
		return;
	slow.left--;
	while (rdtsc_ordered() - start < SLOW_SWITCH_PERIODS * period)
		cpu_relax();
	if (next->id == slow.counter_id) {
		slow.counting = true;
		slow.count_at_switch_in = slow.count;
	}
}

static const struct switch_hooks slow_switch_hooks = {
	.switch_out = slow_switch_out,
	.switch_in = slow_switch_in,
};

static void count_until_stopped(void *arg)
{
	(void)arg;
	while (!slow.stop)
		slow.count++;
}

/*
 * A tick that fell due while the switch ran is not the incoming task's: with one-tick slices
 * and switches longer than a tick, every task switched in must still run before it is
 * preempted (sched/scheduler.c), or the CPU only switches.
 */
TEST(sched, a_task_switched_in_runs_although_its_switch_took_longer_than_a_tick)
{
	unsigned int slice = sched_slice_ticks();
	uint64_t start;
	struct task *counter;
	int handle;

	slow = (struct slow_switch){ .test_id = sched_current()->id };
	counter = task_create("counter", count_until_stopped, NULL, TASK_START_STOPPED);
	if (!counter)
		test_abort("task_create failed");
	slow.counter_id = counter->id;
	handle = switch_hooks_register(&slow_switch_hooks);
	if (handle < 0)
		test_abort("no free switch-hook slot"); /* the runner ends the stopped counter */
	sched_set_slice_ticks(1);
	/* Its first run starts it (and under TCG translates its loop): slow switches come after. */
	task_continue(counter);
	start = rdtsc_ordered();
	while (!slow.count && rdtsc_ordered() - start < tsc_cycles_from_ms(SLOW_SWITCH_WAIT_MS))
		sched_yield();
	slow.left = SLOW_SWITCHES;
	start = rdtsc_ordered();
	while (slow.left && rdtsc_ordered() - start < tsc_cycles_from_ms(SLOW_SWITCH_WAIT_MS))
		sched_yield();
	switch_hooks_unregister(handle);
	sched_set_slice_ticks(slice);
	slow.stop = true;
	check_eq(0, task_join(counter, NULL));
	check_eq(0u, slow.left);
	/*
	 * Each slow switch-in of the counter was followed by at least half a tick of its own, in
	 * host time: a loaded host may take that time from the vCPU (11 of 12 runs progressed
	 * once under TCG), so most runs must progress; without the rule none does.
	 */
	check(slow.runs >= SLOW_SWITCHES / 2 - 1, "%u slow runs of the counter", slow.runs);
	check(2 * slow.runs_with_progress > slow.runs, "the counter ran in %u of its %u slow runs",
	      slow.runs_with_progress, slow.runs);
}

/* A share, in permille of the spinners' time, within its tolerance of 1 / FAIR_TASKS. */
static bool near_fair(uint64_t share_permille)
{
	return within_percent(share_permille * FAIR_TASKS, 1000, FAIR_SHARE_TOLERANCE_PERCENT);
}

TEST(sched, busy_tasks_share_the_cpu_fairly)
{
	volatile bool released = false;
	struct task *tasks[FAIR_TASKS];
	uint64_t runtime[FAIR_TASKS], slices[FAIR_TASKS], total = 0, ticks, start, elapsed_ticks;
	uint64_t fewest = UINT64_MAX, most = 0;
	unsigned int hz = timer_hz();
	bool judged;

	/* Created stopped and started together, so that creation time is not counted. */
	for (unsigned int i = 0; i < FAIR_TASKS; i++)
		tasks[i] = task_create("busy", spin_until_released, (void *)&released,
				       TASK_START_STOPPED);
	timer_set_hz(FAIR_HZ);
	ticks = this_cpu()->ticks;
	start = rdtsc_ordered();
	for (unsigned int i = 0; i < FAIR_TASKS; i++) {
		runtime[i] = tasks[i]->runtime_cycles;
		slices[i] = tasks[i]->switches_in;
		task_continue(tasks[i]);
	}
	for (unsigned int waited = 0; waited < FAIR_WINDOW_MAX_MS; waited += FAIR_POLL_MS) {
		unsigned int fewest = UINT32_MAX;

		for (unsigned int i = 0; i < FAIR_TASKS; i++)
			if (tasks[i]->switches_in - slices[i] < fewest)
				fewest = (unsigned int)(tasks[i]->switches_in - slices[i]);
		if (fewest >= FAIR_SLICES)
			break;
		sched_sleep_ms(FAIR_POLL_MS);
	}
	released = true;
	ticks = this_cpu()->ticks - ticks;
	elapsed_ticks = (rdtsc_ordered() - start) * FAIR_HZ / tsc_hz();
	timer_set_hz(hz);
	for (unsigned int i = 0; i < FAIR_TASKS; i++) {
		while (tasks[i]->state != TASK_DEAD)
			sched_yield();
		runtime[i] = tasks[i]->runtime_cycles - runtime[i];
		slices[i] = tasks[i]->switches_in - slices[i];
		total += runtime[i];
		task_join(tasks[i], NULL);
	}
	/*
	 * Round robin: each task's slices within FAIR_SLICES_SPREAD of every other's. Their time
	 * is judged only where the tick came: a guest the host stopped, or whose ticks it lost
	 * (KVM-PVM), charges that time to whichever task ran (docs/platforms.md).
	 */
	for (unsigned int i = 0; i < FAIR_TASKS; i++) {
		fewest = slices[i] < fewest ? slices[i] : fewest;
		most = slices[i] > most ? slices[i] : most;
	}
	check(most - fewest <= FAIR_SLICES_SPREAD, "slices from %llu to %llu: more than %u apart",
	      (unsigned long long)fewest, (unsigned long long)most, FAIR_SLICES_SPREAD);
	judged = ticks_came(ticks, elapsed_ticks);
	if (!judged)
		test_diag("shares not judged: the tick came %llu times in %llu ticks' time",
			  (unsigned long long)ticks, (unsigned long long)elapsed_ticks);
	for (unsigned int i = 0; i < FAIR_TASKS; i++) {
		uint64_t share_permille = runtime[i] * 1000 / total;

		test_diag(
			"task %u: %llu cycles in %llu slices, %llu permille of the spinners' time",
			i, (unsigned long long)runtime[i], (unsigned long long)slices[i],
			(unsigned long long)share_permille);
		check(!judged || near_fair(share_permille),
		      "task %u got %llu permille, fair is %u +- %u%%", i,
		      (unsigned long long)share_permille, 1000 / FAIR_TASKS,
		      FAIR_SHARE_TOLERANCE_PERCENT);
	}
}
