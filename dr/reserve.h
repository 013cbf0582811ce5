/* SPDX-License-Identifier: MIT */
/* Debug-register reservation on one CPU: system-wide breakpoints plus the largest per-task count
 * stay within DR_SLOTS. Hard: a request that does not fit fails and changes nothing. Pure. */
#ifndef DR_RESERVE_H
#define DR_RESERVE_H

#include <stdbool.h>

#include "arch/x86/debugreg.h"

struct dr_reservation {
	unsigned int system; /* system-wide breakpoints */
	unsigned int tasks_holding[DR_SLOTS + 1]; /* [n]: tasks that hold exactly n (n >= 1) */
};

/* The largest number of breakpoints any one task holds. */
unsigned int dr_reservation_max_task(const struct dr_reservation *reservation);

/* Slots a task may still take: DR_SLOTS - system - what it holds already. */
unsigned int dr_reservation_free_for_task(const struct dr_reservation *reservation,
					  unsigned int held);

/*
 * A task goes from holding `from` to holding `to` breakpoints (each at most DR_SLOTS, else it
 * fails). Growing fails (false, nothing
 * changed) when system + to > DR_SLOTS; shrinking always succeeds.
 */
bool dr_reserve_task(struct dr_reservation *reservation, unsigned int from, unsigned int to);

/* count more system-wide breakpoints: fails when system + count + the largest task > DR_SLOTS,
 * so a system-wide breakpoint never takes a slot some task relies on. */
bool dr_reserve_system(struct dr_reservation *reservation, unsigned int count);
void dr_release_system(struct dr_reservation *reservation, unsigned int count);

#endif
