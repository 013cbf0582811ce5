/* SPDX-License-Identifier: MIT */
/* Host tests of emulator/lbr_amd.c: AMD LbrExtV2 by profile, its MSRs, order, filter, freeze. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "emulator/lbr_amd.h"
#include "emulator/profile.h"
#include "emulator/registers.h"
#include "tests/host/emulator_checks.h"
#include "tests/host/host_test.h"

/*
 * Expected values are typed from Linux arch/x86/events/amd/lbr.c and msr-index.h (the APM's
 * numbers), not from the model's constants: MSR numbers and bit positions are literals here.
 */
#define BIT(n) (1ull << (n))
#define LBR_SELECT 0xc000010eu
#define DBG_EXTN_CFG 0xc000010fu
#define LBRV2EN BIT(6)
#define FROM0 0xc0010300u /* FROM i at + 2i, TO i at + 2i + 1 */
#define TO0 0xc0010301u
#define GLOBAL_STATUS 0xc0000300u
#define GLOBAL_CTL 0xc0000301u
#define GLOBAL_STATUS_CLR 0xc0000302u
#define LBRS_FROZEN BIT(58)
#define DEBUGCTL 0x1d9u
#define FREEZE_LBRS_ON_PMI BIT(11)
#define TO_VALID BIT(63)
#define KERNEL_IP 0xffffffff81234567ull
#define KERNEL_TO 0xffffffff81000000ull
#define USER_IP 0x0000000000401000ull
#define USER_TO 0x0000000000402000ull
/* The TO MSR of KERNEL_TO as the CPU writes it: bits 60:0 the address, 63 valid. */
#define KERNEL_TO_RECORDED (0x1fffffff81000000ull | TO_VALID)

/* zen4 recording every branch kind in both rings. */
static struct emulator_registers recording(const struct emulator_profile *p)
{
	struct emulator_registers r = fresh(p);

	host_check(!emulator_write_msr(&r, p, DBG_EXTN_CFG, LBRV2EN));
	return r;
}

static void record(struct emulator_registers *r, const struct emulator_profile *p, uint64_t from,
		   uint64_t to, enum emulator_lbr_kind kind)
{
	emulator_amd_lbr_record(r, p, from, to, to < 0x0000800000000000ull, kind);
}

HOST_TEST(emulator_lbr_amd_cpuid_enumerates_lbr_ext_v2_on_zen4_only)
{
	static const char *const without[] = { "zen2", "icelake", "arrowlake", "skylake" };
	struct emulator_profile zen4 = named("zen4");
	struct cpuid_result all = { 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff };
	struct cpuid_result r = emulator_cpuid(&zen4, 0x80000022, 0, all);

	host_check_eq_u64(BIT(1) | BIT(2), r.eax & (BIT(1) | BIT(2)));
	host_check_eq_u64(16, (r.ebx >> 4) & 0x3f); /* LbrV2StackSize */
	for (size_t i = 0; i < sizeof(without) / sizeof(without[0]); i++) {
		struct emulator_profile p = named(without[i]);

		r = emulator_cpuid(&p, 0x80000022, 0, all);
		host_checkf(!(r.eax & (BIT(1) | BIT(2))) && !((r.ebx >> 4) & 0x3f),
			    "%s: 0x80000022 EAX 0x%x EBX 0x%x", without[i], r.eax, r.ebx);
	}
}

HOST_TEST(emulator_lbr_amd_msrs_exist_on_zen4_up_to_its_depth_only)
{
	static const char *const without[] = { "zen2", "icelake", "arrowlake", "skylake" };
	struct emulator_profile zen4 = named("zen4");
	struct emulator_registers r = fresh(&zen4);

	expect_read(&zen4, &r, LBR_SELECT, 0);
	expect_read(&zen4, &r, DBG_EXTN_CFG, 0);
	expect_read(&zen4, &r, FROM0, 0);
	expect_read(&zen4, &r, TO0 + 2 * 15, 0);
	expect_read_gp(&zen4, &r, FROM0 + 2 * 16);
	expect_read_gp(&zen4, &r, TO0 + 2 * 16);
	expect_write_gp(&zen4, &r, FROM0 + 2 * 16, 0);
	host_check(emulator_owns_msr(LBR_SELECT) && emulator_owns_msr(DBG_EXTN_CFG));
	host_check(emulator_owns_msr(FROM0) && emulator_owns_msr(TO0 + 2 * 31));
	for (size_t i = 0; i < sizeof(without) / sizeof(without[0]); i++) {
		struct emulator_profile p = named(without[i]);
		struct emulator_registers q = fresh(&p);

		expect_read_gp(&p, &q, LBR_SELECT);
		expect_read_gp(&p, &q, DBG_EXTN_CFG);
		expect_read_gp(&p, &q, FROM0);
		expect_read_gp(&p, &q, TO0);
		expect_write_gp(&p, &q, DBG_EXTN_CFG, LBRV2EN);
		expect_write_gp(&p, &q, FROM0, 0);
	}
}

