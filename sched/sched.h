/* SPDX-License-Identifier: MIT */
/* The scheduler: one round-robin run queue per CPU, preemption by the timer, switch hooks. */
#ifndef SCHED_SCHED_H
#define SCHED_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/switch_hooks.h"
#include "sched/task.h"

/*
 * Adopt the calling context as the first task ("runner"), create the idle task, and start
 * preempting on the timer. Call once, with the timer running.
 */
void sched_init(void);

/* On an application processor, from its ap_main(): adopt the calling context as this CPU's
 * idle task. Then sched_idle() runs it: it never returns. */
void sched_start_cpu(void);
void __attribute__((noreturn)) sched_idle(void);

struct task *sched_current(void);

/*
 * Move task to CPU cpu: its state (breakpoints, single-step, Debug Store) goes with it, through
 * the switch hooks, when it next switches in there. The caller itself moves at once (it returns
 * on cpu); a task running on another CPU is switched out there first (this waits, bounded). A
 * stopped, blocked or new task runs on cpu when it next runs. Returns 0, or -1 when cpu is not
 * online, the task is dead, or its CPU did not let it go in time.
 */
int sched_migrate(struct task *task, unsigned int cpu);

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

/* Per-task state of other subsystems travels through kernel/switch_hooks.h; this is the
 * scheduler's description of a task for those hooks. */
struct switch_task task_switch_view(const struct task *task);

/* Counters of the calling CPU, for tests and benchmarks. */
struct sched_stats {
	uint64_t switches; /* switch_context() calls */
	uint64_t preemptions; /* switches forced by the timer */
};
struct sched_stats sched_stats(void);
struct sched_stats sched_stats_cpu(unsigned int cpu);

/*
 * Benchmark probe: called, in interrupt context, when a task that the timer preempted is
 * preempted back in by the timer, with the TSC cycles from the tick's call of schedule() in the
 * outgoing task to its return in this one. NULL removes it.
 */
void sched_set_preemption_probe(void (*probe)(uint64_t cycles));

#endif
