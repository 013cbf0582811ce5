/* SPDX-License-Identifier: MIT */
/* Host tests of emulator/lbr.c: the LBR MSRs by profile, the ring, the filters and the freeze. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "emulator/decode.h"
#include "emulator/lbr.h"
#include "emulator/profile.h"
#include "emulator/registers.h"
#include "tests/host/emulator_checks.h"
#include "tests/host/host_test.h"

/*
 * Expected values are typed from the SDM (Vol. 3B "Last Branch, Interrupt, and Exception
 * Recording", Vol. 4 model tables) and Linux lbr.c, not from the model's constants: MSR numbers,
 * bit positions and encodings are literals here.
 */
#define BIT(n) (1ull << (n))
#define KERNEL_IP 0xffffffff81234567ull
#define USER_IP 0x0000000000401000ull

/* A register file recording every branch kind in both rings. */
static struct emulator_registers recording(const struct emulator_profile *p)
{
	struct emulator_registers r = fresh(p);

	host_check(!emulator_write_msr(&r, p, 0x1d9, BIT(0)));
	return r;
}

static void record(struct emulator_registers *r, const struct emulator_profile *p, uint64_t from,
		   uint64_t to, enum emulator_lbr_kind kind)
{
	emulator_lbr_record(r, p, from, to, to < 0x0000800000000000ull, kind);
}

HOST_TEST(emulator_lbr_perf_capabilities_format_is_the_parts)
{
	/* PERF_CAPABILITIES[5:0]: 2 EIP, 3 EIP_FLAGS, 4 EIP_FLAGS2, 5 INFO, 0x3F architectural. */
	static const struct {
		const char *name;
		uint64_t format;
	} parts[] = { { "core2", 2 },	{ "nehalem", 3 },      { "haswell", 4 }, { "skylake", 5 },
		      { "icelake", 5 }, { "arrowlake", 0x3f }, { "kvm_pebs", 0 } };

	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		struct emulator_profile p = named(parts[i].name);
		struct emulator_registers r = fresh(&p);
		uint64_t caps = 0;

		host_check(!emulator_read_msr(&r, &p, 0x345, &caps));
		host_checkf((caps & 0x3f) == parts[i].format, "%s: LBR format %llu, expected %llu",
			    parts[i].name, (unsigned long long)(caps & 0x3f),
			    (unsigned long long)parts[i].format);
	}
}

HOST_TEST(emulator_lbr_msrs_exist_at_the_profiles_bank_and_depth_only)
{
	struct emulator_profile core2 = named("core2"), nehalem = named("nehalem");
	struct emulator_profile skylake = named("skylake");
	struct emulator_registers r = fresh(&core2);

	/* Core 2: 4 entries at 0x40 / 0x60, no LBR_SELECT, no INFO. */
	expect_read(&core2, &r, 0x40, 0);
	expect_read(&core2, &r, 0x43, 0);
	expect_read(&core2, &r, 0x63, 0);
	expect_read_gp(&core2, &r, 0x44);
	expect_read_gp(&core2, &r, 0x64);
	expect_read_gp(&core2, &r, 0x680);
	expect_read_gp(&core2, &r, 0x1c8);
	expect_read(&core2, &r, 0x1c9, 0);
	/* Nehalem: 16 at 0x680 / 0x6C0, LBR_SELECT, no INFO. */
	r = fresh(&nehalem);
	expect_read(&nehalem, &r, 0x68f, 0);
	expect_read(&nehalem, &r, 0x6cf, 0);
	expect_read_gp(&nehalem, &r, 0x690);
	expect_read_gp(&nehalem, &r, 0x6d0);
	expect_read_gp(&nehalem, &r, 0x40);
	expect_read_gp(&nehalem, &r, 0xdc0);
	expect_read(&nehalem, &r, 0x1c8, 0);
	/* Skylake: 32 with INFO at 0xDC0. */
	r = fresh(&skylake);
	expect_read(&skylake, &r, 0x69f, 0);
	expect_read(&skylake, &r, 0x6df, 0);
	expect_read(&skylake, &r, 0xddf, 0);
	expect_read_gp(&skylake, &r, 0x6a0);
	expect_read_gp(&skylake, &r, 0xde0);
}

