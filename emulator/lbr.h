/* SPDX-License-Identifier: MIT */
/* The emulated CPU's model-specific Last Branch Records: the stack, its MSRs and its filters. */
#ifndef EMULATOR_LBR_H
#define EMULATOR_LBR_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/msr-index.h"
#include "emulator/decode.h"
#include "emulator/pebs_record.h"

struct emulator_profile;
struct emulator_registers;

/*
 * One logical CPU's LBR stack (docs/emulated-cpu.md rule 24), held as the MSRs read: from[i]
 * and info[i] in the profile's format, tos the index of the newest entry. Zero out of RESET
 * (the SDM leaves the stack undefined: choice).
 */
struct emulator_lbr {
	uint64_t from[LBR_LEGACY_MAX_DEPTH], to[LBR_LEGACY_MAX_DEPTH], info[LBR_LEGACY_MAX_DEPTH];
	uint64_t select;
	uint64_t tos;
	/* Architectural LBR: IA32_LBR_CTL, and IA32_LBR_DEPTH (0: the reset value, the most). */
	uint64_t ctl, depth;
	/* The LER MSRs as state component 15 holds them (the model records no LER: choice). */
	uint64_t ler_from, ler_to, ler_info;
	uint64_t xss; /* IA32_XSS: bit 15 only, on a profile with architectural LBR */
};

/* A branch as LBR_SELECT classifies it (SDM Vol. 3B "Filtering of Last Branch Records"). */
enum emulator_lbr_kind {
	EMULATOR_LBR_JCC,
	EMULATOR_LBR_NEAR_REL_CALL,
	EMULATOR_LBR_NEAR_IND_CALL,
	EMULATOR_LBR_NEAR_RET,
	EMULATOR_LBR_NEAR_IND_JMP,
	EMULATOR_LBR_NEAR_REL_JMP,
	/* far CALL, JMP and RET, SYSCALL, INT n, IRET, interrupts and exceptions */
	EMULATOR_LBR_FAR,
};

/* The kind of a decoded branch instruction (DECODE_NOT_BRANCH is never asked). */
enum emulator_lbr_kind emulator_lbr_kind(const struct decoded_instruction *insn);
/* The LBR_SELECT bit that suppresses a branch of this kind (AMD's LBR_SELECT has the same 8:0). */
uint64_t emulator_lbr_kind_suppressed_by(enum emulator_lbr_kind kind);

/* Whether the profile plays a model-specific LBR stack (depth > 0, not architectural). */
bool emulator_lbr_exists(const struct emulator_profile *profile);
/* Whether it plays architectural LBR (format 0x3F with supported depths). */
bool emulator_arch_lbr(const struct emulator_profile *profile);
/* CPUID leaf 1CH for the profile (all 0 without architectural LBR). */
void emulator_arch_lbr_cpuid(const struct emulator_profile *profile, uint32_t *eax, uint32_t *ebx,
			     uint32_t *ecx);

/* The IA32_DEBUGCTL bits LBR adds: LBR itself where the stack exists (else it is dropped). */
uint64_t emulator_lbr_debugctl_kept(const struct emulator_profile *profile);

/*
 * MSR_LBR_SELECT, MSR_LBR_TOS, both FROM/TO banks and MSR_LBR_INFO_x, whole families: members
 * the profile lacks raise #GP. The Nehalem FROM family is owned up to the TO bank
 * (0x680-0x6BF), so that the entry past a 32-deep stack raises #GP as on silicon; the TO bank
 * stops at 32 entries, since 0x6E0 is IA32_TSC_DEADLINE. Inline and one comparison for every
 * other MSR: every accessor asks it, in counted code too (registers.c).
 */
