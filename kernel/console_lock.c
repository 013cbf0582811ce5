/* SPDX-License-Identifier: MIT */
/* The console's lock: one line at a time from any CPU, as lib/console's guard. */
#include <stdint.h>

#include "arch/x86/cpu.h"
#include "arch/x86/percpu.h"
#include "arch/x86/tsc.h"
#include "kernel/console_lock.h"
#include "kernel/spinlock.h"
#include "lib/console.h"

/*
 * One line at a time from any CPU. A CPU may print while it holds the lock (an exception
 * report in the middle of a line), so the lock nests per CPU; a holder that never lets go (it
 * faulted, or was stopped by shutdown_exit()) loses the lock after CONSOLE_STEAL_MS rather
 * than silence the run.
 */
#define CONSOLE_STEAL_MS 1000
static struct spinlock console_lock = SPINLOCK_INIT("console");
static unsigned int console_depth;

static unsigned long console_guard_enter(void)
{
	unsigned long flags = local_irq_save();
	uint64_t start;

	if (spin_is_held(&console_lock)) {
		console_depth++;
		return flags;
	}
	start = rdtsc_ordered();
	while (!spin_trylock(&console_lock)) {
		cpu_relax();
		if (tsc_hz() && rdtsc_ordered() - start > tsc_cycles_from_ms(CONSOLE_STEAL_MS)) {
			console_lock.holder = this_cpu_index();
			spin_held_push(&console_lock);
			break;
		}
	}
	console_depth = 1;
	return flags;
}

static void console_guard_leave(unsigned long flags)
{
	if (--console_depth == 0)
		spin_unlock(&console_lock);
	local_irq_restore(flags);
}

void console_lock_init(void)
{
	console_set_guard(console_guard_enter, console_guard_leave);
}
