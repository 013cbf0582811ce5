/* SPDX-License-Identifier: MIT */
/* Host tests of emulator/registers.c: every rule broken (#GP, nothing changed) and kept (exact
 * value). */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "arch/x86/cpuid.h"
#include "arch/x86/msr-index.h"
#include "emulator/profile.h"
#include "emulator/registers.h"
#include "tests/host/emulator_checks.h"
#include "tests/host/host_test.h"

/*
 * Expected values are written out from the SDM, not from the constants, so a wrong constant
 * fails here too. Each helper reports the caller's line.
 */
#define BIT(n) (1ull << (n))

HOST_TEST(emulator_debugctl_keeps_lbr_btf_bts_and_freeze_bits)
{
	struct emulator_profile p = named("skylake");
	struct emulator_profile arch_lbr = named("arrowlake");
	struct emulator_registers r = fresh(&p);

	/* LBR(0) BTF(1) TR(6) BTS(7) BTINT(8) BTS_OFF_OS(9) BTS_OFF_USR(10) FREEZE(11, 12) */
	expect_write(&p, &r, 0x1d9, 0x1fc3, 0x1fc3);
	expect_write(&p, &r, 0x1d9, BIT(0) | BIT(1), BIT(0) | BIT(1));
	/* Architectural LBR and no model-specific one: LBR is discarded and reads 0. */
	r = fresh(&arch_lbr);
	expect_write(&arch_lbr, &r, 0x1d9, BIT(0) | BIT(1), BIT(1));
}

HOST_TEST(emulator_debugctl_reserved_bits_raise_gp)
{
	static const unsigned int reserved[] = { 2, 3, 4, 5, 13, 14, 15, 16, 31, 32, 63 };
	struct emulator_profile p = named("icelake");
	struct emulator_registers r = fresh(&p);

	for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
		expect_write_gp(&p, &r, 0x1d9, BIT(reserved[i]));
}

HOST_TEST(emulator_debugctl_freeze_bits_need_pdcm_and_perfmon_v2)
{
	struct emulator_profile p = named("icelake");
	struct emulator_profile no_pdcm = p;
	struct emulator_profile v1 = p;
	struct emulator_registers r = fresh(&p);

	no_pdcm.pdcm = false;
	v1.perfmon_version = 1;
	v1.fixed_counters = 0;
	v1.fixed_bitmap = 0;
	for (unsigned int bit = 11; bit <= 12; bit++) {
		expect_write_gp(&no_pdcm, &r, 0x1d9, BIT(bit));
		expect_write_gp(&v1, &r, 0x1d9, BIT(bit));
		expect_write(&p, &r, 0x1d9, BIT(bit), BIT(bit));
	}
}

/*
 * A KVM guest without LBR (vmx_set_msr(), vmx_get_supported_debugctl()): TR, BTS, BTINT,
 * BTS_OFF_OS/USR and both freeze bits raise #GP; BTF (1) and LBR (0) are dropped without one.
 */
HOST_TEST(emulator_debugctl_bts_bits_raise_gp_without_bts_as_under_kvm)
{
	struct emulator_profile p = named("kvm_pebs");
	struct emulator_registers r = fresh(&p);

	expect_write_gp(&p, &r, 0x1d9, BIT(6));
	expect_write_gp(&p, &r, 0x1d9, BIT(7));
	expect_write_gp(&p, &r, 0x1d9, BIT(6) | BIT(7));
	expect_write_gp(&p, &r, 0x1d9, BIT(8));
	expect_write_gp(&p, &r, 0x1d9, BIT(9));
	expect_write_gp(&p, &r, 0x1d9, BIT(10));
	expect_write_gp(&p, &r, 0x1d9, BIT(11));
	expect_write_gp(&p, &r, 0x1d9, BIT(12));
	expect_write(&p, &r, 0x1d9, BIT(0) | BIT(1), 0);
}

HOST_TEST(emulator_debugctl_bts_off_bits_are_stored_without_ds_cpl)
{
	struct emulator_profile p = named("skylake");
	struct emulator_registers r;

	p.ds_cpl = false;
	r = fresh(&p);
	expect_write(&p, &r, 0x1d9, BIT(6) | BIT(7) | BIT(9), BIT(6) | BIT(7) | BIT(9));
}

HOST_TEST(emulator_ds_area_rejects_noncanonical_addresses)
{
	struct emulator_profile p = named("icelake");
	struct emulator_registers r = fresh(&p);

	expect_write_gp(&p, &r, 0x600, 0x0000800000000000ull);
	expect_write_gp(&p, &r, 0x600, 0xffff7ffffffff000ull);
	expect_write_gp(&p, &r, 0x600, 0x0001000000000000ull);
	expect_write(&p, &r, 0x600, 0x00007ffffffff000ull, 0x00007ffffffff000ull);
	expect_write(&p, &r, 0x600, 0xffff800000000000ull, 0xffff800000000000ull);
	expect_write(&p, &r, 0x600, 0xffffffff81234000ull, 0xffffffff81234000ull);
}

