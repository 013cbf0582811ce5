/* SPDX-License-Identifier: MIT */
/* Host tests of lib/glob.c: a table of patterns, names and expected results. */
#include <stdio.h>
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

/* The runner's rule, on a small table: a manual test needs its suite spelled out. */
struct glob_test {
	const char *suite, *name;
	bool manual;
};

static const struct glob_test glob_tests[] = {
	{ "arch", "long_mode_is_active", false },
	{ "boot", "memory_map", false },
	{ "selftest", "kernel_fault", true },
};

static bool glob_selects_table_test(const char *glob, size_t length, size_t index,
				    const void *context)
{
	const struct glob_test *test = &((const struct glob_test *)context)[index];
	size_t suite_length = strlen(test->suite);
	char name[64];

	snprintf(name, sizeof(name), "%s.%s", test->suite, test->name);
	return glob_match(glob, length, name) &&
	       (!test->manual ||
		(length > suite_length && !strncmp(glob, test->suite, suite_length) &&
		 glob[suite_length] == '.'));
}

static const struct {
	const char *list;
	const char *unmatched; /* NULL: every glob selects a test */
} glob_list_cases[] = {
	{ "", NULL },
	{ "*", NULL },
	{ "arch.*", NULL },
	{ "arch.*,boot.*", NULL },
	{ "selftest.*", NULL },
	{ "arch.*,nosuch.*", "nosuch.*" },
	{ "nosuch.*,arch.*", "nosuch.*" },
	{ "arch.*,boot.x,nosuch", "boot.x" },
	{ "arch.*,*.kernel_fault", "*.kernel_fault" }, /* matches a manual test, selects none */
	{ "arch.*,arch", "arch" },
	{ "boot.memory_map,boot.memory_map", NULL },
};

HOST_TEST(glob_list_unmatched_names_the_first_glob_that_selects_nothing)
{
	const size_t count = sizeof(glob_tests) / sizeof(glob_tests[0]);

	for (size_t i = 0; i < sizeof(glob_list_cases) / sizeof(glob_list_cases[0]); i++) {
		size_t length = 12345;
		const char *glob =
			glob_list_unmatched(glob_list_cases[i].list, count, glob_selects_table_test,
					    glob_tests, &length);
		char found[64] = "(none)";

		if (glob)
			snprintf(found, sizeof(found), "%.*s", (int)length, glob);
		host_checkf(glob_list_cases[i].unmatched ? glob != NULL : glob == NULL,
			    "\"%s\": unmatched %s", glob_list_cases[i].list, found);
		if (glob && glob_list_cases[i].unmatched)
			host_check_str(glob_list_cases[i].unmatched, found);
		if (!glob)
			host_check_eq_u64(12345, length); /* left alone */
	}
}

HOST_TEST(glob_list_unmatched_of_an_empty_table_names_the_first_glob)
{
	size_t length = 0;

	host_check(glob_list_unmatched("a,b", 0, glob_selects_table_test, glob_tests, &length) !=
		   NULL);
	host_check_eq_u64(1, length);
	host_check(glob_list_unmatched("", 0, glob_selects_table_test, glob_tests, &length) ==
		   NULL);
}
