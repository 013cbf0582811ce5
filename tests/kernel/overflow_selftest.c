/* SPDX-License-Identifier: MIT */
/* overflow suite (manual): running off the bottom of a kernel stack fails the test, not the run. */
#include <stdint.h>

#include "arch/x86/paging.h"
#include "runner/test.h"
#include "sched/sched.h"

/* Below a stack's bottom, but inside its guard (as large as the stack): at most this far. */
#define OVERFLOW_PAST_BOTTOM 512
#define FRAME_BYTES 256

/*
 * Recurse with FRAME_BYTES frames, each written at its lowest byte, until a frame lies at or
 * below stop: returns the lowest address written. noinline and the use of the result after the
 * call keep it a real recursion.
 */
static uint64_t __attribute__((noinline)) descend(uint64_t stop)
{
	volatile uint8_t frame[FRAME_BYTES];

	frame[0] = 1;
	if ((uint64_t)frame <= stop)
		return (uint64_t)frame;
	return descend(stop) + frame[0] - 1;
}

/* From here, one whole stack and a little more: past the bottom whatever the depth now. */
static uint64_t descend_past_bottom(void)
{
	uint64_t here = (uint64_t)__builtin_frame_address(0);

	return descend(here - KERNEL_STACK_PAGES * PAGE_SIZE - OVERFLOW_PAST_BOTTOM);
}

static void overflowing_task(void *arg)
{
	*(uint64_t *)arg = descend_past_bottom();
}

/*
 * Run with tests=overflow.*: the first two tests must fail with "kernel stack overflow" and an
 * unexpected #DF (the guard stopped them), and the third must pass: the run went on.
 */
TEST_FLAGS(overflow, a_kernel_task_running_off_its_stack_fails_the_test, TEST_MANUAL)
{
	uint64_t lowest = 0;
	struct task *task = task_create("overflow", overflowing_task, &lowest, TASK_START_RUNNABLE);

	if (!task)
		test_abort("task_create failed");
	check_eq(0, task_join(task, NULL));
	check(false,
	      "the task wrote down to 0x%llx, past the bottom of its stack, and returned: "
	      "no guard stopped it",
	      (unsigned long long)lowest);
}

TEST_FLAGS(overflow, the_runner_s_stack_running_off_fails_the_test, TEST_MANUAL)
{
	uint64_t lowest = descend_past_bottom();

	check(false,
	      "the test wrote down to 0x%llx, past the bottom of the runner's stack, and "
	      "returned: no guard stopped it",
	      (unsigned long long)lowest);
}

TEST_FLAGS(overflow, the_next_test_runs, TEST_MANUAL)
{
	check_eq(1, 1);
}
