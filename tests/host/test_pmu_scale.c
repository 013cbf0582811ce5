/* SPDX-License-Identifier: MIT */
/* Host tests of pmu/scale.c against a slow bit-serial 128-bit reference and unsigned __int128. */
#include <stdbool.h>
#include <stdint.h>

#include "pmu/scale.h"
#include "tests/host/host_test.h"

#define RANDOM_CASES 200000

/* A 128-bit number as two halves, for the reference. */
struct u128 {
	uint64_t high, low;
};

static struct u128 u128_shift_left(struct u128 x)
{
	return (struct u128){ (x.high << 1) | (x.low >> 63), x.low << 1 };
}

static struct u128 u128_add(struct u128 a, struct u128 b)
{
	uint64_t low = a.low + b.low;

	return (struct u128){ a.high + b.high + (low < a.low), low };
}

static bool u128_at_least(struct u128 a, struct u128 b)
{
	return a.high != b.high ? a.high > b.high : a.low >= b.low;
}

static struct u128 u128_subtract(struct u128 a, struct u128 b)
{
	return (struct u128){ a.high - b.high - (a.low < b.low), a.low - b.low };
}

/*
 * floor(a * b / c), saturated, the slow way: shift-and-add multiplication over b's 64 bits,
 * then restoring division over all 128 dividend bits into a 128-bit quotient. A different
 * method from pmu/scale.c (which divides only 64 bits after checking the high half).
 */
static uint64_t reference_mul_div(uint64_t a, uint64_t b, uint64_t c)
{
	struct u128 product = { 0, 0 }, addend = { 0, a }, remainder = { 0, 0 };
	struct u128 quotient = { 0, 0 }, divisor = { 0, c };

	for (int bit = 0; bit < 64; bit++) {
		if ((b >> bit) & 1)
			product = u128_add(product, addend);
		addend = u128_shift_left(addend);
	}
	if (product.high == 0 && product.low == 0)
		return 0;
	if (c == 0)
		return UINT64_MAX;
	for (int bit = 127; bit >= 0; bit--) {
		uint64_t next =
			bit >= 64 ? (product.high >> (bit - 64)) & 1 : (product.low >> bit) & 1;

		remainder = u128_shift_left(remainder);
		remainder.low |= next;
		quotient = u128_shift_left(quotient);
		if (u128_at_least(remainder, divisor)) {
			remainder = u128_subtract(remainder, divisor);
			quotient.low |= 1;
		}
	}
	return quotient.high ? UINT64_MAX : quotient.low;
}

/* A second opinion from the host compiler's 128-bit type (the kernel build has none). */
static uint64_t compiler_mul_div(uint64_t a, uint64_t b, uint64_t c)
{
	unsigned __int128 product = (unsigned __int128)a * b, quotient;

	if (product == 0)
		return 0;
	if (c == 0)
		return UINT64_MAX;
	quotient = product / c;
	return quotient >> 64 ? UINT64_MAX : (uint64_t)quotient;
}

static uint64_t random_state = 0x9e3779b97f4a7c15ull;

static uint64_t random_u64(void)
{
	return host_random_u64(&random_state);
}

/* Values of every magnitude: a random number cut to a random bit width, sometimes near 2^k. */
static uint64_t random_operand(void)
{
	uint64_t value = random_u64();
	unsigned int width = (unsigned int)(random_u64() % 65);

	value = width == 64 ? value : value & ((1ull << width) - 1);
	switch (random_u64() % 4) {
	case 0:
		return value;
	case 1:
		return width == 64 ? UINT64_MAX - (value & 0xff) : (1ull << width) + (value & 0xf);
	default:
		return value | 1;
	}
}

static const uint64_t edges[] = {
	0,
	1,
	2,
	3,
	0xffffffffull,
	0x100000000ull,
	0x100000001ull,
	0x7fffffffffffffffull,
	0x8000000000000000ull,
	UINT64_MAX - 1,
	UINT64_MAX,
};

#define EDGES (sizeof(edges) / sizeof(edges[0]))

HOST_TEST(pmu_mul_div_matches_references_on_every_edge_triple)
{
	for (unsigned int i = 0; i < EDGES * EDGES * EDGES; i++) {
		uint64_t a = edges[i % EDGES], b = edges[i / EDGES % EDGES];
		uint64_t c = edges[i / EDGES / EDGES];
		uint64_t expected = reference_mul_div(a, b, c);

		host_checkf(expected == compiler_mul_div(a, b, c), "references disagree");
		if (!host_checkf(pmu_mul_div(a, b, c) == expected,
				 "%llx * %llx / %llx: expected %llx, got %llx",
				 (unsigned long long)a, (unsigned long long)b,
				 (unsigned long long)c, (unsigned long long)expected,
				 (unsigned long long)pmu_mul_div(a, b, c)))
			return;
	}
}

