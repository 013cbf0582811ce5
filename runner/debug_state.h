/* SPDX-License-Identifier: MIT */
/* The hardware debug state every test must leave at its reset values. */
#ifndef RUNNER_DEBUG_STATE_H
#define RUNNER_DEBUG_STATE_H

#include <stdbool.h>

/* Find which of DEBUGCTL, DS_AREA and PEBS_ENABLE can be read on this CPU. */
void debug_state_init(void);

/* Log which registers are checked, as one diagnostic line. */
void debug_state_describe(void);

/*
 * Compare DR7 and the readable MSRs with their reset values. Each difference fails the
 * current test (report_fail, naming the register, expected and actual value, and when) and is
 * put back. Returns true when everything was clean.
 */
bool debug_state_check(const char *when);

#endif
