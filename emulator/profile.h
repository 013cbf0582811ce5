/* SPDX-License-Identifier: MIT */
/* CPU profiles of the emulated CPU: what its CPUID and MSRs enumerate, per real Intel part. */
#ifndef EMULATOR_PROFILE_H
#define EMULATOR_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EMULATOR_MAX_GP 8 /* IA32_PERFEVTSEL0-7, IA32_PMC0-7: what the kernel drives */
#define EMULATOR_MAX_FIXED 4 /* IA32_FIXED_CTR0-3 */
#define EMULATOR_MAX_PEBS_FORMAT 6 /* 6: format 5's records, as Linux ds.c reads them */
#define EMULATOR_ARCH_PEBS_FORMAT 0xf /* architectural PEBS (arch/x86/arch-pebs.h) */
#define EMULATOR_MAX_ARCH_PEBS_FRAGMENTS 2 /* enum arch_pebs_split */
#define EMULATOR_MIN_COUNTER_WIDTH 32 /* a legacy PMC write carries 32 bits (choice) */
#define EMULATOR_MAX_PMI_SKID 64 /* instructions: a generous skid (choice) */
#define EMULATOR_MAX_COUNTER_WIDTH 48 /* the widest any Intel part enumerates (choice) */

/*
 * One CPU model. The profile is the whole truth the emulated CPU tells: CPUID leaves 1 and 0AH,
 * IA32_PERF_CAPABILITIES and IA32_MISC_ENABLE are derived from it (registers.c), and every MSR
 * the model owns exists or raises #GP by it.
 */
struct emulator_profile {
	const char *name;
	unsigned int perfmon_version; /* CPUID.0AH:EAX[7:0]; 0 = none */
	unsigned int gp_counters, gp_width; /* EAX[15:8], EAX[23:16] */
	unsigned int fixed_counters, fixed_width; /* EDX[4:0], EDX[12:5] (version >= 2) */
	uint32_t fixed_bitmap; /* CPUID.0AH:ECX from version 5 (0 before) */
	bool ds, dtes64, ds_cpl, pdcm; /* CPUID.1 bits */
	bool bts; /* IA32_MISC_ENABLE bit 11 clear */
	bool pebs; /* IA32_MISC_ENABLE bit 12 clear */
	unsigned int pebs_format; /* PERF_CAPABILITIES[11:8] */
	bool pebs_baseline; /* PERF_CAPABILITIES bit 14 */
	bool full_width; /* PERF_CAPABILITIES bit 13 */
	uint64_t pebs_enable_mask; /* the IA32_PEBS_ENABLE bits this CPU defines (rule 6) */
	bool firmware_leftovers; /* boot state as firmware left it (rule 8; registers.c) */
	uint32_t family_model_stepping; /* CPUID.1:EAX to report */
	/* On a hybrid part (CPUID.07H:EDX[15]) this core's type, CPUID.1AH:EAX[31:24]
	 * (CPUID_HYBRID_CORE or _ATOM); 0 on a part of one core type. */
	unsigned int core_type;
	/* IA32_DEBUGCTL as VMX KVM takes it from a guest without LBR (registers.c). */
	bool kvm_debugctl;
	/* IA32_MISC_ENABLE bit 7 clear although CPUID.0AH enumerates perfmon: firmware turned
	 * performance monitoring off (override perfmon_available:0). */
	bool perfmon_disabled;
	/*
	 * Instructions that retire between a counter's overflow and its PMI request (rule 22):
	 * silicon's skid, which the SDM does not bound. 0 on the named profiles (choice); the
	 * override skid:N plays it, up to EMULATOR_MAX_PMI_SKID.
	 */
	unsigned int pmi_skid;
	/*
	 * An AMD part (docs/emulated-cpu.md rule 26): CPUID says AuthenticAMD, perfmon_version is
	 * 0 (no leaf 0AH), gp_counters counts the core counters, reached through AMD's MSRs
	 * (emulator/amd.c); every Intel PMU and Debug Store MSR raises #GP.
	 */
	bool amd;
	/*
	 * Model-specific LBR (docs/emulated-cpu.md rule 24; emulator/lbr.c): PERF_CAPABILITIES[5:0]
	 * (PERF_CAP_LBR_FORMAT_*), the stack's depth (0: none; a power of two), its FROM/TO bank
	 * (Core 2's at 0x40/0x60 without LBR_SELECT, else Nehalem's at 0x680/0x6C0 with it), and
	 * LBR_SELECT.EN_CALLSTACK (Haswell and later). Format 0x3F is architectural LBR, which the
	 * model does not play yet: DEBUGCTL.LBR is then dropped and every legacy LBR MSR raises
	 * #GP.
	 */
	unsigned int lbr_format, lbr_depth;
	bool lbr_core2_bank, lbr_call_stack;
	bool tsx; /* CPUID.(7,0):EBX HLE and RTM: TSX enabled */
	/*
	 * Architectural LBR with lbr_format 0x3F: CPUID.1CH:EAX[7:0], the supported depths (bit n:
	 * 8 (n + 1)); 0: none (emulator/lbr.c, rule 24).
	 */
	uint32_t arch_lbr_depths;
	bool perfctr_core; /* CPUID 0x80000001 ECX[23]: six counters at 0xC0010200 */
	bool perfmon_v2; /* CPUID 0x80000022 EAX[0]: the global MSRs; EBX[3:0] = gp_counters */
	/*
	 * Architectural PEBS (rule 25; emulator/arch_pebs.c): PEBS_FMT 0xF, CPUID leaf 23H,
	 * IA32_PEBS_BASE/_INDEX and CFG_C instead of the DS area's PEBS fields, PEBS_ENABLE and
	 * PEBS_DATA_CFG. arch_pebs_stray: 23H.5 names a GP counter 23H.1 lacks (override
	 * arch_pebs_stray:1, for the detection that refuses it). arch_pebs_fragments: how the
	 * model splits a record (enum arch_pebs_split; override fragments:0..2).
	 */
	bool arch_pebs, arch_pebs_stray;
	unsigned int arch_pebs_fragments;
	/*
	 * LbrExtV2 (docs/emulated-cpu.md rule 27; emulator/lbr_amd.c): CPUID 0x80000022 EAX[1] with
	 * EBX[9:4] the stack's depth (0: none), and EAX[2] LbrAndPmcFreeze with it.
	 */
	unsigned int lbr_v2_depth;
};

