/* SPDX-License-Identifier: MIT */
/* Spinlocks between CPUs: test-and-test-and-set, with the holder recorded and a bounded spin. */
#ifndef KERNEL_SPINLOCK_H
#define KERNEL_SPINLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/cpu.h"
#include "arch/x86/percpu.h"

#define SPINLOCK_FREE UINT32_MAX

/*
 * holder is the index of the CPU that holds the lock, SPINLOCK_FREE when free. Zero-initialised
 * locks are not free: define them with SPINLOCK_INIT(name), which names them in a deadlock report.
 */
struct spinlock {
	volatile uint32_t holder;
	const char *name;
	bool private_to_test;
};

#define SPINLOCK_INIT(lock_name)                           \
	{                                                  \
		.holder = SPINLOCK_FREE, .name = lock_name \
	}

/*
 * A lock one test keeps to itself: when the runner unwinds the test (an exception, a time-out),
 * the lock is released with it. Every other lock guards kernel state that an unwind would leave
 * half-changed: an exception under one ends the run (runner/isolation.c).
 */
#define SPINLOCK_INIT_PRIVATE(lock_name)                                            \
	{                                                                           \
		.holder = SPINLOCK_FREE, .name = lock_name, .private_to_test = true \
	}

/*
 * Take the lock, spinning. A lock that stays taken for SPINLOCK_TIMEOUT_MS (a deadlock, or a
 * holder that faulted away) ends the run with a bail-out naming the lock and its holder: a
 * kernel that hangs reports nothing. Interrupts must be off, or the holder may be this CPU.
 */
#define SPINLOCK_TIMEOUT_MS 10000
void spin_lock_contended(struct spinlock *lock);

/* Record lock as taken by this CPU (cpu->held_locks), last. */
static inline void spin_held_push(struct spinlock *lock)
{
	struct cpu *cpu = this_cpu();

	if (cpu->spinlocks_held < SPINLOCKS_NAMED)
		cpu->held_locks[cpu->spinlocks_held] = lock;
	cpu->spinlocks_held++;
}

/* Forget lock among this CPU's held locks when it is not the last one taken. */
void spin_held_forget(struct spinlock *lock);

/* Inline: the switch path takes three locks, and emulated ring-0 instructions are dear. */
static inline bool spin_trylock(struct spinlock *lock)
{
	uint32_t expected = SPINLOCK_FREE;

	if (!__atomic_compare_exchange_n(&lock->holder, &expected, this_cpu_index(), false,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return false;
	spin_held_push(lock);
	return true;
}

static inline void spin_lock(struct spinlock *lock)
{
	if (!spin_trylock(lock))
		spin_lock_contended(lock);
}

static inline void spin_unlock(struct spinlock *lock)
{
	struct cpu *cpu = this_cpu();
	unsigned int top = cpu->spinlocks_held - 1;

	if (top >= SPINLOCKS_NAMED || cpu->held_locks[top] != lock)
		spin_held_forget(lock);
	cpu->spinlocks_held = top;
	__atomic_store_n(&lock->holder, SPINLOCK_FREE, __ATOMIC_RELEASE);
}

/* Whether the calling CPU holds the lock. */
static inline bool spin_is_held(const struct spinlock *lock)
{
	return lock->holder == this_cpu_index();
}

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
