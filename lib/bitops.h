/* SPDX-License-Identifier: MIT */
/* Bit counting without libgcc (the kernel links none). */
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

#endif
