/* SPDX-License-Identifier: MIT */
/* The emulated CPU's profiles: real Intel parts' perfmon and Debug Store enumeration. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/msr-index.h"
#include "emulator/lbr_amd.h"
#include "emulator/profile.h"
#include "lib/string.h"

#define OVERRIDE_VALUE_MAX 999 /* more digits than any key takes: rejected, never overflowed */

/*
 * Each profile gives the real part's numbers: Linux's boot line ("Performance Events: PEBS
 * fmtN+, ... version, bit width, generic registers, fixed-purpose events"; '+' is
 * PERF_CAPABILITIES.PEBS_TRAP) and CPUID.1:EAX of the part named. Where a value is the model's
 * choice it says so. pebs_enable_mask equals emulator_profile_pebs_enable_mask() for each (a
 * host test checks it).
 */
static const struct emulator_profile profiles[] = {
	/*
	 * Core 2 (Penryn, Core 2 Duo P7350, 06_17H stepping A): "PEBS fmt0+, 4-deep LBR, Core2
	 * events", version 2, 2 GP counters of 40 bits; 3 fixed counters of 40 bits (SDM Vol. 4
	 * Core 2 table, MSR_PERF_FIXED_CTR0-2). PEBS on PMC0 only. CPUID.1 reports DTES64, DS-CPL
	 * and PDCM on Penryn. LBR: 4 entries at MSR_LASTBRANCH_0_FROM_IP 0x40 / TO 0x60, no
	 * LBR_SELECT (Linux intel_pmu_lbr_init_core()); format 2, 64-bit EIP without flags (choice:
	 * no dump of the part's PERF_CAPABILITIES was at hand).
	 */
	{
		.name = "core2",
		.perfmon_version = 2,
		.gp_counters = 2,
		.gp_width = 40,
		.fixed_counters = 3,
		.fixed_width = 40,
		.ds = true,
		.dtes64 = true,
		.ds_cpl = true,
		.pdcm = true,
		.bts = true,
		.pebs = true,
		.pebs_format = 0,
		.pebs_enable_mask = 1ull << 0,
		.family_model_stepping = 0x0001067a,
		.lbr_format = PERF_CAP_LBR_FORMAT_EIP,
		.lbr_depth = 4,
		.lbr_core2_bank = true,
	},
	/*
	 * Nehalem (Core i7 920, 06_1AH stepping 4): "PEBS fmt1+, Nehalem events", version 3, 4 GP
	 * counters of 48 bits, 3 fixed; no full-width writes. MSR_PEBS_ENABLE (SDM Vol. 4 Nehalem
	 * table): PEBS_EN_PMC0-3 at bits 3:0, LL_EN_PMC0-3 at bits 35:32. LBR: 16 entries at
	 * 0x680 / 0x6C0 with LBR_SELECT (intel_pmu_lbr_init_nhm()), format 3 (FROM bit 63
	 * mispredict).
	 */
	{
		.name = "nehalem",
		.perfmon_version = 3,
		.gp_counters = 4,
		.gp_width = 48,
		.fixed_counters = 3,
		.fixed_width = 48,
		.ds = true,
		.dtes64 = true,
		.ds_cpl = true,
		.pdcm = true,
		.bts = true,
		.pebs = true,
		.pebs_format = 1,
		.pebs_enable_mask = (0xfull << 0) | (0xfull << 32),
		.family_model_stepping = 0x000106a4,
		.lbr_format = PERF_CAP_LBR_FORMAT_EIP_FLAGS,
		.lbr_depth = 16,
	},
	/*
	 * Haswell (Core i7-4770 class, 06_3CH stepping 3): "PEBS fmt2+, Haswell events, full-width
	 * counters", version 3, 4 GP counters of 48 bits with Hyper-Threading (8 without), 3
	 * fixed. MSR_PEBS_ENABLE as the Sandy Bridge table: PMC0-3, LL_EN 35:32, PS_EN bit 63.
	 * LBR: 16 entries, LBR_SELECT with EN_CALLSTACK (intel_pmu_lbr_init_hsw()), format 4 (FROM
	 * bits 63:61 mispredict, in-TSX, abort), and no TSX: microcode turned it off on 06_3CH
	 * (erratum HSD136), so FROM's bits 62:61 are sign extension on WRMSR (rule 24).
	 */
	{
		.name = "haswell",
		.perfmon_version = 3,
		.gp_counters = 4,
		.gp_width = 48,
		.fixed_counters = 3,
		.fixed_width = 48,
		.ds = true,
		.dtes64 = true,
		.ds_cpl = true,
		.pdcm = true,
		.bts = true,
		.pebs = true,
		.pebs_format = 2,
		.full_width = true,
		.pebs_enable_mask = (0xfull << 0) | (0xfull << 32) | (1ull << 63),
		.family_model_stepping = 0x000306c3,
		.lbr_format = PERF_CAP_LBR_FORMAT_EIP_FLAGS2,
		.lbr_depth = 16,
		.lbr_call_stack = true,
	},
	/*
	 * Skylake (Core i3-6300T, 06_5EH stepping 3): "PEBS fmt3+, Skylake events, full-width
	 * counters", version 4, 4 GP counters of 48 bits (with Hyper-Threading), 3 fixed.
	 * MSR_PEBS_ENABLE as Haswell. LBR: 32 entries with MSR_LBR_INFO_x at 0xDC0, format 5
	 * (intel_pmu_lbr_init_skl()).
	 */
	{
		.name = "skylake",
		.perfmon_version = 4,
		.gp_counters = 4,
		.gp_width = 48,
		.fixed_counters = 3,
		.fixed_width = 48,
		.ds = true,
		.dtes64 = true,
		.ds_cpl = true,
		.pdcm = true,
		.bts = true,
		.pebs = true,
		.pebs_format = 3,
		.full_width = true,
		.pebs_enable_mask = (0xfull << 0) | (0xfull << 32) | (1ull << 63),
		.family_model_stepping = 0x000506e3,
		.lbr_format = PERF_CAP_LBR_FORMAT_INFO,
		.lbr_depth = 32,
		.lbr_call_stack = true,
	},
	/*
	 * Ice Lake client (Core i7-1065G7, 06_7EH stepping 5): "PEBS fmt4+-baseline, AnyThread
	 * deprecated, Icelake events, full-width counters", version 5, 8 GP counters of 48 bits,
	 * 4 fixed (the fourth counts topdown slots), CPUID.0AH:ECX = 0xf. PEBS on every counter.
	 * LBR as Skylake's (Linux sets Ice Lake up with intel_pmu_lbr_init_skl()).
	 */
	{
		.name = "icelake",
		.perfmon_version = 5,
		.gp_counters = 8,
		.gp_width = 48,
		.fixed_counters = 4,
		.fixed_width = 48,
		.fixed_bitmap = 0xf,
		.ds = true,
		.dtes64 = true,
		.ds_cpl = true,
		.pdcm = true,
		.bts = true,
		.pebs = true,
		.pebs_format = 4,
		.pebs_baseline = true,
		.full_width = true,
		.pebs_enable_mask = (0xffull << 0) | (0xfull << 32),
		.family_model_stepping = 0x000706e5,
		.lbr_format = PERF_CAP_LBR_FORMAT_INFO,
		.lbr_depth = 32,
		.lbr_call_stack = true,
	},
	/*
	 * Arrow Lake-H P-core (Core Ultra 9 285H, 06_C5H stepping 2): cpu_core version 5, 48 bits,
	 * 4 fixed counters, PEBS format 6 with baseline. Lunar Lake and Arrow Lake report format 6,
	 * which Linux refused until b8c3a2502a20 ("perf/x86/intel/ds: Add PEBS format 6"): "The
	 * only difference between 5 and 6 is the new counters snapshotting group", which the model
	 * does not play, so its records are format 5's. The P-core has 10 GP counters; the profile
	 * has 8, the kernel's limit (choice). LBR: architectural (PERF_CAPABILITIES[5:0] = 0x3F,
	 * Alder Lake and later clients; Linux intel_pmu_arch_lbr_init()), depths 8 to 32
	 * (CPUID.1CH:EAX[7:0] = 0xF: choice, 32 as Linux finds on these parts), every filter and
	 * call-stack mode; DEBUGCTL.LBR is dropped and the legacy LBR MSRs raise #GP.
	 */
	{
		.name = "arrowlake",
		.perfmon_version = 5,
		.gp_counters = 8,
		.gp_width = 48,
		.fixed_counters = 4,
		.fixed_width = 48,
		.fixed_bitmap = 0xf,
		.ds = true,
		.dtes64 = true,
		.ds_cpl = true,
		.pdcm = true,
		.bts = true,
		.pebs = true,
		.pebs_format = 6,
		.pebs_baseline = true,
		.full_width = true,
		.pebs_enable_mask = (0xffull << 0) | (0xfull << 32),
		.family_model_stepping = 0x000c0652,
		.lbr_format = PERF_CAP_LBR_FORMAT_ARCH,
		.arch_lbr_depths = 0x0f,
	},
	/*
	 * A KVM guest with PEBS passthrough on an Ice Lake server host (06_6AH stepping 6, the
	 * first with EPT-friendly PEBS). KVM caps the guest at perfmon version 2 and 3 fixed
	 * counters (kvm_init_pmu_capability()), sets CPUID DS and DTES64 but not DS-CPL when it
	 * exposes PEBS (vmx.c), passes the host's PEBS format, baseline and full-width bits, and
	 * leaves IA32_MISC_ENABLE.BTS_UNAVAILABLE set (kvm_vcpu_reset()): BTS is not available and
	 * DEBUGCTL.TR/BTS raise #GP. QEMU gives the guest no LBR unless asked (lbr-fmt), so KVM
	 * drops DEBUGCTL.BTF and LBR and refuses the freeze bits (kvm_debugctl).
	 */
	{
		.name = "kvm_pebs",
		.perfmon_version = 2,
		.gp_counters = 8,
		.gp_width = 48,
		.fixed_counters = 3,
		.fixed_width = 48,
		.ds = true,
		.dtes64 = true,
		.ds_cpl = false,
		.pdcm = true,
		.bts = false,
		.pebs = true,
		.pebs_format = 4,
		.pebs_baseline = true,
		.full_width = true,
		.pebs_enable_mask = (0xffull << 0) | (0x7ull << 32),
		.family_model_stepping = 0x000606a6,
		.kvm_debugctl = true,
	},
	/*
	 * Panther Lake P-core (Cougar Cove; Linux INTEL_PANTHERLAKE_L, 06_CCH; stepping 0 is the
	 * model's choice): architectural PEBS, "PEBS fmt0-" no more: PERF_CAPABILITIES PEBS_FMT is
	 * 0xF and CPUID leaf 23H enumerates the PEBS counters and groups (emulator/arch_pebs.c),
	 * so IA32_PEBS_ENABLE and MSR_PEBS_DATA_CFG do not exist. BTS keeps the DS area (Linux
	 * split its BTS set-up from its PEBS set-up for these parts). Perfmon version 5, the
	 * model's highest; 8 GP counters (the kernel's limit; the part has more) and 4 fixed, as
	 * arrowlake (choice). PEBS baseline (bit 14) clear: arch-PEBS needs no adaptive bits.
	 */
	{
		.name = "pantherlake",
		.perfmon_version = 5,
		.gp_counters = 8,
		.gp_width = 48,
		.fixed_counters = 4,
		.fixed_width = 48,
		.fixed_bitmap = 0xf,
		.ds = true,
		.dtes64 = true,
		.ds_cpl = true,
		.pdcm = true,
		.bts = true,
		.pebs = true,
		.pebs_format = EMULATOR_ARCH_PEBS_FORMAT,
		.full_width = true,
		.pebs_enable_mask = 0,
		.family_model_stepping = 0x000c06c0,
		.arch_pebs = true,
	},
	/*
	 * Zen 2 (EPYC 7702, family 17h model 31h stepping 0): "Performance Events: Fam17h+ core
	 * perfctr, AMD PMU driver." PerfCtrExtCore with six 48-bit counters, no PerfMonV2 (CPUID
	 * 0x80000022 is beyond its highest extended leaf), no Debug Store. AMD APM Vol. 2 §13.2.
	 */
	{
		.name = "zen2",
		.gp_counters = AMD_CORE_COUNTERS,
		.gp_width = AMD_COUNTER_WIDTH,
		.family_model_stepping = 0x00830f10,
		.amd = true,
		.perfctr_core = true,
	},
	/*
	 * Zen 4 (EPYC 9654, family 19h model 11h stepping 1): PerfCtrExtCore and PerfMonV2, CPUID
	 * 0x80000022 EBX[3:0] = 6 core counters; LbrExtV2 and LbrAndPmcFreeze (EAX[2:1]) with a
	 * 16-entry stack (EBX[9:4] = 16; Linux amd_pmu_lbr_init() prints "16-deep LBR" on Zen 4).
	 */
	{
		.name = "zen4",
		.gp_counters = AMD_CORE_COUNTERS,
		.gp_width = AMD_COUNTER_WIDTH,
		.family_model_stepping = 0x00a10f11,
		.amd = true,
		.perfctr_core = true,
		.perfmon_v2 = true,
		.lbr_v2_depth = 16,
	},
};

