/* SPDX-License-Identifier: MIT */
/* Host tests of architectural PEBS on the model (rule 25): leaf 23H, the MSRs, the record bytes. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "emulator/arch_pebs_record.h"
#include "emulator/profile.h"
#include "emulator/registers.h"
#include "tests/host/emulator_checks.h"
#include "tests/host/host_test.h"

/*
 * Every number is typed here from the Linux arch-PEBS patches (msr-index.h: MSR_IA32_PEBS_BASE
 * 0x3f4, MSR_IA32_PEBS_INDEX 0x3f5, MSR_IA32_PMC_V6_GP0_CFG_C 0x1903 and FX0 0x1983 with a
 * stride of 4, the ARCH_PEBS_* CFG_C bits; perf_event.h: union arch_pebs_index, struct
 * arch_pebs_header and the group structs; core.c update_pmu_cap(): leaf 0x23 sub-leaves), not
 * from arch/x86/arch-pebs.h, so a slip there fails here. The ISE was not available.
 */
#define BIT(n) (1ull << (n))
#define T_PEBS_ENABLE 0x3f1
#define T_PEBS_DATA_CFG 0x3f2
#define T_PEBS_BASE 0x3f4
#define T_PEBS_INDEX 0x3f5
#define T_GP_CFG_C(x) (0x1903u + 4 * (x))
#define T_FX_CFG_C(x) (0x1983u + 4 * (x))
#define T_STATUS_RESET 0x390
#define T_STATUS_SET 0x391

HOST_TEST(emulator_arch_pebs_leaf_23_enumerates_the_pebs_counters_and_groups)
{
	struct emulator_profile p = named("pantherlake");
	const struct cpuid_result none = { 0 };
	struct cpuid_result l0 = emulator_cpuid(&p, 0x23, 0, none);
	struct cpuid_result l1 = emulator_cpuid(&p, 0x23, 1, none);
	struct cpuid_result l4 = emulator_cpuid(&p, 0x23, 4, none);
	struct cpuid_result l5 = emulator_cpuid(&p, 0x23, 5, none);
	struct emulator_registers r = fresh(&p);

	/* Leaf 0 reaches 23H; PERF_CAPABILITIES[11:8] = 0xF. */
	host_check(emulator_cpuid(&p, 0, 0, none).eax >= 0x23);
	host_check_eq_u64(0xf, (r.perf_capabilities >> 8) & 0xf);
	/* Sub-leaf 0 EAX: bit 1 counters, 4 PEBS caps, 5 PEBS counters. */
	host_check_eq_u64(BIT(1) | BIT(4) | BIT(5), l0.eax);
	host_check_eq_u64(0xff, l1.eax);
	host_check_eq_u64(0xf, l1.ebx);
	/* EBX bit n = CFG_C bit 32 + n: 35-37 (3-5), 40-41 (8-9), 49 (17), 61 (29), 62 (30). */
	host_check_eq_u64(BIT(3) | BIT(4) | BIT(5) | BIT(8) | BIT(9) | BIT(17) | BIT(29) | BIT(30),
			  l4.ebx);
	host_check_eq_u64(0xff, l5.eax);
	host_check_eq_u64(0x7, l5.ecx);
	host_check_eq_u64(0x3, l5.ebx);
	host_check_eq_u64(0x1, l5.edx);
	/* A profile before arch-PEBS: leaf 23H reads 0 whatever the host says. */
	p = named("arrowlake");
	l5 = emulator_cpuid(&p, 0x23, 5, (struct cpuid_result){ 1, 2, 3, 4 });
	host_check(l5.eax == 0 && l5.ebx == 0 && l5.ecx == 0 && l5.edx == 0);
	host_check_eq_u64(0, emulator_cpuid(&p, 0x23, 0, none).eax);
}

HOST_TEST(emulator_arch_pebs_stray_counter_in_leaf_23_5_is_beyond_leaf_23_1)
{
	struct emulator_profile p = named("pantherlake");
	const struct cpuid_result none = { 0 };
	char err[160] = "";

	host_checkf(emulator_profile_override(&p, "arch_pebs_stray", "1", err, sizeof(err)), "%s",
		    err);
	host_check_eq_u64(0xff, emulator_cpuid(&p, 0x23, 1, none).eax);
	host_check_eq_u64(0x1ff, emulator_cpuid(&p, 0x23, 5, none).eax);
}