HOST_TEST(emulator_ds_area_needs_cpuid_ds)
{
	struct emulator_profile p = named("icelake");
	struct emulator_registers r = fresh(&p);

	p.ds = false;
	expect_read_gp(&p, &r, 0x600);
	expect_write_gp(&p, &r, 0x600, 0);
}

HOST_TEST(emulator_pebs_enable_core2_is_pmc0_only)
{
	struct emulator_profile p = named("core2");
	struct emulator_registers r = fresh(&p);

	expect_write_gp(&p, &r, 0x3f1, BIT(1));
	expect_write_gp(&p, &r, 0x3f1, BIT(32));
	expect_write(&p, &r, 0x3f1, BIT(0), BIT(0));
}

HOST_TEST(emulator_pebs_enable_nehalem_has_pmc0_3_and_load_latency)
{
	struct emulator_profile p = named("nehalem");
	struct emulator_registers r = fresh(&p);

	expect_write(&p, &r, 0x3f1, BIT(1), BIT(1));
	expect_write(&p, &r, 0x3f1, 0x0000000f0000000full, 0x0000000f0000000full);
	expect_write_gp(&p, &r, 0x3f1, BIT(4));
	expect_write_gp(&p, &r, 0x3f1, BIT(36));
	expect_write_gp(&p, &r, 0x3f1, BIT(63)); /* precise store came with Sandy Bridge */
}

HOST_TEST(emulator_pebs_enable_skylake_defines_load_latency_and_precise_store)
{
	struct emulator_profile p = named("skylake");
	struct emulator_registers r = fresh(&p);

	expect_write(&p, &r, 0x3f1, BIT(32), BIT(32));
	expect_write(&p, &r, 0x3f1, BIT(63) | BIT(3), BIT(63) | BIT(3));
	expect_write_gp(&p, &r, 0x3f1, BIT(4));
	expect_write_gp(&p, &r, 0x3f1, BIT(36));
}

HOST_TEST(emulator_pebs_enable_baseline_covers_every_counter)
{
	struct emulator_profile icl = named("icelake");
	struct emulator_profile kvm = named("kvm_pebs");
	struct emulator_registers r = fresh(&icl);

	expect_write(&icl, &r, 0x3f1, 0x0000000f000000ffull, 0x0000000f000000ffull);
	expect_write_gp(&icl, &r, 0x3f1, BIT(8));
	expect_write_gp(&icl, &r, 0x3f1, BIT(36));
	expect_write_gp(&icl, &r, 0x3f1, BIT(63));
	r = fresh(&kvm);
	expect_write(&kvm, &r, 0x3f1, BIT(34), BIT(34));
	expect_write_gp(&kvm, &r, 0x3f1, BIT(35)); /* KVM has 3 fixed counters */
}

HOST_TEST(emulator_pebs_enable_is_absent_without_pebs)
{
	struct emulator_profile p = named("icelake");
	struct emulator_registers r = fresh(&p);

	p.pebs = false;
	p.pebs_baseline = false;
	p.pebs_enable_mask = 0;
	expect_read_gp(&p, &r, 0x3f1);
	expect_write_gp(&p, &r, 0x3f1, 0);
}

HOST_TEST(emulator_pebs_data_cfg_needs_adaptive_pebs)
{
	struct emulator_profile skl = named("skylake");
	struct emulator_profile no_baseline = named("icelake");
	struct emulator_registers r = fresh(&skl);

	no_baseline.pebs_baseline = false;
	expect_read_gp(&skl, &r, 0x3f2);
	expect_write_gp(&skl, &r, 0x3f2, 0);
	expect_read_gp(&no_baseline, &r, 0x3f2);
	expect_write_gp(&no_baseline, &r, 0x3f2, 0);
}

HOST_TEST(emulator_pebs_data_cfg_reserved_bits_raise_gp)
{
	struct emulator_profile p = named("icelake");
	struct emulator_registers r = fresh(&p);

	expect_write_gp(&p, &r, 0x3f2, BIT(4));
	expect_write_gp(&p, &r, 0x3f2, BIT(23));
	expect_write_gp(&p, &r, 0x3f2, BIT(32));
	/* memory info, GPRs, XMMs, LBRs, 256 LBR entries */
	expect_write(&p, &r, 0x3f2, 0xff00000full, 0xff00000full);
}

