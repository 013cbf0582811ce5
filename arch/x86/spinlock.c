/* SPDX-License-Identifier: MIT */
/* Spinlocks between CPUs (arch/x86/spinlock.h). */
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/cpu.h"
#include "arch/x86/percpu.h"
#include "arch/x86/platform.h"
#include "arch/x86/spinlock.h"
#include "arch/x86/tsc.h"

/* Before the TSC is calibrated: a bound that no boot-time critical section comes near. */
#define SPIN_CYCLES_UNCALIBRATED 20000000000ull

bool spin_trylock(struct spinlock *lock)
{
	uint32_t expected = SPINLOCK_FREE;

	return __atomic_compare_exchange_n(&lock->holder, &expected, this_cpu()->index, false,
					   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

void spin_lock(struct spinlock *lock)
{
	uint64_t start, limit;

	if (spin_trylock(lock))
		return;
	start = rdtsc_ordered();
	limit = tsc_hz() ? tsc_cycles_from_ms(SPINLOCK_TIMEOUT_MS) : SPIN_CYCLES_UNCALIBRATED;
	if (spin_is_held(lock))
		platform_bail_out("spinlock %s: taken again by CPU %u, which holds it", lock->name,
				  this_cpu()->index);
	for (;;) {
		while (lock->holder != SPINLOCK_FREE) {
			cpu_relax();
			if (rdtsc_ordered() - start > limit)
				platform_bail_out("spinlock %s: held by CPU %u for over %u ms",
						  lock->name, lock->holder, SPINLOCK_TIMEOUT_MS);
		}
		if (spin_trylock(lock))
			return;
	}
}

void spin_unlock(struct spinlock *lock)
{
	__atomic_store_n(&lock->holder, SPINLOCK_FREE, __ATOMIC_RELEASE);
}

bool spin_is_held(const struct spinlock *lock)
{
	return lock->holder == this_cpu()->index;
}