HOST_TEST(emulator_lbr_amd_reserved_bits_raise_gp)
{
	struct emulator_profile zen4 = named("zen4"), zen2 = named("zen2");
	struct emulator_registers r = fresh(&zen4), q = fresh(&zen2);

	expect_write(&zen4, &r, LBR_SELECT, 0x1ff, 0x1ff);
	expect_write_gp(&zen4, &r, LBR_SELECT, BIT(9)); /* no call-stack bit on AMD */
	expect_write_gp(&zen4, &r, DBG_EXTN_CFG, BIT(0));
	expect_write_gp(&zen4, &r, DBG_EXTN_CFG, LBRV2EN | BIT(7));
	expect_write(&zen4, &r, DBG_EXTN_CFG, LBRV2EN, LBRV2EN);
	/* FROM: bit 63 mispredict, 62:47 sign extension; TO: 63 valid, 62 spec, 61 reserved. */
	expect_write(&zen4, &r, FROM0, KERNEL_IP & ~BIT(63), KERNEL_IP & ~BIT(63));
	expect_write(&zen4, &r, FROM0, USER_IP | BIT(63), USER_IP | BIT(63));
	expect_write_gp(&zen4, &r, FROM0, USER_IP | BIT(62));
	expect_write_gp(&zen4, &r, FROM0, BIT(47));
	expect_write(&zen4, &r, TO0, KERNEL_TO_RECORDED, KERNEL_TO_RECORDED);
	expect_write(&zen4, &r, TO0, USER_TO | BIT(62) | BIT(63), USER_TO | BIT(62) | BIT(63));
	expect_write_gp(&zen4, &r, TO0, USER_TO | BIT(61));
	expect_write_gp(&zen4, &r, TO0, KERNEL_TO); /* bit 61 set: the reserved bit */
	expect_write_gp(&zen4, &r, TO0, BIT(60));
	/* The freeze bit: DEBUGCTL and GlobalStatusClr take it with LbrAndPmcFreeze only. */
	expect_write(&zen4, &r, DEBUGCTL, FREEZE_LBRS_ON_PMI, FREEZE_LBRS_ON_PMI);
	expect_write_gp(&zen2, &q, DEBUGCTL, FREEZE_LBRS_ON_PMI);
	expect_write(&zen4, &r, GLOBAL_STATUS_CLR, LBRS_FROZEN, 0);
	expect_write_gp(&zen4, &r, GLOBAL_CTL, LBRS_FROZEN);
}

HOST_TEST(emulator_lbr_amd_entry_0_is_the_newest_and_valid)
{
	struct emulator_profile zen4 = named("zen4");
	struct emulator_registers r = recording(&zen4);

	for (uint64_t n = 0; n < 20; n++)
		record(&r, &zen4, USER_IP + n, USER_TO + n, EMULATOR_LBR_JCC);
	/* 20 branches into 16 entries: entry i holds branch 19 - i; 0-3 fell off. */
	for (uint32_t i = 0; i < 16; i++) {
		expect_read(&zen4, &r, FROM0 + 2 * i, USER_IP + 19 - i);
		expect_read(&zen4, &r, TO0 + 2 * i, (USER_TO + 19 - i) | TO_VALID);
	}
	record(&r, &zen4, KERNEL_IP, KERNEL_TO, EMULATOR_LBR_NEAR_REL_CALL);
	expect_read(&zen4, &r, FROM0, KERNEL_IP & ~BIT(63));
	expect_read(&zen4, &r, TO0, KERNEL_TO_RECORDED);
	expect_read(&zen4, &r, FROM0 + 2, USER_IP + 19);
}

HOST_TEST(emulator_lbr_amd_records_nothing_without_lbrv2en)
{
	struct emulator_profile zen4 = named("zen4");
	struct emulator_registers r = fresh(&zen4);

	host_check(!emulator_write_msr(&r, &zen4, DEBUGCTL, BIT(0))); /* DEBUGCTL.LBR: dropped */
	record(&r, &zen4, USER_IP, USER_TO, EMULATOR_LBR_JCC);
	expect_read(&zen4, &r, FROM0, 0);
	host_check(!emulator_amd_lbr_observes(&r, &zen4, true));
	host_check(!emulator_write_msr(&r, &zen4, DBG_EXTN_CFG, LBRV2EN));
	host_check(emulator_amd_lbr_observes(&r, &zen4, true));
	record(&r, &zen4, USER_IP, USER_TO, EMULATOR_LBR_JCC);
	expect_read(&zen4, &r, FROM0, USER_IP);
}

