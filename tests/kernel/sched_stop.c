/* SPDX-License-Identifier: MIT */
/* sched suite: stop and continue, and state attached to a stopped task through switch hooks. */
#include <stddef.h>

#include "arch/x86/cpu.h"
#include "runner/test.h"
#include "sched/sched.h"

struct counter {
	volatile uint64_t count;
	volatile bool released;
};

#define STOPPED_YIELDS 20

static void count_and_yield(void *arg)
{
	struct counter *counter = arg;

	while (!counter->released) {
		counter->count++;
		sched_yield();
	}
}

TEST(sched, stopped_task_does_not_run_until_continued)
{
	struct counter counter = { 0, false };
	struct task *task = task_create("counter", count_and_yield, &counter, TASK_START_RUNNABLE);
	uint64_t stopped_at;

	sched_yield(); /* to it: it counts and yields back */
	check(counter.count > 0, "the task never ran");
	task_stop(task);
	check_eq(TASK_STOPPED, task->state);
	stopped_at = counter.count;
	for (unsigned int i = 0; i < STOPPED_YIELDS; i++)
		sched_yield(); /* each would run it, were it runnable */
	sched_sleep_ms(4); /* and a tick: a running task would yield thousands of times */
	check_eq(stopped_at, counter.count);
	task_continue(task);
	sched_yield();
	check(counter.count > stopped_at, "no progress after continue");
	counter.released = true;
	check_eq(0, task_join(task, NULL));
}

static void sleep_briefly(void *arg)
{
	struct counter *counter = arg;

	sched_sleep_ms(1);
	counter->count++;
}

TEST(sched, stopping_a_sleeping_task_takes_effect_when_it_wakes)
{
	struct counter counter = { 0, false };
	struct task *task = task_create("sleeper", sleep_briefly, &counter, TASK_START_RUNNABLE);

	sched_yield(); /* let it start sleeping */
	check_eq(TASK_BLOCKED, task->state);
	task_stop(task);
	sched_sleep_ms(8); /* its 1 ms is over: two ticks */
	check_eq(TASK_STOPPED, task->state);
	check_eq(0, counter.count);
	task_continue(task);
	check_eq(0, task_join(task, NULL));
	check_eq(1, counter.count);
}

/* A pretend subsystem: per-task state, kept by task index, applied at switch-in. */
static const long *pending[SWITCH_TASKS_MAX];
static volatile long applied[SWITCH_TASKS_MAX];
static volatile unsigned int switch_ins_of_target;
static volatile int target = -1;

static void apply_on_switch_in(const struct switch_task *prev, const struct switch_task *next)
{
	if (pending[next->index])
		applied[next->index] = *pending[next->index];
	if ((int)next->index == target && prev->index != next->index)
		switch_ins_of_target++;
}

static void forget_on_exit(const struct switch_task *task)
{
	pending[task->index] = NULL;
	applied[task->index] = 0;
}

static const struct switch_hooks attach_hooks = {
	.switch_in = apply_on_switch_in,
	.task_exit = forget_on_exit,
};

struct attach_probe {
	volatile long seen_first;
	volatile bool released;
};

static void report_applied(void *arg)
{
	struct attach_probe *probe = arg;

	while (!probe->released) {
		if (!probe->seen_first)
			probe->seen_first = applied[switch_task_current()->index];
		sched_yield();
	}
}

TEST(sched, state_attached_to_a_stopped_task_is_applied_when_it_next_runs)
{
	struct attach_probe probe = { 0, false };
	static const long config = 42;
	struct task *task;
	int handle = switch_hooks_register(&attach_hooks);

	check(handle >= 0, "no free hook slot");
	if (handle < 0)
		return;
	task = task_create("attach", report_applied, &probe, TASK_START_STOPPED);
	target = (int)task->index;
	pending[task->index] = &config;
	switch_ins_of_target = 0;
	sched_sleep_ms(5);
	check_eq(0, switch_ins_of_target);
	check_eq(0, applied[task->index]);
	task_continue(task);
	sched_sleep_ms(5);
	check_eq(42, probe.seen_first);
	check(switch_ins_of_target > 0, "the switch-in hook never saw the task");
	probe.released = true;
	task_join(task, NULL);
	switch_hooks_unregister(handle);
	target = -1;
}

/* Every switch as the hooks saw it: out and in must name the same pair, in order. */
#define SWITCH_RECORDS 64
static struct switch_record {
	unsigned int prev, next;
	bool in;
} records[SWITCH_RECORDS];
static volatile unsigned int record_count;

static void record(const struct switch_task *prev, const struct switch_task *next, bool in)
{
	if (record_count < SWITCH_RECORDS)
		records[record_count++] = (struct switch_record){ prev->id, next->id, in };
}

static void record_out(const struct switch_task *prev, const struct switch_task *next)
{
	record(prev, next, false);
}

static void record_in(const struct switch_task *prev, const struct switch_task *next)
{
	record(prev, next, true);
}

static const struct switch_hooks recording_hooks = { .switch_out = record_out,
						     .switch_in = record_in };

static void yield_a_few_times(void *arg)
{
	(void)arg;
	for (int i = 0; i < 4; i++)
		sched_yield();
}

TEST(sched, switch_hooks_see_the_outgoing_and_incoming_task)
{
	int handle;
	struct task *a, *b;

	record_count = 0;
	handle = switch_hooks_register(&recording_hooks);
	check(handle >= 0, "no free hook slot");
	if (handle < 0)
		return;
	a = task_create("a", yield_a_few_times, NULL, TASK_START_RUNNABLE);
	b = task_create("b", yield_a_few_times, NULL, TASK_START_RUNNABLE);
	task_join(a, NULL);
	task_join(b, NULL);
	switch_hooks_unregister(handle);
	check(record_count >= 8, "%u hook calls", record_count);
	for (unsigned int i = 0; i + 1 < record_count; i += 2) {
		check(!records[i].in && records[i + 1].in, "record %u: out then in", i);
		check(records[i].prev == records[i + 1].prev &&
			      records[i].next == records[i + 1].next,
		      "record %u: out and in name different tasks", i);
		check(records[i].prev != records[i].next, "record %u: a switch to itself", i);
		if (i >= 2)
			check(records[i].prev == records[i - 1].next,
			      "record %u: prev is not the task switched in before", i);
	}
}
