/* SPDX-License-Identifier: MIT */
/* The test runner: selection, the KTAP plan, one isolated run per test. */
#ifndef RUNNER_RUNNER_H
#define RUNNER_RUNNER_H

#include "kernel/shutdown.h"
#include "runner/options.h"

/* Run (or list) the tests run_options selects and return the exit code for shutdown_exit(). */
enum exit_code runner_run(const struct run_options *options);

/* Report a usage error: "# error:", "# valid options:", "Bail out!". The caller exits. */
void runner_usage_error(const char *error);

#endif
