/* SPDX-License-Identifier: MIT */
/* Two tasks that yield to each other, and what this CPU wrote over a window of their switches. */
#ifndef TESTS_KERNEL_LIB_SWITCH_WINDOW_H
#define TESTS_KERNEL_LIB_SWITCH_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/percpu.h"

/*
 * Run switch_window_measure in one task and switch_window_yield in another on the same CPU:
 * once both have run (their configurations are in place), the first yields rounds times and
 * records this CPU's write counts and the switches meanwhile; with witnessed, the window is
 * WITNESS_DR_WRITES's for the TCG-plugin witness.
 */
struct switch_window {
	unsigned int rounds;
	bool witnessed;
	struct write_counts writes;
	uint64_t switches;
	volatile bool done;
};

void switch_window_measure(void *window);
void switch_window_yield(void *window);

#endif
