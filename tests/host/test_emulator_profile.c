/* SPDX-License-Identifier: MIT */
/* Host tests of emulator/profile.c: the named parts' numbers, enumeration, and overrides. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "emulator/profile.h"
#include "tests/host/host_test.h"

#define BIT(n) (1ull << (n))

static struct emulator_profile named(const char *name)
{
	const struct emulator_profile *p = emulator_profile_find(name);

	host_checkf(p != NULL, "no profile %s", name);
	return p ? *p : (struct emulator_profile){ .name = "missing" };
}

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
	host_check_eq_u64(9, count);
	host_check(emulator_profile_find("pentium4") == NULL);
	host_check(emulator_profile_find("") == NULL);
	host_check(emulator_profile_find("icelake ") == NULL);
	host_check(emulator_profile_find(NULL) == NULL);
	host_check_str("icelake", emulator_profile_default()->name);
}

HOST_TEST(emulator_profile_parts_have_their_real_numbers)
{
	static const struct {
		const char *name;
		unsigned int version, gp, gp_width, fixed, fixed_width, format;
		bool baseline, full_width, bts, ds_cpl;
		uint32_t fms;
	} parts[] = {
		{ "core2", 2, 2, 40, 3, 40, 0, false, false, true, true, 0x1067a },
		{ "nehalem", 3, 4, 48, 3, 48, 1, false, false, true, true, 0x106a4 },
		{ "haswell", 3, 4, 48, 3, 48, 2, false, true, true, true, 0x306c3 },
		{ "skylake", 4, 4, 48, 3, 48, 3, false, true, true, true, 0x506e3 },
		{ "icelake", 5, 8, 48, 4, 48, 4, true, true, true, true, 0x706e5 },
		{ "arrowlake", 5, 8, 48, 4, 48, 6, true, true, true, true, 0xc0652 },
		{ "kvm_pebs", 2, 8, 48, 3, 48, 4, true, true, false, false, 0x606a6 },
	};

	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		struct emulator_profile p = named(parts[i].name);
		char err[96] = "";

		host_checkf(p.perfmon_version == parts[i].version && p.gp_counters == parts[i].gp &&
				    p.gp_width == parts[i].gp_width &&
				    p.fixed_counters == parts[i].fixed &&
				    p.fixed_width == parts[i].fixed_width,
			    "%s: perfmon", p.name);
		host_checkf(p.pebs && p.pebs_format == parts[i].format &&
				    p.pebs_baseline == parts[i].baseline &&
				    p.full_width == parts[i].full_width,
			    "%s: PEBS", p.name);
		host_checkf(p.ds && p.dtes64 && p.pdcm && p.bts == parts[i].bts &&
				    p.ds_cpl == parts[i].ds_cpl && !p.firmware_leftovers,
			    "%s: DS", p.name);
		host_checkf(p.family_model_stepping == parts[i].fms, "%s: CPUID.1:EAX", p.name);
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
