/* SPDX-License-Identifier: MIT */
/* Running a function so that its exceptions, overruns and skips end only that function. */
#ifndef RUNNER_ISOLATION_H
#define RUNNER_ISOLATION_H

#include "runner/test.h"

/*
 * Register the unexpected-exception handler, the timer hook and the scheduler's interrupt
 * handler that enforce isolation. Before sched_init(): the tick must see a deadline before the
 * scheduler's own tick hook switches tasks.
 */
void isolation_init(void);

#endif