#define PROFILE_COUNT (sizeof(profiles) / sizeof(profiles[0]))
#define DEFAULT_PROFILE 4 /* icelake */

const struct emulator_profile *emulator_profile_find(const char *name)
{
	for (size_t i = 0; name && i < PROFILE_COUNT; i++)
		if (strcmp(profiles[i].name, name) == 0)
			return &profiles[i];
	return NULL;
}

const struct emulator_profile *emulator_profile_default(void)
{
	return &profiles[DEFAULT_PROFILE];
}

const char *emulator_profile_names(void)
{
	return "core2|nehalem|haswell|skylake|icelake|arrowlake|kvm_pebs|pantherlake|zen2|zen4";
}

bool emulator_gp_counter_exists(const struct emulator_profile *profile, unsigned int i)
{
	return (profile->perfmon_version >= 1 || profile->amd) && i < profile->gp_counters &&
	       i < EMULATOR_MAX_GP;
}

bool emulator_fixed_counter_exists(const struct emulator_profile *profile, unsigned int i)
{
	bool in_bitmap = profile->perfmon_version >= 5 && ((profile->fixed_bitmap >> i) & 1);

	return profile->perfmon_version >= 2 && i < EMULATOR_MAX_FIXED &&
	       (in_bitmap || profile->fixed_counters > i);
}