HOST_TEST(emulator_lbr_amd_lbr_select_suppresses_rings_and_kinds)
{
	static const struct {
		enum emulator_lbr_kind kind;
		unsigned int bit;
	} kinds[] = { { EMULATOR_LBR_JCC, 2 },
		      { EMULATOR_LBR_NEAR_REL_CALL, 3 },
		      { EMULATOR_LBR_NEAR_IND_CALL, 4 },
		      { EMULATOR_LBR_NEAR_RET, 5 },
		      { EMULATOR_LBR_NEAR_IND_JMP, 6 },
		      { EMULATOR_LBR_NEAR_REL_JMP, 7 },
		      { EMULATOR_LBR_FAR, 8 } };
	struct emulator_profile zen4 = named("zen4");

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		struct emulator_registers r = recording(&zen4);

		host_check(!emulator_write_msr(&r, &zen4, LBR_SELECT, BIT(kinds[i].bit)));
		record(&r, &zen4, USER_IP, USER_TO, kinds[i].kind);
		expect_read(&zen4, &r, FROM0, 0);
		/* Every other kind suppressed, both rings (bits 1:0) kept. */
		host_check(!emulator_write_msr(&r, &zen4, LBR_SELECT, 0x1fc & ~BIT(kinds[i].bit)));
		record(&r, &zen4, USER_IP, USER_TO, kinds[i].kind);
		expect_read(&zen4, &r, FROM0, USER_IP);
	}
	{
		struct emulator_registers r = recording(&zen4);

		host_check(!emulator_write_msr(&r, &zen4, LBR_SELECT, BIT(0))); /* not ring 0 */
		host_check(!emulator_amd_lbr_observes(&r, &zen4, false));
		host_check(emulator_amd_lbr_observes(&r, &zen4, true));
		record(&r, &zen4, KERNEL_IP, KERNEL_TO, EMULATOR_LBR_JCC);
		record(&r, &zen4, USER_IP, USER_TO, EMULATOR_LBR_JCC);
		expect_read(&zen4, &r, FROM0, USER_IP);
		expect_read(&zen4, &r, FROM0 + 2, 0);
		host_check(!emulator_write_msr(&r, &zen4, LBR_SELECT, BIT(1))); /* not ring 3 */
		host_check(!emulator_amd_lbr_observes(&r, &zen4, true));
		record(&r, &zen4, USER_IP + 1, USER_TO, EMULATOR_LBR_JCC);
		record(&r, &zen4, KERNEL_IP, KERNEL_TO, EMULATOR_LBR_JCC);
		expect_read(&zen4, &r, FROM0, KERNEL_IP & ~BIT(63));
		expect_read(&zen4, &r, FROM0 + 2, USER_IP);
	}
}

HOST_TEST(emulator_lbr_amd_a_pmi_freezes_through_global_status_58)
{
	struct emulator_profile zen4 = named("zen4");
	struct emulator_registers r = recording(&zen4), plain = recording(&zen4);

	emulator_amd_lbr_pmi(&plain, &zen4); /* without FREEZE_LBRS_ON_PMI: nothing */
	expect_read(&zen4, &plain, GLOBAL_STATUS, 0);
	host_check(!emulator_write_msr(&r, &zen4, DEBUGCTL, FREEZE_LBRS_ON_PMI));
	record(&r, &zen4, USER_IP, USER_TO, EMULATOR_LBR_JCC);
	emulator_amd_lbr_pmi(&r, &zen4);
	expect_read(&zen4, &r, GLOBAL_STATUS, LBRS_FROZEN);
	host_check(!emulator_amd_lbr_observes(&r, &zen4, true));
	record(&r, &zen4, USER_IP + 1, USER_TO, EMULATOR_LBR_JCC);
	expect_read(&zen4, &r, FROM0, USER_IP);
	expect_write(&zen4, &r, GLOBAL_STATUS_CLR, LBRS_FROZEN, 0);
	expect_read(&zen4, &r, GLOBAL_STATUS, 0);
	record(&r, &zen4, USER_IP + 2, USER_TO, EMULATOR_LBR_JCC);
	expect_read(&zen4, &r, FROM0, USER_IP + 2);
	expect_read(&zen4, &r, FROM0 + 2, USER_IP);
}

HOST_TEST(emulator_lbr_amd_profile_rules)
{
	struct emulator_profile zen4 = named("zen4"), icelake = named("icelake");
	char err[128] = "";

	host_check(emulator_profile_override(&zen4, "perfmon_v2", "0", err, sizeof(err)));
	host_check_eq_u64(0, zen4.lbr_v2_depth); /* LbrExtV2 goes with PerfMonV2 */
	zen4 = named("zen4");
	zen4.lbr_v2_depth = 33;
	host_check(!emulator_profile_check(&zen4, err, sizeof(err)));
	icelake.lbr_v2_depth = 16;
	host_check(!emulator_profile_check(&icelake, err, sizeof(err)));
}
