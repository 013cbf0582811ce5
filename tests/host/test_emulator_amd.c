/* SPDX-License-Identifier: MIT */
/* Host tests of emulator/amd.c and the AMD profiles: each rule 26 case broken and kept. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "arch/x86/cpuid.h"
#include "emulator/profile.h"
#include "emulator/registers.h"
#include "tests/host/emulator_checks.h"
#include "tests/host/host_test.h"

/*
 * Expected values are written out from the AMD APM (Vol. 2 §13.2, Vol. 3 Appendix E) and Linux
 * (msr-index.h, events/amd/core.c), not from the constants, so a wrong constant fails here too.
 */
#define BIT(n) (1ull << (n))
#define K7_CTL0 0xc0010000u
#define K7_CTR0 0xc0010004u
#define CTL0 0xc0010200u /* CTLi at + 2i, CTRi at + 2i + 1 */
#define CTR0 0xc0010201u
#define GLOBAL_STATUS 0xc0000300u
#define GLOBAL_CTL 0xc0000301u
#define GLOBAL_STATUS_CLR 0xc0000302u
#define GLOBAL_STATUS_SET 0xc0000303u
#define EN BIT(22)
#define OS BIT(17)
#define USR BIT(16)
#define INT BIT(20)

static struct emulator_profile overridden(const char *name, const char *key, const char *value)
{
	struct emulator_profile p = named(name);
	char err[128] = "";

	host_checkf(emulator_profile_override(&p, key, value, err, sizeof(err)), "%s:%s=%s: %s",
		    name, key, value, err);
	return p;
}

HOST_TEST(emulator_amd_profiles_are_the_real_parts)
{
	struct emulator_profile zen2 = named("zen2"), zen4 = named("zen4");
	char err[128] = "";

	host_check(zen2.amd && zen2.perfctr_core && !zen2.perfmon_v2);
	host_check(zen4.amd && zen4.perfctr_core && zen4.perfmon_v2);
	host_check_eq_u64(6, zen2.gp_counters);
	host_check_eq_u64(6, zen4.gp_counters);
	host_check_eq_u64(48, zen2.gp_width);
	host_check_eq_u64(0, zen2.perfmon_version);
	host_check_eq_u64(0x00830f10, zen2.family_model_stepping); /* 17h, model 31h */
	host_check_eq_u64(0x00a10f11, zen4.family_model_stepping); /* 19h, model 11h */
	host_checkf(emulator_profile_check(&zen2, err, sizeof(err)), "zen2: %s", err);
	host_checkf(emulator_profile_check(&zen4, err, sizeof(err)), "zen4: %s", err);
	host_check_eq_u64((1ull << 48) - 1, emulator_counter_mask(&zen2, false));
	host_check_eq_u64(0, emulator_counter_mask(&zen2, true));
	host_check_eq_u64(0x3f, emulator_counter_bits(&zen4));
}

HOST_TEST(emulator_amd_cpuid_says_authentic_amd_and_its_pmu)
{
	struct emulator_profile zen2 = named("zen2"), zen4 = named("zen4");
	/* A real leaf with every bit set: the profile decides 23 and 26. */
	struct cpuid_result all = { 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff };
	struct cpuid_result max = { 0x80000008, 0, 0, 0 };
	struct cpuid_result r;

	r = emulator_cpuid(&zen2, 0, 0, (struct cpuid_result){ 0x10, 0, 0, 0 });
	host_check_eq_u64(0x10, r.eax); /* the real highest basic leaf */
	host_check_eq_u64(0x68747541, r.ebx); /* "Auth" */
	host_check_eq_u64(0x69746e65, r.edx); /* "enti" */
	host_check_eq_u64(0x444d4163, r.ecx); /* "cAMD" */
	r = emulator_cpuid(&zen2, 1, 0, all);
	host_check_eq_u64(0x00830f10, r.eax);
	host_check_eq_u64(0, r.edx & BIT(21)); /* no DS */
	host_check_eq_u64(0, r.ecx & (BIT(2) | BIT(4) | BIT(15))); /* DTES64, DS-CPL, PDCM */
	host_check_eq_u64(0, emulator_cpuid(&zen2, 0xa, 0, all).eax); /* no leaf 0AH */
	r = emulator_cpuid(&zen2, 0x80000001, 0, all);
	host_check_eq_u64(0xffffffff & ~BIT(26), r.ecx); /* PerfCtrExtCore; BPEXT not modelled */
	host_check_eq_u64(0xffffffff, r.edx);
	r = emulator_cpuid(&zen2, 0x80000022, 0, all);
	host_check(r.eax == 0 && r.ebx == 0 && r.ecx == 0 && r.edx == 0);
	host_check_eq_u64(0x80000008, emulator_cpuid(&zen2, 0x80000000, 0, max).eax);
	host_check_eq_u64(0x80000022, emulator_cpuid(&zen4, 0x80000000, 0, max).eax);
	r = emulator_cpuid(&zen4, 0x80000022, 0, all);
	host_check_eq_u64(7, r.eax); /* PerfMonV2, LbrExtV2, LbrAndPmcFreeze */
	host_check_eq_u64(0x106, r.ebx); /* NumPerfCtrCore 6, LbrV2StackSize 16, no DF counters */
	host_check(r.ecx == 0 && r.edx == 0);
	r = emulator_cpuid(&zen4, 0x80000001, 0, (struct cpuid_result){ 0 });
	host_check_eq_u64(BIT(23), r.ecx);
}

