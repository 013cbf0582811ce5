/* SPDX-License-Identifier: MIT */
/* The C string and memory functions: byte loops, with a word loop for aligned bulk. */
#include <stdint.h>

#include "lib/string.h"

/*
 * GCC recognises a byte-copy or byte-fill loop and replaces it with a call to memcpy or
 * memset, even under -ffreestanding; inside memcpy and memset that call is infinite recursion.
 * Turning off that one pass keeps these loops as loops.
 */
#define NO_LIBRARY_CALL_PATTERNS __attribute__((optimize("no-tree-loop-distribute-patterns")))

/*
 * Eight bytes at a time while both pointers are 8-aligned, four words a round: a tenth of the
 * instructions of a byte loop, which is what costs where each instruction is emulated or
 * single-stepped (docs/platforms.md, docs/emulated-cpu.md).
 */
#define WORD sizeof(uint64_t)

NO_LIBRARY_CALL_PATTERNS void *memset(void *dest, int value, size_t count)
{
	unsigned char *d = dest;
	size_t i = 0;

	if ((uintptr_t)d % WORD == 0) {
		uint64_t word = 0x0101010101010101ull * (unsigned char)value;

		for (; i + 4 * WORD <= count; i += 4 * WORD) {
			uint64_t *words = (uint64_t *)(void *)(d + i);

			words[0] = word;
			words[1] = word;
			words[2] = word;
			words[3] = word;
		}
		for (; i + WORD <= count; i += WORD)
			*(uint64_t *)(void *)(d + i) = word;
	}
	for (; i < count; i++)
		d[i] = (unsigned char)value;
	return dest;
}

NO_LIBRARY_CALL_PATTERNS void *memcpy(void *dest, const void *src, size_t count)
{
	unsigned char *d = dest;
	const unsigned char *s = src;
	size_t i = 0;

	if ((uintptr_t)d % WORD == 0 && (uintptr_t)s % WORD == 0) {
		for (; i + 4 * WORD <= count; i += 4 * WORD) {
			uint64_t *to = (uint64_t *)(void *)(d + i);
			const uint64_t *from = (const uint64_t *)(const void *)(s + i);

			to[0] = from[0];
			to[1] = from[1];
			to[2] = from[2];
			to[3] = from[3];
		}
		for (; i + WORD <= count; i += WORD)
			*(uint64_t *)(void *)(d + i) = *(const uint64_t *)(const void *)(s + i);
	}
	for (; i < count; i++)
		d[i] = s[i];
	return dest;
}

/* Copies as if through a temporary buffer: the regions may overlap. */
NO_LIBRARY_CALL_PATTERNS void *memmove(void *dest, const void *src, size_t count)
{
	unsigned char *d = dest;
	const unsigned char *s = src;

	if ((uintptr_t)d - (uintptr_t)s >= count) {
		/* dest is below src or past its end: a forward copy never reads a byte it wrote. */
		for (size_t i = 0; i < count; i++)
			d[i] = s[i];
	} else {
		for (size_t i = count; i > 0; i--)
			d[i - 1] = s[i - 1];
	}
	return dest;
}

/* Bytes compare as unsigned char, as C requires. */
int memcmp(const void *a, const void *b, size_t count)
{
	const unsigned char *x = a, *y = b;

	for (size_t i = 0; i < count; i++) {
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
	}
	return 0;
}

NO_LIBRARY_CALL_PATTERNS size_t strlen(const char *s)
{
	size_t length = 0;

	while (s[length] != '\0')
		length++;
	return length;
}

/* The length of s, but never reading more than max characters. */
NO_LIBRARY_CALL_PATTERNS size_t strnlen(const char *s, size_t max)
{
	size_t length = 0;

	while (length < max && s[length] != '\0')
		length++;
	return length;
}

int strcmp(const char *a, const char *b)
{
	return strncmp(a, b, SIZE_MAX);
}

/* Characters compare as unsigned char, as C requires. */
int strncmp(const char *a, const char *b, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		unsigned char x = (unsigned char)a[i], y = (unsigned char)b[i];

		if (x != y)
			return x < y ? -1 : 1;
		if (x == '\0')
			return 0;
	}
	return 0;
}

/* The first c (converted to char) in s; strchr(s, '\0') finds the terminator. */
char *strchr(const char *s, int c)
{
	for (;; s++) {
		if (*s == (char)c)
			return (char *)s;
		if (*s == '\0')
			return NULL;
	}
}

size_t strlcpy(char *dest, const char *src, size_t size)
{
	size_t length = strlen(src);

	if (size > 0) {
		size_t copied = length < size - 1 ? length : size - 1;

		memcpy(dest, src, copied);
		dest[copied] = '\0';
	}
	return length;
}
