/* SPDX-License-Identifier: MIT */
/* The emulated CPU's AMD LbrExtV2 stack: its MSRs, filter, order and freeze (rule 27). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/cpuid.h"
#include "arch/x86/msr-index.h"
#include "emulator/lbr_amd.h"
#include "emulator/profile.h"
#include "emulator/registers.h"

/*
 * Sources: AMD APM Vol. 2 §13.1.1 (Last Branch Record stack extension) and Linux
 * arch/x86/events/amd/lbr.c: the MSRs (MSR_AMD_SAMP_BR_FROM + 2i, MSR_AMD64_LBR_SELECT,
 * DBG_EXTN_CFG_LBRV2EN), an entry's layout (struct branch_entry), LBR_SELECT's bits (a set bit
 * suppresses, the same nine as Intel's), no call-stack mode (lbr_select_map: LBR_NOT_SUPP),
 * the newest entry first (amd_pmu_lbr_read() hands entry 0 to perf first), and the freeze
 * (amd_pmu_lbr_enable_all() sets DEBUGCTL.FREEZE_LBRS_ON_PMI only with LbrAndPmcFreeze;
 * amd_pmu_v2_handle_irq() acknowledges GLOBAL_STATUS_LBRS_FROZEN). "choice" marks the rest.
 */

#define CANONICAL_SIGN_BIT 47 /* 4-level paging: bits 63:47 of an address are equal */
#define FROM_ADDRESS_TOP 62 /* bit 63 is the mispredict flag */
#define TO_ADDRESS_TOP 60 /* bits 63:61 are valid, spec and reserved */
#define TO_ADDRESS_MASK (AMD_LBR_TO_RESERVED - 1)

bool emulator_amd_lbr_exists(const struct emulator_profile *p)
{
	return p->amd && p->lbr_v2_depth && p->lbr_v2_depth <= EMULATOR_AMD_LBR_MAX_DEPTH;
}

uint32_t emulator_amd_lbr_cpuid_eax(const struct emulator_profile *p)
{
	return emulator_amd_lbr_exists(p)
		       ? CPUID_80000022_EAX_LBR_EXT_V2 | CPUID_80000022_EAX_LBR_PMC_FREEZE
		       : 0;
}

uint32_t emulator_amd_lbr_cpuid_ebx(const struct emulator_profile *p)
{
	return emulator_amd_lbr_exists(p) ? p->lbr_v2_depth << CPUID_80000022_EBX_LBR_STACK_SHIFT
					  : 0;
}

uint64_t emulator_amd_lbr_status_bits(const struct emulator_profile *p)
{
	return emulator_amd_lbr_exists(p) ? PERF_GLOBAL_STATUS_LBRS_FROZEN : 0;
}

uint64_t emulator_amd_lbr_debugctl_bits(const struct emulator_profile *p)
{
	return emulator_amd_lbr_exists(p) ? DEBUGCTL_FREEZE_LBRS_ON_PMI : 0;
}

/* Bits top:47 of value are all 0 or all 1. */
static bool sign_extended(uint64_t value, unsigned int top)
{
	uint64_t field = (value & ((2ull << top) - 1)) >> CANONICAL_SIGN_BIT;
	uint64_t ones = (1ull << (top - CANONICAL_SIGN_BIT + 1)) - 1;

	return field == 0 || field == ones;
}

/* Which entry a FROM (from) or TO (!from) MSR is, if the profile's stack has it. */
static bool entry_msr(const struct emulator_profile *p, uint32_t index, unsigned int *i, bool *from)
{
	uint32_t n = index - MSR_AMD_SAMP_BR_FROM;

	if (index < MSR_AMD_SAMP_BR_FROM || n / 2 >= p->lbr_v2_depth)
		return false;
	*i = n / 2;
	*from = n % 2 == 0;
	return true;
}

bool emulator_amd_lbr_read_msr(const struct emulator_registers *r, const struct emulator_profile *p,
			       uint32_t index, uint64_t *value)
{
	const struct emulator_amd_lbr *l = &r->amd_lbr;
	unsigned int i;
	bool from;

	if (!emulator_amd_lbr_exists(p))
		return true;
	if (index == MSR_AMD64_LBR_SELECT)
		*value = l->select;
	else if (index == MSR_AMD_DBG_EXTN_CFG)
		*value = l->extn_cfg;
	else if (entry_msr(p, index, &i, &from))
		*value = from ? l->from[i] : l->to[i];
	else
		return true; /* past the profile's depth */
	return false;
}