HOST_TEST(emulator_lbr_msrs_raise_gp_where_the_profile_has_no_model_specific_lbr)
{
	static const char *const none[] = { "kvm_pebs", "arrowlake", "zen2", "zen4" };
	static const uint32_t msrs[] = { 0x1c8, 0x1c9, 0x40, 0x60, 0x680, 0x6c0, 0xdc0 };

	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
		struct emulator_profile p = named(none[i]);
		struct emulator_registers r = fresh(&p);
		uint64_t debugctl = ~0ull;

		for (size_t m = 0; m < sizeof(msrs) / sizeof(msrs[0]); m++) {
			expect_read_gp(&p, &r, msrs[m]);
			expect_write_gp(&p, &r, msrs[m], 0);
		}
		/* DEBUGCTL.LBR is taken without a fault and reads 0. */
		host_checkf(!emulator_write_msr(&r, &p, 0x1d9, BIT(0)), "%s: DEBUGCTL.LBR #GP",
			    none[i]);
		host_check(!emulator_read_msr(&r, &p, 0x1d9, &debugctl));
		host_checkf(debugctl == 0, "%s: DEBUGCTL reads %#llx", none[i],
			    (unsigned long long)debugctl);
	}
}

HOST_TEST(emulator_lbr_select_reserved_bits_raise_gp_by_part)
{
	struct emulator_profile nehalem = named("nehalem"), haswell = named("haswell");
	struct emulator_registers r = fresh(&nehalem);

	expect_write(&nehalem, &r, 0x1c8, 0x1ff, 0x1ff);
	expect_write_gp(&nehalem, &r, 0x1c8, BIT(9)); /* EN_CALLSTACK: Haswell and later */
	r = fresh(&haswell);
	expect_write(&haswell, &r, 0x1c8, 0x3ff, 0x3ff);
	expect_write_gp(&haswell, &r, 0x1c8, BIT(10));
	expect_write_gp(&haswell, &r, 0x1c8, BIT(63));
}

HOST_TEST(emulator_lbr_tos_takes_an_index_below_the_depth)
{
	struct emulator_profile core2 = named("core2"), skylake = named("skylake");
	struct emulator_registers r = fresh(&skylake);

	expect_write(&skylake, &r, 0x1c9, 31, 31);
	expect_write_gp(&skylake, &r, 0x1c9, 32);
	r = fresh(&core2);
	expect_write(&core2, &r, 0x1c9, 3, 3);
	expect_write_gp(&core2, &r, 0x1c9, 4);
}

/*
 * TOS "points to the most recent branch record": the first record goes to entry 1 (TOS starts
 * at 0), and the ring wraps at the depth. Core 2's 4 entries after 5 branches: TOS = 5 mod 4 =
 * 1, entry 1 the fifth branch, 0 the fourth, 3 the third, 2 the second.
 */
HOST_TEST(emulator_lbr_tos_is_a_ring_of_the_profiles_depth)
{
	struct emulator_profile p = named("core2");
	struct emulator_registers r = recording(&p);

	for (uint64_t i = 1; i <= 5; i++)
		record(&r, &p, KERNEL_IP + i, KERNEL_IP + 0x100 + i, EMULATOR_LBR_NEAR_REL_JMP);
	expect_read(&p, &r, 0x1c9, 1);
	expect_read(&p, &r, 0x41, KERNEL_IP + 5);
	expect_read(&p, &r, 0x61, KERNEL_IP + 0x105);
	expect_read(&p, &r, 0x40, KERNEL_IP + 4);
	expect_read(&p, &r, 0x43, KERNEL_IP + 3);
	expect_read(&p, &r, 0x42, KERNEL_IP + 2);
	expect_read(&p, &r, 0x62, KERNEL_IP + 0x102);
}

/*
 * What the CPU writes to FROM (Linux lbr.c reads it back with skip = 1 or 3): format 3 keeps
 * bit 63 for mispredict, format 4 bits 63:61 for mispredict and TSX (written 0 without TSX),
 * format 5 the whole address (flags in INFO, written 0 here).
 */
HOST_TEST(emulator_lbr_from_holds_the_address_in_the_profiles_format)
{
	static const struct {
		const char *name;
		uint32_t from, to;
		uint64_t kernel, user;
	} parts[] = {
		{ "core2", 0x40, 0x60, 0xffffffff81234567ull, USER_IP },
		{ "nehalem", 0x680, 0x6c0, 0x7fffffff81234567ull, USER_IP },
		{ "haswell", 0x680, 0x6c0, 0x1fffffff81234567ull, USER_IP },
		{ "skylake", 0x680, 0x6c0, 0xffffffff81234567ull, USER_IP },
	};

	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		struct emulator_profile p = named(parts[i].name);
		struct emulator_registers r = recording(&p);

		record(&r, &p, KERNEL_IP, USER_IP, EMULATOR_LBR_FAR);
		record(&r, &p, USER_IP, USER_IP + 0x10, EMULATOR_LBR_JCC);
		expect_read(&p, &r, parts[i].from + 1, parts[i].kernel);
		expect_read(&p, &r, parts[i].to + 1, USER_IP);
		expect_read(&p, &r, parts[i].from + 2, parts[i].user);
		if (p.lbr_format == 5)
			expect_read(&p, &r, 0xdc1, 0);
	}
}

