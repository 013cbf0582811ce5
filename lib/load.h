/* SPDX-License-Identifier: MIT */
/* Little-endian loads of 8 to 64 bits at any alignment, for firmware tables and records. */
#ifndef LIB_LOAD_H
#define LIB_LOAD_H

#include <stddef.h>
#include <stdint.h>

/* ACPI fields (ACPI 6.5 §5.2.2) and BTS/PEBS records (SDM Vol. 3 §19.6.2) are little endian; a
 * copy loads them in host order. __builtin_memcpy: one unaligned load, even with -fno-builtin. */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "loads assume a little-endian host");

static inline uint8_t load_u8(const void *base, size_t offset)
{
	return ((const uint8_t *)base)[offset];
}

static inline uint16_t load_u16(const void *base, size_t offset)
{
	uint16_t value;

	__builtin_memcpy(&value, (const uint8_t *)base + offset, sizeof(value));
	return value;
}

static inline uint32_t load_u32(const void *base, size_t offset)
{
	uint32_t value;

	__builtin_memcpy(&value, (const uint8_t *)base + offset, sizeof(value));
	return value;
}

static inline uint64_t load_u64(const void *base, size_t offset)
{
	uint64_t value;

	__builtin_memcpy(&value, (const uint8_t *)base + offset, sizeof(value));
	return value;
}

#endif