HOST_TEST(emulator_arch_pebs_pebs_enable_and_data_cfg_raise_gp)
{
	struct emulator_profile p = named("pantherlake");
	struct emulator_registers r = fresh(&p);

	expect_read_gp(&p, &r, T_PEBS_ENABLE);
	expect_read_gp(&p, &r, T_PEBS_DATA_CFG);
	expect_write_gp(&p, &r, T_PEBS_ENABLE, BIT(0));
	expect_write_gp(&p, &r, T_PEBS_ENABLE, 0);
	expect_write_gp(&p, &r, T_PEBS_DATA_CFG, 0);
	/* The DS area stays: BTS uses it. */
	expect_write(&p, &r, 0x600, 0xffff800000123000ull, 0xffff800000123000ull);
}

HOST_TEST(emulator_arch_pebs_msrs_raise_gp_without_arch_pebs)
{
	struct emulator_profile p = named("arrowlake");
	struct emulator_registers r = fresh(&p);

	expect_read_gp(&p, &r, T_PEBS_BASE);
	expect_read_gp(&p, &r, T_PEBS_INDEX);
	expect_read_gp(&p, &r, T_GP_CFG_C(0));
	expect_read_gp(&p, &r, T_FX_CFG_C(0));
	expect_write_gp(&p, &r, T_PEBS_BASE, 0);
	expect_write_gp(&p, &r, T_GP_CFG_C(0), 0);
	expect_write_gp(&p, &r, T_STATUS_RESET, BIT(54));
	/* And the DS-area PEBS MSRs keep working there. */
	expect_write(&p, &r, T_PEBS_ENABLE, BIT(0), BIT(0));
}

HOST_TEST(emulator_arch_pebs_base_is_physical_4k_aligned_with_a_size_code)
{
	struct emulator_profile p = named("pantherlake");
	struct emulator_registers r = fresh(&p);

	expect_read(&p, &r, T_PEBS_BASE, 0);
	expect_write(&p, &r, T_PEBS_BASE, 0x12345000ull | 4, 0x12345000ull | 4);
	expect_write(&p, &r, T_PEBS_BASE, 0x3ffffffff000ull | 0xf, 0x3ffffffff000ull | 0xf);
	for (unsigned int bit = 4; bit < 12; bit++)
		expect_write_gp(&p, &r, T_PEBS_BASE, 0x12345000ull | BIT(bit));
	for (unsigned int bit = 46; bit < 64; bit++) /* beyond the model's 46-bit MAXPHYADDR */
		expect_write_gp(&p, &r, T_PEBS_BASE, BIT(bit));
	expect_write(&p, &r, T_PEBS_BASE, 0, 0);
}

HOST_TEST(emulator_arch_pebs_index_fields_and_reserved_bits)
{
	static const unsigned int reserved[] = { 0,  1,	 2,  3,	 27, 28, 29, 30,
						 33, 34, 35, 59, 60, 61, 62, 63 };
	struct emulator_profile p = named("pantherlake");
	struct emulator_registers r = fresh(&p);
	/* WR 26:4, FULL 31, EN 32, THRESH 58:36 all set. */
	uint64_t all = 0x7fffffull << 4 | BIT(31) | BIT(32) | 0x7fffffull << 36;

	expect_write(&p, &r, T_PEBS_INDEX, all, all);
	expect_write(&p, &r, T_PEBS_INDEX, BIT(32) | (0xf00ull << 36), BIT(32) | (0xf00ull << 36));
	for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
		expect_write_gp(&p, &r, T_PEBS_INDEX, BIT(32) | BIT(reserved[i]));
}

