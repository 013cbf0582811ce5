/* SPDX-License-Identifier: MIT */
/* Shell-style wildcard matching for test selection. */
#ifndef LIB_GLOB_H
#define LIB_GLOB_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Match name against pattern: '*' matches any run of characters (also '.'), '?' any one
 * character, every other character itself. The pattern is pattern[0..pattern_length).
 */
bool glob_match(const char *pattern, size_t pattern_length, const char *name);

/* Whether glob[0..length) selects item index of the caller's table (for the runner: a test). */
typedef bool (*glob_selects_fn)(const char *glob, size_t length, size_t index, const void *context);

/*
 * Check a comma-separated glob list (tests=, as cmdline_parse_globs() accepts it) against a table
 * of count items: return the first glob that selects none of them, with its length in *length,
 * or NULL when every glob selects at least one (and for an empty list). A glob that selects
 * nothing is a mistake even when the others select something: the runner refuses the line.
 */
const char *glob_list_unmatched(const char *list, size_t count, glob_selects_fn selects,
				const void *context, size_t *length);

#endif
