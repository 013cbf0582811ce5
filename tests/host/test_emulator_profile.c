/* SPDX-License-Identifier: MIT */
/* Host tests of emulator/profile.c: the named parts' numbers, enumeration, and overrides. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "emulator/profile.h"
#include "emulator/registers.h"
#include "tests/host/emulator_checks.h"
#include "tests/host/host_test.h"

#define BIT(n) (1ull << (n))

/* The override fails, says why on one line starting "key=value: ", and changes nothing. */
#define expect_rejected(name, key, value) expect_rejected_at(__LINE__, name, key, value)
static void expect_rejected_at(int line, const char *name, const char *key, const char *value)
{
	struct emulator_profile p = named(name);
	struct emulator_profile before = p;
	char err[160] = "";
	size_t prefix = strlen(key);

	host_checkf_at(__FILE__, line, !emulator_profile_override(&p, key, value, err, sizeof(err)),
		       "%s: %s=%s accepted", name, key, value);
	host_checkf_at(__FILE__, line, memcmp(&before, &p, sizeof(p)) == 0,
		       "%s: rejected %s=%s changed the profile", name, key, value);
	host_checkf_at(__FILE__, line,
		       strncmp(err, key, prefix) == 0 && err[prefix] == '=' &&
			       strchr(err, ':') != NULL && !strchr(err, '\n'),
		       "%s: %s=%s: reason '%s'", name, key, value, err);
}

HOST_TEST(emulator_profile_names_list_every_profile)
{
	char names[128];
	unsigned int count = 0;

	strncpy(names, emulator_profile_names(), sizeof(names) - 1);
	names[sizeof(names) - 1] = '\0';
	for (char *name = strtok(names, "|"); name; name = strtok(NULL, "|"), count++) {
		const struct emulator_profile *p = emulator_profile_find(name);

		host_checkf(p && strcmp(p->name, name) == 0, "'%s' not found", name);
	}
	host_check_eq_u64(10, count);
	host_check(emulator_profile_find("pentium4") == NULL);
	host_check(emulator_profile_find("") == NULL);
	host_check(emulator_profile_find("icelake ") == NULL);
	host_check(emulator_profile_find(NULL) == NULL);
	host_check_str("icelake", emulator_profile_default()->name);
}

/*
 * The named parts, typed from sources other than profile.c and checked through what the model
 * enumerates (its CPUID leaves 1 and 0AH and IA32_PERF_CAPABILITIES, decoded by the SDM's
 * layouts below), not through its table:
 * - model: Linux arch/x86/include/asm/intel-family.h (family 6): INTEL_FAM6_CORE2_PENRYN 0x17,
 *   INTEL_FAM6_NEHALEM_EP 0x1A, INTEL_FAM6_HASWELL 0x3C, INTEL_FAM6_SKYLAKE 0x5E,
 *   INTEL_FAM6_ICELAKE_L 0x7E, INTEL_FAM6_ARROWLAKE_H 0xC5, INTEL_FAM6_ICELAKE_X 0x6A (the host
 *   kvm_pebs stands for), INTEL_PANTHERLAKE_L 0xCC;
 * - perfmon version: SDM Vol. 3B "Architectural Performance Monitoring Version 2" (Core 2 Duo
 *   T7700 and later Core 2), "Version 3" (Nehalem and later), "Version 4" (Skylake), "Version 5"
 *   (Ice Lake and later); KVM enumerates at most version 2 (kvm_pmu_cap.version, pmu.c);
 * - counters: SDM "Performance Monitoring (Intel Core Solo and Intel Core Duo/Core 2)": two GP
 *   counters of 40 bits and three fixed of 40; Nehalem to Skylake four GP counters per logical
 *   processor of 48 bits; Ice Lake eight GP and four fixed (Linux intel_pmu_init(),
 *   "Icelake events"); KVM three fixed (KVM_MAX_NR_INTEL_FIXED_COUNTERS before 6.10);
 * - PEBS format: Linux intel_ds_init(): 0 Core 2, 1 Nehalem, 2 Haswell, 3 Skylake, 4 Ice Lake
 *   (adaptive, PERF_CAPABILITIES bit 14), 6 Arrow Lake (b8c3a2502a20), 0xF architectural PEBS
 *   (Panther Lake; Linux intel_pmu_init() with the arch-PEBS series);
 * - CPUID.1 DS, DTES64 and PDCM on every part with PEBS, DS-CPL on silicon; KVM sets DS and
 *   DTES64 but not DS-CPL for a guest with PEBS (vmx_set_cpu_caps());
 * - PEBSSaveArchRegs (PERF_CAPABILITIES bit 7) on every part with PEBS: Linux's
 *   setup_pebs_fixed_sample_data() takes the registers from every format 0-3 record, and KVM
 *   passes the host's bit to a PEBS guest (PERF_CAP_PEBS_MASK).
 */
