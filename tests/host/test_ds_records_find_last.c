/* SPDX-License-Identifier: MIT */
/* Host tests of pebs_find_last() (walking partial PEBS buffers record by record) and
 * pebs_record_samples() (who a record is for). */
#include <stdint.h>
#include <string.h>

#include "ds/records.h"
#include "tests/host/ds_record_bytes.h"
#include "tests/host/host_test.h"

#define ALL_GROUPS_CFG (0xfULL | 7ULL << 24) /* every group, up to 8 LBRs */

/*
 * Four records of four sizes, as after DATA_CFG changes without a drain
 * (docs/hardware-facts.md §4): basic only (32), + meminfo (64), + GPRs + 2 LBRs (256), + XMM
 * (288). The offsets of each.
 */
static size_t build_mixed(uint8_t *buffer, size_t offsets[4])
{
	const struct test_adaptive_layout layouts[4] = {
		test_layout(false, false, false, 0),
		test_layout(true, false, false, 0),
		test_layout(true, true, false, 2),
		test_layout(false, false, true, 0),
	};
	size_t at = 0;

	for (unsigned int i = 0; i < 4; i++) {
		offsets[i] = at;
		at += test_build_adaptive(buffer + at, i, &layouts[i]);
	}
	return at;
}

HOST_TEST(ds_pebs_find_last_walks_mixed_size_adaptive_records)
{
	uint8_t buffer[1024];
	size_t offsets[4];
	size_t used = build_mixed(buffer, offsets);
	size_t count = 0;
	struct pebs_sample s;

	host_check_eq_u64(32 + 64 + 256 + 288, used);
	host_check_eq_u64(offsets[3],
			  pebs_find_last(PEBS_FORMAT_4, buffer, used, ALL_GROUPS_CFG, &count));
	host_check_eq_u64(4, count);
	/* The offset found is a record: its ip is the fourth record's. */
	host_check(pebs_decode(PEBS_FORMAT_4, buffer + offsets[3], used - offsets[3],
			       ALL_GROUPS_CFG, &s, NULL));
	host_check_eq_u64(test_pattern(3, 0x08), s.ip);
	/* Every prefix that ends on a record boundary. */
	for (unsigned int n = 1; n <= 4; n++) {
		size_t end = n < 4 ? offsets[n] : used;

		host_checkf(pebs_find_last(PEBS_FORMAT_5, buffer, end, ALL_GROUPS_CFG, &count) ==
					    offsets[n - 1] &&
				    count == n,
			    "prefix of %u records", n);
	}
}

HOST_TEST(ds_pebs_find_last_skips_a_truncated_last_record)
{
	uint8_t buffer[1024];
	size_t offsets[4];
	size_t used = build_mixed(buffer, offsets);
	size_t count = 0;

	/* Cut the last record anywhere, from its first byte to one byte short. */
	for (size_t end = offsets[3]; end < used; end++) {
		size_t last = pebs_find_last(PEBS_FORMAT_6, buffer, end, ALL_GROUPS_CFG, &count);

		if (!host_checkf(last == offsets[2] && count == 3,
				 "cut at %zu: got offset %zu count %zu", end, last, count))
			return;
	}
}

HOST_TEST(ds_pebs_find_last_finds_nothing_in_an_empty_or_short_buffer)
{
	uint8_t buffer[64];
	struct test_adaptive_layout layout = test_layout(true, false, false, 0);
	size_t count = 99;

	test_build_adaptive(buffer, 0, &layout);
	host_check_eq_u64(SIZE_MAX, pebs_find_last(PEBS_FORMAT_4, buffer, 0, 0xf, &count));
	host_check_eq_u64(0, count);
	host_check_eq_u64(SIZE_MAX, pebs_find_last(PEBS_FORMAT_4, buffer, 7, 0xf, &count));
	host_check_eq_u64(SIZE_MAX, pebs_find_last(PEBS_FORMAT_4, buffer, 63, 0xf, &count));
	host_check_eq_u64(0, count);
	host_check_eq_u64(0, pebs_find_last(PEBS_FORMAT_4, buffer, 64, 0xf, NULL));
	host_check_eq_u64(SIZE_MAX, pebs_find_last(PEBS_FORMAT_3, buffer, 0, 0, &count));
	host_check_eq_u64(SIZE_MAX, pebs_find_last(PEBS_FORMAT_4, NULL, 64, 0xf, &count));
	host_check_eq_u64(SIZE_MAX, pebs_find_last((enum pebs_format)7, buffer, 64, 0xf, &count));
}

