/* SPDX-License-Identifier: MIT */
/* The task pool and the lifecycle of kernel tasks: create, exit, join, stop, continue. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/context.h"
#include "arch/x86/cpu.h"
#include "arch/x86/paging.h"
#include "arch/x86/percpu.h"
#include "arch/x86/tsc.h"
#include "kernel/address_space.h"
#include "kernel/smp.h"
#include "kernel/switch_hooks.h"
#include "lib/panic.h"
#include "lib/string.h"
#include "sched/internal.h"
#include "sched/sched.h"

#define TASK_REQUEST_TIMEOUT_MS SMP_CALL_TIMEOUT_MS /* the IPI is as slow as a call */

/* A slot is free when in_use is false; tasks are never moved, so pointers stay valid. */
static struct task pool[TASKS_MAX];
static bool in_use[TASKS_MAX];
static unsigned int next_id;

struct task *task_pool_next(struct task *after)
{
	for (size_t i = after ? (size_t)(after - pool) + 1 : 0; i < TASKS_MAX; i++)
		if (in_use[i])
			return &pool[i];
	return NULL;
}

_Static_assert(TASKS_MAX <= KERNEL_STACK_RUNNER, "a stack slot for every task index");

uint64_t task_stack_top(const struct task *task)
{
	return task->stack_top;
}

struct cpu_regs *task_user_frame(const struct task *task)
{
	return (struct cpu_regs *)(task_stack_top(task) - sizeof(struct cpu_regs));
}

struct task *task_alloc(const char *name, void (*start)(void *), bool user)
{
	unsigned long flags = sched_lock_irqsave();
	struct task *task = NULL;

	for (size_t i = 0; i < TASKS_MAX; i++) {
		if (!in_use[i]) {
			in_use[i] = true;
			task = &pool[i];
			memset(task, 0, sizeof(*task));
			task->id = next_id++;
			task->index = (unsigned int)i;
			switch_task_set_live(task->index, true);
			task->cpu = this_cpu_index(); /* the creator's CPU, until sched_migrate() */
			break;
		}
	}
	sched_unlock_irqrestore(flags);
	if (!task)
		return NULL;
	strlcpy(task->name, name, sizeof(task->name));
	task->state = TASK_STOPPED; /* not runnable until its creator says so */
	if (start) {
		task->stack_top = kernel_stack_top(task->index);
		if (!task->stack_top) {
			task_free(task);
			return NULL;
		}
		task->context = context_init(
			user ? (uint64_t)task_user_frame(task) : task_stack_top(task), start, task);
	}
	return task;
}

void task_free(struct task *task)
{
	switch_task_set_address_space(task->index, 0);
	if (task->address_space)
		address_space_destroy(task->address_space);
	task->stack_top = 0; /* the slot stays mapped for the index's next task */
	task->address_space = 0;
	switch_task_set_live(task->index, false); /* never started, or its exit hooks ran */
	__atomic_store_n(&in_use[task - pool], false, __ATOMIC_RELEASE);
}

static void kernel_task_start(void *arg)
{
	struct task *task = arg;

	sched_task_started(task);
	task->entry(task->arg);
	task_exit(0);
}

struct task *task_create(const char *name, void (*fn)(void *), void *arg, enum task_start start)
{
	struct task *task = task_alloc(name, kernel_task_start, false);
	unsigned long flags;

	if (!task)
		return NULL;
	task->entry = fn;
	task->arg = arg;
	if (start == TASK_START_RUNNABLE) {
		flags = sched_lock_irqsave();
		run_queue_add(task, false);
		sched_unlock_irqrestore(flags);
	}
	return task;
}

void task_exit(long code)
{
	struct task *task;

	sched_lock_irqsave();
	task = sched_current();
	sched_run_exit_hooks(task);
	task->exit_code = code;
	task->state = TASK_DEAD;
	if (task->joiner)
		sched_wake_locked(task->joiner);
	schedule();
	__builtin_unreachable(); /* a DEAD task is never picked again */
}

bool task_is_valid(const struct task *task)
{
	uintptr_t offset = (uintptr_t)task - (uintptr_t)pool;

	return offset < sizeof(pool) && offset % sizeof(pool[0]) == 0 &&
	       __atomic_load_n(&in_use[offset / sizeof(pool[0])], __ATOMIC_ACQUIRE);
}

long task_join(struct task *task, struct user_fault *fault)
{
	struct user_fault last;
	unsigned long flags;
	long code;

	if (!task_is_valid(task) || task == sched_current())
		return TASK_JOIN_NO_TASK;
	flags = sched_lock_irqsave();
	while (task->state != TASK_DEAD) {
		task->joiner = sched_current();
		sched_block();
	}
	code = task->exit_code;
	last = task->fault;
	task_free(task);
	sched_unlock_irqrestore(flags);
	if (fault) /* after the lock: a bad pointer faults in the caller's test alone */
		*fault = last;
	return code;
}