/* TYPED_: typed here from the SDM, apart from arch/x86/cpuid.h, so a slip there shows. */
#define TYPED_CPUID_1_EAX_MODEL(eax) \
	((((eax) >> 16) & 0xf) << 4 | (((eax) >> 4) & 0xf)) /* family 6 */
#define TYPED_CPUID_1_EAX_FAMILY(eax) (((eax) >> 8) & 0xf)
#define TYPED_CPUID_0A_EAX_VERSION(eax) ((eax)&0xff)
#define TYPED_CPUID_0A_EAX_GP(eax) (((eax) >> 8) & 0xff)
#define TYPED_CPUID_0A_EAX_GP_WIDTH(eax) (((eax) >> 16) & 0xff)
#define TYPED_CPUID_0A_EDX_FIXED(edx) ((edx)&0x1f)
#define TYPED_CPUID_0A_EDX_FIXED_WIDTH(edx) (((edx) >> 5) & 0xff)
/* SDM Vol. 2A CPUID, Table "Feature Information Returned in the ECX/EDX Register". */
#define TYPED_CPUID_1_EDX_DS_BIT BIT(21)
#define TYPED_CPUID_1_ECX_DTES64_BIT BIT(2)
#define TYPED_CPUID_1_ECX_DS_CPL_BIT BIT(4)
#define TYPED_CPUID_1_ECX_PDCM_BIT BIT(15)
#define TYPED_PERF_CAP_PEBS_FORMAT(value) (((value) >> 8) & 0xf)
#define TYPED_PERF_CAP_BASELINE BIT(14)
#define TYPED_PERF_CAP_ARCH_REGS BIT(7)

HOST_TEST(emulator_profile_parts_have_their_real_numbers)
{
	static const struct {
		const char *name;
		unsigned int model, version, gp, gp_width, fixed, fixed_width, format;
		bool baseline, ds_cpl;
	} parts[] = {
		{ "core2", 0x17, 2, 2, 40, 3, 40, 0, false, true },
		{ "nehalem", 0x1a, 3, 4, 48, 3, 48, 1, false, true },
		{ "haswell", 0x3c, 3, 4, 48, 3, 48, 2, false, true },
		{ "skylake", 0x5e, 4, 4, 48, 3, 48, 3, false, true },
		{ "icelake", 0x7e, 5, 8, 48, 4, 48, 4, true, true },
		{ "arrowlake", 0xc5, 5, 8, 48, 4, 48, 6, true, true },
		{ "kvm_pebs", 0x6a, 2, 8, 48, 3, 48, 4, true, false },
		{ "pantherlake", 0xcc, 5, 8, 48, 4, 48, 0xf, false, true },
	};
	const struct cpuid_result none = { 0 };

	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		struct emulator_profile p = named(parts[i].name);
		struct cpuid_result leaf1 = emulator_cpuid(&p, 1, 0, none);
		struct cpuid_result leaf0a = emulator_cpuid(&p, 0xa, 0, none);
		struct emulator_registers r;
		char err[96] = "";

		emulator_registers_reset(&r, &p);
		host_checkf(TYPED_CPUID_1_EAX_FAMILY(leaf1.eax) == 6 &&
				    TYPED_CPUID_1_EAX_MODEL(leaf1.eax) == parts[i].model,
			    "%s: CPUID.1:EAX 0x%x, model 0x%x expected", p.name, leaf1.eax,
			    parts[i].model);
		host_checkf(TYPED_CPUID_0A_EAX_VERSION(leaf0a.eax) == parts[i].version &&
				    TYPED_CPUID_0A_EAX_GP(leaf0a.eax) == parts[i].gp &&
				    TYPED_CPUID_0A_EAX_GP_WIDTH(leaf0a.eax) == parts[i].gp_width &&
				    TYPED_CPUID_0A_EDX_FIXED(leaf0a.edx) == parts[i].fixed &&
				    TYPED_CPUID_0A_EDX_FIXED_WIDTH(leaf0a.edx) ==
					    parts[i].fixed_width,
			    "%s: CPUID.0AH eax 0x%x edx 0x%x", p.name, leaf0a.eax, leaf0a.edx);
		host_checkf(TYPED_PERF_CAP_PEBS_FORMAT(r.perf_capabilities) == parts[i].format &&
				    !!(r.perf_capabilities & TYPED_PERF_CAP_BASELINE) ==
					    parts[i].baseline &&
				    (r.perf_capabilities & TYPED_PERF_CAP_ARCH_REGS),
			    "%s: PERF_CAPABILITIES 0x%llx", p.name,
			    (unsigned long long)r.perf_capabilities);
		host_checkf((leaf1.edx & TYPED_CPUID_1_EDX_DS_BIT) &&
				    (leaf1.ecx & TYPED_CPUID_1_ECX_DTES64_BIT) &&
				    (leaf1.ecx & TYPED_CPUID_1_ECX_PDCM_BIT) &&
				    !!(leaf1.ecx & TYPED_CPUID_1_ECX_DS_CPL_BIT) == parts[i].ds_cpl,
			    "%s: CPUID.1 ecx 0x%x edx 0x%x", p.name, leaf1.ecx, leaf1.edx);
		host_checkf(emulator_profile_check(&p, err, sizeof(err)), "%s: %s", p.name, err);
		host_checkf(p.pebs_enable_mask == emulator_profile_pebs_enable_mask(&p),
			    "%s: PEBS_ENABLE mask %#llx", p.name,
			    (unsigned long long)p.pebs_enable_mask);
	}
}

