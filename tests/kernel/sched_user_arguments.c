/* SPDX-License-Identifier: MIT */
/* sched suite: system-call numbers and arguments are read at their full 64-bit width. */
#include <stdint.h>

#include "arch/x86/paging.h"
#include "arch/x86/tsc.h"
#include "lib/string.h"
#include "runner/test.h"
#include "sched/sched.h"
#include "tests/kernel/lib/user_programs.h"
#include "tests/kernel/lib/user_script.h"

#define HIGH_BIT (1ul << 63)
#define ABOVE_32_BITS (1ul << 32)
#define WRITE_BUFFER (USER_DATA_BASE + PAGE_SIZE)
#define SLEEP_CHECK_MS 8 /* after it blocked: two ticks */
#define SLEEP_START_MS 1000 /* for all to start and block, at most */

static const struct named_syscall hostile_calls[] = {
	{ "number 2^32 + GET_TASK_ID",
	  { ABOVE_32_BITS | SYSCALL_GET_TASK_ID, { 0 }, SYSCALL_ERROR_NO_SYSCALL } },
	{ "number 2^64 - 1", { UINT64_MAX, { 0 }, SYSCALL_ERROR_NO_SYSCALL } },
	{ "write of 2^64 - 1 bytes",
	  { SYSCALL_WRITE, { WRITE_BUFFER, UINT64_MAX }, SYSCALL_ERROR_INVALID } },
	{ "write of 2^32 + 1 bytes",
	  { SYSCALL_WRITE, { WRITE_BUFFER, ABOVE_32_BITS | 1 }, SYSCALL_ERROR_INVALID } },
	{ "write from 2^64 - 1", { SYSCALL_WRITE, { UINT64_MAX, 1 }, SYSCALL_ERROR_FAULT } },
	{ "write from bit 63 + a user address",
	  { SYSCALL_WRITE, { HIGH_BIT | WRITE_BUFFER, 1 }, SYSCALL_ERROR_FAULT } },
	{ "yield with every argument 2^64 - 1",
	  { SYSCALL_YIELD, { UINT64_MAX, UINT64_MAX, UINT64_MAX }, 0 } },
};

TEST(sched, system_calls_check_numbers_and_arguments_at_full_width)
{
	user_script_check_calls(hostile_calls, sizeof(hostile_calls) / sizeof(hostile_calls[0]));
}

TEST(sched, user_exit_code_keeps_all_64_bits)
{
	struct task *task =
		task_create_user("exit", user_exit, ABOVE_32_BITS | 42, TASK_START_RUNNABLE);

	if (!task)
		test_abort("task_create_user failed");
	check_eq(ABOVE_32_BITS | 42, task_join(task, NULL));
}

/*
 * sleep(ms) for lengths whose TSC cycles, or the deadline TSC + cycles, do not fit in 64 bits:
 * each must sleep (saturated: until woken), not return at once.
 */
TEST(sched, user_sleep_longer_than_64_bits_of_cycles_does_not_return_at_once)
{
	const uint64_t per_ms = tsc_hz() / 1000;
	const uint64_t lengths[] = { UINT64_MAX, HIGH_BIT, UINT64_MAX / per_ms };

	struct task *tasks[sizeof(lengths) / sizeof(lengths[0])];
	unsigned int count = sizeof(lengths) / sizeof(lengths[0]), waited = 0;

	for (unsigned int i = 0; i < count; i++) {
		tasks[i] = task_create_user("sleeper", user_sleep, lengths[i], TASK_START_RUNNABLE);
		if (!tasks[i])
			test_abort("task_create_user failed");
	}
	for (unsigned int i = 0; i < count; i++)
		while ((tasks[i]->state == TASK_RUNNABLE || tasks[i]->state == TASK_RUNNING) &&
		       waited++ < SLEEP_START_MS)
			sched_sleep_ms(1);
	sched_sleep_ms(SLEEP_CHECK_MS);
	for (unsigned int i = 0; i < count; i++) {
		check(tasks[i]->state == TASK_BLOCKED,
		      "sleep(%llu ms): state %u %u ms after the sleepers started",
		      (unsigned long long)lengths[i], tasks[i]->state, SLEEP_CHECK_MS);
		sched_wake(tasks[i]);
		check_eq(0, task_join(tasks[i], NULL));
	}
}
