/* SPDX-License-Identifier: MIT */
/* The test runner: selection, the KTAP plan, one isolated run per test. */
#ifndef RUNNER_RUNNER_H
#define RUNNER_RUNNER_H

#include "kernel/shutdown.h"
#include "runner/options.h"

/* Run (or list) the tests run_options selects and return the exit code for shutdown_exit(). */
enum exit_code runner_run(const struct run_options *options);

/* The full name of the test running now, "" between tests: for bail-outs that end the run in
 * the middle of one (runner/isolation.c). */
const char *runner_running_test(void);

/* Report a usage error: "# error:", "# valid options:", "Bail out!". The caller exits. */
void runner_usage_error(const char *error);

#endif
