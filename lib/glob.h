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

#endif
