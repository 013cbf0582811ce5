/* SPDX-License-Identifier: MIT */
/* overrun suite (manual): a test that overruns with interrupts off times out, returning or not. */
#include "arch/x86/cpu.h"
#include "arch/x86/tsc.h"
#include "kernel/spinlock.h"
#include "kernel/switch_hooks.h"
#include "runner/test.h"

/*
 * Run with tests=overrun.* timeout=200ms: the first test must fail as timed out although it
 * returns (no tick could end it: interrupts were off); the second fails with its exception, its
 * private lock released with it; the third fails as timed out although it never returns (the NMI
 * watchdog ends it, finding no lock of the second's held); the fourth is ended so too, its
 * private lock released; and the last must pass.
 */
TEST_FLAGS(overrun, returning_late_with_interrupts_off_fails_as_timed_out, TEST_MANUAL)
{
	/* Past the limit, short of the watchdog's grace: it returns before any NMI acts. */
	uint64_t end = rdtsc_ordered() + tsc_cycles_from_ms(300);

	check_eq(0, 0);
	local_irq_disable(); /* and returns so: the runner turns them back on */
	while (rdtsc_ordered() < end)
		cpu_relax();
}

static struct spinlock faulted_lock = SPINLOCK_INIT_PRIVATE("overrun private");

TEST_FLAGS(overrun, faulting_under_a_private_lock_fails_alone, TEST_MANUAL)
{
	check_eq(0, 0);
	local_irq_disable();
	spin_lock(&faulted_lock);
	ud2();
}

TEST_FLAGS(overrun, never_returning_with_interrupts_off_is_ended_by_the_watchdog, TEST_MANUAL)
{
	check_eq(0, 0);
	local_irq_disable();
	for (;;)
		cpu_relax();
}

TEST_FLAGS(overrun, spinning_under_a_private_lock_is_ended_by_the_watchdog, TEST_MANUAL)
{
	static struct spinlock lock = SPINLOCK_INIT_PRIVATE("overrun spinning");

	check_eq(SPINLOCK_FREE, faulted_lock.holder); /* released when its test was unwound */
	local_irq_disable();
	spin_lock(&lock);
	for (;;)
		cpu_relax();
}

TEST_FLAGS(overrun, the_next_test_runs, TEST_MANUAL)
{
	check_eq(1, 1);
}
