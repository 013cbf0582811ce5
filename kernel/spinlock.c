/* SPDX-License-Identifier: MIT */
/* Spinlocks between CPUs (kernel/spinlock.h). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/cpu.h"
#include "arch/x86/percpu.h"
#include "arch/x86/tsc.h"
#include "kernel/spinlock.h"
#include "lib/panic.h"

/* Before the TSC is calibrated: a bound that no boot-time critical section comes near. */
#define SPIN_CYCLES_UNCALIBRATED 20000000000ull

/* spin_lock() when the first attempt failed. */
void spin_lock_contended(struct spinlock *lock)
{
	uint64_t start, limit;

	start = rdtsc_ordered();
	limit = tsc_hz() ? tsc_cycles_from_ms(SPINLOCK_TIMEOUT_MS) : SPIN_CYCLES_UNCALIBRATED;
	if (spin_is_held(lock))
		panic("spinlock %s: taken again by CPU %u, which holds it", lock->name,
		      this_cpu_index());
	for (;;) {
		while (lock->holder != SPINLOCK_FREE) {
			cpu_relax();
			if (rdtsc_ordered() - start > limit)
				panic("spinlock %s: held by CPU %u for over %u ms", lock->name,
				      lock->holder, SPINLOCK_TIMEOUT_MS);
		}
		if (spin_trylock(lock))
			return;
	}
}

void spin_held_forget(struct spinlock *lock)
{
	struct cpu *cpu = this_cpu();
	unsigned int named =
		cpu->spinlocks_held < SPINLOCKS_NAMED ? cpu->spinlocks_held : SPINLOCKS_NAMED;

	/* The ones taken after it move down; past SPINLOCKS_NAMED, the next one is not known. */
	for (unsigned int i = 0; i < named; i++) {
		if (cpu->held_locks[i] != lock)
			continue;
		for (; i + 1 < named; i++)
			cpu->held_locks[i] = cpu->held_locks[i + 1];
		cpu->held_locks[named - 1] = NULL;
		return;
	}
}