HOST_TEST(emulator_profile_pebs_enable_masks_follow_rule_6)
{
	static const struct {
		const char *name;
		uint64_t mask;
	} cases[] = {
		{ "core2", BIT(0) },
		{ "nehalem", 0x0000000f0000000full },
		{ "haswell", 0x8000000f0000000full },
		{ "skylake", 0x8000000f0000000full },
		{ "icelake", 0x0000000f000000ffull },
		{ "arrowlake", 0x0000000f000000ffull },
		{ "kvm_pebs", 0x00000007000000ffull },
		{ "pantherlake", 0 }, /* architectural PEBS: no IA32_PEBS_ENABLE */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct emulator_profile p = named(cases[i].name);

		host_checkf(emulator_profile_pebs_enable_mask(&p) == cases[i].mask, "%s",
			    cases[i].name);
		p.pebs = false;
		host_check_eq_u64(0, emulator_profile_pebs_enable_mask(&p));
	}
}

HOST_TEST(emulator_profile_fixed_counters_exist_by_bitmap_or_count)
{
	struct emulator_profile p = named("icelake");

	p.fixed_counters = 1;
	p.fixed_bitmap = 0x4;
	host_check(emulator_fixed_counter_exists(&p, 0));
	host_check(!emulator_fixed_counter_exists(&p, 1));
	host_check(emulator_fixed_counter_exists(&p, 2));
	host_check(!emulator_fixed_counter_exists(&p, 3));
	host_check(!emulator_fixed_counter_exists(&p, 4));
	host_check_eq_u64(0x5000000ffull, emulator_counter_bits(&p));
	p.perfmon_version = 4; /* ECX is read from version 5 only */
	host_check(!emulator_fixed_counter_exists(&p, 2));
	p.perfmon_version = 1; /* EDX[4:0] from version 2 only */
	host_check(!emulator_fixed_counter_exists(&p, 0));
	host_check_eq_u64(0, emulator_counter_mask(&p, true));
	host_check_eq_u64(0xff, emulator_counter_bits(&p));
}

HOST_TEST(emulator_profile_counter_mask_is_the_width)
{
	struct emulator_profile core2 = named("core2");
	struct emulator_profile icl = named("icelake");

	host_check_eq_u64(0xffffffffffull, emulator_counter_mask(&core2, false));
	host_check_eq_u64(0xffffffffffull, emulator_counter_mask(&core2, true));
	host_check_eq_u64(0xffffffffffffull, emulator_counter_mask(&icl, false));
	icl.perfmon_version = 0;
	host_check_eq_u64(0, emulator_counter_mask(&icl, false));
	host_check(!emulator_gp_counter_exists(&icl, 0));
	host_check(emulator_gp_counter_exists(&core2, 1) && !emulator_gp_counter_exists(&core2, 2));
}