HOST_TEST(ds_pebs_find_last_rejects_a_malformed_record_mid_buffer)
{
	uint8_t buffer[1024];
	size_t offsets[4];
	size_t used = build_mixed(buffer, offsets);
	size_t count = 99;

	/* A zero header would otherwise loop forever on a fixed stride of 0. */
	memset(buffer + offsets[2], 0, 8);
	host_check_eq_u64(SIZE_MAX,
			  pebs_find_last(PEBS_FORMAT_4, buffer, used, ALL_GROUPS_CFG, &count));
	host_check_eq_u64(0, count);
	/* A size that disagrees with the record's own groups. */
	build_mixed(buffer, offsets);
	test_put_u64(buffer + offsets[1], 0, test_header(96, 1));
	host_check_eq_u64(SIZE_MAX,
			  pebs_find_last(PEBS_FORMAT_4, buffer, used, ALL_GROUPS_CFG, NULL));
	/* A group data_cfg never enabled: record 2 holds GPRs and LBRs. */
	build_mixed(buffer, offsets);
	host_check_eq_u64(SIZE_MAX, pebs_find_last(PEBS_FORMAT_4, buffer, used, 0x5, NULL));
	/* The same buffer up to record 2 is fine under that data_cfg. */
	host_check_eq_u64(offsets[1],
			  pebs_find_last(PEBS_FORMAT_4, buffer, offsets[2], 0x5, &count));
	host_check_eq_u64(2, count);
}

HOST_TEST(ds_pebs_find_last_steps_fixed_formats_by_their_record_size)
{
	static const size_t sizes[] = { 144, 176, 192, 200 };
	uint8_t buffer[3 * 200 + 100];
	size_t count = 0;

	memset(buffer, 0, sizeof(buffer)); /* content is not checked for fixed formats */
	for (unsigned int format = 0; format < 4; format++) {
		size_t size = sizes[format];

		host_check_eq_u64(2 * size, pebs_find_last(format, buffer, 3 * size, 0, &count));
		host_check_eq_u64(3, count);
		host_check_eq_u64(size, pebs_find_last(format, buffer, 3 * size - 1, 0, &count));
		host_check_eq_u64(2, count);
		host_check_eq_u64(SIZE_MAX, pebs_find_last(format, buffer, size - 1, 0, &count));
		host_check_eq_u64(0, count);
	}
}

/* Linux intel_pmu_drain_pebs_nhm(): which counters a record's status gives a sample to. */
HOST_TEST(ds_pebs_record_samples_follow_linuxs_drain)
{
	unsigned int dropped = 0;

	/* From format 3, each enabled counter the status names gets the record. */
	host_check_eq_u64(2, pebs_record_samples(PEBS_FORMAT_3, true, 0x3, 0x3, &dropped));
	host_check_eq_u64(2, pebs_record_samples(PEBS_FORMAT_4, true, 0x7, 0x5, &dropped));
	host_check_eq_u64(1, pebs_record_samples(PEBS_FORMAT_4, true, 0x1, 0xf, &dropped));
	host_check_eq_u64(0, dropped);
	/* Before it, two at once is a collision, dropped. */
	host_check_eq_u64(0, pebs_record_samples(PEBS_FORMAT_1, true, 0x3, 0x3, &dropped));
	host_check_eq_u64(1, dropped);
	host_check_eq_u64(1, pebs_record_samples(PEBS_FORMAT_2, true, 0x2, 0x3, &dropped));
	/* A status of 0 is the one enabled counter's; with two enabled, nobody's. */
	host_check_eq_u64(1, pebs_record_samples(PEBS_FORMAT_4, true, 0, 0x1, &dropped));
	host_check_eq_u64(1, dropped);
	host_check_eq_u64(0, pebs_record_samples(PEBS_FORMAT_4, true, 0, 0x3, &dropped));
	host_check_eq_u64(2, dropped);
	/* A counter PEBS is not enabled on is no sample. */
	host_check_eq_u64(0, pebs_record_samples(PEBS_FORMAT_4, true, 0x4, 0x3, &dropped));
	host_check_eq_u64(3, dropped);
	/* Format 0 has no status: its one PEBS counter's. */
	host_check_eq_u64(1, pebs_record_samples(PEBS_FORMAT_0, false, 0, 0x1, &dropped));
	host_check_eq_u64(3, dropped);
}