HOST_TEST(emulator_amd_cpuid_of_an_intel_profile_denies_amd_features)
{
	struct emulator_profile p = named("icelake");
	struct cpuid_result all = { 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff };
	struct cpuid_result r = emulator_cpuid(&p, 0x80000001, 0, all);

	host_check_eq_u64(0xffffffff & ~(BIT(23) | BIT(26)), r.ecx);
	r = emulator_cpuid(&p, 0x80000022, 0, all);
	host_check(r.eax == 0 && r.ebx == 0);
	host_check_eq_u64(0x80000008, emulator_cpuid(&p, 0x80000000, 0,
						     (struct cpuid_result){ 0x80000008, 0, 0, 0 })
					      .eax);
	host_check_eq_u64(0x756e6547, emulator_cpuid(&p, 0, 0, all).ebx); /* "Genu" */
}

HOST_TEST(emulator_amd_k7_msrs_are_counters_0_to_3_of_perfctr_ext_core)
{
	struct emulator_profile p = named("zen2");
	struct emulator_registers r = fresh(&p);

	for (unsigned int i = 0; i < 4; i++) {
		expect_write(&p, &r, K7_CTL0 + i, 0x76 | OS | EN | i, 0x76 | OS | EN | i);
		expect_read(&p, &r, CTL0 + 2 * i, 0x76 | OS | EN | i);
		expect_write(&p, &r, CTR0 + 2 * i, 0x123456789abcull + i, 0x123456789abcull + i);
		expect_read(&p, &r, K7_CTR0 + i, 0x123456789abcull + i);
	}
	for (unsigned int i = 4; i < 6; i++) {
		expect_write(&p, &r, CTL0 + 2 * i, 0xc0 | USR | EN, 0xc0 | USR | EN);
		expect_write(&p, &r, CTR0 + 2 * i, (1ull << 48) - 1, (1ull << 48) - 1);
	}
	/* The MSR after the sixth counter is not the model's, and not a counter: #GP on AMD. */
	expect_read_gp(&p, &r, CTL0 + 12);
}

HOST_TEST(emulator_amd_perfctr_ext_core_msrs_raise_gp_without_it)
{
	struct emulator_profile p = overridden("zen2", "perfctr_core", "0");
	struct emulator_registers r = fresh(&p);
	struct cpuid_result all = { 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff };

	host_check_eq_u64(4, p.gp_counters);
	host_check_eq_u64(0, emulator_cpuid(&p, 0x80000001, 0, all).ecx & BIT(23));
	for (unsigned int n = 0; n < 12; n++) {
		expect_read_gp(&p, &r, CTL0 + n);
		expect_write_gp(&p, &r, CTL0 + n, 0);
	}
	for (unsigned int i = 0; i < 4; i++)
		expect_write(&p, &r, K7_CTL0 + i, 0x76 | EN, 0x76 | EN);
}