static uint64_t width_mask(unsigned int width)
{
	return width >= 64 ? ~0ull : (1ull << width) - 1;
}

uint64_t emulator_counter_mask(const struct emulator_profile *profile, bool fixed)
{
	if (!fixed)
		return emulator_gp_counter_exists(profile, 0) ? width_mask(profile->gp_width) : 0;
	for (unsigned int i = 0; i < EMULATOR_MAX_FIXED; i++)
		if (emulator_fixed_counter_exists(profile, i))
			return width_mask(profile->fixed_width);
	return 0;
}

uint64_t emulator_counter_bits(const struct emulator_profile *profile)
{
	uint64_t bits = 0;

	for (unsigned int i = 0; i < EMULATOR_MAX_GP; i++)
		if (emulator_gp_counter_exists(profile, i))
			bits |= 1ull << i;
	for (unsigned int i = 0; i < EMULATOR_MAX_FIXED; i++)
		if (emulator_fixed_counter_exists(profile, i))
			bits |= PERF_GLOBAL_FIXED_CTR0 << i;
	return bits;
}

bool emulator_pebs_adaptive(const struct emulator_profile *profile)
{
	return profile->pebs && profile->pebs_baseline && profile->pebs_format >= 4;
}

uint64_t emulator_profile_pebs_enable_mask(const struct emulator_profile *profile)
{
	uint64_t mask = 0;

	if (!profile->pebs || profile->arch_pebs)
		return 0; /* arch-PEBS: no IA32_PEBS_ENABLE (CFG_C.EN per counter) */
	if (profile->pebs_format == 0)
		return emulator_gp_counter_exists(profile, 0) ? 1ull << 0 : 0;
	if (profile->pebs_format >= 4) {
		for (unsigned int i = 0; i < EMULATOR_MAX_GP; i++)
			if (emulator_gp_counter_exists(profile, i))
				mask |= 1ull << i;
		for (unsigned int i = 0; i < EMULATOR_MAX_FIXED; i++)
			if (emulator_fixed_counter_exists(profile, i))
				mask |= PEBS_ENABLE_FIXED_CTR0 << i;
		return mask;
	}
	for (unsigned int i = 0; i < 4; i++)
		if (emulator_gp_counter_exists(profile, i))
			mask |= (1ull << i) | (PEBS_ENABLE_LOAD_LATENCY_PMC0 << i);
	if (profile->pebs_format >= 2 && emulator_gp_counter_exists(profile, 3))
		mask |= PEBS_ENABLE_PRECISE_STORE;
	return mask;
}

