/* SPDX-License-Identifier: MIT */
/* Host tests of ds/records.c: adaptive PEBS records (formats 4-6) and their rejection rules. */
#include <stdint.h>

#include "ds/records.h"
#include "tests/host/ds_record_bytes.h"
#include "tests/host/host_test.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_RECORD (TEST_BASIC_SIZE + TEST_MEMINFO_SIZE + TEST_GPRS_SIZE + TEST_XMM_SIZE + 32 * 24)

/* perf_event.h pebs_gprs: flags, ip, then ax, cx, dx, bx, sp, bp, si, di, r8-r15. */
static const size_t adaptive_gpr_offset[PEBS_GPR_COUNT] = {
	[PEBS_GPR_RAX] = 0x10, [PEBS_GPR_RCX] = 0x18, [PEBS_GPR_RDX] = 0x20, [PEBS_GPR_RBX] = 0x28,
	[PEBS_GPR_RSP] = 0x30, [PEBS_GPR_RBP] = 0x38, [PEBS_GPR_RSI] = 0x40, [PEBS_GPR_RDI] = 0x48,
	[PEBS_GPR_R8] = 0x50,  [PEBS_GPR_R9] = 0x58,  [PEBS_GPR_R10] = 0x60, [PEBS_GPR_R11] = 0x68,
	[PEBS_GPR_R12] = 0x70, [PEBS_GPR_R13] = 0x78, [PEBS_GPR_R14] = 0x80, [PEBS_GPR_R15] = 0x88,
};

HOST_TEST(ds_pebs_data_cfg_bits_match_the_sdm)
{
	host_check_eq_u64(1ULL << 0, PEBS_DATA_CFG_MEMINFO);
	host_check_eq_u64(1ULL << 1, PEBS_DATA_CFG_GPRS);
	host_check_eq_u64(1ULL << 2, PEBS_DATA_CFG_XMMS);
	host_check_eq_u64(1ULL << 3, PEBS_DATA_CFG_LBRS);
	host_check_eq_u64((1ULL << 3) | (31ULL << 24), pebs_data_cfg_lbrs(32));
	host_check_eq_u64((1ULL << 3), pebs_data_cfg_lbrs(1));
	host_check_eq_u64((1ULL << 3) | (255ULL << 24), pebs_data_cfg_lbrs(256));
	host_check_eq_u64(0, pebs_data_cfg_lbrs(0));
	host_check_eq_u64(0, pebs_data_cfg_lbrs(257));
	host_check_eq_u64(32, pebs_data_cfg_lbr_count(pebs_data_cfg_lbrs(32)));
	host_check_eq_u64(0, pebs_data_cfg_lbr_count(31ULL << 24)); /* count without LBRS */
	host_check_eq_u64(32 + 32 + 144 + 256 + 3 * 24,
			  pebs_adaptive_record_size(PEBS_DATA_CFG_MEMINFO | PEBS_DATA_CFG_GPRS |
						    PEBS_DATA_CFG_XMMS | pebs_data_cfg_lbrs(3)));
	host_check_eq_u64(0, pebs_adaptive_record_size(1ULL << 4)); /* unknown group */
}

/* Decode one record of layout l under data_cfg and compare every field at its offset. */
static void check_adaptive(enum pebs_format format, struct test_adaptive_layout l,
			   uint64_t data_cfg)
{
	uint8_t bytes[5 + MAX_RECORD];
	uint8_t *record = bytes + 5; /* unaligned on purpose */
	struct pebs_sample s;
	size_t size = 0;
	struct pebs_lbr_entry lbr;
	uint64_t xmm[2];

	test_build_adaptive(record, 40 + format, &l);
	if (!host_checkf(pebs_decode(format, record, l.size, data_cfg, &s, &size),
			 "format %d groups 0x%llx did not decode", format,
			 (unsigned long long)test_groups(&l)))
		return;
	host_check_eq_u64(l.size, size);
	/* Basic group: format_size 0x00, ip 0x08, applicable_counters 0x10, tsc 0x18. */
	host_check_eq_u64(test_pattern(40 + format, 0x08), s.ip);
	host_check_eq_u64(test_pattern(40 + format, 0x08), s.eventing_ip);
	host_check_eq_u64(test_pattern(40 + format, 0x10), s.status);
	host_check_eq_u64(test_pattern(40 + format, 0x18), s.tsc);
	host_check(s.has_eventing_ip && s.has_status && s.has_tsc);
	host_check_eq_u64(l.meminfo, s.has_memory);
	host_check_eq_u64(l.meminfo, s.has_tsx_tuning);
	host_check_eq_u64(l.gprs, s.has_gprs);
	host_check_eq_u64(l.xmm, s.has_xmm);
	host_check_eq_u64(l.lbrs != 0, s.has_lbrs);
	if (l.meminfo) { /* address, aux, latency, tsx_tuning */
		host_check_eq_u64(test_pattern(40 + format, l.meminfo_at + 0x00), s.data_address);
		host_check_eq_u64(test_pattern(40 + format, l.meminfo_at + 0x08), s.data_source);
		host_check_eq_u64(test_pattern(40 + format, l.meminfo_at + 0x10), s.latency);
		host_check_eq_u64(test_pattern(40 + format, l.meminfo_at + 0x18), s.tsx_tuning);
	}
	if (l.gprs) {
		host_check_eq_u64(test_pattern(40 + format, l.gprs_at + 0x00), s.rflags);
		host_check_eq_u64(test_pattern(40 + format, l.gprs_at + 0x08), s.register_ip);
		for (unsigned int reg = 0; reg < PEBS_GPR_COUNT; reg++)
			host_checkf(s.gprs[reg] ==
					    test_pattern(40 + format,
							 l.gprs_at + adaptive_gpr_offset[reg]),
				    "gpr %u: got 0x%llx", reg, (unsigned long long)s.gprs[reg]);
	}
	for (unsigned int reg = 0; reg < 16; reg++) {
		bool present = pebs_xmm_register(record, &s, reg, xmm);

		host_check_eq_u64(l.xmm, present);
		if (present) {
			host_check_eq_u64(test_pattern(40 + format, l.xmm_at + 16 * reg), xmm[0]);
			host_check_eq_u64(test_pattern(40 + format, l.xmm_at + 16 * reg + 8),
					  xmm[1]);
		}
	}
	host_check(!pebs_xmm_register(record, &s, 16, xmm));
	host_check_eq_u64(l.lbrs, s.has_lbrs ? s.lbr_count : 0);
	for (unsigned int i = 0; i < l.lbrs; i++) {
		size_t at = l.lbr_at + 24 * i; /* from, to, info */

		if (!host_check(pebs_lbr_entry(record, &s, i, &lbr)))
			return;
		host_check_eq_u64(test_pattern(40 + format, at + 0x00), lbr.from);
		host_check_eq_u64(test_pattern(40 + format, at + 0x08), lbr.to);
		host_check_eq_u64(test_pattern(40 + format, at + 0x10), lbr.info);
	}
	host_check(!pebs_lbr_entry(record, &s, l.lbrs, &lbr));
}

