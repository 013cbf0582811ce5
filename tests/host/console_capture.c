/* SPDX-License-Identifier: MIT */
/* A console sink that appends to one static buffer. */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "lib/console.h"
#include "tests/host/console_capture.h"
#include "tests/host/host_test.h"

static char buffer[CONSOLE_CAPTURE_MAX];
static size_t length;
static bool overflowed;

static void capture_sink(const char *text, size_t count)
{
	if (count > sizeof(buffer) - 1 - length) {
		count = sizeof(buffer) - 1 - length;
		overflowed = true;
	}
	memcpy(buffer + length, text, count);
	length += count;
	buffer[length] = '\0';
}

void console_capture_start(void)
{
	length = 0;
	buffer[0] = '\0';
	overflowed = false;
	console_reset();
	console_set_guard(NULL, NULL);
	console_set_sink(capture_sink);
}

const char *console_capture_text(void)
{
	return buffer;
}

size_t console_capture_length(void)
{
	return length;
}

bool console_capture_overflowed(void)
{
	return overflowed;
}

void console_capture_check(const char *expected)
{
	unsigned long lines = 0;

	for (const char *c = expected; *c; c++)
		lines += *c == '\n';
	host_check_str(expected, console_capture_text());
	host_check_eq_u64(lines, console_lines());
}