HOST_TEST(emulator_amd_perf_ctl_reserved_bits_raise_gp)
{
	static const unsigned int reserved[] = { 19, 21, 36, 37, 38, 39, 42, 47, 63 };
	static const unsigned int defined[] = { 0,  7,	8,  15, 16, 17, 18, 20,
						22, 23, 24, 31, 32, 35, 40, 41 };
	struct emulator_profile p = named("zen4");
	struct emulator_registers r = fresh(&p);

	for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++) {
		expect_write_gp(&p, &r, CTL0, BIT(reserved[i]));
		expect_write_gp(&p, &r, K7_CTL0 + 3, BIT(reserved[i]));
	}
	for (size_t i = 0; i < sizeof(defined) / sizeof(defined[0]); i++)
		expect_write(&p, &r, CTL0 + 10, BIT(defined[i]), BIT(defined[i]));
}

HOST_TEST(emulator_amd_perf_ctr_takes_48_bits_and_no_sign_extension)
{
	struct emulator_profile p = named("zen2");
	struct emulator_registers r = fresh(&p);

	/* No legacy 32-bit sign extension as Intel's IA32_PMCx: the value as written. */
	expect_write(&p, &r, K7_CTR0, 0x80000000ull, 0x80000000ull);
	expect_write(&p, &r, CTR0 + 2, 0xffffffffffffull, 0xffffffffffffull);
	expect_write_gp(&p, &r, CTR0 + 2, BIT(48));
	expect_write_gp(&p, &r, K7_CTR0 + 1, BIT(63));
}

HOST_TEST(emulator_amd_perfmon_v2_global_msrs_exist_only_with_it)
{
	struct emulator_profile zen2 = named("zen2"), zen4 = named("zen4");
	struct emulator_registers r2 = fresh(&zen2), r4 = fresh(&zen4);

	for (uint32_t msr = GLOBAL_STATUS; msr <= GLOBAL_STATUS_SET; msr++) {
		expect_read_gp(&zen2, &r2, msr);
		expect_write_gp(&zen2, &r2, msr, 0);
	}
	/* Out of RESET every counter is enabled globally (KVM kvm_pmu_refresh(); APM). */
	expect_read(&zen4, &r4, GLOBAL_CTL, 0x3f);
	expect_read(&zen4, &r4, GLOBAL_STATUS, 0);
	expect_write(&zen4, &r4, GLOBAL_CTL, 0x21, 0x21);
	expect_write_gp(&zen4, &r4, GLOBAL_CTL, BIT(6));
	expect_write_gp(&zen4, &r4, GLOBAL_CTL, BIT(32));
	expect_write_gp(&zen4, &r4, GLOBAL_STATUS, 0); /* read-only */
}

/* KVM left GlobalStatusSet unemulated for two years (68e61f6fd656): it exists on every v2 PMU. */
HOST_TEST(emulator_amd_global_status_set_and_clr_set_and_clear_status)
{
	struct emulator_profile p = named("zen4");
	struct emulator_registers r = fresh(&p);

	expect_write(&p, &r, GLOBAL_STATUS_SET, 0x25, 0); /* reads 0, as KVM */
	expect_read(&p, &r, GLOBAL_STATUS, 0x25);
	expect_write(&p, &r, GLOBAL_STATUS_CLR, 0x05, 0);
	expect_read(&p, &r, GLOBAL_STATUS, 0x20);
	expect_write_gp(&p, &r, GLOBAL_STATUS_SET, BIT(6));
	expect_write_gp(&p, &r, GLOBAL_STATUS_CLR, BIT(63));
	expect_read(&p, &r, GLOBAL_STATUS, 0x20);
	/* With v2 a reload leaves the status alone: GlobalStatusClr acknowledges. */
	expect_write(&p, &r, CTR0 + 10, 1, 1);
	expect_read(&p, &r, GLOBAL_STATUS, 0x20);
}

HOST_TEST(emulator_amd_perfmon_v2_counter_count_is_ebx)
{
	struct emulator_profile p = overridden("zen4", "gp", "3");
	struct emulator_registers r = fresh(&p);
	char err[128];

	host_check_eq_u64(0x103, emulator_cpuid(&p, 0x80000022, 0, (struct cpuid_result){ 0 }).ebx);
	expect_read(&p, &r, GLOBAL_CTL, 0x7);
	expect_write(&p, &r, K7_CTL0 + 2, EN, EN);
	expect_read_gp(&p, &r, K7_CTL0 + 3);
	expect_read_gp(&p, &r, CTR0 + 6);
	expect_write_gp(&p, &r, GLOBAL_CTL, BIT(3));
	p = named("zen2");
	host_check(!emulator_profile_override(&p, "gp", "3", err, sizeof(err)));
	host_check(!emulator_profile_override(&p, "gp", "7", err, sizeof(err)));
}

