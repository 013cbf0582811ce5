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

	sched_sleep_ms(5);
	check(counter.count > 0, "the task never ran");
	task_stop(task);
	check_eq(TASK_STOPPED, task->state);
	stopped_at = counter.count;
	sched_sleep_ms(20);
	check_eq(stopped_at, counter.count);
	task_continue(task);
	sched_sleep_ms(5);
	check(counter.count > stopped_at, "no progress after continue");
	counter.released = true;
	check_eq(0, task_join(task, NULL));
}

static void sleep_briefly(void *arg)
{
	struct counter *counter = arg;

	sched_sleep_ms(10);
	counter->count++;
}

TEST(sched, stopping_a_sleeping_task_takes_effect_when_it_wakes)
{
	struct counter counter = { 0, false };
	struct task *task = task_create("sleeper", sleep_briefly, &counter, TASK_START_RUNNABLE);

	sched_yield(); /* let it start sleeping */
	check_eq(TASK_BLOCKED, task->state);
	task_stop(task);
	sched_sleep_ms(30);
	check_eq(TASK_STOPPED, task->state);
	check_eq(0, counter.count);
	task_continue(task);
	check_eq(0, task_join(task, NULL));
	check_eq(1, counter.count);
}

/* A pretend subsystem: its per-task state is a value applied at switch-in. */
static int hook_slot;
static volatile long applied[TASKS_MAX];
static volatile unsigned int switch_ins_of_target;
static struct task *volatile target;

static void apply_on_switch_in(struct task *prev, struct task *next)
{
	const long *pending = next->hook_data[hook_slot];

	if (pending)
		applied[next->id % TASKS_MAX] = *pending;
	if (next == target && prev != next)
		switch_ins_of_target++;
}

static const struct sched_hooks attach_hooks = { .switch_in = apply_on_switch_in };

struct attach_probe {
	volatile long seen_first;
	volatile bool released;
};

static void report_applied(void *arg)
{
	struct attach_probe *probe = arg;

	while (!probe->released) {
		if (!probe->seen_first)
			probe->seen_first = applied[sched_current()->id % TASKS_MAX];
		sched_yield();
	}
}

TEST(sched, state_attached_to_a_stopped_task_is_applied_when_it_next_runs)
{
	struct attach_probe probe = { 0, false };
	static const long config = 42;
	struct task *task;

	hook_slot = sched_register_hooks(&attach_hooks);
	check(hook_slot >= 0, "no free hook slot");
	if (hook_slot < 0)
		return;
	task = task_create("attach", report_applied, &probe, TASK_START_STOPPED);
	target = task;
	applied[task->id % TASKS_MAX] = 0;
	task->hook_data[hook_slot] = (void *)&config;
	switch_ins_of_target = 0;
	sched_sleep_ms(10);
	check_eq(0, switch_ins_of_target);
	task_continue(task);
	sched_sleep_ms(10);
	check_eq(42, probe.seen_first);
	check(switch_ins_of_target > 0, "the switch-in hook never saw the task");
	probe.released = true;
	task_join(task, NULL);
	sched_unregister_hooks(hook_slot);
	target = NULL;
}

/* Every switch as the hooks saw it: out and in must name the same pair, in order. */
#define SWITCH_RECORDS 64
static struct switch_record {
	struct task *prev, *next;
	bool in;
} records[SWITCH_RECORDS];
static volatile unsigned int record_count;

static void record(struct task *prev, struct task *next, bool in)
{
	if (record_count < SWITCH_RECORDS)
		records[record_count++] = (struct switch_record){ prev, next, in };
}

static void record_out(struct task *prev, struct task *next)
{
	record(prev, next, false);
}

static void record_in(struct task *prev, struct task *next)
{
	record(prev, next, true);
}

static const struct sched_hooks recording_hooks = { .switch_out = record_out,
						    .switch_in = record_in };

static void yield_a_few_times(void *arg)
{
	(void)arg;
	for (int i = 0; i < 4; i++)
		sched_yield();
}

TEST(sched, switch_hooks_see_the_outgoing_and_incoming_task)
{
	int slot;
	struct task *a, *b;

	record_count = 0;
	slot = sched_register_hooks(&recording_hooks);
	check(slot >= 0, "no free hook slot");
	if (slot < 0)
		return;
	a = task_create("a", yield_a_few_times, NULL, TASK_START_RUNNABLE);
	b = task_create("b", yield_a_few_times, NULL, TASK_START_RUNNABLE);
	task_join(a, NULL);
	task_join(b, NULL);
	sched_unregister_hooks(slot);
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
