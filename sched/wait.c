/* SPDX-License-Identifier: MIT */
/* Waiting: sleeping until a TSC deadline, and waking blocked tasks. */
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/cpu.h"
#include "arch/x86/tsc.h"
#include "sched/internal.h"
#include "sched/sched.h"

void sched_wake_locked(struct task *task)
{
	if (task->state == TASK_BLOCKED) {
		task->wake_tsc = 0;
		if (task->stop_pending) {
			task->stop_pending = false;
			task->state = TASK_STOPPED;
		} else {
			run_queue_add(task, false);
		}
	}
}

void sched_wake(struct task *task)
{
	unsigned long flags;

	if (!task_is_valid(task)) /* before the lock: task_is_valid() */
		return;
	flags = sched_lock_irqsave();

	sched_wake_locked(task);
	sched_unlock_irqrestore(flags);
}

/*
 * The earliest wake time of any sleeper (UINT64_MAX when none): the tick scans the task pool
 * only once it has passed, since that scan is the tick's most expensive work where ring 0 is
 * emulated.
 * May be early (a sleeper woken by sched_wake()), never late. Under sched_lock.
 */
static uint64_t next_wake = UINT64_MAX;

void sched_sleep_until(uint64_t wake_tsc)
{
	struct task *task = sched_current();

	task->wake_tsc = wake_tsc;
	if (wake_tsc < next_wake)
		next_wake = wake_tsc;
	while (task->wake_tsc && task->wake_tsc > rdtsc_ordered())
		sched_block();
	task->wake_tsc = 0;
}

void sched_sleep_ms(uint64_t ms)
{
	unsigned long flags = sched_lock_irqsave();

	sched_sleep_until(tsc_deadline_after_ms(ms));
	sched_unlock_irqrestore(flags);
}

void sched_wake_sleepers(void)
{
	uint64_t now = rdtsc_ordered();

	if (now < next_wake)
		return;
	next_wake = UINT64_MAX;
	for (struct task *task = task_pool_next(NULL); task; task = task_pool_next(task)) {
		if (task->state != TASK_BLOCKED || !task->wake_tsc)
			continue;
		if (task->wake_tsc <= now)
			sched_wake_locked(task);
		else if (task->wake_tsc < next_wake)
			next_wake = task->wake_tsc;
	}
}
