/* SPDX-License-Identifier: MIT */
/* Host tests of emulator/pebs_record.c: byte offsets, sizes, bounds, and ds/ decoding. */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "ds/records.h"
#include "emulator/pebs_record.h"
#include "tests/host/host_test.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_RECORD (32 + 32 + 144 + 256 + 256 * 24)
#define GUARD 0x5a

/* A distinct value for every field, so a field stored at another field's offset shows. */
#define V_RFLAGS 0x0000000000000246ULL
#define V_RIP 0xffffffff81000010ULL /* the next instruction */
#define V_EVENTING_IP 0xffffffff8100000cULL
#define V_APPLICABLE 0x0000000100000005ULL /* fixed counter 0, GP counters 0 and 2 */
#define V_TSC 0x0123456789abcdefULL
#define V_RAX 0x1111111111111111ULL
#define V_RBX 0x2222222222222222ULL
#define V_RCX 0x3333333333333333ULL
#define V_RDX 0x4444444444444444ULL
#define V_RSI 0x5555555555555555ULL
#define V_RDI 0x6666666666666666ULL
#define V_RBP 0x7777777777777777ULL
#define V_RSP 0x8888888888888888ULL
#define V_R8 0x9999999999999999ULL
#define V_R9 0xaaaaaaaaaaaaaaaaULL
#define V_R10 0xbbbbbbbbbbbbbbbbULL
#define V_R11 0xccccccccccccccccULL
#define V_R12 0xddddddddddddddddULL
#define V_R13 0xeeeeeeeeeeeeeeeeULL
#define V_R14 0xffffffffffffffffULL
#define V_R15 0x0f0f0f0f0f0f0f0fULL

/* DATA_CFG bits as the SDM numbers them, typed in rather than taken from either header. */
#define CFG_MEM (1ULL << 0)
#define CFG_GPR (1ULL << 1)
#define CFG_XMM (1ULL << 2)
#define CFG_LBR (1ULL << 3)
#define CFG_LBRS(n) (CFG_LBR | (uint64_t)((n)-1) << 24)

static const uint64_t gpr_value[PEBS_GPR_COUNT] = {
	[PEBS_GPR_RAX] = V_RAX, [PEBS_GPR_RCX] = V_RCX, [PEBS_GPR_RDX] = V_RDX,
	[PEBS_GPR_RBX] = V_RBX, [PEBS_GPR_RSP] = V_RSP, [PEBS_GPR_RBP] = V_RBP,
	[PEBS_GPR_RSI] = V_RSI, [PEBS_GPR_RDI] = V_RDI, [PEBS_GPR_R8] = V_R8,
	[PEBS_GPR_R9] = V_R9,	[PEBS_GPR_R10] = V_R10, [PEBS_GPR_R11] = V_R11,
	[PEBS_GPR_R12] = V_R12, [PEBS_GPR_R13] = V_R13, [PEBS_GPR_R14] = V_R14,
	[PEBS_GPR_R15] = V_R15,
};

struct field {
	size_t offset;
	uint64_t value;
};

/*
 * ds.c pebs_record_skl, every qword: flags, ip, GPRs, then status 0x90, dla 0x98, dse 0xa0,
 * lat 0xa8, real_ip 0xb0, tsx_tuning 0xb8, tsc 0xc0. Formats 0-2 are its first 144, 176 and
 * 192 bytes.
 */
static const struct field fixed_fields[] = {
	{ 0x00, V_RFLAGS }, { 0x08, V_RIP }, { 0x10, V_RAX },	      { 0x18, V_RBX },
	{ 0x20, V_RCX },    { 0x28, V_RDX }, { 0x30, V_RSI },	      { 0x38, V_RDI },
	{ 0x40, V_RBP },    { 0x48, V_RSP }, { 0x50, V_R8 },	      { 0x58, V_R9 },
	{ 0x60, V_R10 },    { 0x68, V_R11 }, { 0x70, V_R12 },	      { 0x78, V_R13 },
	{ 0x80, V_R14 },    { 0x88, V_R15 }, { 0x90, V_APPLICABLE },  { 0x98, 0 },
	{ 0xa0, 0 },	    { 0xa8, 0 },     { 0xb0, V_EVENTING_IP }, { 0xb8, 0 },
	{ 0xc0, V_TSC },
};

