/* SPDX-License-Identifier: MIT */
/* Slot reservation, after the per-CPU rule of Linux kernel/events/hw_breakpoint.c. */
#include <stdbool.h>

#include "dr/reserve.h"

unsigned int dr_reservation_max_task(const struct dr_reservation *reservation)
{
	for (unsigned int count = DR_SLOTS; count > 0; count--)
		if (reservation->tasks_holding[count])
			return count;
	return 0;
}

unsigned int dr_reservation_free_for_task(const struct dr_reservation *reservation,
					  unsigned int held)
{
	unsigned int taken = reservation->system + held;

	return taken < DR_SLOTS ? DR_SLOTS - taken : 0;
}

bool dr_reserve_task(struct dr_reservation *reservation, unsigned int from, unsigned int to)
{
	if (from > DR_SLOTS || to > DR_SLOTS || (to > from && reservation->system + to > DR_SLOTS))
		return false;
	if (from)
		reservation->tasks_holding[from]--;
	if (to)
		reservation->tasks_holding[to]++;
	return true;
}

bool dr_reserve_system(struct dr_reservation *reservation, unsigned int count)
{
	if (count > DR_SLOTS ||
	    reservation->system + count + dr_reservation_max_task(reservation) > DR_SLOTS)
		return false;
	reservation->system += count;
	return true;
}

void dr_release_system(struct dr_reservation *reservation, unsigned int count)
{
	reservation->system -= count <= reservation->system ? count : reservation->system;
}
