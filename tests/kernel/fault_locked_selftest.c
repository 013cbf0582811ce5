/* SPDX-License-Identifier: MIT */
/* fault_locked suite (manual): an exception under the scheduler's lock ends the run, naming it. */
#include "arch/x86/cpu.h"
#include "kernel/switch_hooks.h"
#include "runner/test.h"
#include "sched/sched.h"

static void faulting_switch_in(const struct switch_task *prev, const struct switch_task *next)
{
	(void)prev;
	(void)next;
	ud2();
}

static const struct switch_hooks faulting_hooks = { .switch_in = faulting_switch_in };

/*
 * Run alone with tests=fault_locked.*: a switch hook runs under the scheduler's lock, which an
 * unwind would leave taken; the run ends at the exception, naming this test and the lock.
 */
TEST_FLAGS(fault_locked, faulting_in_a_switch_hook_ends_the_run_naming_the_lock, TEST_MANUAL)
{
	check(switch_hooks_register(&faulting_hooks) >= 0, "no switch-hook handle free");
	sched_sleep_ms(1); /* a switch to the idle task */
	check(false, "the switch hook never ran");
}