/* perf_event.h pebs_gprs, offsets from the start of the group. */
static const struct field gprs_fields[] = {
	{ 0x00, V_RFLAGS }, { 0x08, V_RIP }, { 0x10, V_RAX }, { 0x18, V_RCX }, { 0x20, V_RDX },
	{ 0x28, V_RBX },    { 0x30, V_RSP }, { 0x38, V_RBP }, { 0x40, V_RSI }, { 0x48, V_RDI },
	{ 0x50, V_R8 },	    { 0x58, V_R9 },  { 0x60, V_R10 }, { 0x68, V_R11 }, { 0x70, V_R12 },
	{ 0x78, V_R13 },    { 0x80, V_R14 }, { 0x88, V_R15 },
};

/* In the order struct pebs_machine_state declares: rflags, rip, rax-rsp, r8-r15. */
static const struct pebs_machine_state sample_state = {
	V_RFLAGS, V_RIP, V_RAX, V_RBX, V_RCX, V_RDX, V_RSI, V_RDI, V_RBP,
	V_RSP,	  V_R8,	 V_R9,	V_R10, V_R11, V_R12, V_R13, V_R14, V_R15,
};

static struct pebs_assist make_assist(unsigned int format, bool baseline, bool adaptive,
				      uint64_t data_cfg)
{
	struct pebs_assist assist = { .format = format,
				      .baseline = baseline,
				      .adaptive = adaptive,
				      .data_cfg = data_cfg,
				      .applicable_counters = V_APPLICABLE,
				      .eventing_ip = V_EVENTING_IP,
				      .tsc = V_TSC,
				      .state = sample_state };

	return assist;
}

static uint64_t load(const uint8_t *bytes, size_t offset)
{
	uint64_t value = 0;

	for (unsigned int i = 0; i < 8; i++)
		value |= (uint64_t)bytes[offset + i] << (8 * i);
	return value;
}

/* Guard bytes on both sides; the record starts at an odd address on purpose. */
static uint8_t frame[1 + MAX_RECORD + 8];
#define RECORD (frame + 1)

/* Write into a guarded frame with room bytes; check nothing outside [0, written) changed. */
static size_t write_guarded(const struct pebs_assist *assist, size_t room)
{
	size_t written;

	memset(frame, GUARD, sizeof(frame));
	written = pebs_record_write(assist, RECORD, room);
	host_check_eq_u64(GUARD, frame[0]);
	for (size_t i = 1 + written; i < sizeof(frame); i++)
		if (!host_checkf(frame[i] == GUARD, "byte %zu past a %zu-byte record written",
				 i - 1, written))
			break;
	return written;
}

static void check_fields(const uint8_t *at, const struct field *fields, size_t count,
			 const char *what)
{
	for (size_t i = 0; i < count; i++)
		host_checkf(load(at, fields[i].offset) == fields[i].value,
			    "%s +0x%zx: want 0x%llx, got 0x%llx", what, fields[i].offset,
			    (unsigned long long)fields[i].value,
			    (unsigned long long)load(at, fields[i].offset));
}

static void check_zeros(const uint8_t *at, size_t from, size_t to, const char *what)
{
	for (size_t offset = from; offset < to; offset += 8)
		host_checkf(load(at, offset) == 0, "%s +0x%zx not zero", what, offset);
}

HOST_TEST(pebs_record_fixed_formats_put_every_field_at_its_sdm_offset)
{
	static const size_t sizes[] = { 144, 176, 192, 200 };

	for (unsigned int format = 0; format < ARRAY_SIZE(sizes); format++) {
		struct pebs_assist a = make_assist(format, true, true, ~0ULL);

		host_check_eq_u64(sizes[format], pebs_record_bytes(&a));
		if (!host_check_eq_u64(sizes[format], write_guarded(&a, MAX_RECORD)))
			continue;
		/* The table names every qword, so this checks the record byte for byte. */
		check_fields(RECORD, fixed_fields, sizes[format] / 8, "fixed record");
	}
}