HOST_TEST(emulator_arch_pebs_cfg_c_bits_and_reserved_bits)
{
	static const unsigned int reserved[] = { 32, 33, 34, 38, 39, 42, 43, 48, 50, 55, 60 };
	struct emulator_profile p = named("pantherlake");
	struct emulator_registers r = fresh(&p);
	/* reload 31:0, ALLOW 35, GP 36, FIXED 37, LBR 41:40, XMM 49, GPR 61, AUX 62, EN 63 */
	uint64_t all = 0xffffffffull | BIT(35) | BIT(36) | BIT(37) | BIT(40) | BIT(41) | BIT(49) |
		       BIT(61) | BIT(62) | BIT(63);

	for (unsigned int x = 0; x < 8; x++) {
		expect_read(&p, &r, T_GP_CFG_C(x), 0);
		expect_write(&p, &r, T_GP_CFG_C(x), all, all);
		for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
			expect_write_gp(&p, &r, T_GP_CFG_C(x), BIT(reserved[i]));
	}
	/* Every GP counter's EN is PEBS_ENABLE bit x for the engine. */
	host_check_eq_u64(0xff, r.pebs_enable);
	for (unsigned int x = 0; x < 3; x++)
		expect_write(&p, &r, T_FX_CFG_C(x), all, all);
	host_check_eq_u64(0x7000000ffull, r.pebs_enable);
	/* Fixed counter 3 exists but cannot PEBS (23H.5 ECX bit 3 clear): EN #GP, the rest not. */
	expect_write_gp(&p, &r, T_FX_CFG_C(3), BIT(63));
	expect_write(&p, &r, T_FX_CFG_C(3), all & ~BIT(63), all & ~BIT(63));
	/* No GP counter 8, no CFG_C; the registers between are not CFG_C. */
	expect_read_gp(&p, &r, T_GP_CFG_C(8));
	expect_read_gp(&p, &r, 0x1904);
	expect_write(&p, &r, T_GP_CFG_C(3), 0, 0);
	host_check_eq_u64(0x7000000f7ull, r.pebs_enable);
}

HOST_TEST(emulator_arch_pebs_status_bit_54_is_acknowledged_and_set)
{
	struct emulator_profile p = named("pantherlake");
	struct emulator_registers r = fresh(&p);

	expect_write(&p, &r, T_STATUS_SET, BIT(54), 0);
	expect_read(&p, &r, 0x38e, BIT(54));
	expect_write(&p, &r, T_STATUS_RESET, BIT(54), 0);
	expect_read(&p, &r, 0x38e, 0);
}

HOST_TEST(emulator_arch_pebs_profile_overrides_are_checked)
{
	struct emulator_profile p = named("pantherlake");
	char err[160] = "";

	host_check(!emulator_profile_override(&p, "pebs_format", "4", err, sizeof(err)));
	host_check(!emulator_profile_override(&p, "fragments", "3", err, sizeof(err)));
	host_check(!emulator_profile_override(&p, "baseline", "1", err, sizeof(err)));
	host_check(emulator_profile_override(&p, "fragments", "2", err, sizeof(err)));
	host_check_eq_u64(2, p.arch_pebs_fragments);
	p = named("icelake");
	host_check(!emulator_profile_override(&p, "pebs_format", "15", err, sizeof(err)));
	host_check(!emulator_profile_override(&p, "fragments", "1", err, sizeof(err)));
	host_check(!emulator_profile_override(&p, "arch_pebs_stray", "1", err, sizeof(err)));
}

/* Little-endian qword at byte offset at. */
static uint64_t qword(const uint8_t *record, size_t at)
{
	uint64_t value = 0;

	for (unsigned int i = 0; i < 8; i++)
		value |= (uint64_t)record[at + i] << (8 * i);
	return value;
}

static uint32_t dword(const uint8_t *record, size_t at)
{
	return (uint32_t)qword(record, at);
}

/* A record with every group: CFG_C of GP counter 0 with AUX, GPR, XMM, LBR 8, GP+FIXED. */
static struct arch_pebs_assist every_group(enum arch_pebs_split split)
{
	struct arch_pebs_assist a = {
		.cfg_c = BIT(63) | BIT(62) | BIT(61) | BIT(49) | BIT(40) | BIT(37) | BIT(36) |
			 BIT(35) | 0xfffff000ull,
		.applicable_counters = BIT(0) | BIT(32),
		.eventing_ip = 0x1111,
		.tsc = 0x2222,
		.state = { .rflags = 0x202,
			   .rip = 0x1113,
			   .rax = 0xa0,
			   .rbx = 0xb0,
			   .rcx = 0xc0,
			   .rdx = 0xd0,
			   .rsi = 0x51,
			   .rdi = 0xd1,
			   .rbp = 0xb9,
			   .rsp = 0x59,
			   .r8 = 8,
			   .r9 = 9,
			   .r10 = 10,
			   .r11 = 11,
			   .r12 = 12,
			   .r13 = 13,
			   .r14 = 14,
			   .r15 = 15 },
		.ssp = 0,
		.gp_allowed = 0x5,
		.fixed_allowed = 0x1,
		.gp = { 0x100, 0x101, 0x102 },
		.fixed = { 0x200 },
		.split = split,
	};

	return a;
}