HOST_TEST(pmu_mul_div_matches_references_on_random_inputs)
{
	unsigned int saturated = 0, wide = 0;

	for (unsigned int i = 0; i < RANDOM_CASES; i++) {
		uint64_t a = random_operand(), b = random_operand(), c = random_operand();
		uint64_t expected = reference_mul_div(a, b, c);
		uint64_t actual = pmu_mul_div(a, b, c);

		saturated += expected == UINT64_MAX;
		wide += compiler_mul_div(a, b, 1) == UINT64_MAX && expected != UINT64_MAX;
		if (!host_checkf(actual == expected && expected == compiler_mul_div(a, b, c),
				 "case %u: %llx * %llx / %llx: expected %llx, got %llx", i,
				 (unsigned long long)a, (unsigned long long)b,
				 (unsigned long long)c, (unsigned long long)expected,
				 (unsigned long long)actual))
			return;
	}
	/* The inputs reach both the saturating and the 128-bit long-division paths often. */
	host_checkf(saturated > RANDOM_CASES / 100, "only %u saturated", saturated);
	host_checkf(wide > RANDOM_CASES / 100, "only %u 128-bit products fit", wide);
}

HOST_TEST(pmu_mul_div_is_exact_where_a_naive_product_overflows)
{
	/* 2^40 events over 2^30 of 2^34 ticks: the product is 2^74. */
	host_check_eq_u64(1ull << 44, pmu_mul_div(1ull << 40, 1ull << 34, 1ull << 30));
	host_check_eq_u64(UINT64_MAX, pmu_mul_div(UINT64_MAX, UINT64_MAX, UINT64_MAX));
	host_check_eq_u64(UINT64_MAX - 1, pmu_mul_div(UINT64_MAX, UINT64_MAX - 1, UINT64_MAX));
	/* (2^64 - 1)^2 / (2^64 - 2) = 2^64 + 1/(2^64 - 2): one past the top, so it saturates. */
	host_check_eq_u64(UINT64_MAX, pmu_mul_div(UINT64_MAX, UINT64_MAX, UINT64_MAX - 1));
	host_check_eq_u64(0, pmu_mul_div(0, UINT64_MAX, 0));
	host_check_eq_u64(UINT64_MAX, pmu_mul_div(1, 1, 0));
}

HOST_TEST(pmu_scale_follows_its_contract)
{
	/* Never ran: nothing known, 0, whatever the count. */
	host_check_eq_u64(0, pmu_scale(12345, 1000, 0));
	host_check_eq_u64(0, pmu_scale(UINT64_MAX, UINT64_MAX, 0));
	/* Always ran: the count itself. */
	host_check_eq_u64(UINT64_MAX, pmu_scale(UINT64_MAX, 77, 77));
	host_check_eq_u64(0, pmu_scale(0, 10, 5));
	/* Ran a quarter of the time: four times the count, rounded down. */
	host_check_eq_u64(4000, pmu_scale(1000, 4000, 1000));
	host_check_eq_u64(3333, pmu_scale(1000, 10000, 3000));
	/* Saturates when the estimate does not fit. */
	host_check_eq_u64(UINT64_MAX, pmu_scale(1ull << 63, 3, 1));
	/* running > enabled cannot come from pmu/rotate.c; it still gives the exact quotient. */
	host_check_eq_u64(500, pmu_scale(1000, 1, 2));
}

HOST_TEST(pmu_scale_matches_the_reference_on_random_inputs)
{
	for (unsigned int i = 0; i < RANDOM_CASES / 4; i++) {
		uint64_t count = random_operand(), enabled = random_operand();
		uint64_t running = random_u64() % 2
					   ? enabled - (enabled ? random_u64() % enabled : 0)
					   : random_operand();
		uint64_t expected = running ? reference_mul_div(count, enabled, running) : 0;

		if (!host_checkf(pmu_scale(count, enabled, running) == expected,
				 "%llx * %llx / %llx", (unsigned long long)count,
				 (unsigned long long)enabled, (unsigned long long)running))
			return;
	}
}
