/* SPDX-License-Identifier: MIT */
/* Bit counting and searching without libgcc (the kernel links none). */
#ifndef LIB_BITOPS_H
#define LIB_BITOPS_H

#include <stdint.h>

static inline unsigned int bits_set(uint64_t value)
{
	value = value - ((value >> 1) & 0x5555555555555555ull);
	value = (value & 0x3333333333333333ull) + ((value >> 2) & 0x3333333333333333ull);
	value = (value + (value >> 4)) & 0x0f0f0f0f0f0f0f0full;
	return (unsigned int)((value * 0x0101010101010101ull) >> 56);
}

/*
 * Where runs of count set bits start: bit i of the result is set when bits i to i + count - 1
 * of value are all set (a run does not continue past bit 63). count is 1 to 64. Each round
 * doubles the length known, so it takes log2(count) rounds, not count.
 */
static inline uint64_t bits_run_starts(uint64_t value, unsigned int count)
{
	for (unsigned int known = 1; known < count;) {
		unsigned int step = known < count - known ? known : count - known;

		value &= value >> step;
		known += step;
	}
	return value;
}

#endif
