/* SPDX-License-Identifier: MIT */
/* Task-switch hooks: how subsystems keep per-task hardware state without knowing the scheduler. */
#ifndef KERNEL_SWITCH_HOOKS_H
#define KERNEL_SWITCH_HOOKS_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/regs.h"

/* At most this many tasks live at once; a task's index is below it. */
#define SWITCH_TASKS_MAX 64
#define SWITCH_HOOKS_MAX 8

/*
 * What a hook sees of a task. The scheduler (sched/) fills it; subsystems (dr/, ds/) keep their
 * per-task state in their own tables, indexed by index, and never include sched/.
 */
struct switch_task {
	unsigned int index; /* stable while the task lives; reused after it exits */
	unsigned int id; /* unique for the whole run */
	bool user;
	bool first_run; /* as the incoming task: this is the first time it is switched in */
	/* The saved ring-3 frame of a user task that is off the CPU, or NULL (kernel task, or a
	 * user task that has not entered ring 3 yet). A hook may edit its rflags. */
	struct cpu_regs *user_regs;
};

/*
 * switch_out then switch_in run, for every registered subsystem, on every task switch, with
 * interrupts off and before the stacks change: both see the outgoing and the incoming task, so a
 * subsystem can compare configurations and skip writes. task_exit runs when a task ends, in any
 * context, before its index is reused.
 */
struct switch_hooks {
	void (*switch_out)(const struct switch_task *prev, const struct switch_task *next);
	void (*switch_in)(const struct switch_task *prev, const struct switch_task *next);
	void (*task_exit)(const struct switch_task *task);
};

/* Returns the registration's handle for switch_hooks_unregister(), or -1 when all are taken. */
int switch_hooks_register(const struct switch_hooks *hooks);
void switch_hooks_unregister(int handle);
/* The registration with this handle (0..SWITCH_HOOKS_MAX-1), or NULL; put one back there. */
const struct switch_hooks *switch_hooks_at(unsigned int handle);
void switch_hooks_set(unsigned int handle, const struct switch_hooks *hooks);

/* For the scheduler: run the hooks, and record next as this CPU's current task. */
void switch_hooks_run(const struct switch_task *prev, const struct switch_task *next);
void switch_hooks_run_exit(const struct switch_task *task);
void switch_hooks_set_current(const struct switch_task *task);

/*
 * The page-table root (CR3) of the user task at index, 0 for a kernel task or a free index. The
 * scheduler records it when it creates the address space and clears it when it frees the index;
 * subsystems that map something into a task's space take the root from here, never from a caller.
 */
void switch_task_set_address_space(unsigned int index, uint64_t root);
uint64_t switch_task_address_space(unsigned int index);

/*
 * Whether a task lives at index: the scheduler marks it from its creation until its exit, when
 * the task_exit hooks run (after the mark is cleared). A subsystem refuses to attach state to an
 * index without one, under the lock its task_exit hook takes: else the next task given the
 * index would inherit the state. False for an index of SWITCH_TASKS_MAX or more.
 */
void switch_task_set_live(unsigned int index, bool live);
bool switch_task_live(unsigned int index);

/* The task running on this CPU, as the scheduler last described it. */
const struct switch_task *switch_task_current(void);
/* The CPU whose current task has this index, or -1. A hint: the task may be switching. */
int switch_task_running_cpu(unsigned int index);

#endif
