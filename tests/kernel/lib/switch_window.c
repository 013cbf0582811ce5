/* SPDX-License-Identifier: MIT */
/* Two tasks that yield to each other, and what this CPU wrote over a window of their switches. */
#include "tests/kernel/lib/switch_window.h"

#include "arch/x86/witness_marker.h"
#include "sched/sched.h"

void switch_window_measure(void *arg)
{
	struct switch_window *window = arg;
	struct write_counts writes;
	uint64_t switches;

	sched_yield(); /* both have run once */
	writes = this_cpu()->writes;
	switches = sched_stats().switches;
	if (window->witnessed)
		witness_begin(WITNESS_DR_WRITES);
	for (unsigned int i = 0; i < window->rounds; i++)
		sched_yield();
	if (window->witnessed)
		witness_end(WITNESS_DR_WRITES);
	window->writes.msr = this_cpu()->writes.msr - writes.msr;
	window->writes.dr = this_cpu()->writes.dr - writes.dr;
	window->switches = sched_stats().switches - switches;
	window->done = true;
}

void switch_window_yield(void *arg)
{
	struct switch_window *window = arg;

	while (!window->done)
		sched_yield();
}
