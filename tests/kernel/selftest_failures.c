/* SPDX-License-Identifier: MIT */
/* selftest suite (manual): tests that must fail, so the harness can see the runner survive them. */
#include "arch/x86/cpu.h"
#include "runner/test.h"

/*
 * Run with tests=selftest.*: the harness expects exactly this: 1 not ok (exception),
 * 2 not ok (timed out), 3 not ok (failed check with both values), 4 not ok (no checks),
 * 5 ok # SKIP, 6 ok. A runner that stopped after the first failure would never reach 6.
 */
TEST_FLAGS(selftest, unexpected_exception_fails_the_test, TEST_MANUAL)
{
	check_eq(0, 0);
	ud2();
}

TEST_FLAGS(selftest, overrun_fails_the_test_as_timed_out, TEST_MANUAL)
{
	check_eq(0, 0);
	for (;;)
		cpu_relax();
}

TEST_FLAGS(selftest, failed_check_prints_both_values, TEST_MANUAL)
{
	check_eq(41, 42);
}

TEST_FLAGS(selftest, test_without_checks_fails, TEST_MANUAL)
{
}

TEST_FLAGS(selftest, skip_carries_its_reason, TEST_MANUAL)
{
	test_skip("skipped on purpose by the selftest suite");
}

TEST_FLAGS(selftest, runner_continues_after_failures, TEST_MANUAL)
{
	check_eq(42, 42);
}
