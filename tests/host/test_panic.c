/* SPDX-License-Identifier: MIT */
/* Host tests of lib/panic.c: the reason reaches the one handler, formatted and bounded. */
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/panic.h"
#include "tests/host/host_test.h"

static jmp_buf back;
static char seen[PANIC_REASON_MAX + 8];
static unsigned int handled;

static void __attribute__((noreturn)) catch_reason(const char *reason)
{
	handled++;
	strncpy(seen, reason, sizeof(seen) - 1);
	longjmp(back, 1);
}

HOST_TEST(panic_formats_the_reason_and_calls_the_handler_once)
{
	handled = 0;
	panic_set_handler(catch_reason);
	if (!setjmp(back))
		panic("spinlock %s: held by CPU %u for over %u ms", "pfa", 3u, 500u);
	panic_set_handler(NULL);
	host_check_eq_u64(1, handled);
	host_check_str("spinlock pfa: held by CPU 3 for over 500 ms", seen);
}

HOST_TEST(panic_truncates_a_long_reason_to_its_buffer)
{
	char longest[PANIC_REASON_MAX + 40];

	memset(longest, 'x', sizeof(longest) - 1);
	longest[sizeof(longest) - 1] = '\0';
	memset(seen, 0, sizeof(seen));
	panic_set_handler(catch_reason);
	if (!setjmp(back))
		panic("%s", longest);
	panic_set_handler(NULL);
	host_check_eq_u64(PANIC_REASON_MAX - 1, strlen(seen));
}

HOST_TEST(panic_without_a_handler_traps)
{
	int status = 0;
	pid_t child = fork();

	if (child == 0) {
		panic_set_handler(NULL);
		panic("no handler");
	}
	host_check(child > 0 && waitpid(child, &status, 0) == child);
	host_check(WIFSIGNALED(status));
	host_check_eq_i64(SIGILL, WTERMSIG(status));
}