static inline bool emulator_lbr_owns_msr(uint32_t index)
{
	if (index >= MSR_ARCH_LBR_TO_0 + MSR_ARCH_LBR_BLOCK)
		return false;
	if (index >= MSR_ARCH_LBR_INFO_0) /* architectural: whole blocks (choice) */
		return index - MSR_ARCH_LBR_INFO_0 < MSR_ARCH_LBR_BLOCK ||
		       index == MSR_ARCH_LBR_CTL || index == MSR_ARCH_LBR_DEPTH ||
		       index - MSR_ARCH_LBR_FROM_0 < 2 * MSR_ARCH_LBR_BLOCK;
	return index == MSR_LBR_SELECT || index == MSR_LBR_TOS || index == MSR_IA32_XSS ||
	       index - MSR_LBR_CORE2_FROM < MSR_LBR_CORE2_BANK_MAX ||
	       index - MSR_LBR_CORE2_TO < MSR_LBR_CORE2_BANK_MAX ||
	       index - MSR_LBR_NHM_FROM < MSR_LBR_NHM_TO - MSR_LBR_NHM_FROM ||
	       index - MSR_LBR_NHM_TO < LBR_LEGACY_MAX_DEPTH ||
	       index - MSR_LBR_INFO_0 < LBR_LEGACY_MAX_DEPTH;
}

/*
 * XSAVES (restore false) or XRSTORS of state component 15 (mask: the instruction's EDX:EAX) at
 * area, as rule 24 says. Returns true for #GP(0); then nothing changed (memory nor registers).
 */
bool emulator_lbr_xsaves(struct emulator_registers *registers,
			 const struct emulator_profile *profile, void *area, uint64_t mask,
			 bool restore);
/* CPUID leaf 0DH's sub-leaves 1 and 15 for the profile, over the real ones. */
void emulator_lbr_xstate_cpuid(const struct emulator_profile *profile, uint32_t subleaf,
			       uint32_t *eax, uint32_t *ebx, uint32_t *ecx, uint32_t *edx);

/* Whether recording may be on: DEBUGCTL.LBR or IA32_LBR_CTL.LBREN (the step's quick test). */
static inline bool emulator_lbr_may_record(uint64_t debugctl, const struct emulator_lbr *lbr)
{
	return (debugctl & DEBUGCTL_LBR) || (lbr->ctl & ARCH_LBR_CTL_LBREN);
}

/* Read and write return true for #GP, and then change nothing. */
bool emulator_lbr_read_msr(const struct emulator_registers *registers,
			   const struct emulator_profile *profile, uint32_t index, uint64_t *value);
bool emulator_lbr_write_msr(struct emulator_registers *registers,
			    const struct emulator_profile *profile, uint32_t index, uint64_t value);

/* Whether the stack records now: DEBUGCTL.LBR set and, from perfmon v4, not frozen. */
bool emulator_lbr_recording(const struct emulator_registers *registers,
			    const struct emulator_profile *profile);
/* Whether a recording stack can take branches that end in ring 3 (user) or ring 0. */
bool emulator_lbr_observes(const struct emulator_registers *registers,
			   const struct emulator_profile *profile, bool user);

/*
 * One taken branch or transfer the model observed, from from to to (ending in ring 3 when
 * to_user): recorded, filtered by LBR_SELECT, pushed on the ring or, in call-stack mode, a
 * near return popped.
 */
void emulator_lbr_record(struct emulator_registers *registers,
			 const struct emulator_profile *profile, uint64_t from, uint64_t to,
			 bool to_user, enum emulator_lbr_kind kind);

/*
 * The stack for a PEBS record's LBR group: up to max entries, newest first, as the MSRs hold
 * them, up to the first FROM of 0; none while the stack does not record (choice: silicon would
 * write what the MSRs hold; pebs.* expect an empty group with LBR off). Returns how many.
 */
unsigned int emulator_lbr_newest(const struct emulator_registers *registers,
				 const struct emulator_profile *profile,
				 struct pebs_assist_lbr *out, unsigned int max);

/*
 * A PMI is requested: with DEBUGCTL.FREEZE_LBRS_ON_PMI the stack freezes, by GLOBAL_STATUS bit
 * 58 from perfmon v4 (acknowledging it thaws), before by clearing DEBUGCTL.LBR.
 */
void emulator_lbr_pmi(struct emulator_registers *registers, const struct emulator_profile *profile);

#endif
