/* SPDX-License-Identifier: MIT */
/* Host tests of ds/arch_pebs_records.c: typed bytes, and every record shape the model writes. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ds/arch_pebs_records.h"
#include "emulator/arch_pebs_record.h"
#include "tests/host/host_test.h"

#define BIT(n) (1ull << (n))

static void put64(uint8_t *record, size_t at, uint64_t value)
{
	for (unsigned int i = 0; i < 8; i++)
		record[at + i] = (uint8_t)(value >> (8 * i));
}

/*
 * Typed from struct arch_pebs_header/_basic/_gprs/_cntr_header (Linux perf_event.h), not from
 * arch/x86/arch-pebs.h: header (16), basic (48) with retire latency 0x123 valid, GPR (160),
 * counters (16 + GP 1 and fixed 2 = 2 values): 256 bytes, one fragment.
 */
HOST_TEST(ds_arch_pebs_decodes_typed_bytes)
{
	uint8_t record[256] = { 0 };
	struct arch_pebs_sample s;

	put64(record, 0, 256 | BIT(63) | BIT(61) | BIT(36) | BIT(37));
	put64(record, 16, 0xffffffff80001234ull); /* ip */
	put64(record, 24, BIT(1)); /* applicable */
	put64(record, 32, 0x99); /* tsc */
	put64(record, 40, 0x123 | BIT(16)); /* retire latency, valid */
	put64(record, 64, 0x246); /* gprs.flags */
	put64(record, 80, 0xaaaa); /* gprs.ax */
	put64(record, 208, 0x5555); /* gprs.ssp */
	put64(record, 224, BIT(1) | (BIT(2) << 32)); /* cntr: GP 1, fixed 2 */
	put64(record, 240, 0x1111);
	put64(record, 248, 0x2222);
	host_check_str("decoded", arch_pebs_decode_name(arch_pebs_decode(record, 256, &s)));
	host_check_eq_u64(0xffffffff80001234ull, s.ip);
	host_check_eq_u64(BIT(1), s.applicable_counters);
	host_check_eq_u64(0x99, s.tsc);
	host_check_eq_u64(0x123, s.retire_latency);
	host_check_eq_u64(BIT(63) | BIT(61) | BIT(36) | BIT(37), s.groups);
	host_check_eq_u64(1, s.fragments);
	host_check_eq_u64(256, s.bytes);
	host_check(s.gprs == record + 64 && s.aux == NULL && s.xmm == NULL && s.lbr == NULL);
	host_check_eq_u64(0xaaaa, *(const uint64_t *)(s.gprs + ARCH_PEBS_GPRS_AX));
	host_check_eq_u64(0x5555, *(const uint64_t *)(s.gprs + ARCH_PEBS_GPRS_SSP));
	host_check_eq_u64(BIT(1), s.counters_gp);
	host_check_eq_u64(BIT(2), s.counters_fixed);
	host_check(s.counter_values == record + 240);
	/* Without the valid bit the retire latency is 0. */
	put64(record, 40, 0x123);
	arch_pebs_decode(record, 256, &s);
	host_check_eq_u64(0, s.retire_latency);
}

HOST_TEST(ds_arch_pebs_refuses_what_it_cannot_walk)
{
	uint8_t record[128] = { 0 };
	struct arch_pebs_sample s;

	/* A size below the header: the walk would not move. */
	host_check_eq_u64(ARCH_PEBS_NO_SIZE, arch_pebs_decode(record, 128, &s));
	/* A fragment longer than what was written. */
	put64(record, 0, 112 | BIT(63));
	host_check_eq_u64(ARCH_PEBS_TRUNCATED, arch_pebs_decode(record, 96, &s));
	/* Fewer than 16 bytes left for a header. */
	host_check_eq_u64(ARCH_PEBS_TRUNCATED, arch_pebs_decode(record, 8, &s));
	/* Groups that need more than the fragment's size: basic (48) and GPR (160) in 64. */
	put64(record, 0, 64 | BIT(63) | BIT(61));
	host_check_eq_u64(ARCH_PEBS_GROUPS_OVERRUN, arch_pebs_decode(record, 128, &s));
	/* A counter group naming 3 counters with room for 2 values (16 + 48 + 16 + 16). */
	memset(record, 0, sizeof(record));
	put64(record, 0, 96 | BIT(63) | BIT(36));
	put64(record, 64, 0x7);
	host_check_eq_u64(ARCH_PEBS_GROUPS_OVERRUN, arch_pebs_decode(record, 128, &s));
	/* Perf metrics (3 in the third dword) add two values: 0x1 and metrics need 3. */
	put64(record, 64, 0x1);
	put64(record, 72, 3);
	host_check_eq_u64(ARCH_PEBS_GROUPS_OVERRUN, arch_pebs_decode(record, 128, &s));
	put64(record, 72, 0);
	host_check_eq_u64(ARCH_PEBS_DECODED, arch_pebs_decode(record, 128, &s));
	/* A first fragment without the basic group: its size is what to skip (Linux). */
	put64(record, 0, 80 | BIT(62));
	host_check_eq_u64(ARCH_PEBS_NO_BASIC, arch_pebs_decode(record, 128, &s));
	host_check_eq_u64(80, s.bytes);
	/* CONT on the last fragment written: the next header is missing. */
	put64(record, 0, 64 | BIT(63) | BIT(31));
	host_check_eq_u64(ARCH_PEBS_TRUNCATED, arch_pebs_decode(record, 64, &s));
}