HOST_TEST(emulator_amd_intel_only_msrs_raise_gp_on_amd)
{
	/* PERFEVTSEL0, PMC0, A_PMC0, FIXED_CTR0, FIXED_CTR_CTRL, GLOBAL_STATUS/CTRL/OVF_CTRL,
	 * PERF_CAPABILITIES, PEBS_ENABLE, PEBS_DATA_CFG, DS_AREA, MISC_ENABLE. */
	static const uint32_t intel[] = { 0x186, 0xc1,	0x4c1, 0x309, 0x38d, 0x38e, 0x38f,
					  0x390, 0x345, 0x3f1, 0x3f2, 0x600, 0x1a0 };
	static const char *const names[] = { "zen2", "zen4" };

	for (size_t n = 0; n < 2; n++) {
		struct emulator_profile p = named(names[n]);
		struct emulator_registers r = fresh(&p);

		for (size_t i = 0; i < sizeof(intel) / sizeof(intel[0]); i++) {
			expect_read_gp(&p, &r, intel[i]);
			expect_write_gp(&p, &r, intel[i], 0);
		}
	}
}

HOST_TEST(emulator_amd_msrs_raise_gp_on_intel)
{
	struct emulator_profile p = named("icelake");
	struct emulator_registers r = fresh(&p);

	for (uint32_t msr = K7_CTL0; msr < K7_CTL0 + 8; msr++)
		expect_read_gp(&p, &r, msr), expect_write_gp(&p, &r, msr, 0);
	for (uint32_t msr = CTL0; msr < CTL0 + 12; msr++)
		expect_read_gp(&p, &r, msr), expect_write_gp(&p, &r, msr, 0);
	for (uint32_t msr = GLOBAL_STATUS; msr <= GLOBAL_STATUS_SET; msr++)
		expect_read_gp(&p, &r, msr), expect_write_gp(&p, &r, msr, 0);
}

HOST_TEST(emulator_amd_debugctl_keeps_btf_and_drops_lbr_and_has_no_bts)
{
	struct emulator_profile p = named("zen2");
	struct emulator_registers r = fresh(&p);

	expect_write(&p, &r, 0x1d9, BIT(0) | BIT(1), BIT(1));
	for (unsigned int bit = 6; bit <= 12; bit++)
		expect_write_gp(&p, &r, 0x1d9, BIT(bit));
}

/*
 * The engine counts by evtsel: Intel's architectural encodings of the events amd.c translates
 * from Linux amd_perfmon_event_map (cycles 0x76, instructions 0xc0, branches 0xc2), and EN
 * only where PerfMonV2's GlobalCtl also enables the counter.
 */