/* Append text to err at *at, always NUL-terminated, truncating. */
static void error_append(char *err, size_t err_size, size_t *at, const char *text)
{
	while (err && *text && *at + 1 < err_size)
		err[(*at)++] = *text++;
	if (err && err_size)
		err[*at < err_size ? *at : err_size - 1] = '\0';
}

static bool fail(char *err, size_t err_size, const char *reason)
{
	size_t at = 0;

	error_append(err, err_size, &at, reason);
	return false;
}

/*
 * An AMD part has no Intel perfmon, Debug Store or PERF_CAPABILITIES; its counter count is the
 * K7 four, PerfCtrExtCore's six, or PerfMonV2's EBX[3:0] (Linux amd_core_pmu_init()).
 */
static bool amd_profile_check(const struct emulator_profile *p, char *err, size_t err_size)
{
	if (p->perfmon_version || p->fixed_counters || p->fixed_bitmap)
		return fail(err, err_size, "an AMD part has no CPUID leaf 0AH perfmon");
	if (p->ds || p->dtes64 || p->ds_cpl || p->pdcm || p->bts || p->pebs || p->core_type ||
	    p->kvm_debugctl)
		return fail(err, err_size, "an AMD part has no Debug Store, PDCM or hybrid cores");
	if (p->firmware_leftovers)
		return fail(err, err_size, "firmware leftovers are modelled on Intel parts only");
	if (p->gp_width != AMD_COUNTER_WIDTH)
		return fail(err, err_size, "AMD core counters are 48 bits wide");
	if (p->perfmon_v2 && !p->perfctr_core)
		return fail(err, err_size, "PerfMonV2 needs PerfCtrExtCore");
	if (p->perfmon_v2 && (p->gp_counters < 1 || p->gp_counters > AMD_CORE_COUNTERS))
		return fail(err, err_size, "PerfMonV2 enumerates 1 to 6 core counters");
	if (!p->perfmon_v2 &&
	    p->gp_counters != (p->perfctr_core ? AMD_CORE_COUNTERS : AMD_K7_COUNTERS))
		return fail(err, err_size,
			    "without PerfMonV2: 6 counters with PerfCtrExtCore, 4 without");
	/* Linux amd_pmu_lbr_init(): LbrExtV2 is driven only with PerfMonV2. */
	if (p->lbr_v2_depth && !p->perfmon_v2)
		return fail(err, err_size, "LbrExtV2 needs PerfMonV2");
	if (p->lbr_v2_depth > EMULATOR_AMD_LBR_MAX_DEPTH)
		return fail(err, err_size, "an LbrExtV2 stack of at most 32 entries is modelled");
	return true;
}

