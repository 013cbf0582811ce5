/* SPDX-License-Identifier: MIT */
/* The kernel command-line options of the runner, and the registration macro for all options. */
#ifndef RUNNER_OPTIONS_H
#define RUNNER_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/cmdline.h"

struct run_options {
	char tests[CMDLINE_STRING_MAX]; /* comma-separated globs; "" selects every non-manual test
					 */
	bool list;
	uint64_t seed;
	bool seed_given;
	uint64_t timeout_ms;
	struct console_config console;
	bool isa_debug_exit;
	bool kernel_fault; /* selftest.kernel_fault: #UD outside any test, to check the bail out */
	char boot_file[CMDLINE_STRING_MAX];
	uint64_t expect_cpus; /* smp.expect: the CPUs the machine has; 0: not said */
	bool alone; /* alone: run the one selected test even where it ends the boot */
	bool watchdog_off; /* watchdog=off: no NMI watchdog */
	bool durations; /* durations: each test's time on the TSC, before its result */
};

#define RUN_TIMEOUT_DEFAULT_MS 10000
#define CONSOLE_PORT_DEFAULT 0x3f8
#define CONSOLE_BAUD_DEFAULT 115200

extern struct run_options run_options;

/*
 * Parse the command line into run_options. On error, return false with the message in err;
 * run_options.console is still valid (the default, or what console= said before the error).
 */
bool options_parse(const char *line, char *err, size_t err_size);

/* Write the usage line (every registered option) into buf. */
void options_usage(char *buf, size_t size);

#endif
