/* SPDX-License-Identifier: MIT */
/* sched suite: how a user fault handler is entered, and tasks it cannot be entered for. */
#include <stdint.h>

#include "arch/x86/exceptions.h"
#include "arch/x86/processor-flags.h"
#include "runner/test.h"
#include "sched/sched.h"
#include "tests/kernel/lib/user_programs.h"

/* A task that loops through its handler never ends: give it this long, then end it. */
#define FAULT_LOOP_LIMIT_MS 500
#define UNMAPPED_USER_ADDRESS 0x1000ul
#define NON_CANONICAL_ADDRESS 0x8000000000000000ul

static struct task *handled_task(const void *program, uint64_t arg, const void *handler)
{
	struct task *task = task_create_user("handled", program, arg, TASK_START_STOPPED);

	if (!task)
		test_abort("task_create_user failed");
	task_set_fault_handler(task, handler);
	task_continue(task);
	return task;
}

/*
 * Join task if it ends within FAULT_LOOP_LIMIT_MS; else end it (it loops through its handler)
 * and return TASK_EXIT_KILLED.
 */
static long join_bounded(struct task *task, struct user_fault *fault)
{
	for (unsigned int ms = 0; ms < FAULT_LOOP_LIMIT_MS && task->state != TASK_DEAD; ms++)
		sched_sleep_ms(1);
	if (task->state != TASK_DEAD) {
		test_diag("task %u still runs after %u ms: ended", task->id, FAULT_LOOP_LIMIT_MS);
		sched_kill_others();
		if (fault)
			*fault = (struct user_fault){ .valid = false };
		return TASK_EXIT_KILLED;
	}
	return task_join(task, fault);
}

/* As Linux enters a signal handler: TF and DF clear, rsp + 8 aligned to 16 (a call's). */
TEST(sched, user_fault_handler_starts_with_df_clear_on_an_aligned_frame)
{
	struct task *task = handled_task(user_fault_with_df, 0, user_fault_entry_report);

	check_eq(USER_FAULT_EXIT_BASE + X86_EXC_GP, join_bounded(task, NULL));
}

/* A handler entered with TF set would trap after its first instruction, and again, forever. */
TEST(sched, user_fault_handler_of_a_task_that_set_tf_runs_unstepped)
{
	struct task *task = handled_task(user_set_trap_flag, 0, user_fault_entry_report);
	struct user_fault fault;

	check_eq(USER_FAULT_EXIT_BASE + X86_EXC_DB, join_bounded(task, &fault));
	check_eq(X86_EXC_DB, fault.vector);
}

static const struct {
	const char *name;
	uint64_t rsp;
} bad_stacks[] = {
	{ "unmapped", UNMAPPED_USER_ADDRESS },
	{ "non-canonical", NON_CANONICAL_ADDRESS },
	{ "kernel", (uint64_t)&bad_stacks },
};

/* The handler's frame goes on the faulting stack: where that stack is bad, the task ends. */
TEST(sched, user_task_whose_stack_cannot_take_a_handler_frame_ends)
{
	for (unsigned int i = 0; i < sizeof(bad_stacks) / sizeof(bad_stacks[0]); i++) {
		struct task *task =
			handled_task(user_bad_stack, bad_stacks[i].rsp, user_fault_entry_report);
		struct user_fault fault;
		long code = join_bounded(task, &fault);

		check(code == TASK_EXIT_NO_FAULT_FRAME, "%s stack 0x%llx: exit %ld, expected %ld",
		      bad_stacks[i].name, (unsigned long long)bad_stacks[i].rsp, code,
		      TASK_EXIT_NO_FAULT_FRAME);
	}
}

/*
 * A handler that returns goes to address 0 (its frame's return address), faults, and enters
 * itself again on a lower frame: the stack runs out, and the task ends.
 */
TEST(sched, user_fault_handler_that_returns_ends_its_task_when_the_stack_runs_out)
{
	struct task *task = handled_task(user_cli, 0, user_dr_target);
	struct user_fault fault;

	check_eq(TASK_EXIT_NO_FAULT_FRAME, join_bounded(task, &fault));
	check_eq(X86_EXC_PF, fault.vector);
	check_eq(0, fault.rip);
}