bool emulator_profile_check(const struct emulator_profile *p, char *err, size_t err_size)
{
	bool any_fixed = emulator_counter_mask(p, true) != 0;

	if (p->amd)
		return amd_profile_check(p, err, err_size);
	if (p->perfctr_core || p->perfmon_v2)
		return fail(err, err_size, "perfctr_core and perfmon_v2 are AMD's");
	if (p->lbr_v2_depth)
		return fail(err, err_size, "LbrExtV2 is AMD's");

	if (p->perfmon_version > 5)
		return fail(err, err_size, "perfmon versions 0 to 5 are modelled");
	if (p->gp_counters > EMULATOR_MAX_GP)
		return fail(err, err_size, "at most 8 GP counters (the kernel's limit)");
	if (p->fixed_counters > EMULATOR_MAX_FIXED || (p->fixed_bitmap >> EMULATOR_MAX_FIXED))
		return fail(err, err_size, "at most 4 fixed counters");
	if (p->perfmon_version == 0 && p->gp_counters)
		return fail(err, err_size, "perfmon version 0 has no GP counters (gp=0 first)");
	if (p->perfmon_version < 2 && (p->fixed_counters || p->fixed_bitmap))
		return fail(err, err_size, "fixed counters need perfmon version 2 (fixed=0 first)");
	if (p->perfmon_version < 5 && p->fixed_bitmap)
		return fail(err, err_size, "the fixed-counter bitmap needs perfmon version 5");
	if (p->gp_counters &&
	    (p->gp_width < EMULATOR_MIN_COUNTER_WIDTH || p->gp_width > EMULATOR_MAX_COUNTER_WIDTH))
		return fail(err, err_size, "GP counter width must be 32 to 48 bits");
	if (any_fixed && (p->fixed_width < EMULATOR_MIN_COUNTER_WIDTH ||
			  p->fixed_width > EMULATOR_MAX_COUNTER_WIDTH))
		return fail(err, err_size, "fixed counter width must be 32 to 48 bits");
	if (p->arch_pebs != (p->pebs_format == EMULATOR_ARCH_PEBS_FORMAT))
		return fail(err, err_size, "PEBS format 15 is architectural PEBS, and only it");
	if (p->pebs_format > EMULATOR_MAX_PEBS_FORMAT && !p->arch_pebs)
		return fail(err, err_size, "PEBS formats 0 to 6 and 15 are modelled");
	if (p->arch_pebs && (!p->pebs || p->pebs_baseline || p->perfmon_version < 5))
		return fail(err, err_size,
			    "architectural PEBS needs PEBS, perfmon version 5 and no baseline");
	if (p->arch_pebs_stray && !p->arch_pebs)
		return fail(err, err_size, "arch_pebs_stray needs architectural PEBS");
	if (p->arch_pebs_fragments > EMULATOR_MAX_ARCH_PEBS_FRAGMENTS ||
	    (p->arch_pebs_fragments && !p->arch_pebs))
		return fail(err, err_size, "fragments:0..2 needs architectural PEBS");
	if ((p->dtes64 || p->ds_cpl || p->bts || p->pebs) && !p->ds)
		return fail(err, err_size, "DTES64, DS-CPL, BTS and PEBS need the Debug Store");
	if ((p->bts || p->pebs) && !p->dtes64)
		return fail(err, err_size,
			    "the model writes the 64-bit DS format only: needs DTES64");
	if (p->pebs && !emulator_gp_counter_exists(p, 0))
		return fail(err, err_size, "PEBS needs a GP counter");
	if ((p->pebs_format || p->pebs_baseline || p->full_width) && !p->pdcm)
		return fail(err, err_size, "PERF_CAPABILITIES fields need PDCM");
	if (p->pebs_baseline && (!p->pebs || p->pebs_format < 4))
		return fail(err, err_size, "PEBS baseline needs PEBS format 4 or later");
	if (!p->pebs && p->pebs_enable_mask)
		return fail(err, err_size, "PEBS_ENABLE bits without PEBS");
	if (p->pmi_skid > EMULATOR_MAX_PMI_SKID)
		return fail(err, err_size, "a PMI skid of at most 64 instructions");
	return true;
}

