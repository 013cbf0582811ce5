/* SPDX-License-Identifier: MIT */
/* Points where a benchmark waits for the harness, which reads the host's counters meanwhile. */
#ifndef RUNNER_HOST_SYNC_H
#define RUNNER_HOST_SYNC_H

#include <stdbool.h>

/*
 * With the kernel option host.sync (the harness gives it only when it answers, docs/output.md):
 * print "# host-sync LABEL", then wait for one byte on the console UART, reading its line status
 * once a millisecond so that the wait itself costs the host little. Returns true at once without
 * the option, true when the byte came, false (with a diagnostic) after HOST_SYNC_LIMIT_MS.
 */
bool host_sync(const char *label);

/* Whether host.sync was given: a benchmark then also prints what the harness divides by. */
bool host_sync_enabled(void);

#endif