HOST_TEST(emulator_arch_pebs_record_has_every_group_at_its_byte_offset)
{
	struct arch_pebs_assist a = every_group(ARCH_PEBS_SPLIT_NONE);
	uint8_t out[1024];

	memset(out, 0xee, sizeof(out));
	/* 16 header + 48 basic + 64 aux + 160 gpr + 16+256 xmm + 48+8*24 lbr + 16+3*8+8 cntr */
	host_check_eq_u64(848, arch_pebs_record_bytes(&a));
	host_check_eq_u64(848, arch_pebs_record_write(&a, out, sizeof(out)));
	/* Header: size 15:0, CNTR 39:35 (GP 36, FIXED 37), LBR 41:40 = 1, XMM 49, GPR 61, AUX 62,
	 * BASIC 63; CONT 31 clear: one fragment. */
	host_check_eq_u64(848 | BIT(36) | BIT(37) | BIT(40) | BIT(49) | BIT(61) | BIT(62) | BIT(63),
			  qword(out, 0));
	host_check_eq_u64(0, qword(out, 8));
	/* Basic (arch_pebs_basic) at 16: ip, applicable_counters, tsc, retire, 2 reserved. */
	host_check_eq_u64(0x1111, qword(out, 16));
	host_check_eq_u64(BIT(0) | BIT(32), qword(out, 24));
	host_check_eq_u64(0x2222, qword(out, 32));
	host_check_eq_u64(0, qword(out, 40) | qword(out, 48) | qword(out, 56));
	/* Aux (arch_pebs_aux) at 64, 8 qwords: no facility, 0. */
	for (size_t at = 64; at < 128; at += 8)
		host_check_eq_u64(0, qword(out, at));
	/* GPR (arch_pebs_gprs) at 128: flags, ip, ax, cx, dx, bx, sp, bp, si, di, r8-r15, ssp. */
	host_check_eq_u64(0x202, qword(out, 128));
	host_check_eq_u64(0x1113, qword(out, 136));
	host_check_eq_u64(0xa0, qword(out, 144));
	host_check_eq_u64(0xc0, qword(out, 152));
	host_check_eq_u64(0xd0, qword(out, 160));
	host_check_eq_u64(0xb0, qword(out, 168));
	host_check_eq_u64(0x59, qword(out, 176));
	host_check_eq_u64(0xb9, qword(out, 184));
	host_check_eq_u64(0x51, qword(out, 192));
	host_check_eq_u64(0xd1, qword(out, 200));
	for (unsigned int i = 0; i < 8; i++)
		host_check_eq_u64(8 + i, qword(out, 208 + 8 * i));
	host_check_eq_u64(0, qword(out, 272)); /* ssp */
	host_check_eq_u64(0, qword(out, 280));
	/* XMM at 288: 16-byte xer header, then 256 bytes. */
	for (size_t at = 288; at < 560; at += 8)
		host_check_eq_u64(0, qword(out, at));
	/* LBR at 560: header rsvd, ctl, depth = 8, ler_from/to/info; 8 entries of 24 bytes. */
	host_check_eq_u64(8, qword(out, 576));
	for (size_t at = 584; at < 800; at += 8)
		host_check_eq_u64(0, qword(out, at));
	/* Counters at 800: u32 GP bitmap, u32 fixed bitmap, metrics, reserved; GP 0, GP 2,
	 * fixed 0; a zero pad to 16 bytes. */
	host_check_eq_u64(0x5, dword(out, 800));
	host_check_eq_u64(0x1, dword(out, 804));
	host_check_eq_u64(0, qword(out, 808));
	host_check_eq_u64(0x100, qword(out, 816));
	host_check_eq_u64(0x102, qword(out, 824));
	host_check_eq_u64(0x200, qword(out, 832));
	host_check_eq_u64(0, qword(out, 840));
	host_check_eq_u64(0xeeeeeeeeeeeeeeeeull, qword(out, 848)); /* nothing beyond */
}

