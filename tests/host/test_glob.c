/* SPDX-License-Identifier: MIT */
/* Host tests of lib/glob.c: a table of patterns, names and expected results. */
#include <string.h>

#include "lib/glob.h"
#include "tests/host/host_test.h"

static const struct {
	const char *pattern;
	const char *name;
	bool matches;
} glob_cases[] = {
	{ "", "", true },
	{ "", "a", false },
	{ "a", "", false },
	{ "*", "", true },
	{ "**", "", true },
	{ "?", "", false },
	{ "*", "arch.long_mode_is_active", true },
	{ "arch.*", "arch.long_mode_is_active", true },
	{ "arch.*", "arch.", true },
	{ "arch.*", "arch", false },
	{ "arch.*", "boot.arch", false },
	{ "arch*", "arch_extra.test", true }, /* '*' crosses the '.' */
	{ "*.*", "arch.test", true },
	{ "*.*", "archtest", false },
	{ "*active", "arch.long_mode_is_active", true },
	{ "*active", "arch.active_mode", false },
	{ "*mode*", "arch.long_mode_is_active", true },
	{ "a?c", "abc", true },
	{ "a?c", "ac", false },
	{ "a?c", "abbc", false },
	{ "???", "abc", true },
	{ "???", "ab", false },
	{ "???", "abcd", false },
	{ "a*b*c", "abc", true },
	{ "a*b*c", "aXbYc", true },
	{ "a*b*c", "aXbYcZ", false },
	{ "a*b*c", "acb", false },
	{ "*a*b", "aaab", true },
	{ "*a*b", "aaba", false },
	{ "*ab", "aab", true }, /* needs backtracking past the first 'a' */
	{ "*abc", "ababc", true },
	{ "a*", "a", true },
	{ "a**b", "ab", true },
	{ "*?", "", false },
	{ "*?", "x", true },
	{ "?*?", "x", false },
	{ "?*?", "xy", true },
	{ "Arch.*", "arch.x", false }, /* case-sensitive */
	{ "arch.test", "arch.test", true },
	{ "arch.test", "arch.tests", false },
	{ "arch.tests", "arch.test", false },
	{ "*a*a*a*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	  false },
};

HOST_TEST(glob_matches_the_table)
{
	for (size_t i = 0; i < sizeof(glob_cases) / sizeof(glob_cases[0]); i++) {
		bool matches = glob_match(glob_cases[i].pattern, strlen(glob_cases[i].pattern),
					  glob_cases[i].name);

		host_checkf(matches == glob_cases[i].matches,
			    "glob_match(\"%s\", \"%s\"): expected %s, got %s",
			    glob_cases[i].pattern, glob_cases[i].name,
			    glob_cases[i].matches ? "match" : "no match",
			    matches ? "match" : "no match");
	}
}

HOST_TEST(glob_reads_only_pattern_length_characters)
{
	/* How the runner matches one glob of a comma-separated list in place. */
	const char *globs = "arch.*,boot.long_mode";

	host_check(glob_match(globs, 6, "arch.x"));
	host_check(!glob_match(globs, 6, "boot.long_mode"));
	host_check(!glob_match("arch.x,", 6, "arch.x,"));
	host_check(glob_match(globs + 7, strlen(globs + 7), "boot.long_mode"));
	host_check(glob_match(globs, 0, ""));
	host_check(!glob_match(globs, 0, "arch.x"));
	host_check(glob_match("a*", 1, "a"));
	host_check(!glob_match("a*", 1, "ab"));
}