HOST_TEST(emulator_profile_override_applies_and_recomputes_pebs_enable_mask)
{
	struct emulator_profile p = named("icelake");
	char err[96] = "";

	host_check(emulator_profile_override(&p, "gp", "4", err, sizeof(err)));
	host_check_eq_u64(4, p.gp_counters);
	host_check_eq_u64(0x0000000f0000000full, p.pebs_enable_mask);
	host_check(emulator_profile_override(&p, "fixed", "2", err, sizeof(err)));
	host_check_eq_u64(0x3, p.fixed_bitmap);
	host_check_eq_u64(0x000000030000000full, p.pebs_enable_mask);
	host_check(emulator_profile_override(&p, "gp_width", "32", err, sizeof(err)));
	host_check(emulator_profile_override(&p, "fixed_width", "48", err, sizeof(err)));
	host_check(emulator_profile_override(&p, "leftovers", "on", err, sizeof(err)));
	host_check(p.firmware_leftovers);
	host_check(emulator_profile_override(&p, "perfmon", "4", err, sizeof(err)));
	host_check_eq_u64(0, p.fixed_bitmap);
	host_check(emulator_profile_override(&p, "skid", "64", err, sizeof(err)));
	host_check_eq_u64(64, p.pmi_skid);
	host_check(emulator_profile_override(&p, "perfmon_available", "0", err, sizeof(err)));
	host_check(p.perfmon_disabled);
	host_check_str("icelake", p.name);
	p = named("skylake");
	host_check(emulator_profile_override(&p, "bts", "no", err, sizeof(err)) && !p.bts);
	host_check(emulator_profile_override(&p, "ds_cpl", "0", err, sizeof(err)) && !p.ds_cpl);
	/* A feature that needs another comes after it. */
	host_check(emulator_profile_override(&p, "pebs_format", "4", err, sizeof(err)));
	host_check(emulator_profile_override(&p, "baseline", "1", err, sizeof(err)));
	host_check_eq_u64(0x000000070000000full, p.pebs_enable_mask);
}

HOST_TEST(emulator_profile_override_rejects_unknown_keys_and_bad_values)
{
	expect_rejected("icelake", "cores", "4");
	expect_rejected("icelake", "gp", "x");
	expect_rejected("icelake", "gp", "");
	expect_rejected("icelake", "gp", "-1");
	expect_rejected("icelake", "gp", "4294967300");
	expect_rejected("icelake", "baseline", "maybe");
}

HOST_TEST(emulator_profile_override_rejects_impossible_combinations)
{
	expect_rejected("icelake", "pebs_format", "7");
	expect_rejected("skylake", "baseline", "1"); /* format 3 */
	expect_rejected("icelake", "pebs_format", "3"); /* baseline still on */
	expect_rejected("icelake", "gp", "9");
	expect_rejected("icelake", "gp_width", "31");
	expect_rejected("icelake", "gp_width", "49");
	expect_rejected("icelake", "fixed_width", "64");
	expect_rejected("icelake", "fixed", "5");
	expect_rejected("icelake", "perfmon", "6");
	expect_rejected("icelake", "perfmon", "1"); /* fixed counters need version 2 */
	expect_rejected("icelake", "gp", "0"); /* PEBS needs a GP counter */
	expect_rejected("icelake", "pebs", "0"); /* baseline still on */
	expect_rejected("icelake", "skid", "65");
	expect_rejected("icelake", "perfmon_available", "maybe");
}

HOST_TEST(emulator_profile_override_errors_fit_any_buffer)
{
	struct emulator_profile p = named("icelake");
	char err[8];

	memset(err, 'x', sizeof(err));
	host_check(!emulator_profile_override(&p, "gp", "9", err, sizeof(err)));
	host_check_str("gp=9: a", err);
	host_check(!emulator_profile_override(&p, "gp", "9", NULL, 0));
	host_check(!emulator_profile_override(&p, NULL, "9", err, sizeof(err)));
}
