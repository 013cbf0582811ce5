/* SPDX-License-Identifier: MIT */
/* The runner's command-line options: tests=, list, seed=, timeout=, console=, alone, watchdog=,
 * exit=, durations. */
#include <stdbool.h>
#include <stddef.h>

#include "lib/cmdline.h"
#include "lib/format.h"
#include "lib/string.h"
#include "runner/options.h"

extern const struct cmdline_option __cmdline_options_start[], __cmdline_options_end[];

struct run_options run_options = {
	.timeout_ms = RUN_TIMEOUT_DEFAULT_MS,
	.console = { CONSOLE_PORT_DEFAULT, CONSOLE_BAUD_DEFAULT },
};

static bool parse_seed(const struct cmdline_option *opt, const char *value, char *err,
		       size_t err_size)
{
	run_options.seed_given = cmdline_parse_u64(opt, value, err, err_size);
	return run_options.seed_given;
}

static bool parse_watchdog(const struct cmdline_option *opt, const char *value, char *err,
			   size_t err_size)
{
	(void)opt;
	if (value && (strcmp(value, "nmi") == 0 || strcmp(value, "off") == 0)) {
		run_options.watchdog_off = strcmp(value, "off") == 0;
		return true;
	}
	format(err, err_size, "'%s' is not a watchdog: nmi or off", value ? value : "");
	return false;
}

static bool parse_exit(const struct cmdline_option *opt, const char *value, char *err,
		       size_t err_size)
{
	(void)opt;
	if (value && strcmp(value, "isa-debug") == 0) {
		run_options.isa_debug_exit = true;
		return true;
	}
	format(err, err_size, "'%s' is not an exit method; the only one is isa-debug",
	       value ? value : "");
	return false;
}

CMDLINE_OPTION(option_tests, .name = "tests", .syntax = "GLOB[,GLOB...]",
	       .parse = cmdline_parse_globs, .dest = run_options.tests);
CMDLINE_OPTION(option_list, .name = "list", .parse = cmdline_parse_flag, .dest = &run_options.list);
CMDLINE_OPTION(option_seed, .name = "seed", .syntax = "N", .parse = parse_seed,
	       .dest = &run_options.seed, .min = 0, .max = UINT64_MAX);
CMDLINE_OPTION(option_timeout, .name = "timeout", .syntax = "SECONDS|Ns|Nms",
	       .parse = cmdline_parse_duration_ms, .dest = &run_options.timeout_ms, .min = 1,
	       .max = 600000);
CMDLINE_OPTION(option_console, .name = "console", .syntax = "ttyS0|ttyS1|0xPORT[,BAUD]",
	       .parse = cmdline_parse_console, .dest = &run_options.console);
CMDLINE_OPTION(option_kernel_fault, .name = "selftest.kernel_fault", .parse = cmdline_parse_flag,
	       .dest = &run_options.kernel_fault);
CMDLINE_OPTION(option_expect_cpus, .name = "smp.expect", .syntax = "N", .parse = cmdline_parse_u64,
	       .dest = &run_options.expect_cpus, .min = 1, .max = 255);
CMDLINE_OPTION(option_alone, .name = "alone", .parse = cmdline_parse_flag,
	       .dest = &run_options.alone);
CMDLINE_OPTION(option_watchdog, .name = "watchdog", .syntax = "nmi|off", .parse = parse_watchdog);
CMDLINE_OPTION(option_exit, .name = "exit", .syntax = "isa-debug", .parse = parse_exit);
CMDLINE_OPTION(option_durations, .name = "durations", .parse = cmdline_parse_flag,
	       .dest = &run_options.durations);

bool options_parse(const char *line, char *err, size_t err_size)
{
	return cmdline_parse(line, __cmdline_options_start,
			     (size_t)(__cmdline_options_end - __cmdline_options_start),
			     run_options.boot_file, err, err_size);
}

void options_usage(char *buf, size_t size)
{
	cmdline_usage(__cmdline_options_start,
		      (size_t)(__cmdline_options_end - __cmdline_options_start), buf, size);
}
