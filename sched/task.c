/* SPDX-License-Identifier: MIT */
/* The task pool and the lifecycle of kernel tasks: create, exit, join, stop, continue. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/context.h"
#include "arch/x86/cpu.h"
#include "arch/x86/paging.h"
#include "arch/x86/pfa.h"
#include "lib/string.h"
#include "sched/internal.h"
#include "sched/sched.h"

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

uint64_t task_stack_top(const struct task *task)
{
	return (uint64_t)phys_to_virt(task->stack) + TASK_STACK_PAGES * PAGE_SIZE;
}

struct cpu_regs *task_user_frame(const struct task *task)
{
	return (struct cpu_regs *)(task_stack_top(task) - sizeof(struct cpu_regs));
}

struct task *task_alloc(const char *name, void (*start)(void *), bool user)
{
	unsigned long flags = local_irq_save();
	struct task *task = NULL;

	for (size_t i = 0; i < TASKS_MAX; i++) {
		if (!in_use[i]) {
			in_use[i] = true;
			task = &pool[i];
			memset(task, 0, sizeof(*task));
			task->id = next_id++;
			task->index = (unsigned int)i;
			break;
		}
	}
	local_irq_restore(flags);
	if (!task)
		return NULL;
	strlcpy(task->name, name, sizeof(task->name));
	task->state = TASK_STOPPED; /* not runnable until its creator says so */
	if (start) {
		task->stack = pfa_alloc_pages(TASK_STACK_PAGES);
		if (!task->stack) {
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
	if (task->stack)
		pfa_free_pages(task->stack, TASK_STACK_PAGES);
	if (task->address_space)
		address_space_destroy(task->address_space);
	task->stack = 0;
	task->address_space = 0;
	in_use[task - pool] = false;
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
		flags = local_irq_save();
		run_queue_add(task, false);
		local_irq_restore(flags);
	}
	return task;
}

void task_exit(long code)
{
	struct task *task;

	local_irq_disable();
	task = sched_current();
	sched_run_exit_hooks(task);
	task->exit_code = code;
	task->state = TASK_DEAD;
	if (task->joiner)
		sched_wake(task->joiner);
	schedule();
	__builtin_unreachable(); /* a DEAD task is never picked again */
}

long task_join(struct task *task, struct user_fault *fault)
{
	unsigned long flags = local_irq_save();
	long code;

	while (task->state != TASK_DEAD) {
		task->joiner = sched_current();
		sched_block();
	}
	code = task->exit_code;
	if (fault)
		*fault = task->fault;
	task_free(task);
	local_irq_restore(flags);
	return code;
}

void task_stop(struct task *task)
{
	unsigned long flags = local_irq_save();

	switch (task->state) {
	case TASK_RUNNABLE: /* RUNNABLE -> STOPPED */
		run_queue_remove(task);
		task->state = TASK_STOPPED;
		break;
	case TASK_RUNNING: /* the caller stops itself: RUNNING -> STOPPED */
		task->state = TASK_STOPPED;
		schedule();
		break;
	case TASK_BLOCKED: /* BLOCKED -> STOPPED when the block ends */
		task->stop_pending = true;
		break;
	default:
		break;
	}
	local_irq_restore(flags);
}

void task_continue(struct task *task)
{
	unsigned long flags = local_irq_save();

	if (task->state == TASK_STOPPED) /* STOPPED -> RUNNABLE */
		run_queue_add(task, false);
	task->stop_pending = false;
	local_irq_restore(flags);
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
		.user_regs = task_is_user(task) && task != sched_current() ? task_user_frame(task)
									   : NULL,
	};
}
