/* SPDX-License-Identifier: MIT */
/* Host tests of ds/records.c: BTS records, PEBS formats 0-3, and the DS reset-value slots. */
#include <stdint.h>
#include <string.h>

#include "ds/records.h"
#include "tests/host/ds_record_bytes.h"
#include "tests/host/host_test.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

HOST_TEST(ds_bts_decode_reads_from_to_and_flags_at_their_offsets)
{
	uint8_t bytes[1 + 24];
	uint8_t *record = bytes + 1; /* records need not be aligned */
	struct bts_sample sample;

	host_check_eq_u64(24, sizeof(struct bts_record));
	test_put_u64(record, 0x00, 0xffffffff81001234ULL); /* from */
	test_put_u64(record, 0x08, 0xffffffff81005678ULL); /* to */
	test_put_u64(record, 0x10, 1ULL << 4); /* flags: predicted */
	if (!host_check(bts_decode(record, 24, &sample)))
		return;
	host_check_eq_u64(0xffffffff81001234ULL, sample.from);
	host_check_eq_u64(0xffffffff81005678ULL, sample.to);
	host_check_eq_u64(1ULL << 4, sample.flags);
	host_check(sample.predicted);
}

HOST_TEST(ds_bts_predicted_is_bit_4_only)
{
	uint8_t record[24];
	struct bts_sample sample;

	test_fill(record, 1, sizeof(record));
	test_put_u64(record, 0x10, ~(1ULL << 4)); /* every reserved bit set, predicted clear */
	host_check(bts_decode(record, sizeof(record), &sample));
	host_check(!sample.predicted);
	host_check_eq_u64(~(1ULL << 4), sample.flags);
	host_check_eq_u64(BTS_FLAGS_PREDICTED, 1ULL << 4);
}

HOST_TEST(ds_bts_decode_rejects_short_records_and_null)
{
	uint8_t record[24] = { 0 };
	struct bts_sample sample;

	host_check(!bts_decode(record, 23, &sample));
	host_check(!bts_decode(record, 0, &sample));
	host_check(!bts_decode(NULL, 24, &sample));
	host_check(!bts_decode(record, 24, NULL));
}

HOST_TEST(ds_pebs_record_size_is_fixed_for_formats_0_to_3_only)
{
	static const size_t sizes[] = { 144, 176, 192, 200, 0, 0, 0, 0 };

	for (unsigned int format = 0; format < ARRAY_SIZE(sizes); format++)
		host_checkf(pebs_record_size(format) == sizes[format], "format %u: %zu, got %zu",
			    format, sizes[format], pebs_record_size(format));
	for (unsigned int format = 0; format <= 7; format++)
		host_checkf(pebs_format_is_adaptive(format) == (format >= 4 && format <= 6),
			    "format %u adaptive?", format);
}

/* ds.c pebs_record_core: flags, ip, ax, bx, cx, dx, si, di, bp, sp, r8-r15. */
static const size_t fixed_gpr_offset[PEBS_GPR_COUNT] = {
	[PEBS_GPR_RAX] = 0x10, [PEBS_GPR_RBX] = 0x18, [PEBS_GPR_RCX] = 0x20, [PEBS_GPR_RDX] = 0x28,
	[PEBS_GPR_RSI] = 0x30, [PEBS_GPR_RDI] = 0x38, [PEBS_GPR_RBP] = 0x40, [PEBS_GPR_RSP] = 0x48,
	[PEBS_GPR_R8] = 0x50,  [PEBS_GPR_R9] = 0x58,  [PEBS_GPR_R10] = 0x60, [PEBS_GPR_R11] = 0x68,
	[PEBS_GPR_R12] = 0x70, [PEBS_GPR_R13] = 0x78, [PEBS_GPR_R14] = 0x80, [PEBS_GPR_R15] = 0x88,
};

/*
 * Build a record of `format` with a distinct value in every qword, decode it, and compare each
 * field with the value at its documented offset: nhm adds status 0x90, dla 0x98, dse 0xa0,
 * lat 0xa8; hsw adds real_ip 0xb0, tsx_tuning 0xb8; skl adds tsc 0xc0.
 */
