/* SPDX-License-Identifier: MIT */
/* printf-style formatting into a buffer: freestanding, no hardware. */
#ifndef LIB_FORMAT_H
#define LIB_FORMAT_H

#include <stdarg.h>
#include <stddef.h>

/*
 * Supports %d %i %u %x %X %o %c %s %p %% with flags '-' '0' '+' ' ' '#', a field width and a
 * precision (each may be '*'), and the length modifiers hh h l ll z t j.
 * Always NUL-terminates when size > 0. Returns the length the full output would have had,
 * like C99 vsnprintf. %s of NULL prints "(null)". %p prints 0x and 16 hex digits.
 */
int vformat(char *buf, size_t size, const char *fmt, va_list args)
	__attribute__((format(printf, 3, 0)));
int format(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
