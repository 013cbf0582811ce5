/* SPDX-License-Identifier: MIT */
/* Waiting: sleeping until a TSC deadline, and waking blocked tasks. */
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/cpu.h"
#include "arch/x86/tsc.h"
#include "sched/internal.h"
#include "sched/sched.h"

void sched_wake(struct task *task)
{
	unsigned long flags = local_irq_save();

	if (task->state == TASK_BLOCKED) {
		task->wake_tsc = 0;
		if (task->stop_pending) {
			task->stop_pending = false;
			task->state = TASK_STOPPED;
		} else {
			run_queue_add(task, false);
		}
	}
	local_irq_restore(flags);
}

void sched_sleep_until(uint64_t wake_tsc)
{
	struct task *task = sched_current();

	task->wake_tsc = wake_tsc;
	while (task->wake_tsc && task->wake_tsc > rdtsc_ordered())
		sched_block();
	task->wake_tsc = 0;
}

void sched_sleep_ms(uint64_t ms)
{
	unsigned long flags = local_irq_save();

	sched_sleep_until(rdtsc_ordered() + tsc_cycles_from_ms(ms));
	local_irq_restore(flags);
}

void sched_wake_sleepers(void)
{
	uint64_t now = rdtsc_ordered();

	for (struct task *task = task_pool_next(NULL); task; task = task_pool_next(task))
		if (task->state == TASK_BLOCKED && task->wake_tsc && task->wake_tsc <= now)
			sched_wake(task);
}
