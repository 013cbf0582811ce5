/* SPDX-License-Identifier: MIT */
/* Host tests of lib/bitops.h: bit counts and run starts against a bit-by-bit count. */
#include <stdbool.h>
#include <stdint.h>

#include "lib/bitops.h"
#include "tests/host/host_test.h"

#define WORDS 2000

static uint64_t random_state = 0x2545f4914f6cdd1dull;

static uint64_t random_u64(void)
{
	return host_random_u64(&random_state);
}

/* Words with long runs as well as short ones: random bits, ORed and ANDed with more. */
static uint64_t random_word(unsigned int i)
{
	uint64_t value = random_u64();

	switch (i % 4) {
	case 0:
		return value;
	case 1:
		return value | random_u64() | random_u64();
	case 2:
		return ~(1ull << (value % 64));
	default:
		return value & random_u64();
	}
}

static uint64_t run_starts_bit_by_bit(uint64_t value, unsigned int count)
{
	uint64_t starts = 0;

	for (unsigned int i = 0; i + count <= 64; i++) {
		bool all = true;

		for (unsigned int j = i; j < i + count; j++)
			all = all && (value >> j & 1);
		starts |= (uint64_t)all << i;
	}
	return starts;
}

HOST_TEST(bitops_bits_set_counts_each_set_bit)
{
	host_check_eq_u64(0, bits_set(0));
	host_check_eq_u64(64, bits_set(~0ull));
	for (unsigned int i = 0; i < WORDS; i++) {
		uint64_t value = random_word(i);
		unsigned int expected = 0;

		for (unsigned int bit = 0; bit < 64; bit++)
			expected += value >> bit & 1;
		host_check_eq_u64(expected, bits_set(value));
	}
}

HOST_TEST(bitops_run_starts_match_a_bit_by_bit_search_for_every_length)
{
	host_check_eq_u64(1, bits_run_starts(~0ull, 64));
	host_check_eq_u64(0, bits_run_starts(~0ull >> 1, 64));
	host_check_eq_u64(0x3, bits_run_starts(0x3f, 5)); /* runs past bit 63 do not count */
	host_check_eq_u64(1ull << 59, bits_run_starts(0xfull << 60 | 1ull << 59, 5));
	for (unsigned int i = 0; i < WORDS; i++) {
		uint64_t value = random_word(i);

		for (unsigned int count = 1; count <= 64; count++)
			if (!host_checkf(bits_run_starts(value, count) ==
						 run_starts_bit_by_bit(value, count),
					 "value 0x%llx count %u: 0x%llx, expected 0x%llx",
					 (unsigned long long)value, count,
					 (unsigned long long)bits_run_starts(value, count),
					 (unsigned long long)run_starts_bit_by_bit(value, count)))
				return;
	}
}
