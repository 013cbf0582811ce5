/* SPDX-License-Identifier: MIT */
/* Host tests of lib/ktap.c: the exact bytes of each KTAP line, and valid names. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "lib/console.h"
#include "lib/ktap.h"
#include "tests/host/console_capture.h"
#include "tests/host/host_test.h"

#define LONG_TEXT 1000

HOST_TEST(ktap_version_and_plan_indent_four_spaces_per_depth)
{
	console_capture_start();
	ktap_version(0);
	ktap_plan(0, 2);
	ktap_version(1);
	ktap_plan(1, 0);
	ktap_version(2);
	ktap_plan(2, 4294967295u);
	console_capture_check("KTAP version 1\n"
			      "1..2\n"
			      "    KTAP version 1\n"
			      "    1..0\n"
			      "        KTAP version 1\n"
			      "        1..4294967295\n");
}

HOST_TEST(ktap_subtest_names_the_suite)
{
	console_capture_start();
	ktap_subtest(1, "arch");
	ktap_subtest(0, "boot");
	console_capture_check("    # Subtest: arch\n"
			      "# Subtest: boot\n");
}

HOST_TEST(ktap_result_writes_ok_and_not_ok)
{
	console_capture_start();
	ktap_result(1, 1, KTAP_PASS, "rdmsr_safe_reports_gp", NULL);
	ktap_result(1, 2, KTAP_FAIL, "fault_is_not_a_hang", NULL);
	ktap_result(0, 1, KTAP_FAIL, "arch", "ignored when not a skip");
	ktap_result(0, 12, KTAP_PASS, "boot", "ignored when not a skip");
	console_capture_check("    ok 1 rdmsr_safe_reports_gp\n"
			      "    not ok 2 fault_is_not_a_hang\n"
			      "not ok 1 arch\n"
			      "ok 12 boot\n");
}

HOST_TEST(ktap_skip_carries_its_reason_or_says_none_was_given)
{
	console_capture_start();
	ktap_result(1, 3, KTAP_SKIP, "io_breakpoint_needs_de", "CR4.DE cannot be set");
	ktap_result(1, 4, KTAP_SKIP, "no_reason", NULL);
	ktap_result(0, 5, KTAP_SKIP, "empty_reason", "");
	console_capture_check("    ok 3 io_breakpoint_needs_de # SKIP CR4.DE cannot be set\n"
			      "    ok 4 no_reason # SKIP no reason given\n"
			      "ok 5 empty_reason # SKIP no reason given\n");
}

HOST_TEST(ktap_diag_prefixes_hash_space_and_formats)
{
	console_capture_start();
	ktap_diag(0, "seed=%u", 7u);
	ktap_diag(1, "metric %s median=%llu", "sched.switch_cycles", 1234ull);
	ktap_diag(2, "%s", "");
	console_capture_check("# seed=7\n"
			      "    # metric sched.switch_cycles median=1234\n"
			      "        # \n");
}

HOST_TEST(ktap_flattens_newlines_so_one_call_is_one_line)
{
	console_capture_start();
	ktap_diag(1, "first\nsecond\r\nthird %s", "in\nargument\n");
	ktap_diag(0, "\n");
	ktap_result(0, 1, KTAP_SKIP, "name", "reason\non two lines");
	ktap_result(0, 2, KTAP_FAIL, "bad\nname", NULL);
	ktap_subtest(0, "suite\r");
	ktap_bail_out("boom\nagain");
	console_capture_check("    # first second  third in argument \n"
			      "#  \n"
			      "ok 1 name # SKIP reason on two lines\n"
			      "not ok 2 bad name\n"
			      "# Subtest: suite \n"
			      "Bail out! boom again\n");
}

HOST_TEST(ktap_bail_out_is_at_the_top_level)
{
	console_capture_start();
	ktap_bail_out("kernel command line did not parse");
	console_capture_check("Bail out! kernel command line did not parse\n");
}

/* The capture must be one line of exactly 511 characters plus '\n', starting with prefix. */
static void check_one_cut_line(const char *prefix, char fill)
{
	const char *text = console_capture_text();
	size_t prefix_length = strlen(prefix);
	bool filled = true;

	host_check_eq_u64(512, console_capture_length());
	host_check_eq_u64(1, console_lines());
	host_check(strncmp(text, prefix, prefix_length) == 0);
	for (size_t i = prefix_length; i < 511; i++)
		filled = filled && text[i] == fill;
	host_checkf(filled, "line after \"%s\" is not all '%c'", prefix, fill);
	host_check(text[511] == '\n');
}

