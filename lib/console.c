/* SPDX-License-Identifier: MIT */
/* The console sink and the integrity counters of the KTAP stream. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/console.h"
#include "lib/crc32.h"

static console_sink sink;
static uint32_t crc;
static unsigned long lines;
static unsigned long (*guard_enter)(void);
static void (*guard_leave)(unsigned long);

void console_set_sink(console_sink new_sink)
{
	sink = new_sink;
}

void console_set_guard(unsigned long (*enter)(void), void (*leave)(unsigned long))
{
	guard_enter = enter;
	guard_leave = leave;
}

void console_write(const char *text, size_t length)
{
	unsigned long state = guard_enter ? guard_enter() : 0;

	crc = crc32_update(crc, text, length);
	for (size_t i = 0; i < length; i++)
		lines += text[i] == '\n';
	if (sink)
		sink(text, length);
	if (guard_leave)
		guard_leave(state);
}

void console_fresh_line(void)
{
	unsigned long state = guard_enter ? guard_enter() : 0;

	if (sink)
		sink("\n", 1);
	if (guard_leave)
		guard_leave(state);
}

uint32_t console_crc32(void)
{
	return crc;
}

unsigned long console_lines(void)
{
	return lines;
}

void console_reset(void)
{
	crc = 0;
	lines = 0;
}
