/* SPDX-License-Identifier: MIT */
/* overrun_locked suite (manual): an overrun under a kernel spinlock ends the run, naming it. */
#include "arch/x86/cpu.h"
#include "kernel/spinlock.h"
#include "runner/test.h"

/*
 * Run alone with tests=overrun_locked.* timeout=200ms: an unwind would leave the lock taken for
 * the next test, so the watchdog ends the run, and the log names this test as the one running.
 */
TEST_FLAGS(overrun_locked, spinning_under_a_spinlock_ends_the_run, TEST_MANUAL)
{
	static struct spinlock lock = SPINLOCK_INIT("overrun");

	check_eq(0, 0);
	local_irq_disable();
	spin_lock(&lock);
	for (;;)
		cpu_relax();
}