HOST_TEST(pebs_record_adaptive_all_groups_in_order_at_their_offsets)
{
	/* basic 0x00, meminfo 0x20, GPRs 0x40, XMM 0xd0, 3 LBRs 0x1d0, end 0x218 = 536. */
	uint64_t cfg = CFG_MEM | CFG_GPR | CFG_XMM | CFG_LBRS(3);
	struct pebs_assist a = make_assist(4, true, true, cfg);
	const struct field basic[] = {
		{ 0x00, 536ULL << 48 | cfg },
		{ 0x08, V_EVENTING_IP }, /* from format 4 the basic ip is the eventing IP */
		{ 0x10, V_APPLICABLE },
		{ 0x18, V_TSC },
	};

	if (!host_check_eq_u64(536, write_guarded(&a, MAX_RECORD)))
		return;
	check_fields(RECORD, basic, ARRAY_SIZE(basic), "basic");
	check_zeros(RECORD, 0x20, 0x40, "meminfo");
	check_fields(RECORD + 0x40, gprs_fields, ARRAY_SIZE(gprs_fields), "gprs");
	check_zeros(RECORD, 0xd0, 0x1d0, "xmm");
	check_zeros(RECORD, 0x1d0, 0x218, "lbr");
}

HOST_TEST(pebs_record_adaptive_gprs_alone_follow_the_basic_group)
{
	struct pebs_assist a = make_assist(5, true, true, CFG_GPR);

	if (!host_check_eq_u64(32 + 144, write_guarded(&a, MAX_RECORD)))
		return;
	host_check_eq_u64(176ULL << 48 | CFG_GPR, load(RECORD, 0));
	check_fields(RECORD + 0x20, gprs_fields, ARRAY_SIZE(gprs_fields), "gprs");
}

static size_t adaptive_size(uint64_t mask, unsigned int lbrs)
{
	return 32 + (mask & CFG_MEM ? 32 : 0) + (mask & CFG_GPR ? 144 : 0) +
	       (mask & CFG_XMM ? 256 : 0) + (mask & CFG_LBR ? 24 * lbrs : 0);
}

HOST_TEST(pebs_record_sizes_for_every_format_and_data_cfg)
{
	static const size_t fixed[] = { 144, 176, 192, 200 };
	static const unsigned int lbrs[] = { 1, 2, 32, 256 };

	for (unsigned int format = 0; format <= 6; format++)
		for (uint64_t mask = 0; mask < 16; mask++)
			for (unsigned int l = 0; l < ARRAY_SIZE(lbrs); l++) {
				uint64_t cfg = mask | (uint64_t)(lbrs[l] - 1) << 24;
				struct pebs_assist a = make_assist(format, true, true, cfg);
				size_t want =
					format < 4 ? fixed[format] : adaptive_size(mask, lbrs[l]);

				host_checkf(pebs_record_bytes(&a) == want,
					    "fmt %u cfg 0x%llx: want %zu, got %zu", format,
					    (unsigned long long)cfg, want, pebs_record_bytes(&a));
				host_checkf(write_guarded(&a, MAX_RECORD) == want,
					    "fmt %u cfg 0x%llx: wrote the wrong size", format,
					    (unsigned long long)cfg);
			}
}

HOST_TEST(pebs_record_without_adaptive_or_baseline_is_the_basic_group_only)
{
	uint64_t all = CFG_MEM | CFG_GPR | CFG_XMM | CFG_LBRS(8);
	const struct pebs_assist basic_only[] = {
		make_assist(4, false, true, all), /* format 4 needs baseline */
		make_assist(4, true, false, all),
		make_assist(5, true, false, all),
		make_assist(6, false, false, all),
	};
	struct pebs_assist fmt5 = make_assist(5, false, true, all);

	for (size_t i = 0; i < ARRAY_SIZE(basic_only); i++) {
		host_checkf(write_guarded(&basic_only[i], MAX_RECORD) == 32, "case %zu", i);
		/* Record format 0: no counter asked for an adaptive record (SDM "Adaptive PEBS",
		 * basic info). */
		host_checkf(load(RECORD, 0) == 32ULL << 48, "case %zu header 0x%llx", i,
			    (unsigned long long)load(RECORD, 0));
		host_check_eq_u64(V_EVENTING_IP, load(RECORD, 0x08));
		host_check_eq_u64(V_APPLICABLE, load(RECORD, 0x10));
		host_check_eq_u64(V_TSC, load(RECORD, 0x18));
	}
	/* The contract's rule: from format 5 the groups do not depend on the baseline bit. */
	host_check_eq_u64(adaptive_size(0xf, 8), pebs_record_bytes(&fmt5));
}