/*
 * The TSX-off rule (Linux lbr_from_signext_quirk_wr()): in format 4 without TSX, bits 62:61 of
 * a FROM write are sign extension, so the value the CPU recorded for a kernel address (62:61
 * clear) takes #GP when written back, and its sign-extended form is accepted. With TSX they
 * are flags and both are taken.
 */
HOST_TEST(emulator_lbr_tsx_off_from_writes_must_sign_extend_bits_62_61)
{
	struct emulator_profile off = named("haswell"), on = named("haswell");
	struct emulator_registers r = fresh(&off);

	host_check(!off.tsx);
	expect_write_gp(&off, &r, 0x680, 0x1fffffff81234567ull);
	expect_write(&off, &r, 0x680, 0x7fffffff81234567ull, 0x7fffffff81234567ull);
	expect_write(&off, &r, 0x680, BIT(63) | 0x7fffffff81234567ull,
		     BIT(63) | 0x7fffffff81234567ull);
	expect_write(&off, &r, 0x680, BIT(63) | USER_IP, BIT(63) | USER_IP);
	expect_write_gp(&off, &r, 0x680, BIT(61) | USER_IP);
	on.tsx = true;
	r = fresh(&on);
	expect_write(&on, &r, 0x680, 0x1fffffff81234567ull, 0x1fffffff81234567ull);
	expect_write(&on, &r, 0x680, BIT(62) | BIT(61) | USER_IP, BIT(62) | BIT(61) | USER_IP);
	expect_write_gp(&on, &r, 0x680, 0x0fffffff81234567ull); /* bit 60 breaks 60:47 */
}

HOST_TEST(emulator_lbr_to_and_from_writes_must_be_canonical)
{
	struct emulator_profile skylake = named("skylake"), nehalem = named("nehalem");
	struct emulator_registers r = fresh(&skylake);

	expect_write(&skylake, &r, 0x6c0, KERNEL_IP, KERNEL_IP);
	expect_write_gp(&skylake, &r, 0x6c0, 0x0000800000000000ull);
	expect_write_gp(&skylake, &r, 0x680, 0x7fffffff81234567ull);
	expect_write(&skylake, &r, 0xdc0, BIT(63) | 0xffff, BIT(63) | 0xffff);
	expect_write_gp(&skylake, &r, 0xdc0, BIT(16));
	r = fresh(&nehalem);
	expect_write(&nehalem, &r, 0x680, BIT(63) | 0x7fffffff81234567ull,
		     BIT(63) | 0x7fffffff81234567ull);
	expect_write_gp(&nehalem, &r, 0x680, 0x3fffffff81234567ull);
}

/* Each LBR_SELECT bit suppresses its kind, and only it (bits 2-8), and the CPL bits the ring a
 * branch ends in (0: ring 0, 1: ring > 0). */