HOST_TEST(ktap_cuts_long_lines_at_511_characters)
{
	char text[LONG_TEXT + 1];

	memset(text, 'x', LONG_TEXT);
	text[LONG_TEXT] = '\0';

	console_capture_start();
	ktap_diag(0, "%s", text);
	check_one_cut_line("# x", 'x');

	console_capture_start();
	ktap_diag(1, "%s", text);
	check_one_cut_line("    # x", 'x');

	console_capture_start();
	ktap_result(1, 1, KTAP_SKIP, "t", text);
	check_one_cut_line("    ok 1 t # SKIP x", 'x');

	console_capture_start();
	ktap_bail_out(text);
	check_one_cut_line("Bail out! x", 'x');

	console_capture_start();
	ktap_plan(200, 1); /* 800 spaces of indentation */
	check_one_cut_line(" ", ' ');
}

HOST_TEST(ktap_keeps_a_line_of_exactly_511_characters_whole)
{
	char text[LONG_TEXT + 1];

	/* "# " and 509 characters: 511, the longest line, not cut. */
	memset(text, 'y', 509);
	text[508] = 'z';
	text[509] = '\0';
	console_capture_start();
	ktap_diag(0, "%s", text);
	host_check_eq_u64(512, console_capture_length());
	host_check(console_capture_text()[510] == 'z');
	host_check(console_capture_text()[511] == '\n');

	/* Four spaces, "# " and 505 characters. */
	text[504] = 'z';
	text[505] = '\0';
	console_capture_start();
	ktap_diag(1, "%s", text);
	host_check_eq_u64(512, console_capture_length());
	host_check(console_capture_text()[510] == 'z');

	/* One character less is one byte less. */
	text[503] = 'z';
	text[504] = '\0';
	console_capture_start();
	ktap_diag(1, "%s", text);
	host_check_eq_u64(511, console_capture_length());
	host_check(console_capture_text()[509] == 'z');
	host_check(console_capture_text()[510] == '\n');
}

static const struct {
	const char *name;
	bool valid;
} ktap_name_cases[] = {
	{ "", false },
	{ "a", true },
	{ "Z", true },
	{ "0", true },
	{ "_", true },
	{ "long_mode_is_active", true },
	{ "AZaz09_", true },
	{ "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_", true },
	{ "has space", false },
	{ "has#hash", false },
	{ "suite.test", false },
	{ "dash-name", false },
	{ "tab\tname", false },
	{ "line\n", false },
	{ "trailing@", false }, /* '@' is just below 'A' */
	{ "[leading", false }, /* '[' is just above 'Z' */
	{ "mid`dle", false }, /* '`' is just below 'a' */
	{ "x{", false }, /* '{' is just above 'z' */
	{ "/x", false }, /* '/' is just below '0' */
	{ "x:", false }, /* ':' is just above '9' */
	{ "^", false }, /* '^' is just below '_' */
	{ "caf\xc3\xa9", false },
};

HOST_TEST(ktap_name_is_valid_accepts_only_letters_digits_and_underscores)
{
	for (size_t i = 0; i < sizeof(ktap_name_cases) / sizeof(ktap_name_cases[0]); i++)
		host_checkf(ktap_name_is_valid(ktap_name_cases[i].name) == ktap_name_cases[i].valid,
			    "ktap_name_is_valid(\"%s\"): expected %d", ktap_name_cases[i].name,
			    ktap_name_cases[i].valid);
}