HOST_TEST(emulator_perf_capabilities_enumerate_format_trap_width_baseline)
{
	static const struct {
		const char *profile;
		/* PEBS format << 8 | trap (6) | arch regs (7) | full width (13) | baseline (14) |
		 * LBR format (5:0) */
		uint64_t value;
	} cases[] = {
		{ "core2", 0x00c2 },	{ "nehalem", 0x01c3 }, { "haswell", 0x22c4 },
		{ "skylake", 0x23c5 },	{ "icelake", 0x64c5 }, { "arrowlake", 0x66ff },
		{ "kvm_pebs", 0x64c0 },
	};
	struct emulator_profile no_pebs = named("icelake");
	char err[96] = "";

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct emulator_profile p = named(cases[i].profile);
		struct emulator_registers r = fresh(&p);

		expect_read(&p, &r, 0x345, cases[i].value);
	}
	/* Without PEBS neither PEBS trap nor PEBSSaveArchRegs, nor a format: the LBR format stays.
	 */
	host_check(emulator_profile_override(&no_pebs, "baseline", "0", err, sizeof(err)));
	host_check(emulator_profile_override(&no_pebs, "pebs", "0", err, sizeof(err)));
	{
		struct emulator_registers r = fresh(&no_pebs);

		expect_read(&no_pebs, &r, 0x345, 0x2005);
	}
}

HOST_TEST(emulator_perf_capabilities_is_read_only_and_needs_pdcm)
{
	struct emulator_profile p = named("icelake");
	struct emulator_registers r = fresh(&p);

	expect_write_gp(&p, &r, 0x345, r.perf_capabilities);
	expect_write_gp(&p, &r, 0x345, 0);
	p.pdcm = false;
	expect_read_gp(&p, &r, 0x345);
}

HOST_TEST(emulator_misc_enable_enumerates_perfmon_bts_and_pebs)
{
	struct emulator_profile icl = named("icelake");
	struct emulator_profile kvm = named("kvm_pebs");
	struct emulator_profile none = icl;
	struct emulator_registers r = fresh(&icl);

	expect_read(&icl, &r, 0x1a0, BIT(7));
	r = fresh(&kvm);
	expect_read(&kvm, &r, 0x1a0, BIT(7) | BIT(11));
	none.perfmon_version = 0;
	none.pebs = false;
	none.bts = false;
	r = fresh(&none);
	expect_read(&none, &r, 0x1a0, BIT(11) | BIT(12));
}

HOST_TEST(emulator_misc_enable_modelled_bits_are_read_only)
{
	struct emulator_profile p = named("icelake");
	struct emulator_registers r = fresh(&p);

	expect_write_gp(&p, &r, 0x1a0, BIT(7) | BIT(11));
	expect_write_gp(&p, &r, 0x1a0, BIT(7) | BIT(12));
	expect_write_gp(&p, &r, 0x1a0, 0);
	/* fast strings (bit 0) is not modelled: accepted, reads 0 */
	expect_write(&p, &r, 0x1a0, BIT(7) | BIT(0), BIT(7));
}

HOST_TEST(emulator_counters_beyond_cpuid_raise_gp)
{
	struct emulator_profile p = named("skylake");
	struct emulator_profile none = named("icelake");
	struct emulator_registers r = fresh(&p);

	expect_write(&p, &r, 0x186 + 3, 0, 0);
	expect_write(&p, &r, 0xc1 + 3, 5, 5);
	expect_write(&p, &r, 0x309 + 2, 5, 5);
	expect_read_gp(&p, &r, 0x186 + 4);
	expect_read_gp(&p, &r, 0xc1 + 4);
	expect_read_gp(&p, &r, 0x4c1 + 4);
	expect_read_gp(&p, &r, 0x309 + 3);
	expect_write_gp(&p, &r, 0x186 + 4, 0);
	expect_write_gp(&p, &r, 0xc1 + 4, 0);
	expect_write_gp(&p, &r, 0x4c1 + 4, 0);
	expect_write_gp(&p, &r, 0x309 + 3, 0);
	none.perfmon_version = 0;
	expect_read_gp(&none, &r, 0xc1);
	expect_read_gp(&none, &r, 0x186);
}

HOST_TEST(emulator_a_pmc_needs_full_width_writes)
{
	struct emulator_profile p = named("nehalem");
	struct emulator_registers r = fresh(&p);

	expect_read_gp(&p, &r, 0x4c1);
	expect_write_gp(&p, &r, 0x4c1, 0);
	expect_write(&p, &r, 0xc1, 7, 7);
}

