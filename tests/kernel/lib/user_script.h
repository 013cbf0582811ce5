/* SPDX-License-Identifier: MIT */
/* Running user_syscall_script (lib/user_programs.h) from a test: hostile system calls. */
#ifndef TESTS_KERNEL_LIB_USER_SCRIPT_H
#define TESTS_KERNEL_LIB_USER_SCRIPT_H

#include <stddef.h>
#include <stdint.h>

#include "lib/string.h"
#include "runner/test.h"
#include "sched/sched.h"
#include "tests/kernel/lib/user_programs.h"

/*
 * Run user_syscall_script over *script, placed at the start of the task's data pages (its
 * argument is USER_DATA_BASE); the results come back in *script and, when data is not NULL, the
 * first data_size bytes of the task's data pages in data.
 */
static inline void user_script_run(struct user_syscall_script *script, uint8_t *data,
				   size_t data_size)
{
	struct task *task = task_create_user("syscall-script", user_syscall_script, USER_DATA_BASE,
					     TASK_START_STOPPED);

	if (!task)
		test_abort("task_create_user failed");
	memcpy(task_user_data(task), script, sizeof(*script));
	task_continue(task);
	while (task->state != TASK_DEAD)
		sched_sleep_ms(1);
	memcpy(script, task_user_data(task), sizeof(*script));
	if (data)
		memcpy(data, task_user_data(task), data_size);
	check_eq(0, task_join(task, NULL));
}

/* A system call made from ring 3, and the result it must return. */
struct named_syscall {
	const char *what;
	struct user_syscall call;
};

/* Make each call in order from one user task, and check each result exactly. */
static inline void user_script_check_calls(const struct named_syscall *calls, unsigned int count)
{
	struct user_syscall_script script = { .count = count };

	if (count > USER_SYSCALLS_MAX)
		test_abort("%u calls, a script holds %u", count, USER_SYSCALLS_MAX);
	for (unsigned int i = 0; i < count; i++) {
		script.calls[i] = calls[i].call;
		script.calls[i].result = 1; /* overwritten by the call */
	}
	user_script_run(&script, NULL, 0);
	for (unsigned int i = 0; i < count; i++)
		check(script.calls[i].result == calls[i].call.result,
		      "%s: returned %lld, expected %lld", calls[i].what,
		      (long long)script.calls[i].result, (long long)calls[i].call.result);
}

#endif