/* A named profile (the list is in profile.c), or NULL. */
const struct emulator_profile *emulator_profile_find(const char *name);
/* "icelake": every feature the kernel drives, PEBS baseline included. */
const struct emulator_profile *emulator_profile_default(void);
/* The names separated by '|', for a usage line. */
const char *emulator_profile_names(void);

/*
 * Apply one override to a copy of a profile. Keys and values:
 *   perfmon=0..5, gp=0..8, gp_width=32..48, fixed=0..4, fixed_width=32..48, pebs_format=0..6,
 *   and booleans (0, 1, no, yes, false, true, off, on) baseline, full_width, bts, pebs,
 *   ds_cpl, leftovers; on an AMD profile perfctr_core and perfmon_v2, each of which sets gp
 *   to the part's count (6 with either, 4 without: the K7 counters), and gp=1..6 with
 *   perfmon_v2 (CPUID 0x80000022 EBX[3:0]).
 * Overrides apply one at a time, and each must leave a consistent profile (see
 * emulator_profile_check); so turning a feature on that needs another comes after it
 * ("pebs_format=4" before "baseline=1"). perfmon and fixed keep the version 5 bitmap
 * (CPUID.0AH:ECX) contiguous: fixed counters 0 to fixed - 1. pebs_enable_mask is recomputed
 * (emulator_profile_pebs_enable_mask). Returns false, with a one-line reason in err and the
 * profile unchanged, for an unknown key, a bad value or an impossible combination.
 */
bool emulator_profile_override(struct emulator_profile *profile, const char *key, const char *value,
			       char *err, size_t err_size);

/* Is the profile one a CPU could enumerate? False with a one-line reason in err. */
bool emulator_profile_check(const struct emulator_profile *profile, char *err, size_t err_size);

/*
 * The IA32_PEBS_ENABLE bits a CPU of this PEBS format defines (docs/emulated-cpu.md rule 6, from
 * the SDM Vol. 4 model tables for MSR 3F1H): format 0 (Core 2) PMC0 only; formats 1-3
 * (Nehalem to Skylake) PMC0-3 and their load-latency bits 32-35, plus precise store (bit 63)
 * from format 2 (the Sandy Bridge table; Sandy Bridge itself is format 1, a profile of it
 * would add bit 63); format 4 and up every GP counter and fixed counter i at bit 32 + i (PEBS
 * baseline, and Tremont without it). Only counters that exist count. 0 without PEBS, and
 * with architectural PEBS, which has no IA32_PEBS_ENABLE (rule 25).
 */
uint64_t emulator_profile_pebs_enable_mask(const struct emulator_profile *profile);

/* Enumeration (SDM Vol. 3B "Architectural Performance Monitoring"), for the engine too. */
bool emulator_gp_counter_exists(const struct emulator_profile *profile, unsigned int i);
/* CPUID.0AH:ECX[i] || EDX[4:0] > i (rule 9), ECX only from version 5, EDX from version 2. */
bool emulator_fixed_counter_exists(const struct emulator_profile *profile, unsigned int i);
/* The value bits of a GP (fixed = false) or fixed counter: bits width-1:0; 0 when none exist. */
uint64_t emulator_counter_mask(const struct emulator_profile *profile, bool fixed);
/* Bit i per GP counter and bit 32 + i per fixed counter: the counter bits of the GLOBAL_* MSRs. */
uint64_t emulator_counter_bits(const struct emulator_profile *profile);
/*
 * Adaptive PEBS: PEBS with baseline (format >= 4). EVTSEL bit 34, FIXED_CTR_CTRL bit 32 + 4i
 * and MSR_PEBS_DATA_CFG exist only then (KVM intel_pmu_refresh(), which follows the SDM).
 */
bool emulator_pebs_adaptive(const struct emulator_profile *profile);

#endif