static void check_fixed_format(enum pebs_format format, size_t size)
{
	uint8_t bytes[3 + 200];
	uint8_t *record = bytes + 3;
	struct pebs_sample s;
	size_t record_size = 0;

	test_fill(record, format, size);
	if (!host_checkf(pebs_decode(format, record, size, 0, &s, &record_size),
			 "format %d did not decode", format))
		return;
	host_check_eq_u64(size, record_size);
	host_check_eq_u64(test_pattern(format, 0x00), s.rflags);
	host_check_eq_u64(test_pattern(format, 0x08), s.ip);
	host_check_eq_u64(test_pattern(format, 0x08), s.register_ip);
	host_check(s.has_gprs);
	for (unsigned int reg = 0; reg < PEBS_GPR_COUNT; reg++)
		host_checkf(s.gprs[reg] == test_pattern(format, fixed_gpr_offset[reg]),
			    "format %d gpr %u: got 0x%llx", format, reg,
			    (unsigned long long)s.gprs[reg]);
	host_check_eq_u64(format >= 1, s.has_status);
	host_check_eq_u64(format >= 1, s.has_memory);
	host_check_eq_u64(format >= 2, s.has_eventing_ip);
	host_check_eq_u64(format >= 2, s.has_tsx_tuning);
	host_check_eq_u64(format >= 3, s.has_tsc);
	host_check(!s.has_xmm && !s.has_lbrs);
	if (format >= 1) {
		host_check_eq_u64(test_pattern(format, 0x90), s.status);
		host_check_eq_u64(test_pattern(format, 0x98), s.data_address);
		host_check_eq_u64(test_pattern(format, 0xa0), s.data_source);
		host_check_eq_u64(test_pattern(format, 0xa8), s.latency);
	}
	if (format >= 2) {
		host_check_eq_u64(test_pattern(format, 0xb0), s.eventing_ip);
		host_check_eq_u64(test_pattern(format, 0xb8), s.tsx_tuning);
	}
	if (format >= 3)
		host_check_eq_u64(test_pattern(format, 0xc0), s.tsc);
	/* One byte short of a record is not a record. */
	host_checkf(!pebs_decode(format, record, size - 1, 0, &s, &record_size),
		    "format %d decoded a short record", format);
}

HOST_TEST(ds_pebs_format_0_core_decodes_every_field)
{
	check_fixed_format(PEBS_FORMAT_0, 144);
}

HOST_TEST(ds_pebs_format_1_nehalem_decodes_every_field)
{
	check_fixed_format(PEBS_FORMAT_1, 176);
}

HOST_TEST(ds_pebs_format_2_haswell_decodes_every_field)
{
	check_fixed_format(PEBS_FORMAT_2, 192);
}

HOST_TEST(ds_pebs_format_3_skylake_decodes_every_field)
{
	check_fixed_format(PEBS_FORMAT_3, 200);
}

HOST_TEST(ds_pebs_fixed_formats_ignore_data_cfg_and_clear_stale_output)
{
	uint8_t record[200];
	struct pebs_sample s;

	memset(&s, 0xff, sizeof(s));
	test_fill(record, 9, sizeof(record));
	host_check(pebs_decode(PEBS_FORMAT_0, record, sizeof(record), ~0ULL, &s, NULL));
	host_check(!s.has_status && !s.has_memory && !s.has_tsc && !s.has_eventing_ip);
	host_check_eq_u64(0, s.status);
	host_check_eq_u64(0, s.tsc);
}

HOST_TEST(ds_pebs_decode_rejects_unknown_formats_and_null)
{
	uint8_t record[200] = { 0 };
	struct pebs_sample s;

	host_check(!pebs_decode((enum pebs_format)7, record, sizeof(record), 0, &s, NULL));
	host_check(!pebs_decode((enum pebs_format) - 1, record, sizeof(record), 0, &s, NULL));
	host_check(!pebs_decode(PEBS_FORMAT_3, NULL, sizeof(record), 0, &s, NULL));
	host_check(!pebs_decode(PEBS_FORMAT_3, record, sizeof(record), 0, NULL, NULL));
}

/*
 * docs/hardware-facts.md §2: GP i -> i; fixed i -> 8 + i before format 5, 32 + i from
 * format 5 on.
 */
HOST_TEST(ds_pebs_reset_slot_follows_the_format_layout)
{
	for (unsigned int format = 0; format <= 6; format++) {
		unsigned int gp = format >= 5 ? 32 : 8, fixed = format >= 5 ? 16 : 4;

		for (unsigned int i = 0; i < gp; i++)
			host_checkf(pebs_reset_slot(format, false, i) == i, "fmt %u gp %u: got %u",
				    format, i, pebs_reset_slot(format, false, i));
		for (unsigned int i = 0; i < fixed; i++)
			host_checkf(pebs_reset_slot(format, true, i) == gp + i,
				    "fmt %u fixed %u: got %u", format, i,
				    pebs_reset_slot(format, true, i));
		host_check_eq_u64(PEBS_RESET_SLOT_NONE, pebs_reset_slot(format, false, gp));
		host_check_eq_u64(PEBS_RESET_SLOT_NONE, pebs_reset_slot(format, true, fixed));
	}
	host_check_eq_u64(8, pebs_reset_slot(PEBS_FORMAT_4, true, 0));
	host_check_eq_u64(11, pebs_reset_slot(PEBS_FORMAT_4, true, 3));
	host_check_eq_u64(32, pebs_reset_slot(PEBS_FORMAT_5, true, 0));
	host_check_eq_u64(47, pebs_reset_slot(PEBS_FORMAT_5, true, 15));
	host_check_eq_u64(47, PEBS_RESET_SLOTS_MAX - 1);
	host_check_eq_u64(PEBS_RESET_SLOT_NONE, pebs_reset_slot((enum pebs_format)7, false, 0));
}
