/* SPDX-License-Identifier: MIT */
/* What the files of sched/ share and nothing else sees. All of it needs sched_lock held. */
#ifndef SCHED_INTERNAL_H
#define SCHED_INTERNAL_H

#include "kernel/spinlock.h"
#include "sched/task.h"

/*
 * One lock for every run queue, every task's state and the task pool. It is held across a
 * switch: the CPU that takes it switches, and the task that comes in lets it go, so no other CPU
 * can pick a task whose stack is still in use. Interrupts are off while it is held.
 */
extern struct spinlock sched_lock;
unsigned long sched_lock_irqsave(void);
void sched_unlock_irqrestore(unsigned long flags);

/* Append to (or, at_head, prepend to) the run queue of task->cpu; the task becomes RUNNABLE.
 * A CPU that idles is sent a reschedule IPI. */
void run_queue_add(struct task *task, bool at_head);
/* Take a RUNNABLE task off the run queue. */
void run_queue_remove(struct task *task);

/* Pick the next task and switch to it. The caller has set current's state if it must wait. */
void schedule(void);

/* Make cpu the task's CPU (it is off every CPU, in no run queue), ending any pending move. */
void task_set_cpu(struct task *task, unsigned int cpu);

/* sched_wake() with sched_lock already held. */
void sched_wake_locked(struct task *task);

/* Make the CPU that runs task (RUNNING elsewhere) switch it out soon, to act on kill_pending,
 * stop_requested or migrate_pending. */
void sched_request_switch(struct task *task);

/* Block the current task until sched_wake(). */
void sched_block(void);

/* Block the current task until the TSC reaches wake_tsc. */
void sched_sleep_until(uint64_t wake_tsc);

/* Called first by every new task on its own stack: ends the switch to it, lets go of
 * sched_lock and turns interrupts on. */
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
/* The runner and every CPU's idle task: never ended by sched_kill_others(). */
bool sched_is_system_task(const struct task *task);

/* The top of a task's kernel stack, for TSS.RSP0. */
uint64_t task_stack_top(const struct task *task);

/* Wake sleepers whose time has come; called on every tick. */
void sched_wake_sleepers(void);

/* Register the syscall vector and the user-fault handler. */
void syscall_init(void);
void user_faults_init(void);

#endif
