/* SPDX-License-Identifier: MIT */
/* Capture of console output into a buffer, for host tests of what lib/ writes. */
#ifndef TESTS_HOST_CONSOLE_CAPTURE_H
#define TESTS_HOST_CONSOLE_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>

#define CONSOLE_CAPTURE_MAX 16384

/*
 * Empty the buffer, console_reset(), clear any console guard and make the capture the sink.
 * Call at the start of every test that looks at console output.
 */
void console_capture_start(void);

/* Everything written since console_capture_start(), NUL-terminated. */
const char *console_capture_text(void);
size_t console_capture_length(void);

/* Check that the capture holds exactly expected and that the console counted its lines. */
void console_capture_check(const char *expected);

/* True when more than CONSOLE_CAPTURE_MAX - 1 bytes were written; the text is then cut. */
bool console_capture_overflowed(void);

#endif
