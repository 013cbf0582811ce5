/* SPDX-License-Identifier: MIT */
/* Sorting and percentiles of samples, for the benchmarks. */
#ifndef LIB_SORT_H
#define LIB_SORT_H

#include <stddef.h>
#include <stdint.h>

/* Ascending, in place, O(n log n) with no recursion (heapsort). */
void sort_u64(uint64_t *values, size_t count);

/* The nearest-rank percentile (1-100) of sorted values; 0 for an empty array. */
uint64_t percentile_u64(const uint64_t *sorted, size_t count, unsigned int percent);

#endif