HOST_TEST(emulator_amd_engine_select_translates_the_event_and_applies_global_ctl)
{
	struct emulator_profile zen2 = named("zen2"), zen4 = named("zen4");
	struct emulator_registers r = fresh(&zen2);

	expect_write(&zen2, &r, CTL0, 0x76 | OS | USR | INT | EN, 0x76 | OS | USR | INT | EN);
	host_check_eq_u64(0x3c | OS | USR | INT | EN, r.evtsel[0]);
	expect_write(&zen2, &r, CTL0 + 2, 0xc2 | USR | EN, 0xc2 | USR | EN);
	host_check_eq_u64(0xc4 | USR | EN, r.evtsel[1]);
	expect_write(&zen2, &r, K7_CTL0 + 2, 0xc0 | OS | EN, 0xc0 | OS | EN);
	host_check_eq_u64(0xc0 | OS | EN, r.evtsel[2]);
	/* AMD's 0x3c and 0xc4 are other events; EventSelect[11:8] makes 0x1c0 another. */
	expect_write(&zen2, &r, CTL0 + 6, 0x3c | OS | EN, 0x3c | OS | EN);
	host_check_eq_u64(OS | EN, r.evtsel[3]);
	expect_write(&zen2, &r, CTL0 + 8, 0xc4 | OS | EN, 0xc4 | OS | EN);
	host_check_eq_u64(OS | EN, r.evtsel[4]);
	expect_write(&zen2, &r, CTL0 + 10, BIT(32) | 0xc0 | OS | EN, BIT(32) | 0xc0 | OS | EN);
	host_check_eq_u64(OS | EN, r.evtsel[5]);

	r = fresh(&zen4);
	expect_write(&zen4, &r, CTL0 + 4, 0xc0 | OS | EN, 0xc0 | OS | EN);
	host_check_eq_u64(0xc0 | OS | EN, r.evtsel[2]);
	expect_write(&zen4, &r, GLOBAL_CTL, 0x3b, 0x3b);
	host_check_eq_u64(0xc0 | OS, r.evtsel[2]);
	expect_write(&zen4, &r, GLOBAL_CTL, 0x3f, 0x3f);
	host_check_eq_u64(0xc0 | OS | EN, r.evtsel[2]);
	host_check(emulator_msr_enables_counters(GLOBAL_CTL));
	host_check(emulator_msr_enables_counters(CTL0 + 10));
	host_check(emulator_msr_enables_counters(K7_CTL0 + 3));
	host_check(!emulator_msr_enables_counters(CTR0));
	host_check(!emulator_msr_enables_counters(K7_CTR0));
}

/* Without PerfMonV2 the counter is the only record of its overflow: the reload acknowledges. */
HOST_TEST(emulator_amd_legacy_reload_clears_the_engines_overflow_bit)
{
	struct emulator_profile p = named("zen2");
	struct emulator_registers r = fresh(&p);

	r.global_status = BIT(1) | BIT(4); /* as the engine's overflow() sets them */
	expect_write(&p, &r, K7_CTR0 + 1, 0xffff00000000ull, 0xffff00000000ull);
	host_check_eq_u64(BIT(4), r.global_status);
	expect_write(&p, &r, CTR0 + 8, 0, 0);
	host_check_eq_u64(0, r.global_status);
}

HOST_TEST(emulator_amd_overrides_keep_the_profile_consistent)
{
	struct emulator_profile p = named("zen2");
	struct emulator_profile intel = named("icelake");
	char err[128] = "";

	host_check(emulator_profile_override(&p, "perfmon_v2", "1", err, sizeof(err)));
	host_check(p.perfmon_v2 && p.gp_counters == 6);
	p = named("zen4");
	host_check(!emulator_profile_override(&p, "perfctr_core", "0", err, sizeof(err)));
	host_check_str("perfctr_core=0: PerfMonV2 needs PerfCtrExtCore", err);
	host_check(emulator_profile_override(&p, "perfmon_v2", "0", err, sizeof(err)));
	host_check(emulator_profile_override(&p, "perfctr_core", "0", err, sizeof(err)));
	host_check_eq_u64(4, p.gp_counters);
	host_check(!emulator_profile_override(&p, "perfmon", "2", err, sizeof(err)));
	host_check(!emulator_profile_override(&p, "leftovers", "1", err, sizeof(err)));
	host_check(!emulator_profile_override(&p, "pebs", "1", err, sizeof(err)));
	host_check(!emulator_profile_override(&intel, "perfctr_core", "1", err, sizeof(err)));
	host_check_str("perfctr_core=1: perfctr_core and perfmon_v2 are AMD's", err);
}

/* The model enumerates no BPEXT, so its masks raise #GP on every profile (they never reach the
 * platform: QEMU TCG would read them as 0). */
HOST_TEST(emulator_amd_bpext_masks_raise_gp_on_every_profile)
{
	static const uint32_t masks[] = { 0xc0011027, 0xc0011019, 0xc001101a, 0xc001101b };
	static const char *const names[] = { "zen2", "zen4", "icelake" };

	for (size_t n = 0; n < 3; n++) {
		struct emulator_profile p = named(names[n]);
		struct emulator_registers r = fresh(&p);

		for (size_t i = 0; i < 4; i++) {
			host_check(emulator_owns_msr(masks[i]));
			expect_read_gp(&p, &r, masks[i]);
			expect_write_gp(&p, &r, masks[i], 0);
		}
	}
	host_check(!emulator_owns_msr(0xc0011018) && !emulator_owns_msr(0xc001101c));
}