HOST_TEST(emulator_arch_pebs_record_in_fragments_one_group_each)
{
	struct arch_pebs_assist a = every_group(ARCH_PEBS_SPLIT_GROUPS);
	/* Fragment offsets and headers, typed: basic 64, aux 80, gpr 176, xmm 288, lbr 256,
	 * cntr 64 bytes, each with its 16-byte header. */
	static const struct {
		size_t at;
		uint64_t format;
	} fragments[] = {
		{ 0, 64 | BIT(63) | BIT(31) },	  { 64, 80 | BIT(62) | BIT(31) },
		{ 144, 176 | BIT(61) | BIT(31) }, { 320, 288 | BIT(49) | BIT(31) },
		{ 608, 256 | BIT(40) | BIT(31) }, { 864, 64 | BIT(36) | BIT(37) },
	};
	uint8_t out[1024];

	host_check_eq_u64(928, arch_pebs_record_bytes(&a));
	host_check_eq_u64(928, arch_pebs_record_write(&a, out, sizeof(out)));
	for (size_t i = 0; i < sizeof(fragments) / sizeof(fragments[0]); i++) {
		host_checkf(qword(out, fragments[i].at) == fragments[i].format,
			    "fragment %zu at %zu: format %#llx, expected %#llx", i, fragments[i].at,
			    (unsigned long long)qword(out, fragments[i].at),
			    (unsigned long long)fragments[i].format);
		host_check_eq_u64(0, qword(out, fragments[i].at + 8));
	}
	host_check_eq_u64(0x1111, qword(out, 16)); /* basic in the first */
	host_check_eq_u64(0x202, qword(out, 160)); /* gpr flags after its header */
	host_check_eq_u64(8, qword(out, 608 + 16 + 16)); /* LBR depth */
	host_check_eq_u64(0x5, dword(out, 864 + 16));
	host_check_eq_u64(0x100, qword(out, 864 + 32));
}

HOST_TEST(emulator_arch_pebs_record_with_null_fragments_between)
{
	struct arch_pebs_assist a = every_group(ARCH_PEBS_SPLIT_GROUPS_NULL);
	uint8_t out[1024];
	size_t at = 0, fragments = 0, nulls = 0;

	/* 928 and 5 null headers of 16 bytes. */
	host_check_eq_u64(1008, arch_pebs_record_write(&a, out, sizeof(out)));
	host_check_eq_u64(64 | BIT(63) | BIT(31), qword(out, 0));
	host_check_eq_u64(16, qword(out, 64)); /* null: size only, bits 63:16 clear */
	host_check_eq_u64(80 | BIT(62) | BIT(31), qword(out, 80));
	/* Walked as Linux walks it: continued while CONT or null; each size moves on. */
	for (;;) {
		uint64_t format = qword(out, at);

		if ((format & 0xffff) < 16) { /* no size: the walk would not move */
			host_checkf(false, "fragment at %zu has size %llu", at,
				    (unsigned long long)(format & 0xffff));
			break;
		}
		fragments++;
		nulls += (format >> 16) == 0;
		at += format & 0xffff;
		if (!(format & BIT(31)) && (format >> 16) != 0)
			break;
		if (at >= 1008)
			break;
	}
	host_check_eq_u64(1008, at);
	host_check_eq_u64(11, fragments);
	host_check_eq_u64(5, nulls);
}

HOST_TEST(emulator_arch_pebs_record_basic_alone_and_each_group_alone)
{
	static const struct {
		uint64_t cfg_c;
		size_t bytes;
	} cases[] = {
		{ BIT(63), 64 },
		{ BIT(63) | BIT(62), 128 },
		{ BIT(63) | BIT(61), 224 },
		{ BIT(63) | BIT(49), 336 },
		{ BIT(63) | BIT(40), 64 + 48 + 8 * 24 },
		{ BIT(63) | BIT(41), 64 + 48 + 16 * 24 },
		{ BIT(63) | BIT(41) | BIT(40), 64 + 48 + 32 * 24 }, /* variable: the model's 32 */
		{ BIT(63) | BIT(36), 64 + 16 + 16 }, /* GP 0 and 2: two values */
		{ BIT(63) | BIT(37), 64 + 16 + 16 }, /* fixed 0: one value and the pad */
	};
	uint8_t out[2048];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct arch_pebs_assist a = every_group(ARCH_PEBS_SPLIT_NONE);

		a.cfg_c = cases[i].cfg_c;
		host_checkf(arch_pebs_record_write(&a, out, sizeof(out)) == cases[i].bytes,
			    "CFG_C %#llx: %zu bytes, expected %zu", (unsigned long long)a.cfg_c,
			    arch_pebs_record_bytes(&a), cases[i].bytes);
		host_check_eq_u64(cases[i].bytes | BIT(63) | (cases[i].cfg_c & ~BIT(63)),
				  qword(out, 0));
		host_check_eq_u64(0, cases[i].bytes % 16); /* INDEX counts 16-byte units */
	}
	/* Too little room: nothing written. */
	memset(out, 0xee, 64);
	host_check_eq_u64(
		0, arch_pebs_record_write(&(struct arch_pebs_assist){ .cfg_c = BIT(63) }, out, 63));
	host_check_eq_u64(0xeeeeeeeeeeeeeeeeull, qword(out, 0));
}
