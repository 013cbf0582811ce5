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

/*
 * With on, start the NMI watchdog on the calling CPU (the boot CPU, where the runner's tests
 * start): a periodic NMI (platform/pc/nmi_timer.h) that ends a frame past its deadline by
 * ISOLATION_WATCHDOG_GRACE_MS whose owner runs with interrupts off, where the tick cannot (under
 * a spinlock, it waits up to ISOLATION_WATCHDOG_LOCK_MS more for an NMI outside it). Prints
 * "# watchdog: ..." either way, with the source or why there is none.
 */
/*
 * Name the test whose frames follow ("" between tests), so that a bail-out that ends the run in
 * the middle of one says which. The name is copied.
 */
void isolation_name_test(const char *name);

#define ISOLATION_WATCHDOG_HZ 20
#define ISOLATION_WATCHDOG_GRACE_MS 200
/* How long past the grace it waits for an NMI outside every spinlock before ending the run. */
#define ISOLATION_WATCHDOG_LOCK_MS 2000
void isolation_watchdog_start(bool on);

#endif