HOST_TEST(emulator_evtsel_reserved_bits_raise_gp)
{
	struct emulator_profile skl = named("skylake");
	struct emulator_profile icl = named("icelake");
	struct emulator_registers r = fresh(&skl);

	expect_write_gp(&skl, &r, 0x186, BIT(32)); /* TSX IN_TX: not modelled */
	expect_write_gp(&skl, &r, 0x186, BIT(34)); /* adaptive: needs baseline */
	expect_write_gp(&skl, &r, 0x186, BIT(63));
	expect_write(&skl, &r, 0x186, 0xffffffffull, 0xffffffffull); /* bits 31:0 */
	r = fresh(&icl);
	expect_write(&icl, &r, 0x186, 0xffdfffffull, 0xffdfffffull); /* but AnyThread (21) */
	expect_write(&icl, &r, 0x186 + 7, BIT(34) | 0x43003c, BIT(34) | 0x43003c);
	expect_write_gp(&icl, &r, 0x186, BIT(35));
	expect_write_gp(&icl, &r, 0x186, BIT(32));
}

HOST_TEST(emulator_evtsel_any_thread_is_defined_on_perfmon_v3_and_v4_only)
{
	static const struct {
		const char *profile;
		bool defined;
	} cases[] = {
		{ "core2", false },   { "nehalem", true },   { "skylake", true },
		{ "icelake", false }, { "kvm_pebs", false },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct emulator_profile p = named(cases[i].profile);
		struct emulator_registers r = fresh(&p);

		if (cases[i].defined) {
			expect_write(&p, &r, 0x186, BIT(21), BIT(21));
			expect_write(&p, &r, 0x38d, BIT(2), BIT(2));
		} else {
			expect_write_gp(&p, &r, 0x186, BIT(21));
			expect_write_gp(&p, &r, 0x38d, BIT(2));
		}
	}
}

HOST_TEST(emulator_legacy_pmc_write_sign_extends_bit_31)
{
	struct emulator_profile skl = named("skylake");
	struct emulator_profile core2 = named("core2");
	struct emulator_registers r = fresh(&skl);

	expect_write(&skl, &r, 0xc1, 0x80000000ull, 0xffff80000000ull);
	expect_read(&skl, &r, 0x4c1, 0xffff80000000ull);
	expect_write(&skl, &r, 0xc1, 0x7fffffffull, 0x7fffffffull);
	expect_write(&skl, &r, 0xc1, 0xdead00000001ull, 1); /* bits 63:32 are ignored */
	expect_write(&skl, &r, 0xc1, 0xfffffffffffffff0ull, 0xfffffffffff0ull);
	r = fresh(&core2);
	expect_write(&core2, &r, 0xc1 + 1, 0x80000000ull, 0xff80000000ull);
}

HOST_TEST(emulator_full_width_writes_reject_bits_beyond_the_width)
{
	struct emulator_profile icl = named("icelake");
	struct emulator_profile core2 = named("core2");
	struct emulator_registers r = fresh(&icl);

	expect_write(&icl, &r, 0x4c1, BIT(47), BIT(47));
	expect_read(&icl, &r, 0xc1, BIT(47));
	expect_write_gp(&icl, &r, 0x4c1, BIT(48));
	expect_write(&icl, &r, 0x309, BIT(48) - 1, BIT(48) - 1);
	expect_write_gp(&icl, &r, 0x309, BIT(48));
	r = fresh(&core2);
	expect_write(&core2, &r, 0x309 + 2, BIT(40) - 1, BIT(40) - 1);
	expect_write_gp(&core2, &r, 0x309 + 2, BIT(40));
}

HOST_TEST(emulator_counter_reads_return_the_width)
{
	struct emulator_profile p = named("core2");
	struct emulator_registers r = fresh(&p);

	r.counter[1] = ~0ull;
	r.fixed_counter[0] = ~0ull;
	expect_read(&p, &r, 0xc1 + 1, BIT(40) - 1);
	expect_read(&p, &r, 0x309, BIT(40) - 1);
}

HOST_TEST(emulator_fixed_counters_exist_by_bitmap_or_count)
{
	struct emulator_profile v5 = named("icelake");
	struct emulator_profile v4 = named("skylake");
	struct emulator_registers r;

	v5.fixed_counters = 0;
	v5.fixed_bitmap = 0xa; /* ECX: counters 1 and 3 */
	r = fresh(&v5);
	expect_read_gp(&v5, &r, 0x309);
	expect_read(&v5, &r, 0x309 + 1, 0);
	expect_read_gp(&v5, &r, 0x309 + 2);
	expect_read(&v5, &r, 0x309 + 3, 0);
	expect_write_gp(&v5, &r, 0x38d, BIT(0));
	expect_write(&v5, &r, 0x38d, BIT(4) | BIT(12), BIT(4) | BIT(12));
	expect_write_gp(&v5, &r, 0x38f, BIT(32));
	expect_write(&v5, &r, 0x38f, BIT(33) | BIT(35), BIT(33) | BIT(35));
	v4.fixed_counters = 2;
	v4.fixed_bitmap = 0x8; /* ignored before version 5 */
	r = fresh(&v4);
	expect_read(&v4, &r, 0x309 + 1, 0);
	expect_read_gp(&v4, &r, 0x309 + 2);
	expect_read_gp(&v4, &r, 0x309 + 3);
}