/* Decimal, no sign, at most OVERRIDE_VALUE_MAX. */
static bool parse_number(const char *text, unsigned int *value)
{
	unsigned int v = 0;

	if (!text || !*text)
		return false;
	for (; *text; text++) {
		if (*text < '0' || *text > '9')
			return false;
		v = v * 10 + (unsigned int)(*text - '0');
		if (v > OVERRIDE_VALUE_MAX)
			return false;
	}
	*value = v;
	return true;
}

static bool parse_bool(const char *text, bool *value)
{
	static const char *const yes[] = { "1", "yes", "true", "on" };
	static const char *const no[] = { "0", "no", "false", "off" };

	for (size_t i = 0; text && i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (strcmp(text, yes[i]) == 0 || strcmp(text, no[i]) == 0) {
			*value = strcmp(text, yes[i]) == 0;
			return true;
		}
	}
	return false;
}

/* perfmon_available:0 sets perfmon_disabled: the key says what the bit says. */
static bool parse_perfmon_available(struct emulator_profile *p, const char *text)
{
	bool available;

	if (!parse_bool(text, &available))
		return false;
	p->perfmon_disabled = !available;
	return true;
}

/* The keys that take a number, and where each goes. */
static unsigned int *number_field(struct emulator_profile *p, const char *key)
{
	if (strcmp(key, "perfmon") == 0)
		return &p->perfmon_version;
	if (strcmp(key, "gp") == 0)
		return &p->gp_counters;
	if (strcmp(key, "gp_width") == 0)
		return &p->gp_width;
	if (strcmp(key, "fixed") == 0)
		return &p->fixed_counters;
	if (strcmp(key, "fixed_width") == 0)
		return &p->fixed_width;
	if (strcmp(key, "pebs_format") == 0)
		return &p->pebs_format;
	if (strcmp(key, "skid") == 0)
		return &p->pmi_skid;
	if (strcmp(key, "fragments") == 0)
		return &p->arch_pebs_fragments;
	return NULL;
}

