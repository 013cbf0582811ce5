/* SPDX-License-Identifier: MIT */
/* The test runner: selection, the KTAP plan, one isolated run per test. */
#ifndef RUNNER_RUNNER_H
#define RUNNER_RUNNER_H

#include "arch/x86/platform.h"
#include "runner/options.h"

/* Run (or list) the tests run_options selects and return the exit code for platform_exit(). */
enum platform_exit_code runner_run(const struct run_options *options);

/* Report a usage error: "# error:", "# valid options:", "Bail out!". The caller exits. */
void runner_usage_error(const char *error);

#endif
