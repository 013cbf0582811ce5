/* SPDX-License-Identifier: MIT */
/* The one console sink, with a running CRC and line count of everything written. */
#ifndef LIB_CONSOLE_H
#define LIB_CONSOLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef void (*console_sink)(const char *text, size_t length);

/* Until a sink is set, output is counted in the CRC but goes nowhere. */
void console_set_sink(console_sink sink);
void console_write(const char *text, size_t length);

/*
 * Before the kernel's first line: send a line break that is not the kernel's, counted in neither
 * the CRC nor the line count, so that text the firmware left unterminated ("Booting from
 * ROM..") ends there and "KTAP version 1" starts a line (docs/output.md, "Serial log").
 */
void console_fresh_line(void);

/* CRC-32 and '\n' count of every byte written so far (docs/output.md, "Final line"). */
uint32_t console_crc32(void);
unsigned long console_lines(void);

/*
 * Make each console_write() one critical section: enter() before (returning what leave() needs),
 * leave() after. Registered by arch (interrupts off), so a line is never split by a task
 * switch and the CRC always covers the bytes in the order they went out.
 */
void console_set_guard(unsigned long (*enter)(void), void (*leave)(unsigned long));

/* Start counting afresh: for host tests of the emitter. */
void console_reset(void);

#endif