HOST_TEST(emulator_fixed_ctr_ctrl_reserved_bits_raise_gp)
{
	struct emulator_profile skl = named("skylake");
	struct emulator_profile icl = named("icelake");
	struct emulator_profile kvm = named("kvm_pebs");
	struct emulator_registers r = fresh(&skl);

	expect_write(&skl, &r, 0x38d, 0xbbb, 0xbbb); /* OS, USR, PMI on counters 0-2 */
	expect_write_gp(&skl, &r, 0x38d, BIT(12)); /* counter 3 absent */
	expect_write_gp(&skl, &r, 0x38d, BIT(32)); /* adaptive needs baseline */
	r = fresh(&icl);
	expect_write(&icl, &r, 0x38d, 0x0000111100000bbbull, 0x0000111100000bbbull);
	expect_write(&icl, &r, 0x38d, BIT(12) | BIT(44), BIT(12) | BIT(44));
	expect_write_gp(&icl, &r, 0x38d, BIT(6)); /* AnyThread, deprecated in v5 */
	expect_write_gp(&icl, &r, 0x38d, BIT(16));
	expect_write_gp(&icl, &r, 0x38d, BIT(33));
	expect_write_gp(&icl, &r, 0x38d, BIT(48));
	r = fresh(&kvm);
	expect_write(&kvm, &r, 0x38d, BIT(40), BIT(40));
	expect_write_gp(&kvm, &r, 0x38d, BIT(44));
}

HOST_TEST(emulator_global_msrs_raise_gp_on_perfmon_v1)
{
	struct emulator_profile p = named("nehalem");
	struct emulator_registers r;

	p.perfmon_version = 1;
	p.fixed_counters = 0;
	r = fresh(&p);
	host_check_eq_u64(0, r.global_ctrl);
	for (uint32_t msr = 0x38d; msr <= 0x390; msr++) {
		expect_read_gp(&p, &r, msr);
		expect_write_gp(&p, &r, msr, 0);
	}
	expect_read_gp(&p, &r, 0x309);
	expect_write(&p, &r, 0xc1, 3, 3);
}

HOST_TEST(emulator_global_ctrl_reserved_bits_raise_gp)
{
	struct emulator_profile p = named("skylake");
	struct emulator_registers r = fresh(&p);

	expect_write_gp(&p, &r, 0x38f, BIT(4));
	expect_write_gp(&p, &r, 0x38f, BIT(35));
	expect_write_gp(&p, &r, 0x38f, BIT(48));
	expect_write(&p, &r, 0x38f, 0x70000000full, 0x70000000full);
}

HOST_TEST(emulator_global_status_is_read_only)
{
	struct emulator_profile p = named("icelake");
	struct emulator_registers r = fresh(&p);

	r.global_status = BIT(0) | BIT(62);
	expect_write_gp(&p, &r, 0x38e, 0);
	expect_write_gp(&p, &r, 0x38e, BIT(0) | BIT(62));
	expect_read(&p, &r, 0x38e, BIT(0) | BIT(62));
}

HOST_TEST(emulator_global_ovf_ctrl_clears_status_bits)
{
	struct emulator_profile p = named("skylake");
	struct emulator_registers r = fresh(&p);

	r.global_status = BIT(0) | BIT(33) | BIT(59) | BIT(62) | BIT(63);
	expect_write(&p, &r, 0x390, BIT(0) | BIT(59) | BIT(62), 0);
	expect_read(&p, &r, 0x38e, BIT(33) | BIT(63));
	expect_write(&p, &r, 0x390, BIT(34), 0); /* clearing a clear bit is fine */
	expect_read(&p, &r, 0x38e, BIT(33) | BIT(63));
}

/* Perfmon v4 (SDM Vol. 3B §20.2.4.2): STATUS_SET sets, never clears, and has no CondChgd. */
HOST_TEST(emulator_global_status_set_sets_status_bits_from_perfmon_v4)
{
	struct emulator_profile p = named("icelake"), v3 = named("haswell");
	struct emulator_registers r = fresh(&p), r3 = fresh(&v3);

	r.global_status = BIT(33);
	expect_write(&p, &r, 0x391, BIT(0) | BIT(7) | BIT(32) | BIT(35) | BIT(59) | BIT(62), 0);
	expect_read(&p, &r, 0x38e,
		    BIT(0) | BIT(7) | BIT(32) | BIT(33) | BIT(35) | BIT(59) | BIT(62));
	expect_write_gp(&p, &r, 0x391, BIT(63)); /* CondChgd */
	expect_write_gp(&p, &r, 0x391, BIT(8)); /* PMC8: icelake has 8 */
	expect_write_gp(&p, &r, 0x391, BIT(36));
	expect_write(&p, &r, 0x390, BIT(0) | BIT(7) | BIT(32) | BIT(35) | BIT(59) | BIT(62), 0);
	expect_read(&p, &r, 0x38e, BIT(33));
	expect_read_gp(&v3, &r3, 0x391);
	expect_write_gp(&v3, &r3, 0x391, BIT(0));
}

