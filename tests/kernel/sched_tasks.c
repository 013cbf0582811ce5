/* SPDX-License-Identifier: MIT */
/* sched suite: kernel tasks run, yield, sleep, wake, exit and are joined. */
#include <stddef.h>

#include "arch/x86/cpu.h"
#include "arch/x86/tsc.h"
#include "runner/test.h"
#include "sched/sched.h"

#define ROUNDS 8

#define ATTEMPTS 3

struct turn_log {
	unsigned int entries[2 * ROUNDS];
	unsigned int count;
};

struct turn_taker {
	struct turn_log *log;
	unsigned int id;
};

static void set_and_exit(void *arg)
{
	*(int *)arg = 42;
	task_exit(7);
}

static void take_turns(void *arg)
{
	struct turn_taker *taker = arg;

	for (unsigned int i = 0; i < ROUNDS; i++) {
		taker->log->entries[taker->log->count++] = taker->id;
		sched_yield();
	}
}

static void sleep_long(void *arg)
{
	(void)arg;
	sched_sleep_ms(60000);
}

TEST(sched, kernel_task_runs_and_its_exit_code_is_joined)
{
	int value = 0;
	struct task *task = task_create("set", set_and_exit, &value, TASK_START_RUNNABLE);

	check(task != NULL, "task_create failed");
	check_eq(7, task_join(task, NULL));
	check_eq(42, value);
}

/* Two tasks started together, each logging its id then yielding, ROUNDS times. */
static void run_turns(struct turn_log *log)
{
	struct turn_taker a = { log, 1 }, b = { log, 2 };
	struct task *task_a = task_create("a", take_turns, &a, TASK_START_STOPPED);
	struct task *task_b = task_create("b", take_turns, &b, TASK_START_STOPPED);

	log->count = 0;
	task_continue(task_a);
	task_continue(task_b);
	task_join(task_a, NULL);
	task_join(task_b, NULL);
}

TEST(sched, yield_alternates_between_two_tasks)
{
	struct turn_log log;
	unsigned int attempt = 0;

	/* A timer preemption between a log entry and its yield reorders turns: try again. */
	for (;;) {
		uint64_t preemptions = sched_stats().preemptions;

		run_turns(&log);
		if (sched_stats().preemptions == preemptions || ++attempt == ATTEMPTS)
			break;
		test_diag("attempt %u was preempted; trying again", attempt);
	}
	check_eq(2 * ROUNDS, log.count);
	for (unsigned int i = 0; i < log.count; i++)
		if (log.entries[i] != 1 + i % 2) {
			check_eq(1 + i % 2, log.entries[i]);
			break;
		}
}

TEST(sched, sleep_lasts_at_least_its_time)
{
	uint64_t start = rdtsc_ordered(), elapsed_ms;

	sched_sleep_ms(10);
	elapsed_ms = (rdtsc_ordered() - start) * 1000 / tsc_hz();
	check(elapsed_ms >= 10 && elapsed_ms < 10 + 100, "slept %llu ms for 10 ms",
	      (unsigned long long)elapsed_ms);
}

TEST(sched, wake_up_ends_a_sleep_early)
{
	struct task *sleeper = task_create("sleeper", sleep_long, NULL, TASK_START_RUNNABLE);
	uint64_t start = rdtsc_ordered(), elapsed_ms;

	sched_sleep_ms(10);
	check_eq(TASK_BLOCKED, sleeper->state);
	sched_wake(sleeper);
	check_eq(0, task_join(sleeper, NULL));
	elapsed_ms = (rdtsc_ordered() - start) * 1000 / tsc_hz();
	check(elapsed_ms < 1000, "the woken sleeper took %llu ms", (unsigned long long)elapsed_ms);
}

TEST(sched, idle_task_takes_the_cpu_when_everyone_sleeps)
{
	uint64_t switches = sched_stats().switches;

	sched_sleep_ms(5);
	/* To idle and back: nothing else was runnable. */
	check(sched_stats().switches >= switches + 2, "%llu switches",
	      (unsigned long long)(sched_stats().switches - switches));
	check_eq(TASK_RUNNING, sched_current()->state);
}