HOST_TEST(pebs_record_format_field_holds_only_implemented_data_cfg_bits)
{
	struct pebs_assist count_without_lbrs = make_assist(4, true, true, CFG_GPR | 5ULL << 24);
	struct pebs_assist unknown_bits =
		make_assist(4, true, true, CFG_GPR | 1ULL << 4 | 1ULL << 40);

	host_check_eq_u64(176, write_guarded(&count_without_lbrs, MAX_RECORD));
	host_check_eq_u64(176ULL << 48 | CFG_GPR, load(RECORD, 0));
	host_check_eq_u64(176, write_guarded(&unknown_bits, MAX_RECORD));
	host_check_eq_u64(176ULL << 48 | CFG_GPR, load(RECORD, 0));
}

HOST_TEST(pebs_record_too_little_room_or_unknown_format_writes_nothing)
{
	static const unsigned int unknown[] = { 7, 8, 15, UINT_MAX };
	struct pebs_assist fmt0 = make_assist(0, false, false, 0);
	struct pebs_assist fmt4 = make_assist(4, true, true, CFG_MEM | CFG_XMM);

	host_check_eq_u64(0, write_guarded(&fmt0, 143));
	host_check_eq_u64(144, write_guarded(&fmt0, 144));
	host_check_eq_u64(0, write_guarded(&fmt4, 32 + 32 + 256 - 1));
	host_check_eq_u64(320, write_guarded(&fmt4, 320));
	host_check_eq_u64(0, write_guarded(&fmt4, 0));
	host_check_eq_u64(0, pebs_record_write(&fmt4, NULL, MAX_RECORD));
	host_check_eq_u64(0, pebs_record_write(NULL, RECORD, MAX_RECORD));
	host_check_eq_u64(0, pebs_record_bytes(NULL));
	for (size_t i = 0; i < ARRAY_SIZE(unknown); i++) {
		struct pebs_assist a = make_assist(unknown[i], true, true, CFG_GPR);

		host_checkf(pebs_record_bytes(&a) == 0, "format %u has a size", unknown[i]);
		host_checkf(write_guarded(&a, MAX_RECORD) == 0, "format %u written", unknown[i]);
	}
}

/* Decode what the builder wrote with the driver's pebs_decode() and compare with the input. */
static void check_round_trip(const struct pebs_assist *a, bool groups_allowed)
{
	uint64_t groups = groups_allowed ? a->data_cfg : 0;
	struct pebs_sample s;
	size_t size = write_guarded(a, MAX_RECORD), decoded = 0;
	bool adaptive = a->format >= 4;
	bool has_gprs = !adaptive || (groups & CFG_GPR);

	if (!host_checkf(size && pebs_decode(a->format, RECORD, size, a->data_cfg, &s, &decoded),
			 "fmt %u cfg 0x%llx did not decode", a->format,
			 (unsigned long long)a->data_cfg))
		return;
	host_check_eq_u64(size, decoded);
	host_check_eq_u64(adaptive ? V_EVENTING_IP : V_RIP, s.ip);
	host_check_eq_u64(adaptive || a->format >= 2, s.has_eventing_ip);
	if (s.has_eventing_ip)
		host_check_eq_u64(V_EVENTING_IP, s.eventing_ip);
	host_check_eq_u64(a->format >= 1, s.has_status);
	if (s.has_status)
		host_check_eq_u64(V_APPLICABLE, s.status);
	host_check_eq_u64(a->format >= 3, s.has_tsc);
	if (s.has_tsc)
		host_check_eq_u64(V_TSC, s.tsc);
	host_check_eq_u64(has_gprs, s.has_gprs);
	if (s.has_gprs) {
		host_check_eq_u64(V_RFLAGS, s.rflags);
		host_check_eq_u64(V_RIP, s.register_ip);
		for (unsigned int reg = 0; reg < PEBS_GPR_COUNT; reg++)
			host_checkf(s.gprs[reg] == gpr_value[reg], "fmt %u cfg 0x%llx gpr %u",
				    a->format, (unsigned long long)a->data_cfg, reg);
	}
	host_check_eq_u64(adaptive ? (groups & CFG_MEM) != 0 : a->format >= 1, s.has_memory);
	if (s.has_memory)
		host_check(!s.data_address && !s.data_source && !s.latency && !s.tsx_tuning);
	host_check_eq_u64(adaptive && (groups & CFG_XMM), s.has_xmm);
	host_check_eq_u64(adaptive && (groups & CFG_LBR), s.has_lbrs);
	if (s.has_lbrs)
		host_check_eq_u64(((groups >> 24) & 0xff) + 1, s.lbr_count);
}