/* Perfmon v4 (SDM Vol. 3B §20.2.4.3): INUSE, read-only, follows the select, field and INT bits. */
HOST_TEST(emulator_global_inuse_follows_evtsel_fixed_ctrl_and_pmi_bits)
{
	struct emulator_profile p = named("icelake"), v3 = named("haswell");
	struct emulator_registers r = fresh(&p), r3 = fresh(&v3);

	expect_read(&p, &r, 0x392, 0);
	expect_write(&p, &r, 0x186 + 3, 0xc0, 0xc0); /* not enabled: in use all the same */
	expect_read(&p, &r, 0x392, BIT(3));
	expect_write(&p, &r, 0x186 + 3, 0x100, 0x100); /* a umask alone is not an event */
	expect_read(&p, &r, 0x392, 0);
	expect_write(&p, &r, 0x38d, BIT(9), BIT(9)); /* fixed 2, USR */
	expect_read(&p, &r, 0x392, BIT(34));
	expect_write(&p, &r, 0x38d, BIT(11), BIT(11)); /* fixed 2, PMI only */
	expect_read(&p, &r, 0x392, BIT(63));
	expect_write(&p, &r, 0x38d, 0, 0);
	expect_write(&p, &r, 0x186, 0xc0 | BIT(20), 0xc0 | BIT(20));
	expect_read(&p, &r, 0x392, BIT(0) | BIT(63));
	expect_write(&p, &r, 0x186, 0, 0);
	expect_write(&p, &r, 0x3f1, BIT(1), BIT(1)); /* PEBS on PMC1 */
	expect_read(&p, &r, 0x392, BIT(63));
	expect_write_gp(&p, &r, 0x392, 0);
	expect_read_gp(&v3, &r3, 0x392);
}

/* RDPMC (SDM Vol. 2B): ECX[30] fixed, [29:0] the counter; [31] the low half, as KVM plays it. */
HOST_TEST(emulator_rdpmc_reads_counters_by_ecx_and_raises_gp_beyond_them)
{
	struct emulator_profile p = named("icelake"), v1 = named("icelake");
	struct emulator_registers r = fresh(&p);
	uint64_t value = 0;

	r.counter[7] = 0xff0123456789ull;
	r.fixed_counter[3] = 0x8000000001ull;
	host_check(!emulator_rdpmc(&r, &p, 7, true, &value));
	host_check_eq_u64(0xff0123456789ull, value);
	host_check(!emulator_rdpmc(&r, &p, 7 | BIT(31), true, &value));
	host_check_eq_u64(0x23456789ull, value);
	host_check(!emulator_rdpmc(&r, &p, 3 | BIT(30), true, &value));
	host_check_eq_u64(0x8000000001ull, value);
	host_check(!emulator_rdpmc(&r, &p, 3 | BIT(30) | BIT(31), true, &value));
	host_check_eq_u64(1, value);
	host_check(emulator_rdpmc(&r, &p, 8, true, &value));
	host_check(emulator_rdpmc(&r, &p, 64, true, &value));
	host_check(emulator_rdpmc(&r, &p, 4 | BIT(30), true, &value));
	host_check(emulator_rdpmc(&r, &p, BIT(29), true, &value));
	host_check(emulator_rdpmc(&r, &p, 0, false, &value)); /* CPL 3, CR4.PCE clear */
	v1.perfmon_version = 0;
	host_check(emulator_rdpmc(&r, &v1, 0, true, &value));
}

HOST_TEST(emulator_global_ovf_ctrl_reserved_bits_raise_gp)
{
	struct emulator_profile hsw = named("haswell");
	struct emulator_profile skl = named("skylake");
	struct emulator_registers r = fresh(&hsw);

	expect_write_gp(&hsw, &r, 0x390, BIT(59)); /* CTR_Frz is perfmon v4 */
	expect_write_gp(&hsw, &r, 0x390, BIT(58));
	expect_write(&hsw, &r, 0x390, BIT(62) | BIT(63) | BIT(3) | BIT(34), 0);
	r = fresh(&skl);
	expect_write(&skl, &r, 0x390, BIT(58) | BIT(59), 0);
	expect_write_gp(&skl, &r, 0x390, BIT(4));
	expect_write_gp(&skl, &r, 0x390, BIT(35));
	expect_write_gp(&skl, &r, 0x390, BIT(55));
	expect_write_gp(&skl, &r, 0x390, BIT(61));
}