/*
 * Writes: LBR_SELECT bits beyond 8:0 (Linux LBR_SELECT_MASK) and DBG_EXTN_CFG bits but LBRV2EN
 * raise #GP (choice: the model plays no other DBG_EXTN_CFG bit); a FROM must be sign-extended
 * from bit 47 up to bit 62, a TO up to bit 60 with its reserved bit 61 clear (choice, as the
 * model's Intel FROM/TO: an address MSR takes a canonical address).
 */
bool emulator_amd_lbr_write_msr(struct emulator_registers *r, const struct emulator_profile *p,
				uint32_t index, uint64_t value)
{
	struct emulator_amd_lbr *l = &r->amd_lbr;
	unsigned int i;
	bool from;

	if (!emulator_amd_lbr_exists(p))
		return true;
	if (index == MSR_AMD64_LBR_SELECT) {
		if (value & ~AMD_LBR_SELECT_MASK)
			return true;
		l->select = value;
	} else if (index == MSR_AMD_DBG_EXTN_CFG) {
		if (value & ~DBG_EXTN_CFG_LBRV2EN)
			return true;
		l->extn_cfg = value;
	} else if (entry_msr(p, index, &i, &from)) {
		if (from && !sign_extended(value, FROM_ADDRESS_TOP))
			return true;
		if (!from &&
		    ((value & AMD_LBR_TO_RESERVED) || !sign_extended(value, TO_ADDRESS_TOP)))
			return true;
		if (from)
			l->from[i] = value;
		else
			l->to[i] = value;
	} else {
		return true;
	}
	return false;
}

/* Recording: LBRV2EN set and not frozen by a PMI (GlobalStatus bit 58 set). */
static bool recording(const struct emulator_registers *r, const struct emulator_profile *p)
{
	return emulator_amd_lbr_exists(p) && (r->amd_lbr.extn_cfg & DBG_EXTN_CFG_LBRV2EN) &&
	       !(r->global_status & PERF_GLOBAL_STATUS_LBRS_FROZEN);
}

bool emulator_amd_lbr_observes(const struct emulator_registers *r, const struct emulator_profile *p,
			       bool user)
{
	return recording(r, p) &&
	       !(r->amd_lbr.select & (user ? LBR_SELECT_CPL_NEQ_0 : LBR_SELECT_CPL_EQ_0));
}

/*
 * A new entry is entry 0 and every other moves down by one, the oldest falling off. FROM holds
 * the address with the mispredict flag clear, TO the address below its flags with VALID set
 * and SPEC clear (the model predicts nothing; Linux keeps an entry with valid or spec set).
 */
void emulator_amd_lbr_record(struct emulator_registers *r, const struct emulator_profile *p,
			     uint64_t from, uint64_t to, bool to_user, enum emulator_lbr_kind kind)
{
	struct emulator_amd_lbr *l = &r->amd_lbr;
	uint64_t ring = to_user ? LBR_SELECT_CPL_NEQ_0 : LBR_SELECT_CPL_EQ_0;

	if (!recording(r, p) || (l->select & (ring | emulator_lbr_kind_suppressed_by(kind))))
		return;
	for (unsigned int i = p->lbr_v2_depth - 1; i > 0; i--) {
		l->from[i] = l->from[i - 1];
		l->to[i] = l->to[i - 1];
	}
	l->from[0] = from & ~AMD_LBR_FROM_MISPREDICT;
	l->to[0] = (to & TO_ADDRESS_MASK) | AMD_LBR_TO_VALID;
}

/*
 * With LbrAndPmcFreeze and DEBUGCTL.FREEZE_LBRS_ON_PMI a PMI sets PerfCntrGlobalStatus bit 58
 * (LBRS_FROZEN) and recording stops until PerfCntrGlobalStatusClr clears it. The counters'
 * half of the freeze is not modelled (choice: Linux sets only FREEZE_LBRS_ON_PMI).
 */
void emulator_amd_lbr_pmi(struct emulator_registers *r, const struct emulator_profile *p)
{
	if (emulator_amd_lbr_exists(p) && (r->debugctl & DEBUGCTL_FREEZE_LBRS_ON_PMI))
		r->global_status |= PERF_GLOBAL_STATUS_LBRS_FROZEN;
}
