/* SPDX-License-Identifier: MIT */
/* smp suite: a request to a task running on another CPU holds even when the task blocks before
 * its CPU can act on it (interrupts were off: the reschedule IPI waited). */
#include "arch/x86/cpu.h"
#include "arch/x86/percpu.h"
#include "arch/x86/tsc.h"
#include "tests/kernel/lib/smp_util.h"

#define DEAF_MS 2000 /* at most: the request comes long before, unless the runner is stuck */

struct deaf_sleeper {
	volatile bool deaf; /* interrupts are off now */
	volatile unsigned int woke_on;
};

static bool request_pending(const struct task *task)
{
	return __atomic_load_n(&task->migrate_pending, __ATOMIC_ACQUIRE) ||
	       __atomic_load_n(&task->stop_requested, __ATOMIC_ACQUIRE);
}

/* With interrupts off until a request is pending (its IPI waits), then sleep: the task blocks
 * with the request not yet acted on. */
static void deaf_then_sleep(void *arg)
{
	struct deaf_sleeper *sleeper = arg;
	unsigned long flags = local_irq_save();
	uint64_t start = rdtsc_ordered();

	sleeper->deaf = true;
	while (!request_pending(sched_current()) &&
	       rdtsc_ordered() - start < tsc_cycles_from_ms(DEAF_MS))
		cpu_relax();
	sched_sleep_ms(5); /* blocks with interrupts still off: the switch takes it off CPU 1 */
	local_irq_restore(flags);
	sleeper->woke_on = this_cpu_index();
}

TEST(smp, a_move_requested_while_the_task_cannot_hear_it_holds_when_it_blocks)
{
	struct deaf_sleeper sleeper = { false, UINT32_MAX };
	struct task *task;

	smp_require_cpus(2);
	task = smp_task_on(1, "deaf", deaf_then_sleep, &sleeper);
	while (!sleeper.deaf)
		sched_yield();
	check_eq(0, sched_migrate(task, 0)); /* returns once it left CPU 1: it blocked */
	check_eq(0, task->cpu);
	check_eq(0, task_join(task, NULL));
	check_eq(0, sleeper.woke_on);
}

TEST(smp, a_stop_requested_while_the_task_cannot_hear_it_takes_effect_when_it_wakes)
{
	struct deaf_sleeper sleeper = { false, UINT32_MAX };
	uint64_t start;
	struct task *task;

	smp_require_cpus(2);
	task = smp_task_on(1, "deaf", deaf_then_sleep, &sleeper);
	while (!sleeper.deaf)
		sched_yield();
	task_stop(task); /* returns once it left CPU 1: it blocked */
	start = rdtsc_ordered();
	while (task->state != TASK_STOPPED && rdtsc_ordered() - start < tsc_cycles_from_ms(1000))
		sched_sleep_ms(1);
	check_eq(TASK_STOPPED, task->state); /* after its 5 ms sleep, not running */
	check_eq(UINT32_MAX, sleeper.woke_on);
	task_continue(task);
	check_eq(0, task_join(task, NULL));
	check_eq(1, sleeper.woke_on);
}
