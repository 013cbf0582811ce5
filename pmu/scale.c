/* SPDX-License-Identifier: MIT */
/* Exact multiply-then-divide in 64-bit halves, for scaling multiplexed counts. */
#include <stdint.h>

#include "pmu/scale.h"

#define HALF_BITS 32
#define HALF_MASK 0xffffffffull
#define WORD_BITS 64

/*
 * a * b as high:low, from the four 32x32->64 partial products (schoolbook multiplication in
 * base 2^32). The middle sum a_lo*b_hi + a_hi*b_lo can carry into bit 64, hence the carry.
 */
static void multiply_64x64(uint64_t a, uint64_t b, uint64_t *high, uint64_t *low)
{
	uint64_t a_low = a & HALF_MASK, a_high = a >> HALF_BITS;
	uint64_t b_low = b & HALF_MASK, b_high = b >> HALF_BITS;
	uint64_t low_low = a_low * b_low;
	uint64_t low_high = a_low * b_high;
	uint64_t high_low = a_high * b_low;
	uint64_t high_high = a_high * b_high;
	uint64_t middle = low_high + high_low;
	uint64_t middle_carry = middle < low_high ? 1ull << HALF_BITS : 0;

	*low = low_low + (middle << HALF_BITS);
	*high = high_high + (middle >> HALF_BITS) + middle_carry + (*low < low_low);
}

/*
 * high:low / divisor, given high < divisor so that the quotient fits in 64 bits. Restoring
 * long division one bit at a time: the remainder stays below divisor, so shifting it left
 * overflows into at most one bit (bit 64), and when that bit is set the shifted remainder is
 * certainly >= divisor; the wrapped subtraction then gives the right remainder.
 */
static uint64_t divide_128_by_64(uint64_t high, uint64_t low, uint64_t divisor)
{
	uint64_t remainder = high, quotient = 0;

	for (int bit = WORD_BITS - 1; bit >= 0; bit--) {
		uint64_t overflow = remainder >> (WORD_BITS - 1);

		remainder = (remainder << 1) | ((low >> bit) & 1);
		quotient <<= 1;
		if (overflow || remainder >= divisor) {
			remainder -= divisor;
			quotient |= 1;
		}
	}
	return quotient;
}

uint64_t pmu_mul_div(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t high, low;

	multiply_64x64(a, b, &high, &low);
	if (high == 0 && low == 0)
		return 0;
	/* The quotient is >= 2^64 exactly when high >= c (and c == 0 divides nothing). */
	if (high >= c)
		return UINT64_MAX;
	if (high == 0)
		return low / c;
	return divide_128_by_64(high, low, c);
}

uint64_t pmu_scale(uint64_t count, uint64_t enabled, uint64_t running)
{
	if (running == 0)
		return 0;
	if (enabled == running)
		return count;
	return pmu_mul_div(count, enabled, running);
}
