/* SPDX-License-Identifier: MIT */
/* The scheduler: one round-robin run queue per CPU, preemption by the timer, switch hooks. */
#ifndef SCHED_SCHED_H
#define SCHED_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#include "sched/task.h"

/*
 * Adopt the calling context as the first task ("runner"), create the idle task, and start
 * preempting on the timer. Call once, with the timer running.
 */
void sched_init(void);

struct task *sched_current(void);

/*
 * Choose how user tasks enter the kernel (SYSCALL, or the UD2 trap where SYSCALL from ring 3
 * does not work) by running a user task; false when neither works. Call after sched_init().
 */
bool user_syscall_select(void);

/* Give up the CPU to the next runnable task, if there is one. */
void sched_yield(void);

/* Block the calling task for at least ms milliseconds. */
void sched_sleep_ms(uint64_t ms);

/* Make a BLOCKED task runnable (or STOPPED, if a stop is pending). Other states: no effect. */
void sched_wake(struct task *task);

/*
 * Make task run handler() in its own context as soon as possible: a blocked or stopped task is
 * made runnable at the head of the queue and the current task is preempted. Interrupt context
 * only (interrupts off). The handler is the one set by sched_set_interrupt_handler().
 */
void sched_interrupt(struct task *task);
void sched_set_interrupt_handler(void (*handler)(void));

/* End every task except the caller and idle; returns how many were ended. */
unsigned int sched_kill_others(void);

/* The time slice in timer ticks (sched.slice= on the command line, in ms). */
unsigned int sched_slice_ticks(void);
/* Change the time slice (benchmarks of preemption); takes effect at the next switch. */
void sched_set_slice_ticks(unsigned int ticks);

/*
 * Switch hooks: switch_out then switch_in run on every task switch, with interrupts off, before
 * the stacks change; both see the outgoing and the incoming task, so a subsystem can compare
 * their configurations and skip writes. task_exit runs when a task exits or is killed.
 * sched_register_hooks() returns the slot for the subsystem's task->hook_data, or -1.
 */
struct sched_hooks {
	void (*switch_out)(struct task *prev, struct task *next);
	void (*switch_in)(struct task *prev, struct task *next);
	void (*task_exit)(struct task *task);
};

int sched_register_hooks(const struct sched_hooks *hooks);
void sched_unregister_hooks(int slot);

/* Counters of the calling CPU, for tests and benchmarks. */
struct sched_stats {
	uint64_t switches; /* switch_context() calls */
	uint64_t preemptions; /* switches forced by the timer */
};
struct sched_stats sched_stats(void);

/*
 * Benchmark probe: called, in interrupt context, when a task that the timer preempted is
 * preempted back in by the timer, with the TSC cycles from the tick's call of schedule() in the
 * outgoing task to its return in this one. NULL removes it.
 */
void sched_set_preemption_probe(void (*probe)(uint64_t cycles));

#endif
