/* SPDX-License-Identifier: MIT */
/* What the files of sched/ share and nothing else sees. All of it needs interrupts off. */
#ifndef SCHED_INTERNAL_H
#define SCHED_INTERNAL_H

#include "sched/task.h"

/* Append to (or, at_head, prepend to) the run queue; the task becomes RUNNABLE. */
void run_queue_add(struct task *task, bool at_head);
/* Take a RUNNABLE task off the run queue. */
void run_queue_remove(struct task *task);

/* Pick the next task and switch to it. The caller has set current's state if it must wait. */
void schedule(void);

/* Block the current task until sched_wake(); interrupts off. */
void sched_block(void);

/* Block the current task until the TSC reaches wake_tsc; interrupts off. */
void sched_sleep_until(uint64_t wake_tsc);

/* Called first by every new task on its own stack: turns interrupts on. */
void sched_task_started(struct task *task);

/* Run the exit hooks of every subsystem for task. */
void sched_run_exit_hooks(struct task *task);

/*
 * A pool slot with a kernel stack whose first switch calls start(task); NULL when full. A user
 * task's stack keeps a struct cpu_regs at its top (user_frame), below which the kernel stack
 * grows.
 */
struct task *task_alloc(const char *name, void (*start)(void *), bool user);
struct cpu_regs *task_user_frame(const struct task *task);
void task_free(struct task *task);

/* Every task in the pool that is in use, for sched_kill_others(). */
struct task *task_pool_next(struct task *after);

/* The top of a task's kernel stack, for TSS.RSP0. */
uint64_t task_stack_top(const struct task *task);

/* Wake sleepers whose time has come; called on every tick. */
void sched_wake_sleepers(void);

/* Register the syscall vector and the user-fault handler. */
void syscall_init(void);
void user_faults_init(void);

#endif