static bool *bool_field(struct emulator_profile *p, const char *key)
{
	if (strcmp(key, "baseline") == 0)
		return &p->pebs_baseline;
	if (strcmp(key, "full_width") == 0)
		return &p->full_width;
	if (strcmp(key, "bts") == 0)
		return &p->bts;
	if (strcmp(key, "pebs") == 0)
		return &p->pebs;
	if (strcmp(key, "ds_cpl") == 0)
		return &p->ds_cpl;
	if (strcmp(key, "leftovers") == 0)
		return &p->firmware_leftovers;
	if (strcmp(key, "perfctr_core") == 0)
		return &p->perfctr_core;
	if (strcmp(key, "perfmon_v2") == 0)
		return &p->perfmon_v2;
	if (strcmp(key, "arch_pebs_stray") == 0)
		return &p->arch_pebs_stray;
	return NULL;
}

/* "KEY=VALUE: reason" */
static bool fail_override(char *err, size_t err_size, const char *key, const char *value,
			  const char *reason)
{
	size_t at = 0;

	error_append(err, err_size, &at, key);
	error_append(err, err_size, &at, "=");
	error_append(err, err_size, &at, value);
	error_append(err, err_size, &at, ": ");
	error_append(err, err_size, &at, reason);
	return false;
}

bool emulator_profile_override(struct emulator_profile *profile, const char *key, const char *value,
			       char *err, size_t err_size)
{
	struct emulator_profile copy = *profile;
	char reason[96];
	unsigned int *number;
	bool *flag;

	if (!key || !value)
		return fail(err, err_size, "expected KEY and VALUE");
	if (strcmp(key, "perfmon_available") == 0) {
		if (!parse_perfmon_available(&copy, value))
			return fail_override(err, err_size, key, value, "not 0 or 1");
		*profile = copy;
		return true;
	}
	number = number_field(&copy, key);
	flag = bool_field(&copy, key);
	if (number && !parse_number(value, number))
		return fail_override(err, err_size, key, value, "not a number");
	if (flag && !parse_bool(value, flag))
		return fail_override(err, err_size, key, value, "not 0 or 1");
	if (!number && !flag)
		return fail_override(
			err, err_size, key, value,
			"unknown key (perfmon, gp, gp_width, fixed, fixed_width, "
			"pebs_format, baseline, full_width, bts, pebs, ds_cpl, leftovers, "
			"perfmon_available, skid, perfctr_core, perfmon_v2, fragments, "
			"arch_pebs_stray)");
	if (strcmp(key, "perfmon") == 0 || strcmp(key, "fixed") == 0)
		copy.fixed_bitmap =
			copy.perfmon_version >= 5 && copy.fixed_counters <= EMULATOR_MAX_FIXED
				? (1u << copy.fixed_counters) - 1
				: 0;
	if (copy.amd && (strcmp(key, "perfctr_core") == 0 || strcmp(key, "perfmon_v2") == 0))
		copy.gp_counters = copy.perfctr_core ? AMD_CORE_COUNTERS : AMD_K7_COUNTERS;
	if (!copy.perfmon_v2) /* LbrExtV2 goes with it (amd_profile_check()) */
		copy.lbr_v2_depth = 0;
	copy.pebs_enable_mask = emulator_profile_pebs_enable_mask(&copy);
	if (!emulator_profile_check(&copy, reason, sizeof(reason)))
		return fail_override(err, err_size, key, value, reason);
	*profile = copy;
	return true;
}