HOST_TEST(pebs_record_every_record_decodes_with_the_driver_to_the_same_state)
{
	for (unsigned int format = 0; format <= 6; format++)
		for (unsigned int flags = 0; flags < 4; flags++)
			for (uint64_t mask = 0; mask < 16; mask++) {
				bool baseline = flags & 1, adaptive = flags & 2;
				uint64_t cfg = mask & CFG_LBR ? mask | CFG_LBRS(8) : mask;
				struct pebs_assist a = make_assist(format, baseline, adaptive, cfg);

				check_round_trip(&a, adaptive && (baseline || format >= 5));
			}
}

HOST_TEST(pebs_record_a_buffer_of_mixed_records_walks_with_the_driver)
{
	static const uint64_t cfgs[] = { 0, CFG_GPR, CFG_MEM | CFG_XMM, CFG_GPR | CFG_LBRS(4) };
	static uint8_t buffer[4 * MAX_RECORD];
	size_t used = 0, last = 0, count = 0;
	uint64_t all = 0;

	for (size_t i = 0; i < ARRAY_SIZE(cfgs); i++) {
		struct pebs_assist a = make_assist(4, true, cfgs[i] != 0, cfgs[i]);

		last = used;
		used += pebs_record_write(&a, buffer + used, sizeof(buffer) - used);
		all |= cfgs[i];
	}
	host_check_eq_u64(32 + 176 + 320 + 272, used);
	host_check_eq_u64(last, pebs_find_last(PEBS_FORMAT_4, buffer, used, all, &count));
	host_check_eq_u64(ARRAY_SIZE(cfgs), count);
	host_check_eq_u64(32 + 176, pebs_find_last(PEBS_FORMAT_4, buffer, used - 1, all, &count));
	host_check_eq_u64(ARRAY_SIZE(cfgs) - 1, count);
}

/*
 * The LBR group holds the stack at the assist, newest first (Linux struct lbr_entry: from, to,
 * info), and 0 for the entries it asks for beyond what the stack had.
 */
HOST_TEST(pebs_record_lbr_group_holds_the_stack_newest_first_then_zeros)
{
	static const struct pebs_assist_lbr stack[] = {
		{ 0xffffffff81000010ULL, 0xffffffff81000100ULL, 0x8000000000000000ULL },
		{ 0x0000000000401000ULL, 0x0000000000401040ULL, 0 },
	};
	struct pebs_assist a = make_assist(4, true, true, CFG_LBRS(4));
	const struct field group[] = {
		{ 0x20, 0xffffffff81000010ULL }, { 0x28, 0xffffffff81000100ULL },
		{ 0x30, 0x8000000000000000ULL }, { 0x38, 0x0000000000401000ULL },
		{ 0x40, 0x0000000000401040ULL }, { 0x48, 0 },
	};

	a.lbr = stack;
	a.lbr_valid = 2;
	if (!host_check_eq_u64(32 + 4 * 24, write_guarded(&a, MAX_RECORD)))
		return;
	check_fields(RECORD, group, ARRAY_SIZE(group), "lbr group");
	check_zeros(RECORD, 0x50, 0x80, "lbr entries the stack did not have");
}
