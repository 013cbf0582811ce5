/* SPDX-License-Identifier: MIT */
/* Shell-style wildcard matching ('*' and '?') for test selection. */
#include "lib/glob.h"
#include "lib/string.h"

/*
 * Greedy match with single-point backtracking: on a mismatch, the most recent '*' absorbs one
 * more character of name and matching resumes after it. Earlier stars never need to be
 * revisited, because the latest star can absorb whatever they could have, so this runs in
 * O(pattern_length * strlen(name)) time and constant space.
 */
bool glob_match(const char *pattern, size_t pattern_length, const char *name)
{
	size_t p = 0, n = 0;
	size_t star_p = 0, star_n = 0; /* resume points after the latest '*' */
	bool have_star = false;

	while (name[n] != '\0') {
		if (p < pattern_length && pattern[p] == '*') {
			have_star = true;
			star_p = ++p;
			star_n = n;
		} else if (p < pattern_length && (pattern[p] == '?' || pattern[p] == name[n])) {
			p++;
			n++;
		} else if (have_star) {
			p = star_p;
			n = ++star_n;
		} else {
			return false;
		}
	}
	/* The name is used up: what is left of the pattern must be stars only. */
	while (p < pattern_length && pattern[p] == '*')
		p++;
	return p == pattern_length;
}

const char *glob_list_unmatched(const char *list, size_t count, glob_selects_fn selects,
				const void *context, size_t *length)
{
	while (*list != '\0') {
		const char *comma = strchr(list, ',');
		size_t glob_length = comma ? (size_t)(comma - list) : strlen(list);
		bool selected = false;

		for (size_t index = 0; index < count && !selected; index++)
			selected = selects(list, glob_length, index, context);
		if (!selected) {
			*length = glob_length;
			return list;
		}
		list += glob_length + (comma ? 1 : 0);
	}
	return NULL;
}
