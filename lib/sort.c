/* SPDX-License-Identifier: MIT */
/* Heapsort and nearest-rank percentiles. */
#include <stddef.h>
#include <stdint.h>

#include "lib/sort.h"

static void sift_down(uint64_t *values, size_t root, size_t count)
{
	for (;;) {
		size_t child = 2 * root + 1;
		uint64_t swap;

		if (child >= count)
			return;
		if (child + 1 < count && values[child + 1] > values[child])
			child++;
		if (values[root] >= values[child])
			return;
		swap = values[root];
		values[root] = values[child];
		values[child] = swap;
		root = child;
	}
}

void sort_u64(uint64_t *values, size_t count)
{
	for (size_t i = count / 2; i-- > 0;)
		sift_down(values, i, count);
	for (size_t end = count; end > 1; end--) {
		uint64_t largest = values[0];

		values[0] = values[end - 1];
		values[end - 1] = largest;
		sift_down(values, 0, end - 1);
	}
}

uint64_t percentile_u64(const uint64_t *sorted, size_t count, unsigned int percent)
{
	size_t rank;

	if (count == 0)
		return 0;
	rank = (count * percent + 99) / 100; /* ceil(count * percent / 100), 1-based */
	return sorted[rank ? rank - 1 : 0];
}