/*
 * Wait, with sched_lock let go, until the task that another CPU runs has been switched out of
 * that CPU (which acts on the request at its reschedule IPI); a moved task may already run
 * again elsewhere. False after TASK_REQUEST_TIMEOUT_MS: that CPU keeps interrupts off; the
 * request stays and is carried out at its next switch.
 */
static bool task_wait_switched_out(struct task *task, unsigned long *flags)
{
	uint64_t start = rdtsc_ordered(), limit = tsc_cycles_from_ms(TASK_REQUEST_TIMEOUT_MS);
	unsigned int cpu = task->cpu;

	while (task->state == TASK_RUNNING && task->cpu == cpu && task != sched_current()) {
		sched_unlock_irqrestore(*flags);
		cpu_relax();
		if (rdtsc_ordered() - start > limit) {
			*flags = sched_lock_irqsave();
			return false;
		}
		*flags = sched_lock_irqsave();
	}
	return true;
}

void task_stop(struct task *task)
{
	unsigned long flags;

	if (!task_is_valid(task))
		return;
	flags = sched_lock_irqsave();

	switch (task->state) {
	case TASK_RUNNABLE: /* RUNNABLE -> STOPPED */
		run_queue_remove(task);
		task->state = TASK_STOPPED;
		break;
	case TASK_RUNNING:
		task->stop_requested = true;
		if (task == sched_current()) { /* the caller stops itself */
			schedule();
			break;
		}
		sched_request_switch(task); /* RUNNING on another CPU: it stops there */
		task_wait_switched_out(task, &flags);
		break;
	case TASK_BLOCKED: /* BLOCKED -> STOPPED when the block ends */
		task->stop_pending = true;
		break;
	default:
		break;
	}
	sched_unlock_irqrestore(flags);
}

void task_continue(struct task *task)
{
	unsigned long flags;

	if (!task_is_valid(task))
		return;
	flags = sched_lock_irqsave();

	if (task->state == TASK_STOPPED) /* STOPPED -> RUNNABLE */
		run_queue_add(task, false);
	task->stop_pending = false;
	task->stop_requested = false;
	sched_unlock_irqrestore(flags);
}

int sched_migrate(struct task *task, unsigned int cpu)
{
	unsigned long flags;
	int result = 0;

	if (cpu >= smp_cpus() || !task_is_valid(task))
		return -1;
	flags = sched_lock_irqsave();
	switch (task->state) {
	case TASK_RUNNABLE:
		if (task->cpu == cpu)
			break;
		run_queue_remove(task);
		task_set_cpu(task, cpu);
		run_queue_add(task, false);
		break;
	case TASK_RUNNING:
		if (task->cpu == cpu) { /* the latest request wins: stay */
			task->migrate_pending = false;
			break;
		}
		task->migrate_pending = true;
		task->migrate_to = cpu;
		if (task == sched_current()) {
			schedule(); /* back here on CPU cpu */
			break;
		}
		sched_request_switch(task);
		if (!task_wait_switched_out(task, &flags))
			result = -1;
		break;
	case TASK_DEAD:
		result = -1;
		break;
	default: /* BLOCKED, STOPPED: it runs on cpu once it runs again */
		task_set_cpu(task, cpu);
		break;
	}
	sched_unlock_irqrestore(flags);
	return result;
}

unsigned int sched_kill_others(void)
{
	unsigned long flags = sched_lock_irqsave();
	unsigned int ended = 0;

	for (struct task *task = task_pool_next(NULL); task; task = task_pool_next(task)) {
		if (task == sched_current() || sched_is_system_task(task))
			continue;
		if (task->state == TASK_RUNNING) { /* on another CPU: it ends there */
			task->kill_pending = true;
			sched_request_switch(task);
			if (!task_wait_switched_out(task, &flags))
				panic("task %u (%s) on CPU %u cannot be ended: its CPU "
				      "does not take interrupts",
				      task->id, task->name, task->cpu);
		}
		if (task->state == TASK_RUNNABLE)
			run_queue_remove(task);
		if (task->state != TASK_DEAD) {
			sched_run_exit_hooks(task);
			task->state = TASK_DEAD;
			task->exit_code = TASK_EXIT_KILLED;
		}
		task_free(task);
		ended++;
	}
	sched_unlock_irqrestore(flags);
	return ended;
}
void sched_run_exit_hooks(struct task *task)
{
	struct switch_task view = task_switch_view(task);

	switch_hooks_run_exit(&view);
}

struct switch_task task_switch_view(const struct task *task)
{
	return (struct switch_task){
		.index = task->index,
		.id = task->id,
		.user = task_is_user(task),
		.first_run = task->switches_in == 1,
		.user_regs = task_is_user(task) && task != sched_current() ? task_user_frame(task)
									   : NULL,
	};
}
