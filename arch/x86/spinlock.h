/* SPDX-License-Identifier: MIT */
/* Spinlocks between CPUs: test-and-test-and-set, with the holder recorded and a bounded spin. */
#ifndef ARCH_X86_SPINLOCK_H
#define ARCH_X86_SPINLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/cpu.h"

#define SPINLOCK_FREE UINT32_MAX

/*
 * holder is the index of the CPU that holds the lock, SPINLOCK_FREE when free. Zero-initialised
 * locks are not free: define them with SPINLOCK_INIT(name), which names them in a deadlock report.
 */
struct spinlock {
	volatile uint32_t holder;
	const char *name;
};

#define SPINLOCK_INIT(lock_name)                           \
	{                                                  \
		.holder = SPINLOCK_FREE, .name = lock_name \
	}

/*
 * Take the lock, spinning. A lock that stays taken for SPINLOCK_TIMEOUT_MS (a deadlock, or a
 * holder that faulted away) ends the run with a bail-out naming the lock and its holder: a
 * kernel that hangs reports nothing. Interrupts must be off, or the holder may be this CPU.
 */
#define SPINLOCK_TIMEOUT_MS 10000
void spin_lock(struct spinlock *lock);
bool spin_trylock(struct spinlock *lock);
void spin_unlock(struct spinlock *lock);
/* Whether the calling CPU holds the lock. */
bool spin_is_held(const struct spinlock *lock);

static inline unsigned long spin_lock_irqsave(struct spinlock *lock)
{
	unsigned long flags = local_irq_save();

	spin_lock(lock);
	return flags;
}

static inline void spin_unlock_irqrestore(struct spinlock *lock, unsigned long flags)
{
	spin_unlock(lock);
	local_irq_restore(flags);
}

#endif