HOST_TEST(emulator_reset_sets_global_ctrl_for_the_gp_counters)
{
	static const struct {
		const char *profile;
		uint64_t global_ctrl;
	} cases[] = { { "core2", 0x3 }, { "skylake", 0xf }, { "icelake", 0xff } };

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct emulator_profile p = named(cases[i].profile);
		struct emulator_registers expected = { 0 };
		struct emulator_registers r = fresh(&p);

		expected.global_ctrl = cases[i].global_ctrl;
		expected.misc_enable = r.misc_enable;
		expected.perf_capabilities = r.perf_capabilities;
		host_checkf(memcmp(&expected, &r, sizeof(r)) == 0, "%s: reset state", p.name);
	}
}

HOST_TEST(emulator_reset_with_leftovers_leaves_counters_running)
{
	struct emulator_profile p = named("icelake");
	struct emulator_registers r;

	p.firmware_leftovers = true;
	r = fresh(&p);
	host_check_eq_u64(0x43003c, r.evtsel[0]); /* "MSR 186 is 43003c" */
	host_check_eq_u64(0x330, r.fixed_ctrl); /* "MSR 38d is 330" */
	host_check_eq_u64(0x6000000ffull, r.global_ctrl);
	host_check(r.counter[0] != 0 && r.fixed_counter[1] != 0 && r.fixed_counter[2] != 0);
	/* Every leftover is a value the model accepts. */
	expect_write(&p, &r, 0x186, r.evtsel[0], 0x43003c);
	expect_write(&p, &r, 0x38d, r.fixed_ctrl, 0x330);
	expect_write(&p, &r, 0x38f, r.global_ctrl, 0x6000000ffull);
	expect_write(&p, &r, 0x4c1, r.counter[0], r.counter[0]);
	expect_write(&p, &r, 0x309 + 1, r.fixed_counter[1], r.fixed_counter[1]);
	p.fixed_counters = 1;
	p.fixed_bitmap = 1;
	r = fresh(&p);
	host_check_eq_u64(0, r.fixed_ctrl);
	host_check_eq_u64(0xff, r.global_ctrl);
}

/* The cached enabled-counter masks (emulator_counters_changed()) follow exactly these writes. */
HOST_TEST(emulator_counters_are_enabled_by_evtsel_fixed_ctrl_and_global_ctrl_only)
{
	static const uint32_t enabling[] = { 0x186, 0x18d, 0x38d, 0x38f };
	static const uint32_t other[] = { 0x185, 0x18e, 0xc1,  0x4c1, 0x309, 0x38e,
					  0x390, 0x1d9, 0x600, 0x3f1, 0x3f2, 0x1a0 };

	for (size_t i = 0; i < sizeof(enabling) / sizeof(enabling[0]); i++)
		host_checkf(emulator_msr_enables_counters(enabling[i]), "MSR %#x not counted",
			    enabling[i]);
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++)
		host_checkf(!emulator_msr_enables_counters(other[i]), "MSR %#x counted", other[i]);
}

HOST_TEST(emulator_owns_every_member_of_the_msr_families)
{
	static const uint32_t owned[] = { 0x1d9, 0x600, 0x3f1, 0x3f2, 0x345, 0x1a0, 0x186,
					  0x18d, 0xc1,	0xc8,  0x4c1, 0x4c8, 0x309, 0x30c,
					  0x38d, 0x38e, 0x38f, 0x390, 0x391, 0x392 };
	static const uint32_t not_owned[] = { 0x185, 0x18e, 0xc0,  0xc9,  0x4c0, 0x4c9, 0x308,
					      0x30d, 0x38c, 0x393, 0x3f0, 0x3f6, 0x1b,	0x0 };
	struct emulator_profile p = named("icelake");
	struct emulator_registers r = fresh(&p);

	for (size_t i = 0; i < sizeof(owned) / sizeof(owned[0]); i++)
		host_checkf(emulator_owns_msr(owned[i]), "MSR %#x not owned", owned[i]);
	for (size_t i = 0; i < sizeof(not_owned) / sizeof(not_owned[0]); i++) {
		host_checkf(!emulator_owns_msr(not_owned[i]), "MSR %#x owned", not_owned[i]);
		expect_read_gp(&p, &r, not_owned[i]);
		expect_write_gp(&p, &r, not_owned[i], 0);
	}
}

HOST_TEST(emulator_cpuid_leaf_0_is_intel_with_leaf_0a)
{
	struct emulator_profile p = named("icelake");
	struct cpuid_result amd = {
		.eax = 0x7, .ebx = 0x68747541, .ecx = 0x444d4163, .edx = 0x69746e65
	};
	struct cpuid_result r = emulator_cpuid(&p, 0, 0, amd);

	host_check_eq_u64(0xa, r.eax);
	host_check_eq_u64(0x756e6547, r.ebx); /* "Genu" */
	host_check_eq_u64(0x49656e69, r.edx); /* "ineI" */
	host_check_eq_u64(0x6c65746e, r.ecx); /* "ntel" */
	amd.eax = 0x20;
	host_check_eq_u64(0x20, emulator_cpuid(&p, 0, 0, amd).eax);
}