HOST_TEST(emulator_lbr_select_suppresses_each_kind_and_ring)
{
	static const struct {
		enum emulator_lbr_kind kind;
		unsigned int bit;
	} kinds[] = {
		{ EMULATOR_LBR_JCC, 2 },	   { EMULATOR_LBR_NEAR_REL_CALL, 3 },
		{ EMULATOR_LBR_NEAR_IND_CALL, 4 }, { EMULATOR_LBR_NEAR_RET, 5 },
		{ EMULATOR_LBR_NEAR_IND_JMP, 6 },  { EMULATOR_LBR_NEAR_REL_JMP, 7 },
		{ EMULATOR_LBR_FAR, 8 },
	};
	struct emulator_profile p = named("skylake");

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		for (size_t j = 0; j < sizeof(kinds) / sizeof(kinds[0]); j++) {
			struct emulator_registers r = recording(&p);
			uint64_t tos = 0;

			host_check(!emulator_write_msr(&r, &p, 0x1c8, BIT(kinds[i].bit)));
			record(&r, &p, KERNEL_IP, KERNEL_IP + 8, kinds[j].kind);
			host_check(!emulator_read_msr(&r, &p, 0x1c9, &tos));
			host_checkf(tos == (i == j ? 0 : 1),
				    "LBR_SELECT bit %u, kind %zu: TOS %llu", kinds[i].bit, j,
				    (unsigned long long)tos);
		}
	}
	for (unsigned int bit = 0; bit <= 1; bit++) {
		struct emulator_registers r = recording(&p);

		host_check(!emulator_write_msr(&r, &p, 0x1c8, BIT(bit)));
		record(&r, &p, USER_IP, KERNEL_IP, EMULATOR_LBR_FAR); /* ends in ring 0 */
		expect_read(&p, &r, 0x1c9, bit == 0 ? 0 : 1);
		record(&r, &p, KERNEL_IP, USER_IP, EMULATOR_LBR_FAR); /* ends in ring 3 */
		expect_read(&p, &r, 0x1c9, bit == 0 ? 1 : 1);
		expect_read(&p, &r, 0x6c1, bit == 0 ? USER_IP : KERNEL_IP);
	}
}

HOST_TEST(emulator_lbr_records_nothing_without_debugctl_lbr)
{
	struct emulator_profile p = named("skylake");
	struct emulator_registers r = fresh(&p);

	record(&r, &p, KERNEL_IP, KERNEL_IP + 8, EMULATOR_LBR_JCC);
	expect_read(&p, &r, 0x1c9, 0);
	expect_read(&p, &r, 0x681, 0);
}

/*
 * Call-stack mode (LBR_SELECT bit 9, with everything but near calls and returns suppressed:
 * 0x3c4, as Linux's LBR_CALL_STACK selection): A calls B (entry 1), B calls C (entry 2), C
 * returns (pop: TOS 1), B calls D (entry 2 again). The stack reads D, then A's call.
 */
HOST_TEST(emulator_lbr_call_stack_mode_pushes_calls_and_pops_returns)
{
	struct emulator_profile p = named("haswell");
	struct emulator_registers r = recording(&p);

	host_check(!emulator_write_msr(&r, &p, 0x1c8, BIT(9) | 0x1c4));
	record(&r, &p, USER_IP + 0x10, USER_IP + 0x100, EMULATOR_LBR_NEAR_REL_CALL);
	record(&r, &p, USER_IP + 0x110, USER_IP + 0x200, EMULATOR_LBR_NEAR_IND_CALL);
	record(&r, &p, USER_IP + 0x210, USER_IP + 0x115, EMULATOR_LBR_NEAR_RET);
	expect_read(&p, &r, 0x1c9, 1);
	record(&r, &p, USER_IP + 0x120, USER_IP + 0x300, EMULATOR_LBR_NEAR_REL_CALL);
	record(&r, &p, USER_IP + 0x120, USER_IP + 0x300, EMULATOR_LBR_JCC); /* suppressed */
	expect_read(&p, &r, 0x1c9, 2);
	expect_read(&p, &r, 0x682, USER_IP + 0x120);
	expect_read(&p, &r, 0x6c2, USER_IP + 0x300);
	expect_read(&p, &r, 0x681, USER_IP + 0x10);
}

/*
 * FREEZE_LBRS_ON_PMI (DEBUGCTL bit 11): from perfmon v4 a PMI sets GLOBAL_STATUS bit 58 and
 * recording stops until GLOBAL_STATUS_RESET (0x390) clears it; before v4 the PMI clears
 * DEBUGCTL.LBR. Without the bit nothing freezes.
 */
HOST_TEST(emulator_lbr_freeze_on_pmi_by_status_bit_58_from_v4_and_by_debugctl_before)
{
	struct emulator_profile v4 = named("skylake"), v3 = named("nehalem");
	struct emulator_registers r = fresh(&v4);

	host_check(!emulator_write_msr(&r, &v4, 0x1d9, BIT(0) | BIT(11)));
	emulator_lbr_pmi(&r, &v4);
	expect_read(&v4, &r, 0x38e, BIT(58));
	expect_read(&v4, &r, 0x1d9, BIT(0) | BIT(11));
	record(&r, &v4, KERNEL_IP, KERNEL_IP + 8, EMULATOR_LBR_JCC);
	expect_read(&v4, &r, 0x1c9, 0);
	host_check(!emulator_write_msr(&r, &v4, 0x390, BIT(58)));
	expect_read(&v4, &r, 0x38e, 0);
	record(&r, &v4, KERNEL_IP, KERNEL_IP + 8, EMULATOR_LBR_JCC);
	expect_read(&v4, &r, 0x1c9, 1);

	r = fresh(&v3);
	host_check(!emulator_write_msr(&r, &v3, 0x1d9, BIT(0) | BIT(11)));
	emulator_lbr_pmi(&r, &v3);
	expect_read(&v3, &r, 0x1d9, BIT(11));
	expect_read(&v3, &r, 0x38e, 0);

	r = fresh(&v4);
	host_check(!emulator_write_msr(&r, &v4, 0x1d9, BIT(0)));
	emulator_lbr_pmi(&r, &v4);
	expect_read(&v4, &r, 0x38e, 0);
	expect_read(&v4, &r, 0x1d9, BIT(0));
}

