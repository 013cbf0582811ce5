/* SPDX-License-Identifier: MIT */
/* Host tests of ds/buffer.c: BTS and PEBS buffer fields, circular and interrupt thresholds. */
#include <stddef.h>
#include <stdint.h>

#include "ds/buffer.h"
#include "tests/host/host_test.h"

#define BASE 0xffff800001000000ull

HOST_TEST(ds_bts_fields_use_whole_records_and_a_threshold_in_records)
{
	struct ds_buffer_fields fields;

	/* 100 bytes hold 4 records of 24: max is at 96, not 100. */
	host_check(ds_bts_fields(BASE, 100, false, 2, &fields));
	host_check_eq_u64(BASE, fields.base);
	host_check_eq_u64(BASE, fields.index);
	host_check_eq_u64(BASE + 96, fields.max);
	host_check_eq_u64(BASE + 48, fields.threshold);
}

HOST_TEST(ds_bts_circular_threshold_lies_past_the_maximum)
{
	struct ds_buffer_fields fields;

	/* SDM: for a circular buffer the threshold must never be reached (one record past max). */
	host_check(ds_bts_fields(BASE, 24 * 8, true, 0, &fields));
	host_check_eq_u64(BASE + 24 * 8, fields.max);
	host_check_eq_u64(BASE + 24 * 9, fields.threshold);
	host_check(fields.threshold > fields.max);
}

HOST_TEST(ds_bts_fields_refuse_impossible_buffers)
{
	struct ds_buffer_fields fields;

	host_check(!ds_bts_fields(BASE, 23, true, 0, &fields)); /* no whole record */
	host_check(!ds_bts_fields(BASE, 24 * 4, false, 0, &fields)); /* no threshold */
	host_check(!ds_bts_fields(BASE, 24 * 4, false, 5, &fields)); /* past the end */
	/* No room left for the records that come while the PMI is pending (SDM, Linux bts.c). */
	host_check(!ds_bts_fields(BASE, 24 * 4, false, 4, &fields));
	host_check(!ds_bts_fields(BASE, 24 * 4, false, 3, &fields));
	host_check(ds_bts_fields(BASE, 24 * 4, false, 2, &fields)); /* two records of room */
	host_check_eq_u64(fields.max - 2 * 24, fields.threshold);
	host_check(!ds_bts_fields(BASE, 24 * 64, false, 61, &fields)); /* 64 / 16 = 4 of room */
	host_check(ds_bts_fields(BASE, 24 * 64, false, 60, &fields));
}

/* A threshold near 2^64 must not wrap past the room check (found by the kernel-API fuzzer). */
HOST_TEST(ds_bts_fields_refuse_a_threshold_that_wraps)
{
	struct ds_buffer_fields fields;

	host_check(!ds_bts_fields(BASE, 24 * 8, false, SIZE_MAX - 1, &fields));
	host_check(!ds_bts_fields(BASE, 24 * 8, false, SIZE_MAX, &fields));
	host_check(!ds_bts_fields(BASE, 24 * 1, false, 1, &fields)); /* less than the room */
}

HOST_TEST(ds_pebs_fields_follow_the_record_size)
{
	struct ds_buffer_fields fields;

	host_check(ds_pebs_fields(BASE, 4096, 200, 1, &fields));
	host_check_eq_u64(BASE + 200 * 20, fields.max); /* 4096 / 200 = 20 whole records */
	host_check_eq_u64(BASE + 200, fields.threshold); /* one record: a PMI per record */
	host_check(!ds_pebs_fields(BASE, 4096, 200, 20, &fields)); /* no room */
	host_check(ds_pebs_fields(BASE, 4096, 200, 18, &fields));
	host_check_eq_u64(fields.max - 2 * 200, fields.threshold);
	host_check(
		ds_pebs_fields(BASE, 200, 200, 1, &fields)); /* a PMI per record: no room needed */
	host_check(!ds_pebs_fields(BASE, 4096, 200, 21, &fields));
	host_check(!ds_pebs_fields(BASE, 4096, 0, 1, &fields));
	host_check(!ds_pebs_fields(BASE, 199, 200, 1, &fields));
}

HOST_TEST(ds_records_in_counts_from_base_to_index)
{
	struct ds_buffer_fields fields = { BASE, BASE + 24 * 5, BASE + 24 * 8, BASE + 24 * 9 };

	host_check_eq_u64(5, ds_records_in(&fields, 24));
	fields.index = BASE;
	host_check_eq_u64(0, ds_records_in(&fields, 24));
}
