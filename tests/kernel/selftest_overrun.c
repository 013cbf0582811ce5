/* SPDX-License-Identifier: MIT */
/* overrun suite (manual): a test that overruns with interrupts off and returns still times out. */
#include "arch/x86/cpu.h"
#include "arch/x86/tsc.h"
#include "runner/test.h"

/*
 * Run with tests=overrun.* timeout=200ms: the first test must fail as timed out although it
 * returns (no tick could end it: interrupts were off), and the second must pass.
 */
TEST_FLAGS(overrun, returning_late_with_interrupts_off_fails_as_timed_out, TEST_MANUAL)
{
	uint64_t end = rdtsc_ordered() + tsc_cycles_from_ms(400);

	check_eq(0, 0);
	local_irq_disable(); /* and returns so: the runner turns them back on */
	while (rdtsc_ordered() < end)
		cpu_relax();
}

TEST_FLAGS(overrun, the_next_test_runs, TEST_MANUAL)
{
	check_eq(1, 1);
}