/* Variable LBR (code 3): the entries the LBR header's depth says. */
HOST_TEST(ds_arch_pebs_variable_lbr_takes_the_headers_depth)
{
	uint8_t record[16 + 48 + 48 + 3 * 24] = { 0 };
	struct arch_pebs_sample s;

	put64(record, 0, sizeof(record) | BIT(63) | BIT(41) | BIT(40));
	put64(record, 64 + 16, 3); /* depth */
	host_check_eq_u64(ARCH_PEBS_DECODED, arch_pebs_decode(record, sizeof(record), &s));
	host_check_eq_u64(3, s.lbr_entries);
	host_check(s.lbr == record + 64 + 48);
	put64(record, 64 + 16, 4);
	host_check_eq_u64(ARCH_PEBS_GROUPS_OVERRUN, arch_pebs_decode(record, sizeof(record), &s));
}

/*
 * Every record the model's writer (emulator/arch_pebs_record.c) makes, each group alone and
 * all together, whole, one fragment a group, and with null fragments: the decoder finds what
 * was written, in the fragments counted here.
 */
HOST_TEST(ds_arch_pebs_decodes_every_shape_the_model_writes)
{
	static const uint64_t groups[] = {
		0,
		BIT(62),
		BIT(61),
		BIT(49),
		BIT(40),
		BIT(41),
		BIT(41) | BIT(40),
		BIT(36),
		BIT(37),
		BIT(36) | BIT(37),
		BIT(62) | BIT(61) | BIT(49) | BIT(40) | BIT(36) | BIT(37),
	};
	static uint8_t out[4096];

	for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++) {
		for (unsigned int split = ARCH_PEBS_SPLIT_NONE;
		     split <= ARCH_PEBS_SPLIT_GROUPS_NULL; split++) {
			struct arch_pebs_assist a = {
				.cfg_c = BIT(63) | BIT(35) | groups[g],
				.applicable_counters = BIT(3),
				.eventing_ip = 0xffffffff80102030ull,
				.tsc = 77,
				.state = { .rax = 0xabc },
				.gp_allowed = 0x9,
				.fixed_allowed = 0x2,
				.gp = { 10, 11, 12, 13 },
				.fixed = { 20, 21 },
				.split = (enum arch_pebs_split)split,
			};
			size_t bytes = arch_pebs_record_write(&a, out, sizeof(out));
			unsigned int others = (unsigned int)__builtin_popcountll(
				groups[g] & (BIT(62) | BIT(61) | BIT(49)));
			struct arch_pebs_sample s;
			enum arch_pebs_decode r;

			others += (groups[g] & (BIT(41) | BIT(40))) != 0;
			others += (groups[g] & (BIT(36) | BIT(37))) != 0;
			r = arch_pebs_decode(out, bytes, &s);
			host_checkf(r == ARCH_PEBS_DECODED, "groups %#llx split %u: %s",
				    (unsigned long long)groups[g], split, arch_pebs_decode_name(r));
			host_check_eq_u64(bytes, s.bytes);
			host_check_eq_u64(
				1 + (split ? others : 0) +
					(split == ARCH_PEBS_SPLIT_GROUPS_NULL ? others : 0),
				s.fragments);
			host_check_eq_u64(BIT(63) | groups[g], s.groups);
			host_check_eq_u64(0xffffffff80102030ull, s.ip);
			host_check_eq_u64(BIT(3), s.applicable_counters);
			host_check_eq_u64(77, s.tsc);
			host_check((s.aux != NULL) == !!(groups[g] & BIT(62)));
			host_check((s.xmm != NULL) == !!(groups[g] & BIT(49)));
			host_check((s.gprs != NULL) == !!(groups[g] & BIT(61)));
			if (s.gprs)
				host_check_eq_u64(0xabc,
						  *(const uint64_t *)(s.gprs + ARCH_PEBS_GPRS_AX));
			host_check_eq_u64(arch_pebs_lbr_entries(a.cfg_c), s.lbr_entries);
			host_check((s.counter_values != NULL) ==
				   !!(groups[g] & (BIT(36) | BIT(37))));
			if ((groups[g] & BIT(36)) && s.counter_values) {
				host_check_eq_u64(0x9, s.counters_gp);
				host_check_eq_u64(10, *(const uint64_t *)s.counter_values);
				host_check_eq_u64(13, *(const uint64_t *)(s.counter_values + 8));
			}
			if (groups[g] & BIT(37))
				host_check_eq_u64(0x2, s.counters_fixed);
		}
	}
}
