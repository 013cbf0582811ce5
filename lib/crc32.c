/* SPDX-License-Identifier: MIT */
/* CRC-32/ISO-HDLC, computed bit by bit: small and fast enough for a serial log. */
#include <stdint.h>

#include "lib/crc32.h"

/* The reflected form of the generator polynomial 0x04c11db7. */
#define CRC32_POLYNOMIAL_REFLECTED 0xedb88320u

/*
 * The stored CRC is the complement of the shift register, so that crc32_update(0, ...) starts
 * from the all-ones register that the algorithm needs, and chunks compose.
 */
uint32_t crc32_update(uint32_t crc, const void *data, size_t length)
{
	const uint8_t *bytes = data;
	uint32_t reg = ~crc;

	for (size_t i = 0; i < length; i++) {
		reg ^= bytes[i];
		for (int bit = 0; bit < 8; bit++)
			reg = (reg >> 1) ^ (CRC32_POLYNOMIAL_REFLECTED & (0u - (reg & 1u)));
	}
	return ~reg;
}