HOST_TEST(emulator_cpuid_leaf_1_reports_the_profile_ds_bits)
{
	struct emulator_profile p = named("kvm_pebs");
	struct cpuid_result none = { .eax = 1, .ebx = 0x12345678, .ecx = 0, .edx = 0 };
	struct cpuid_result all = { .eax = 1, .ebx = 0, .ecx = ~0u, .edx = ~0u };
	struct cpuid_result r = emulator_cpuid(&p, 1, 0, none);

	host_check_eq_u64(0x606a6, r.eax);
	host_check_eq_u64(0x12345678, r.ebx);
	host_check_eq_u64(BIT(2) | BIT(15), r.ecx); /* DTES64, PDCM; no DS-CPL */
	host_check_eq_u64(BIT(21), r.edx); /* DS */
	p.ds = p.dtes64 = p.pdcm = false;
	r = emulator_cpuid(&p, 1, 0, all);
	host_check_eq_u64(~(uint32_t)(BIT(2) | BIT(4) | BIT(15)), r.ecx);
	host_check_eq_u64(~(uint32_t)BIT(21), r.edx);
}

HOST_TEST(emulator_cpuid_leaf_0a_enumerates_the_profile)
{
	static const struct {
		const char *profile;
		struct cpuid_result leaf;
	} cases[] = {
		/* version | GP << 8 | width << 16 | 7 << 24; fixed | width << 5 |
		   AnyThread-deprecated << 15 */
		{ "core2", { 0x07280202, 0, 0, 0x0503 } },
		{ "skylake", { 0x07300404, 0, 0, 0x0603 } },
		{ "icelake", { 0x07300805, 0, 0xf, 0x8604 } },
		{ "kvm_pebs", { 0x07300802, 0, 0, 0x0603 } },
	};
	struct cpuid_result real = { 0x11, 0x22, 0x33, 0x44 };
	struct emulator_profile none = named("icelake");
	struct cpuid_result r;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct emulator_profile p = named(cases[i].profile);

		r = emulator_cpuid(&p, 0xa, 0, real);
		host_checkf(memcmp(&r, &cases[i].leaf, sizeof(r)) == 0, "%s: 0AH = %#x %#x %#x %#x",
			    p.name, r.eax, r.ebx, r.ecx, r.edx);
	}
	none.perfmon_version = 0;
	r = emulator_cpuid(&none, 0xa, 0, real);
	host_check(r.eax == 0 && r.ebx == 0 && r.ecx == 0 && r.edx == 0);
}

HOST_TEST(emulator_cpuid_other_leaves_are_real)
{
	struct emulator_profile p = named("icelake");
	struct cpuid_result real = { 0x11, 0x22, 0x33, 0x44 };
	struct cpuid_result r = emulator_cpuid(&p, 0xb, 0, real);

	host_check(memcmp(&r, &real, sizeof(r)) == 0);
	/* Leaf 7 is the real one but for the hybrid bit, which a part of one core type clears. */
	r = emulator_cpuid(&p, 7, 0, (struct cpuid_result){ 0x11, 0x22, 0x33, 0x44 | BIT(15) });
	host_check_eq_u64(0x44, r.edx);
	host_check_eq_u64(0x22, r.ebx);
	host_check(emulator_owns_cpuid(0) && emulator_owns_cpuid(1) && emulator_owns_cpuid(0xa));
	host_check(!emulator_owns_cpuid(0xb) && !emulator_owns_cpuid(0x80000002u));
	/* The extended leaves that enumerate AMD's PMU are the model's (rule 26). */
	host_check(emulator_owns_cpuid(0x80000000u) && emulator_owns_cpuid(0x80000001u) &&
		   emulator_owns_cpuid(0x80000022u));
}

HOST_TEST(emulator_cpuid_hybrid_parts_tell_each_core_type)
{
	struct emulator_profile p = named("icelake");
	struct cpuid_result none = { 0 };

	host_check_eq_u64(0, emulator_cpuid(&p, 0x1a, 0, none).eax);
	host_check_eq_u64(0, emulator_cpuid(&p, 7, 0, none).edx & BIT(15));
	p.core_type = 0x20;
	host_check_eq_u64(0x20000000u, emulator_cpuid(&p, 0x1a, 0, none).eax);
	host_check_eq_u64(BIT(15), emulator_cpuid(&p, 7, 0, none).edx & BIT(15));
	host_check(emulator_cpuid(&p, 0, 0, none).eax >= 0x1a);
	host_check(emulator_owns_cpuid(7) && emulator_owns_cpuid(0x1a));
}
