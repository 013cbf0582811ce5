/* SPDX-License-Identifier: MIT */
/*
 * Debug-register reservation, after Linux's per-CPU rule (kernel/events/hw_breakpoint.c): on
 * every CPU, the system-wide breakpoints, that CPU's pinned ones and the largest per-task count
 * (a task may run on any CPU) stay within DR_SLOTS. Hard: a request that does not fit on every
 * CPU it concerns fails and changes nothing. Pure.
 */
#ifndef DR_RESERVE_H
#define DR_RESERVE_H

#include <stdbool.h>

#include "arch/x86/debugreg.h"

struct dr_reservation {
	unsigned int system; /* system-wide breakpoints: on every CPU */
	/* pinned[cpu], cpu < cpus: bound to one CPU, for every task that runs there. The storage is
	 * the caller's (dr_reservation_init()), so that its size is the boot's CPU count. */
	unsigned int *pinned;
	unsigned int cpus;
	unsigned int tasks_holding[DR_SLOTS + 1]; /* [n]: tasks that hold exactly n (n >= 1) */
};

/* An empty reservation for cpus CPUs, whose pinned counts live in pinned[0, cpus) (zeroed here). */
void dr_reservation_init(struct dr_reservation *reservation, unsigned int *pinned,
			 unsigned int cpus);

/* The largest number of breakpoints any one task holds. */
unsigned int dr_reservation_max_task(const struct dr_reservation *reservation);

/* The most pinned breakpoints of any one CPU. */
unsigned int dr_reservation_max_pinned(const struct dr_reservation *reservation);

/* Slots a task may still take: DR_SLOTS - system - the fullest CPU's pinned - what it holds. */
unsigned int dr_reservation_free_for_task(const struct dr_reservation *reservation,
					  unsigned int held);

/*
 * A task goes from holding `from` to holding `to` breakpoints (each at most DR_SLOTS, else it
 * fails). Growing fails (false, nothing changed) when system + the fullest CPU's pinned + to >
 * DR_SLOTS; shrinking always succeeds.
 */
bool dr_reserve_task(struct dr_reservation *reservation, unsigned int from, unsigned int to);

/* count more system-wide breakpoints: fails when, on some CPU, system + count + its pinned + the
 * largest task > DR_SLOTS, so a system-wide breakpoint never takes a slot anyone relies on. */
bool dr_reserve_system(struct dr_reservation *reservation, unsigned int count);
void dr_release_system(struct dr_reservation *reservation, unsigned int count);

/* count more breakpoints pinned to CPU cpu: fails when system + its pinned + count + the largest
 * task > DR_SLOTS (other CPUs are not concerned), or cpu >= reservation->cpus. */
bool dr_reserve_pinned(struct dr_reservation *reservation, unsigned int cpu, unsigned int count);
void dr_release_pinned(struct dr_reservation *reservation, unsigned int cpu, unsigned int count);

#endif
