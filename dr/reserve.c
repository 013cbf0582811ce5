/* SPDX-License-Identifier: MIT */
/* Slot reservation, after the per-CPU rule of Linux kernel/events/hw_breakpoint.c. */
#include <stdbool.h>

#include "dr/reserve.h"

void dr_reservation_init(struct dr_reservation *reservation, unsigned int *pinned,
			 unsigned int cpus)
{
	*reservation = (struct dr_reservation){ .pinned = pinned, .cpus = cpus };
	for (unsigned int cpu = 0; cpu < cpus; cpu++)
		pinned[cpu] = 0;
}

unsigned int dr_reservation_max_task(const struct dr_reservation *reservation)
{
	for (unsigned int count = DR_SLOTS; count > 0; count--)
		if (reservation->tasks_holding[count])
			return count;
	return 0;
}

unsigned int dr_reservation_max_pinned(const struct dr_reservation *reservation)
{
	unsigned int max = 0;

	for (unsigned int cpu = 0; cpu < reservation->cpus; cpu++)
		if (reservation->pinned[cpu] > max)
			max = reservation->pinned[cpu];
	return max;
}

unsigned int dr_reservation_free_for_task(const struct dr_reservation *reservation,
					  unsigned int held)
{
	unsigned int taken = reservation->system + dr_reservation_max_pinned(reservation) + held;

	return taken < DR_SLOTS ? DR_SLOTS - taken : 0;
}

bool dr_reserve_task(struct dr_reservation *reservation, unsigned int from, unsigned int to)
{
	if (from > DR_SLOTS || to > DR_SLOTS ||
	    (to > from &&
	     reservation->system + dr_reservation_max_pinned(reservation) + to > DR_SLOTS))
		return false;
	if (from)
		reservation->tasks_holding[from]--;
	if (to)
		reservation->tasks_holding[to]++;
	return true;
}

bool dr_reserve_system(struct dr_reservation *reservation, unsigned int count)
{
	if (count > DR_SLOTS || reservation->system + count +
						dr_reservation_max_pinned(reservation) +
						dr_reservation_max_task(reservation) >
					DR_SLOTS)
		return false;
	reservation->system += count;
	return true;
}

void dr_release_system(struct dr_reservation *reservation, unsigned int count)
{
	reservation->system -= count <= reservation->system ? count : reservation->system;
}

bool dr_reserve_pinned(struct dr_reservation *reservation, unsigned int cpu, unsigned int count)
{
	if (cpu >= reservation->cpus || count > DR_SLOTS ||
	    reservation->system + reservation->pinned[cpu] + count +
			    dr_reservation_max_task(reservation) >
		    DR_SLOTS)
		return false;
	reservation->pinned[cpu] += count;
	return true;
}

void dr_release_pinned(struct dr_reservation *reservation, unsigned int cpu, unsigned int count)
{
	if (cpu < reservation->cpus)
		reservation->pinned[cpu] -=
			count <= reservation->pinned[cpu] ? count : reservation->pinned[cpu];
}