/* Each branch instruction's kind, from its bytes (SDM Vol. 2 opcode map). */
HOST_TEST(emulator_lbr_kind_of_each_branch_encoding)
{
	static const struct {
		uint8_t bytes[6];
		size_t length;
		enum emulator_lbr_kind kind;
	} cases[] = {
		{ { 0x74, 0x00 }, 2, EMULATOR_LBR_JCC }, /* JZ rel8 */
		{ { 0xe8, 0, 0, 0, 0 }, 5, EMULATOR_LBR_NEAR_REL_CALL }, /* CALL rel32 */
		{ { 0xff, 0xd0 }, 2, EMULATOR_LBR_NEAR_IND_CALL }, /* CALL RAX */
		{ { 0xff, 0x18 }, 2, EMULATOR_LBR_FAR }, /* CALL FAR [RAX] */
		{ { 0xc3 }, 1, EMULATOR_LBR_NEAR_RET }, /* RET */
		{ { 0xc2, 0x08, 0x00 }, 3, EMULATOR_LBR_NEAR_RET }, /* RET 8 */
		{ { 0xcb }, 1, EMULATOR_LBR_FAR }, /* RET FAR */
		{ { 0xeb, 0x00 }, 2, EMULATOR_LBR_NEAR_REL_JMP }, /* JMP rel8 */
		{ { 0xff, 0xe0 }, 2, EMULATOR_LBR_NEAR_IND_JMP }, /* JMP RAX */
		{ { 0xff, 0x28 }, 2, EMULATOR_LBR_FAR }, /* JMP FAR [RAX] */
		{ { 0x0f, 0x05 }, 2, EMULATOR_LBR_FAR }, /* SYSCALL */
		{ { 0x48, 0xcf }, 2, EMULATOR_LBR_FAR }, /* IRETQ */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct decoded_instruction insn;

		if (!host_checkf(decode_instruction(cases[i].bytes, cases[i].length, &insn),
				 "case %zu does not decode", i))
			continue;
		host_checkf(emulator_lbr_kind(&insn) == cases[i].kind, "case %zu: kind %d, not %d",
			    i, (int)emulator_lbr_kind(&insn), (int)cases[i].kind);
	}
}

/* A PEBS record's LBR group: the newest entries first, up to the first empty one; none while
 * the stack does not record. */
HOST_TEST(emulator_lbr_newest_entries_for_a_pebs_record)
{
	struct emulator_profile p = named("skylake");
	struct emulator_registers r = recording(&p);
	struct pebs_assist_lbr out[8];

	for (uint64_t i = 1; i <= 3; i++)
		record(&r, &p, KERNEL_IP + i, KERNEL_IP + 0x100 + i, EMULATOR_LBR_JCC);
	host_check_eq_u64(3, emulator_lbr_newest(&r, &p, out, 8));
	host_check_eq_u64(KERNEL_IP + 3, out[0].from);
	host_check_eq_u64(KERNEL_IP + 0x103, out[0].to);
	host_check_eq_u64(KERNEL_IP + 1, out[2].from);
	host_check_eq_u64(2, emulator_lbr_newest(&r, &p, out, 2));
	host_check(!emulator_write_msr(&r, &p, 0x1d9, 0));
	host_check_eq_u64(0, emulator_lbr_newest(&r, &p, out, 8));
}

/*
 * Architectural LBR (arrowlake: depths 8-32): LBR_CTL (0x14CE) takes bits 3:0 and 22:16 only,
 * DEPTH (0x14CF) a supported depth only and a write zeroes the records, its reset value the
 * deepest; FROM/TO/INFO at 0x1500/0x1600/0x1200 up to 32 entries; the legacy MSRs #GP.
 */
