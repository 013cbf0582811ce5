/* SPDX-License-Identifier: MIT */
/* pmu suite: counters of one event keep one count across switches. */
#include <stdbool.h>

#include "arch/x86/probe.h"
#include "pmu/event.h"
#include "pmu/pmu.h"
#include "runner/test.h"
#include "sched/sched.h"
#include "sched/task.h"

#define ROUNDS 6
#define ITERATIONS 1000 /* a loop: 2,000 instructions */
#define EVENTS_MAX (PMU_MAX_GP + 1)

static volatile bool rounds_done;

/* Known loops, then yields until the test stops it: every instruction it runs is counted. */
static void counted_rounds(void *arg)
{
	(void)arg;
	for (int round = 0; round < ROUNDS; round++)
		probe_instruction_loop(ITERATIONS);
	rounds_done = true;
	for (;;)
		sched_yield();
}

/*
 * Fixed counter 0 (INST_RETIRED.ANY) and gp GP counters with the architectural event
 * Instructions Retired (SDM Vol. 3B §20.2.1.2, Table 20-1: the same count), all at CPL 0, over
 * one task preempted at every tick by this one, which has no counters: each switch away stops
 * the counters with one GLOBAL_CTRL write (SDM §20.2.2) and reads them after, so every counter
 * covers the same instructions and the counts are equal, exactly. Read while they ran, one
 * after another, GP counter k gained about k x 100 instructions a switch.
 */
static void check_counts_agree(unsigned int gp)
{
	struct pmu_event instructions = pmu_generic_event(false, PMU_GENERIC_INSTRUCTIONS);
	static const struct pmu_event fixed = { .event = 0xc0, .kernel = true };
	struct pmu_reading readings[EVENTS_MAX] = { 0 };
	struct task *task;
	unsigned int switches = 0;

	instructions.kernel = true;
	rounds_done = false;
	task = task_create("counted", counted_rounds, NULL, TASK_START_STOPPED);
	if (!task)
		test_abort("task_create failed");
	if (sched_migrate(task, 0) != 0)
		test_abort("sched_migrate to CPU 0 failed");
	check_eq(0, pmu_add_fixed_event(task->index, 0, &fixed));
	for (unsigned int i = 1; i <= gp; i++)
		check(pmu_add_event(task->index, &instructions) == (int)i, "event %u", i);
	task_continue(task);
	while (!rounds_done) {
		sched_sleep_ms(1); /* wakes at each tick: a switch away from the task and back */
		switches++;
	}
	task_stop(task);
	for (unsigned int i = 0; i <= gp; i++)
		readings[i] = pmu_read(task->index, i);
	check_eq(1, sched_kill_others()); /* it yields until stopped */
	test_diag("%u GP events: fixed counter 0 counted %llu over %u switches away", gp,
		  (unsigned long long)readings[0].count, switches);
	check(switches >= 2, "the task was switched away from %u times: no window to judge",
	      switches);
	check(readings[0].count >= ROUNDS * 2ull * ITERATIONS, "fixed counter 0: %llu",
	      (unsigned long long)readings[0].count);
	for (unsigned int i = 1; i <= gp; i++) {
		check(readings[i].time_running == readings[i].time_enabled,
		      "event %u rotated: %llu of %llu", i,
		      (unsigned long long)readings[i].time_running,
		      (unsigned long long)readings[i].time_enabled);
		check(readings[i].count == readings[0].count,
		      "event %u: %llu, fixed counter 0: %llu (%+lld)", i,
		      (unsigned long long)readings[i].count, (unsigned long long)readings[0].count,
		      (long long)(readings[i].count - readings[0].count));
	}
}

/* Stepped at CPL 0: the loops, the yields and the switches, about 15,000 steps. */
TEST_OBSERVING(pmu, counters_of_one_event_count_alike_across_switches, 16000)
{
	if (!pmu_usable())
		test_skip("%s", pmu_info()->reason);
	if (pmu_info()->amd)
		test_skip(
			"AMD: fixed counter 0 is Intel's, and without PerfMonV2 the counters stop "
			"one select write at a time");
	if (pmu_info()->fixed_counters == 0)
		test_skip("CPUID.0AH:EDX[4:0]=0: no fixed counter 0 to compare with");
	check_counts_agree(pmu_info()->gp_counters);
}