static const struct {
	bool meminfo, gprs, xmm;
	unsigned int lbrs;
} adaptive_cases[] = {
	{ false, false, false, 0 }, { true, false, false, 0 },	{ false, true, false, 0 },
	{ false, false, true, 0 },  { false, false, false, 1 }, { true, true, false, 0 },
	{ true, false, false, 3 },  { false, true, true, 8 },	{ true, true, true, 32 },
};

HOST_TEST(ds_pebs_adaptive_decodes_every_group_combination_for_formats_4_to_6)
{
	for (unsigned int format = 4; format <= 6; format++) {
		for (unsigned int i = 0; i < ARRAY_SIZE(adaptive_cases); i++) {
			struct test_adaptive_layout l =
				test_layout(adaptive_cases[i].meminfo, adaptive_cases[i].gprs,
					    adaptive_cases[i].xmm, adaptive_cases[i].lbrs);

			/* Exactly the record's groups, then every group with the most LBRs. */
			check_adaptive(format, l, test_groups(&l));
			check_adaptive(format, l, 0xf | 255ULL << 24);
		}
	}
}

HOST_TEST(ds_pebs_adaptive_ignores_retire_latency_bits_47_32)
{
	uint8_t record[TEST_BASIC_SIZE];
	struct pebs_sample s;

	test_fill(record, 1, sizeof(record));
	test_put_u64(record, 0, test_header(32, 0) | 0xbeefULL << 32);
	host_check(pebs_decode(PEBS_FORMAT_6, record, sizeof(record), 0, &s, NULL));
}

/* Each rule of pebs_decode() in records.h, broken one at a time. */
HOST_TEST(ds_pebs_adaptive_rejects_bad_headers)
{
	const struct {
		const char *why;
		uint64_t header;
		size_t available;
		uint64_t data_cfg;
	} cases[] = {
		{ "header cut short", test_header(32, 0), 7, 0 },
		{ "size 0", test_header(0, 0), 64, 0 },
		{ "size not a multiple of 8", test_header(36, 0), 64, 0 },
		{ "size below the basic group", test_header(24, 0), 64, 0 },
		{ "unknown group bit 4", test_header(32, 1 << 4), 64, 0x1f },
		{ "LBR count without LBRS", test_header(32, 3ULL << 24), 64, ~0ULL },
		{ "meminfo not in data_cfg", test_header(64, 1), 64, 2 },
		{ "more LBRs than data_cfg", test_header(32 + 48, 8 | 1ULL << 24), 80, 8 },
		{ "size too small for groups", test_header(32, 1), 64, 1 },
		{ "size too large for groups", test_header(72, 1), 72, 1 },
		{ "record past available", test_header(64, 1), 63, 1 },
	};
	uint8_t record[128];
	struct pebs_sample s;
	size_t size;

	for (unsigned int i = 0; i < ARRAY_SIZE(cases); i++) {
		test_fill(record, i, sizeof(record));
		test_put_u64(record, 0, cases[i].header);
		for (unsigned int format = 4; format <= 6; format++)
			host_checkf(!pebs_decode(format, record, cases[i].available,
						 cases[i].data_cfg, &s, &size),
				    "format %u accepted: %s", format, cases[i].why);
	}
	/* The last case's record is fine once it is all there. */
	host_check(pebs_decode(PEBS_FORMAT_4, record, 64, 1, &s, &size));
	host_check_eq_u64(64, size);
	host_check(!pebs_decode((enum pebs_format)7, record, 64, 1, &s, &size));
}
