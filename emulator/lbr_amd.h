/* SPDX-License-Identifier: MIT */
/* The emulated CPU's AMD LbrExtV2 stack: its MSRs, filter, order and freeze (rule 27). */
#ifndef EMULATOR_LBR_AMD_H
#define EMULATOR_LBR_AMD_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/msr-index.h"
#include "emulator/lbr.h"

struct emulator_profile;
struct emulator_registers;

/* The deepest stack the model plays (CPUID 0x80000022 EBX[9:4] could say 63: choice). */
#define EMULATOR_AMD_LBR_MAX_DEPTH 32

/*
 * One logical CPU's LbrExtV2 stack, held as the MSRs read: entry 0 the newest. Zero out of
 * RESET (choice: the APM leaves the entries undefined).
 */
struct emulator_amd_lbr {
	uint64_t from[EMULATOR_AMD_LBR_MAX_DEPTH], to[EMULATOR_AMD_LBR_MAX_DEPTH];
	uint64_t select, extn_cfg;
};

/* Whether the profile plays LbrExtV2 (an AMD part with lbr_v2_depth). */
bool emulator_amd_lbr_exists(const struct emulator_profile *profile);

/*
 * LBR_SELECT, DBG_EXTN_CFG and the FROM/TO pairs at 0xC0010300 up to the deepest the model
 * plays: the whole family, owned on every profile; members the profile lacks raise #GP.
 */
static inline bool emulator_amd_lbr_owns_msr(uint32_t index)
{
	return index == MSR_AMD64_LBR_SELECT || index == MSR_AMD_DBG_EXTN_CFG ||
	       index - MSR_AMD_SAMP_BR_FROM < 2 * EMULATOR_AMD_LBR_MAX_DEPTH;
}

/* Read and write: true for #GP, and then nothing changed. */
bool emulator_amd_lbr_read_msr(const struct emulator_registers *registers,
			       const struct emulator_profile *profile, uint32_t index,
			       uint64_t *value);
bool emulator_amd_lbr_write_msr(struct emulator_registers *registers,
				const struct emulator_profile *profile, uint32_t index,
				uint64_t value);

/* CPUID 0x80000022: the EAX bits (LbrExtV2, LbrAndPmcFreeze) and EBX[9:4] it adds. */
uint32_t emulator_amd_lbr_cpuid_eax(const struct emulator_profile *profile);
uint32_t emulator_amd_lbr_cpuid_ebx(const struct emulator_profile *profile);

/* The PerfCntrGlobalStatus bits it adds (LBRS_FROZEN with LbrAndPmcFreeze), 0 elsewhere. */
uint64_t emulator_amd_lbr_status_bits(const struct emulator_profile *profile);
/* The DEBUGCTL bits it adds (FREEZE_LBRS_ON_PMI with LbrAndPmcFreeze), 0 elsewhere. */
uint64_t emulator_amd_lbr_debugctl_bits(const struct emulator_profile *profile);

/* The step's quick test: whether DBG_EXTN_CFG.LBRV2EN is set. */
static inline bool emulator_amd_lbr_may_record(const struct emulator_amd_lbr *lbr)
{
	return lbr->extn_cfg & DBG_EXTN_CFG_LBRV2EN;
}

/* Whether the stack records now and takes branches that end in ring 3 (user) or ring 0. */
bool emulator_amd_lbr_observes(const struct emulator_registers *registers,
			       const struct emulator_profile *profile, bool user);

/* One taken branch or transfer the model observed, filtered by LBR_SELECT, as entry 0. */
void emulator_amd_lbr_record(struct emulator_registers *registers,
			     const struct emulator_profile *profile, uint64_t from, uint64_t to,
			     bool to_user, enum emulator_lbr_kind kind);

/* A PMI is requested: with DEBUGCTL.FREEZE_LBRS_ON_PMI the stack freezes (GlobalStatus 58). */
void emulator_amd_lbr_pmi(struct emulator_registers *registers,
			  const struct emulator_profile *profile);

#endif