HOST_TEST(emulator_arch_lbr_ctl_and_depth_by_the_sdm)
{
	struct emulator_profile p = named("arrowlake");
	struct emulator_registers r = fresh(&p);

	expect_write(&p, &r, 0x14ce, 0x7f000f, 0x7f000f);
	expect_write_gp(&p, &r, 0x14ce, BIT(4));
	expect_write_gp(&p, &r, 0x14ce, BIT(23));
	expect_read(&p, &r, 0x14cf, 32);
	expect_write_gp(&p, &r, 0x14cf, 0);
	expect_write_gp(&p, &r, 0x14cf, 12);
	expect_write_gp(&p, &r, 0x14cf, 40);
	expect_write(&p, &r, 0x1505, KERNEL_IP, KERNEL_IP);
	expect_write(&p, &r, 0x14cf, 16, 16);
	expect_read(&p, &r, 0x1505, 0);
	expect_read(&p, &r, 0x161f, 0);
	expect_read_gp(&p, &r, 0x1520);
	expect_read_gp(&p, &r, 0x680);
	expect_read_gp(&p, &r, 0x1c9);
}

/* Entry 0 is the newest; each new record moves the others down, the oldest within DEPTH falls
 * off; a set LBR_CTL bit records its kind and ring; in call-stack mode a return pops entry 0. */
HOST_TEST(emulator_arch_lbr_entry_0_is_the_newest)
{
	struct emulator_profile p = named("arrowlake");
	struct emulator_registers r = fresh(&p);

	/* LBREN | OS | every kind, DEPTH 8 */
	host_check(!emulator_write_msr(&r, &p, 0x14cf, 8));
	host_check(!emulator_write_msr(&r, &p, 0x14ce, 0x7f0003));
	for (uint64_t i = 1; i <= 9; i++)
		record(&r, &p, KERNEL_IP + i, KERNEL_IP + 0x100 + i, EMULATOR_LBR_JCC);
	expect_read(&p, &r, 0x1500, KERNEL_IP + 9);
	expect_read(&p, &r, 0x1600, KERNEL_IP + 0x109);
	expect_read(&p, &r, 0x1507, KERNEL_IP + 2);
	expect_read(&p, &r, 0x1508, 0); /* past DEPTH: the first branch fell off */
	record(&r, &p, KERNEL_IP, USER_IP, EMULATOR_LBR_JCC); /* ends in ring 3: USR clear */
	expect_read(&p, &r, 0x1500, KERNEL_IP + 9);
	/* Only near calls and returns, call-stack mode: a call pushes, a return pops. */
	host_check(!emulator_write_msr(&r, &p, 0x14cf, 8));
	host_check(
		!emulator_write_msr(&r, &p, 0x14ce, BIT(0) | BIT(1) | BIT(3) | BIT(19) | BIT(21)));
	record(&r, &p, KERNEL_IP + 1, KERNEL_IP + 0x10, EMULATOR_LBR_NEAR_REL_CALL);
	record(&r, &p, KERNEL_IP + 2, KERNEL_IP + 0x20, EMULATOR_LBR_NEAR_REL_CALL);
	record(&r, &p, KERNEL_IP + 3, KERNEL_IP + 0x30, EMULATOR_LBR_JCC); /* not recorded */
	record(&r, &p, KERNEL_IP + 0x21, KERNEL_IP + 3, EMULATOR_LBR_NEAR_RET);
	expect_read(&p, &r, 0x1500, KERNEL_IP + 1);
	expect_read(&p, &r, 0x1501, 0);
}

HOST_TEST(emulator_arch_lbr_cpuid_leaf_1c)
{
	struct emulator_profile p = named("arrowlake"), legacy = named("icelake");
	struct cpuid_result real = { 0 };
	struct cpuid_result leaf = emulator_cpuid(&p, 0x1c, 0, real);

	host_check_eq_u64(0x0f | BIT(30) | BIT(31), leaf.eax);
	host_check_eq_u64(0x7, leaf.ebx);
	host_check_eq_u64(0x7, leaf.ecx);
	host_check(emulator_cpuid(&p, 7, 0, real).edx & BIT(19));
	host_check(emulator_cpuid(&p, 0, 0, real).eax >= 0x1c);
	host_check(!(emulator_cpuid(&legacy, 7, 0, real).edx & BIT(19)));
	host_check_eq_u64(0, emulator_cpuid(&legacy, 0x1c, 0, real).eax);
}
