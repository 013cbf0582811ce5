/* SPDX-License-Identifier: MIT */
/* Tasks: kernel and ring-3, their states and their lifecycle. */
#ifndef SCHED_TASK_H
#define SCHED_TASK_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/context.h"
#include "arch/x86/fpu.h"
#include "kernel/switch_hooks.h"

#define TASK_NAME_MAX 24
#define TASKS_MAX SWITCH_TASKS_MAX

enum task_state {
	TASK_RUNNABLE, /* on the run queue, waiting for the CPU */
	TASK_RUNNING, /* the CPU's current task */
	TASK_BLOCKED, /* asleep until sched_wake() or its wake time; may have a stop pending */
	TASK_STOPPED, /* held off the CPU by task_stop() until task_continue() */
	TASK_DEAD, /* exited; task_join() collects its code and frees it */
};

/* Why a user task last trapped into the kernel on an exception. */
struct user_fault {
	bool valid;
	unsigned int vector;
	uint64_t error_code, rip, cr2;
	uint64_t dr6; /* #DB only: DR6 as the CPU left it (then reset); 0 otherwise */
};

/* The exit code of a task ended by a fault it had no handler for. */
#define TASK_EXIT_FAULTED (-1000l)
/* The exit code of a task ended by sched_kill_others(). */
#define TASK_EXIT_KILLED (-1001l)
/* The exit code of a task whose fault handler could not be entered: its stack cannot take the
 * handler's frame (sched/user.c). */
#define TASK_EXIT_NO_FAULT_FRAME (-1002l)
/* What task_join() returns for a pointer that is no task of the pool's, or the caller itself. */
#define TASK_JOIN_NO_TASK (-1003l)

struct task {
	struct context *context; /* saved by switch_context() while off the CPU */
	unsigned int id; /* unique for the run */
	unsigned int index; /* its pool slot: unique among live tasks (struct switch_task) */
	char name[TASK_NAME_MAX];
	enum task_state state;
	bool stop_pending; /* BLOCKED: become STOPPED, not RUNNABLE, when woken */
	bool interrupted; /* sched_interrupt(): run the interrupt handler when next on CPU */
	/* Requests to a task that is RUNNING on another CPU, carried out by that CPU when it
	 * switches the task out (after a reschedule IPI). */
	bool kill_pending; /* end it with TASK_EXIT_KILLED */
	bool stop_requested; /* RUNNING -> STOPPED */
	bool migrate_pending; /* move it to migrate_to */
	unsigned int migrate_to;
	unsigned int cpu; /* whose run queue it belongs to, and where it runs when RUNNING */
	uint64_t migrations; /* times it moved to another CPU */
	struct task *next; /* run-queue link */
	uint64_t stack_top; /* its guarded kernel stack (slot index, paging.h); 0: the boot task */
	uint64_t wake_tsc; /* BLOCKED in sched_sleep_ms(): wake at this TSC; 0 if not */
	struct task *joiner; /* the task blocked in task_join() on this one */
	long exit_code;

	uint64_t runtime_cycles; /* TSC cycles on the CPU */
	uint64_t switched_in_tsc; /* when it last got the CPU */
	uint64_t switches_in;
	/* Interrupt handlers under way in its flow while off the CPU (struct cpu's while on). */
	unsigned int interrupt_depth;

	/* Ring 3: address_space is 0 for a kernel task. */
	uint64_t address_space;
	uint64_t user_fault_handler; /* user address, 0 for none: faults end the task */
	void *user_data; /* kernel view of the USER_DATA_PAGES at USER_DATA_BASE */
	struct user_fault fault;
	struct fpu_state fpu;
	/* Ring 3's GS base while the task is off the CPU (KERNEL_GS_BASE holds it in the kernel) */
	uint64_t user_gs_base;

	void (*entry)(void *); /* kernel tasks */
	void *arg;
};

/* How a new task starts: on the run queue, or STOPPED until task_continue() (so that it can be
 * configured first without racing the timer). */
enum task_start {
	TASK_START_RUNNABLE,
	TASK_START_STOPPED,
};

/* A kernel task that calls fn(arg), then task_exit(0). NULL when out of memory. */
struct task *task_create(const char *name, void (*fn)(void *), void *arg, enum task_start start);

/*
 * A ring-3 task: its own address space with .user_text at USER_TEXT_BASE,
 * USER_DATA_PAGES zeroed read-write pages at USER_DATA_BASE and a stack below USER_STACK_TOP.
 * It starts at program (a .user_text symbol) with rdi = arg. NULL when out of memory.
 */
#define USER_DATA_PAGES 16
#define USER_STACK_PAGES 4
struct task *task_create_user(const char *name, const void *program, uint64_t arg,
			      enum task_start start);

/* The kernel's view (direct map) of a user task's data pages, USER_DATA_PAGES long. */
void *task_user_data(const struct task *task);

/*
 * Let a user fault run handler (a .user_text symbol) with rdi = vector, rsi = error code,
 * rdx = faulting rip, rcx = cr2, instead of ending the task. It is entered as a function with
 * RFLAGS.TF, DF and RF clear, on the faulting stack below its 128-byte red zone, rsp + 8 aligned
 * to 16 and a return address of 0; where the stack cannot take that frame, the task ends with
 * TASK_EXIT_NO_FAULT_FRAME instead.
 */
void task_set_fault_handler(struct task *task, const void *handler);

/* End the calling task with code. Wakes its joiner. */
void __attribute__((noreturn)) task_exit(long code);

/*
 * Wait for task to exit, free it, and return its exit code; *fault (if not NULL) gets its last
 * user fault. TASK_JOIN_NO_TASK for the caller itself, or a pointer task_is_valid() refuses.
 */
long task_join(struct task *task, struct user_fault *fault);

/* Stop a task (itself included) until task_continue(); a blocked task stops when woken. Both do
 * nothing for a pointer task_is_valid() refuses. */
void task_stop(struct task *task);
void task_continue(struct task *task);

/*
 * Whether task points at a slot of the task pool that is in use (created, not yet joined).
 * The scheduler's calls check it before sched_lock: a stray pointer would fault with the lock
 * held, which no unwind gives back, and end the run.
 */
bool task_is_valid(const struct task *task);

static inline bool task_is_user(const struct task *task)
{
	return task->address_space != 0;
}

#endif
