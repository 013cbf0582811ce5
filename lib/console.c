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
static volatile unsigned int writers;

void console_set_sink(console_sink new_sink)
{
	sink = new_sink;
}

void console_write(const char *text, size_t length)
{
	writers++;
	crc = crc32_update(crc, text, length);
	for (size_t i = 0; i < length; i++)
		lines += text[i] == '\n';
	if (sink)
		sink(text, length);
	writers--;
}

bool console_is_busy(void)
{
	return writers != 0;
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
