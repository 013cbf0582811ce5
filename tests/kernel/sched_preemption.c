/* SPDX-License-Identifier: MIT */
/* sched suite: the timer preempts tasks that never yield, and shares the CPU fairly. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/apic.h"
#include "arch/x86/cpu.h"
#include "arch/x86/percpu.h"
#include "arch/x86/tsc.h"
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
