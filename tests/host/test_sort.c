/* SPDX-License-Identifier: MIT */
/* Host tests of lib/sort.c: heapsort against qsort, and nearest-rank percentiles. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/sort.h"
#include "tests/host/host_test.h"

#define SORT_MAX 5000
#define SENTINEL 0x5e5e5e5e5e5e5e5eull

static uint64_t random_state = 0x9e3779b97f4a7c15ull;

static uint64_t random_u64(void)
{
	return host_random_u64(&random_state);
}

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/*
 * Sort values[0..count) with sort_u64 and with qsort and compare; the element after the end
 * must be left alone. Returns whether they agreed.
 */
static bool sort_matches_qsort(const uint64_t *values, size_t count, const char *what)
{
	static uint64_t actual[SORT_MAX + 1], expected[SORT_MAX];

	memcpy(actual, values, count * sizeof(*values));
	memcpy(expected, values, count * sizeof(*values));
	actual[count] = SENTINEL;
	sort_u64(actual, count);
	qsort(expected, count, sizeof(*expected), compare_u64);
	return host_checkf(memcmp(actual, expected, count * sizeof(*values)) == 0 &&
				   actual[count] == SENTINEL,
			   "%s, count %zu: sort_u64 disagrees with qsort", what, count);
}

HOST_TEST(sort_matches_qsort_on_random_arrays)
{
	static uint64_t values[SORT_MAX];
	/* Value ranges: many duplicates, a few, none, and the full 64 bits (above INT64_MAX). */
	static const uint64_t moduli[] = { 2, 10, 1000, 0 };

	for (size_t m = 0; m < sizeof(moduli) / sizeof(moduli[0]); m++) {
		for (size_t count = 0; count <= 300; count++) {
			for (size_t i = 0; i < count; i++)
				values[i] = moduli[m] ? random_u64() % moduli[m] : random_u64();
			if (!sort_matches_qsort(values, count, "random"))
				return;
		}
		for (size_t count = 1000; count <= SORT_MAX; count += 1000 + 1) {
			for (size_t i = 0; i < count; i++)
				values[i] = moduli[m] ? random_u64() % moduli[m] : random_u64();
			if (!sort_matches_qsort(values, count, "random, large"))
				return;
		}
	}
}

HOST_TEST(sort_handles_empty_single_equal_sorted_and_reversed_arrays)
{
	static uint64_t values[SORT_MAX];

	host_check(sort_matches_qsort(values, 0, "empty"));
	values[0] = UINT64_MAX;
	host_check(sort_matches_qsort(values, 1, "one element"));
	for (size_t count = 2; count <= 1025; count = count * 2 + 1) {
		for (size_t i = 0; i < count; i++)
			values[i] = 42;
		host_check(sort_matches_qsort(values, count, "all equal"));
		for (size_t i = 0; i < count; i++)
			values[i] = i;
		host_check(sort_matches_qsort(values, count, "sorted"));
		for (size_t i = 0; i < count; i++)
			values[i] = count - i;
		host_check(sort_matches_qsort(values, count, "reversed"));
		for (size_t i = 0; i < count; i++)
			values[i] = i % 2 ? UINT64_MAX - i : i;
		host_check(sort_matches_qsort(values, count, "extremes interleaved"));
	}
}

HOST_TEST(sort_of_nothing_writes_nothing)
{
	uint64_t value = SENTINEL;

	sort_u64(&value, 0);
	host_check_eq_u64(SENTINEL, value);
}

HOST_TEST(sort_orders_a_small_array_in_place)
{
	uint64_t values[] = { 5, 3, UINT64_MAX, 0, 3, 1ull << 63, 9 };
	const uint64_t sorted[] = { 0, 3, 3, 5, 9, 1ull << 63, UINT64_MAX };

	sort_u64(values, sizeof(values) / sizeof(values[0]));
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
		host_checkf(values[i] == sorted[i], "values[%zu]: expected %llu, got %llu", i,
			    (unsigned long long)sorted[i], (unsigned long long)values[i]);
}

HOST_TEST(percentile_is_the_nearest_rank)
{
	uint64_t one_to_ten[10], one_to_hundred[100], one_to_thousand[1000];

	for (size_t i = 0; i < 10; i++)
		one_to_ten[i] = i + 1;
	for (size_t i = 0; i < 100; i++)
		one_to_hundred[i] = i + 1;
	for (size_t i = 0; i < 1000; i++)
		one_to_thousand[i] = i + 1;

	host_check_eq_u64(5, percentile_u64(one_to_ten, 10, 50));
	host_check_eq_u64(1, percentile_u64(one_to_ten, 10, 1));
	host_check_eq_u64(1, percentile_u64(one_to_ten, 10, 10));
	host_check_eq_u64(2, percentile_u64(one_to_ten, 10, 11)); /* rank ceil(1.1) = 2 */
	host_check_eq_u64(9, percentile_u64(one_to_ten, 10, 90));
	host_check_eq_u64(10, percentile_u64(one_to_ten, 10, 91));
	host_check_eq_u64(10, percentile_u64(one_to_ten, 10, 100));

	host_check_eq_u64(1, percentile_u64(one_to_hundred, 100, 1));
	host_check_eq_u64(50, percentile_u64(one_to_hundred, 100, 50));
	host_check_eq_u64(99, percentile_u64(one_to_hundred, 100, 99));
	host_check_eq_u64(100, percentile_u64(one_to_hundred, 100, 100));

	host_check_eq_u64(10, percentile_u64(one_to_thousand, 1000, 1));
	host_check_eq_u64(990, percentile_u64(one_to_thousand, 1000, 99));
	host_check_eq_u64(1000, percentile_u64(one_to_thousand, 1000, 100));
}

HOST_TEST(percentile_of_one_or_two_values)
{
	const uint64_t one[] = { 77 };
	const uint64_t two[] = { 10, 20 };

	host_check_eq_u64(77, percentile_u64(one, 1, 1));
	host_check_eq_u64(77, percentile_u64(one, 1, 50));
	host_check_eq_u64(77, percentile_u64(one, 1, 100));
	host_check_eq_u64(10, percentile_u64(two, 2, 1));
	host_check_eq_u64(10, percentile_u64(two, 2, 50));
	host_check_eq_u64(20, percentile_u64(two, 2, 51));
	host_check_eq_u64(20, percentile_u64(two, 2, 100));
}

HOST_TEST(percentile_of_no_values_is_zero)
{
	const uint64_t not_a_sample[] = { 1234 };

	host_check_eq_u64(0, percentile_u64(not_a_sample, 0, 50));
	host_check_eq_u64(0, percentile_u64(not_a_sample, 0, 100));
	host_check_eq_u64(0, percentile_u64(NULL, 0, 99));
}
