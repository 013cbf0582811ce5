/* SPDX-License-Identifier: MIT */
/* The emulated CPU's model-specific LBR stack: its MSRs, filters and ring (rule 24). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/cpuid.h"
#include "arch/x86/msr-index.h"
#include "arch/x86/xstate.h"
#include "emulator/lbr.h"
#include "emulator/profile.h"
#include "emulator/registers.h"

/*
 * Sources: SDM Vol. 3B "Last Branch, Interrupt, and Exception Recording" (the LBR stack, TOS,
 * LBR_SELECT, FREEZE_LBRS_ON_PMI, call-stack mode) and the Vol. 4 model tables (banks, depths),
 * Linux arch/x86/events/intel/lbr.c (formats; the TSX-off FROM rule,
 * lbr_from_signext_quirk_wr()), as docs/emulated-cpu.md rule 24 lists them. Where neither
 * decides a case the comment says "choice".
 */

#define CANONICAL_SIGN_BIT 47 /* 4-level paging: bits 63:47 of an address are equal */
#define LBR_INFO_DEFINED \
	(LBR_INFO_MISPREDICT | LBR_INFO_IN_TSX | LBR_INFO_TSX_ABORT | LBR_INFO_CYCLES)

static bool in_family(uint32_t index, uint32_t first, unsigned int count, unsigned int *i)
{
	if (index < first || index - first >= count)
		return false;
	*i = index - first;
	return true;
}

bool emulator_lbr_exists(const struct emulator_profile *p)
{
	return !p->amd && p->lbr_depth && p->lbr_format != PERF_CAP_LBR_FORMAT_ARCH;
}

/* Bits top:47 of value are all 0 or all 1. */
static bool sign_extended(uint64_t value, unsigned int top)
{
	uint64_t field =
		(top == 63 ? value : value & ((1ull << (top + 1)) - 1)) >> CANONICAL_SIGN_BIT;
	uint64_t ones = (1ull << (top - CANONICAL_SIGN_BIT + 1)) - 1;

	return field == 0 || field == ones;
}

bool emulator_arch_lbr(const struct emulator_profile *p)
{
	return !p->amd && p->lbr_format == PERF_CAP_LBR_FORMAT_ARCH &&
	       (p->arch_lbr_depths & CPUID_1C_EAX_DEPTHS);
}

/* The deepest supported depth: IA32_LBR_DEPTH's reset value (Linux: fls(EAX[7:0]) * 8). */
static unsigned int arch_max_depth(const struct emulator_profile *p)
{
	uint32_t depths = p->arch_lbr_depths & CPUID_1C_EAX_DEPTHS;

	return depths ? 8 * (32 - (unsigned int)__builtin_clz(depths)) : 0;
}

static unsigned int arch_depth(const struct emulator_lbr *l, const struct emulator_profile *p)
{
	return l->depth ? (unsigned int)l->depth : arch_max_depth(p);
}

/*
 * Leaf 1CH (SDM Vol. 2A CPUID): EAX the depths, deep C-states may reset the records (bit 30)
 * and IPs are linear (bit 31); EBX every filter and call-stack mode; ECX mispredict, timed LBR
 * and branch type enumerated (choice: as Alder Lake's, Linux intel_pmu_arch_lbr_init()).
 */
void emulator_arch_lbr_cpuid(const struct emulator_profile *p, uint32_t *eax, uint32_t *ebx,
			     uint32_t *ecx)
{
	*eax = *ebx = *ecx = 0;
	if (!emulator_arch_lbr(p))
		return;
	*eax = (p->arch_lbr_depths & CPUID_1C_EAX_DEPTHS) | CPUID_1C_EAX_DEEP_C_RESET |
	       CPUID_1C_EAX_LIP;
	*ebx = CPUID_1C_EBX_CPL_FILTER | CPUID_1C_EBX_BRANCH_FILTER | CPUID_1C_EBX_CALL_STACK;
	*ecx = CPUID_1C_ECX_MISPREDICT | CPUID_1C_ECX_TIMED | CPUID_1C_ECX_BRANCH_TYPE;
}

static bool in_block(uint32_t index, uint32_t first, unsigned int *i)
{
	return in_family(index, first, MSR_ARCH_LBR_BLOCK, i);
}

/*
 * Architectural LBR's MSRs (rule 24): LBR_CTL's undefined bits #GP; DEPTH takes a supported
 * depth only (#GP otherwise) and a write zeroes every record; FROM, TO and INFO exist up to the
 * deepest supported depth (the rest of each block #GP, choice), TO and FROM canonical and
 * INFO's undefined bits clear (choice, as for the legacy ones).
 */
static bool arch_access(struct emulator_lbr *l, const struct emulator_profile *p, uint32_t index,
			uint64_t *value, bool write)
{
	unsigned int i, max = arch_max_depth(p);

	if (index == MSR_ARCH_LBR_CTL) {
		if (!write) {
			*value = l->ctl;
		} else if (*value & ~ARCH_LBR_CTL_DEFINED) {
			return true;
		} else {
			l->ctl = *value;
		}
		return false;
	}
	if (index == MSR_ARCH_LBR_DEPTH) {
		if (!write) {
			*value = arch_depth(l, p);
			return false;
		}
		if (!*value || *value % 8 || *value > max ||
		    !(p->arch_lbr_depths & (1u << (*value / 8 - 1))))
			return true;
		l->depth = *value;
		for (i = 0; i < LBR_LEGACY_MAX_DEPTH; i++)
			l->from[i] = l->to[i] = l->info[i] = 0;
		return false;
	}
	if (in_block(index, MSR_ARCH_LBR_FROM_0, &i) || in_block(index, MSR_ARCH_LBR_TO_0, &i)) {
		uint64_t *slot = index < MSR_ARCH_LBR_TO_0 ? &l->from[i] : &l->to[i];

		if (i >= max || (write && !sign_extended(*value, 63)))
			return true;
		if (write)
			*slot = *value;
		else
			*value = *slot;
		return false;
	}
	if (in_block(index, MSR_ARCH_LBR_INFO_0, &i)) {
		if (i >= max || (write && (*value & ~ARCH_LBR_INFO_DEFINED)))
			return true;
		if (write)
			l->info[i] = *value;
		else
			*value = l->info[i];
		return false;
	}
	return true;
}

static bool is_arch_msr(uint32_t index)
{
	return index >= MSR_ARCH_LBR_INFO_0;
}

/*
 * DEBUGCTL.LBR is kept where the stack exists. On a part with architectural LBR and no
 * model-specific one it is discarded and reads 0 (Xen, "x86/vmx: Support for CPUs without
 * model-specific LBR", quoting the SDM); on the profiles without any LBR the model drops it
 * as before (choice: every Intel part with DEBUGCTL has one).
 */
uint64_t emulator_lbr_debugctl_kept(const struct emulator_profile *p)
{
	return emulator_lbr_exists(p) ? DEBUGCTL_LBR : 0;
}

static uint32_t from_bank(const struct emulator_profile *p)
{
	return p->lbr_core2_bank ? MSR_LBR_CORE2_FROM : MSR_LBR_NHM_FROM;
}

static uint32_t to_bank(const struct emulator_profile *p)
{
	return p->lbr_core2_bank ? MSR_LBR_CORE2_TO : MSR_LBR_NHM_TO;
}

static bool has_info(const struct emulator_profile *p)
{
	return p->lbr_format == PERF_CAP_LBR_FORMAT_INFO;
}

/* MSR_LBR_SELECT's bits: none on Core 2 (no such MSR), 8:0 from Nehalem, 9 from Haswell. */
static uint64_t select_defined(const struct emulator_profile *p)
{
	if (p->lbr_core2_bank)
		return 0;
	return p->lbr_call_stack ? LBR_SELECT_CALLSTACK_MASK : LBR_SELECT_NEHALEM_MASK;
}

/*
 * The highest bit of a FROM value that belongs to the address, which bits top:47 sign-extend:
 * bit 63 is the mispredict flag from format EIP_FLAGS, bits 62:61 the TSX flags in format
 * EIP_FLAGS2, but only with TSX: without it "for wrmsr(), bits 61:62 are considered part of
 * the sign extension" (Linux lbr_from_signext_quirk_wr(); a write that is not sign-extended
 * there takes #GP, which Xen's VM entries hit).
 */
static unsigned int from_address_top(const struct emulator_profile *p)
{
	switch (p->lbr_format) {
	case PERF_CAP_LBR_FORMAT_EIP_FLAGS:
		return 62;
	case PERF_CAP_LBR_FORMAT_EIP_FLAGS2:
		return p->tsx ? 60 : 62;
	default:
		return 63;
	}
}

/*
 * What the CPU writes to FROM for a branch from ip: the address, and flags the model never
 * sets (it predicts nothing and has no transactions). In format EIP_FLAGS bit 63 is the flag;
 * in EIP_FLAGS2 bits 63:61 are, and the CPU writes bits 62:61 as 0 also without TSX (Linux
 * lbr.c: "For HW updates (branch captures) bits 61:62 are always OFF").
 */
static uint64_t from_value(const struct emulator_profile *p, uint64_t ip)
{
	switch (p->lbr_format) {
	case PERF_CAP_LBR_FORMAT_EIP_FLAGS:
		return ip & ~LBR_FROM_MISPREDICT;
	case PERF_CAP_LBR_FORMAT_EIP_FLAGS2:
		return ip & (LBR_FROM_TSX_ABORT - 1);
	default:
		return ip;
	}
}

static bool xss_access(struct emulator_lbr *l, const struct emulator_profile *p, uint64_t *value,
		       bool write);

bool emulator_lbr_read_msr(const struct emulator_registers *r, const struct emulator_profile *p,
			   uint32_t index, uint64_t *value)
{
	const struct emulator_lbr *l = &r->lbr;
	unsigned int i;

	if (index == MSR_IA32_XSS)
		return xss_access((struct emulator_lbr *)l, p, value, false);

	if (is_arch_msr(index))
		return !emulator_arch_lbr(p) ||
		       arch_access((struct emulator_lbr *)l, p, index, value, false);
	if (!emulator_lbr_exists(p))
		return true;
	if (index == MSR_LBR_SELECT) {
		if (!select_defined(p))
			return true;
		*value = l->select;
	} else if (index == MSR_LBR_TOS) {
		*value = l->tos;
	} else if (in_family(index, from_bank(p), p->lbr_depth, &i)) {
		*value = l->from[i];
	} else if (in_family(index, to_bank(p), p->lbr_depth, &i)) {
		*value = l->to[i];
	} else if (has_info(p) && in_family(index, MSR_LBR_INFO_0, p->lbr_depth, &i)) {
		*value = l->info[i];
	} else {
		return true; /* beyond the depth, another bank, or INFO before Skylake */
	}
	return false;
}

/*
 * Writes (rule 24): LBR_SELECT's undefined bits #GP; TOS takes an index below the depth (choice:
 * the SDM gives TOS no wider field); FROM must be sign-extended up to from_address_top(); TO
 * must be canonical and INFO's reserved bits clear (choice, as for IA32_DS_AREA: an address
 * MSR takes a canonical address).
 */
bool emulator_lbr_write_msr(struct emulator_registers *r, const struct emulator_profile *p,
			    uint32_t index, uint64_t value)
{
	struct emulator_lbr *l = &r->lbr;
	unsigned int i;

	if (index == MSR_IA32_XSS)
		return xss_access(l, p, &value, true);
	if (is_arch_msr(index))
		return !emulator_arch_lbr(p) || arch_access(l, p, index, &value, true);
	if (!emulator_lbr_exists(p))
		return true;
	if (index == MSR_LBR_SELECT) {
		if (!select_defined(p) || (value & ~select_defined(p)))
			return true;
		l->select = value;
	} else if (index == MSR_LBR_TOS) {
		if (value >= p->lbr_depth)
			return true;
		l->tos = value;
	} else if (in_family(index, from_bank(p), p->lbr_depth, &i)) {
		if (!sign_extended(value, from_address_top(p)))
			return true;
		l->from[i] = value;
	} else if (in_family(index, to_bank(p), p->lbr_depth, &i)) {
		if (!sign_extended(value, 63))
			return true;
		l->to[i] = value;
	} else if (has_info(p) && in_family(index, MSR_LBR_INFO_0, p->lbr_depth, &i)) {
		if (value & ~LBR_INFO_DEFINED)
			return true;
		l->info[i] = value;
	} else {
		return true;
	}
	return false;
}

enum emulator_lbr_kind emulator_lbr_kind(const struct decoded_instruction *insn)
{
	switch (insn->branch) {
	case DECODE_JCC:
		return EMULATOR_LBR_JCC;
	case DECODE_CALL:
		if (insn->far)
			return EMULATOR_LBR_FAR;
		return insn->indirect ? EMULATOR_LBR_NEAR_IND_CALL : EMULATOR_LBR_NEAR_REL_CALL;
	case DECODE_JMP:
		if (insn->far)
			return EMULATOR_LBR_FAR;
		return insn->indirect ? EMULATOR_LBR_NEAR_IND_JMP : EMULATOR_LBR_NEAR_REL_JMP;
	case DECODE_RET:
		return insn->far ? EMULATOR_LBR_FAR : EMULATOR_LBR_NEAR_RET;
	default:
		return EMULATOR_LBR_FAR;
	}
}

uint64_t emulator_lbr_kind_suppressed_by(enum emulator_lbr_kind kind)
{
	static const uint64_t bits[] = {
		[EMULATOR_LBR_JCC] = LBR_SELECT_JCC,
		[EMULATOR_LBR_NEAR_REL_CALL] = LBR_SELECT_NEAR_REL_CALL,
		[EMULATOR_LBR_NEAR_IND_CALL] = LBR_SELECT_NEAR_IND_CALL,
		[EMULATOR_LBR_NEAR_RET] = LBR_SELECT_NEAR_RET,
		[EMULATOR_LBR_NEAR_IND_JMP] = LBR_SELECT_NEAR_IND_JMP,
		[EMULATOR_LBR_NEAR_REL_JMP] = LBR_SELECT_NEAR_REL_JMP,
		[EMULATOR_LBR_FAR] = LBR_SELECT_FAR_BRANCH,
	};

	return bits[kind];
}

static bool frozen(const struct emulator_registers *r, const struct emulator_profile *p)
{
	return p->perfmon_version >= 4 && (r->global_status & PERF_GLOBAL_STATUS_LBRS_FROZEN);
}

bool emulator_lbr_recording(const struct emulator_registers *r, const struct emulator_profile *p)
{
	if (emulator_arch_lbr(p))
		return (r->lbr.ctl & ARCH_LBR_CTL_LBREN) && !frozen(r, p);
	return emulator_lbr_exists(p) && (r->debugctl & DEBUGCTL_LBR) && !frozen(r, p);
}

/*
 * The CPL filter is on the ring a branch ends in (SDM: CPL_EQ_0 "do not capture branches
 * ending in ring 0"). The model steps the ring a branch starts in, which for a branch within
 * a ring is the same; a transfer between rings is seen at its delivery, system call or IRETQ.
 */
bool emulator_lbr_observes(const struct emulator_registers *r, const struct emulator_profile *p,
			   bool user)
{
	if (emulator_arch_lbr(p))
		return emulator_lbr_recording(r, p) &&
		       (r->lbr.ctl & (user ? ARCH_LBR_CTL_USR : ARCH_LBR_CTL_OS));
	return emulator_lbr_recording(r, p) &&
	       !(r->lbr.select & (user ? LBR_SELECT_CPL_NEQ_0 : LBR_SELECT_CPL_EQ_0));
}

/* The LBR_CTL bit that records a branch of this kind (a set bit records). */
static uint64_t kind_recorded_by(enum emulator_lbr_kind kind)
{
	static const uint64_t bits[] = {
		[EMULATOR_LBR_JCC] = ARCH_LBR_CTL_JCC,
		[EMULATOR_LBR_NEAR_REL_CALL] = ARCH_LBR_CTL_NEAR_REL_CALL,
		[EMULATOR_LBR_NEAR_IND_CALL] = ARCH_LBR_CTL_NEAR_IND_CALL,
		[EMULATOR_LBR_NEAR_RET] = ARCH_LBR_CTL_NEAR_RET,
		[EMULATOR_LBR_NEAR_IND_JMP] = ARCH_LBR_CTL_NEAR_IND_JMP,
		[EMULATOR_LBR_NEAR_REL_JMP] = ARCH_LBR_CTL_NEAR_REL_JMP,
		[EMULATOR_LBR_FAR] = ARCH_LBR_CTL_OTHER_BRANCH,
	};

	return bits[kind];
}

/*
 * Architectural LBR: entry 0 is the newest, and the records are no ring: a new one moves every
 * other down by one (the oldest within DEPTH falls off). In call-stack mode a near return pops
 * entry 0: every other moves up, and the last within DEPTH reads 0 (choice).
 */
static void arch_record(struct emulator_registers *r, const struct emulator_profile *p,
			uint64_t from, uint64_t to, bool to_user, enum emulator_lbr_kind kind)
{
	struct emulator_lbr *l = &r->lbr;
	unsigned int depth = arch_depth(l, p);

	if (!emulator_lbr_recording(r, p) ||
	    !(l->ctl & (to_user ? ARCH_LBR_CTL_USR : ARCH_LBR_CTL_OS)) ||
	    !(l->ctl & kind_recorded_by(kind)))
		return;
	if ((l->ctl & ARCH_LBR_CTL_CALL_STACK) && kind == EMULATOR_LBR_NEAR_RET) {
		for (unsigned int i = 0; i + 1 < depth; i++) {
			l->from[i] = l->from[i + 1];
			l->to[i] = l->to[i + 1];
			l->info[i] = l->info[i + 1];
		}
		l->from[depth - 1] = l->to[depth - 1] = l->info[depth - 1] = 0;
		return;
	}
	for (unsigned int i = depth - 1; i > 0; i--) {
		l->from[i] = l->from[i - 1];
		l->to[i] = l->to[i - 1];
		l->info[i] = l->info[i - 1];
	}
	l->from[0] = from;
	l->to[0] = to;
	l->info[0] = 0;
}

/*
 * A new entry goes at TOS + 1 in the ring of the profile's depth and becomes TOS (SDM: TOS
 * "points to the most recent branch record"). In call-stack mode (EN_CALLSTACK) the stack is
 * a LIFO: a near call pushes as above, a near return pops (TOS - 1) and writes nothing; the
 * entry it leaves is not cleared (choice: the SDM does not say it is), and the next call
 * overwrites it.
 */
void emulator_lbr_record(struct emulator_registers *r, const struct emulator_profile *p,
			 uint64_t from, uint64_t to, bool to_user, enum emulator_lbr_kind kind)
{
	struct emulator_lbr *l = &r->lbr;
	uint64_t ring = to_user ? LBR_SELECT_CPL_NEQ_0 : LBR_SELECT_CPL_EQ_0;
	uint64_t mask = p->lbr_depth - 1;

	if (emulator_arch_lbr(p)) {
		arch_record(r, p, from, to, to_user, kind);
		return;
	}
	if (!emulator_lbr_recording(r, p) ||
	    (l->select & (ring | emulator_lbr_kind_suppressed_by(kind))))
		return;
	if ((l->select & LBR_SELECT_EN_CALLSTACK) && kind == EMULATOR_LBR_NEAR_RET) {
		l->tos = (l->tos - 1) & mask;
		return;
	}
	l->tos = (l->tos + 1) & mask;
	l->from[l->tos] = from_value(p, from);
	l->to[l->tos] = to;
	l->info[l->tos] = 0; /* no mispredict, no TSX, cycle count not modelled (choice) */
}

/*
 * FREEZE_LBRS_ON_PMI (SDM "Freezing LBR and Performance Counters on PMI"): from perfmon v4 a
 * PMI sets GLOBAL_STATUS.LBR_FRZ (bit 58), recording stops while it is set, and clearing it
 * through GLOBAL_STATUS_RESET resumes (Linux __intel_pmu_lbr_enable(): "v4 can do that as part
 * of the GLOBAL_STATUS ack"); before v4 the CPU clears DEBUGCTL.LBR, and software sets it again.
 */
void emulator_lbr_pmi(struct emulator_registers *r, const struct emulator_profile *p)
{
	if ((!emulator_lbr_exists(p) && !emulator_arch_lbr(p)) ||
	    !(r->debugctl & DEBUGCTL_FREEZE_LBRS_ON_PMI))
		return;
	if (p->perfmon_version >= 4 || emulator_arch_lbr(p))
		r->global_status |= PERF_GLOBAL_STATUS_LBRS_FROZEN;
	else
		r->debugctl &= ~DEBUGCTL_LBR;
}

unsigned int emulator_lbr_newest(const struct emulator_registers *r,
				 const struct emulator_profile *p, struct pebs_assist_lbr *out,
				 unsigned int max)
{
	const struct emulator_lbr *l = &r->lbr;
	uint64_t mask = p->lbr_depth - 1;
	bool arch = emulator_arch_lbr(p);
	unsigned int depth = arch ? arch_depth(l, p) : p->lbr_depth;
	unsigned int n;

	if (!emulator_lbr_recording(r, p))
		return 0;
	for (n = 0; n < max && n < depth; n++) {
		unsigned int index = arch ? n : (unsigned int)((l->tos - n) & mask);

		if (!l->from[index])
			break;
		out[n] = (struct pebs_assist_lbr){ l->from[index], l->to[index], l->info[index] };
	}
	return n;
}

/*
 * Leaf 0DH on a profile with architectural LBR: sub-leaf 1 enumerates XSAVES (EAX[3]) and
 * IA32_XSS bit 15 (ECX), sub-leaf 15 the component's size at the deepest depth and that it is a
 * supervisor component (ECX[0]), not 64-byte aligned (ECX[1] = 0). Without architectural LBR
 * the model's CPU has no XSAVES (IA32_XSS raises #GP), and sub-leaf 15 reads 0.
 */
void emulator_lbr_xstate_cpuid(const struct emulator_profile *p, uint32_t subleaf, uint32_t *eax,
			       uint32_t *ebx, uint32_t *ecx, uint32_t *edx)
{
	bool arch = emulator_arch_lbr(p);

	if (subleaf == 1) {
		*eax = arch ? *eax | CPUID_D1_EAX_XSAVES : *eax & ~CPUID_D1_EAX_XSAVES;
		*ecx = arch ? (uint32_t)XSS_ARCH_LBR : 0;
		*edx = 0;
	} else if (subleaf == XSS_ARCH_LBR_COMPONENT) {
		*eax = arch ? (uint32_t)XSAVE_ARCH_LBR_SIZE(arch_max_depth(p)) : 0;
		*ebx = 0;
		*ecx = arch ? CPUID_D_ECX_SUPERVISOR : 0;
		*edx = 0;
	}
}

static bool xss_access(struct emulator_lbr *l, const struct emulator_profile *p, uint64_t *value,
		       bool write)
{
	if (!emulator_arch_lbr(p) || (write && (*value & ~XSS_ARCH_LBR)))
		return true;
	if (write)
		l->xss = *value;
	else
		*value = l->xss;
	return false;
}

/* Whether DEPTH may hold depth (a WRMSR's rule, which XRSTORS shares). */
static bool depth_supported(const struct emulator_profile *p, uint64_t depth)
{
	return depth && depth % 8 == 0 && depth <= arch_max_depth(p) &&
	       (p->arch_lbr_depths & (1u << (depth / 8 - 1)));
}

/* Whether XRSTORS may load the component: each value as its WRMSR would take it. */
static bool arch_state_valid(const struct emulator_profile *p, const struct xsave_arch_lbr *s)
{
	if ((s->lbr_ctl & ~ARCH_LBR_CTL_DEFINED) || !depth_supported(p, s->lbr_depth) ||
	    !sign_extended(s->ler_from, 63) || !sign_extended(s->ler_to, 63))
		return false;
	for (uint64_t i = 0; i < s->lbr_depth; i++)
		if (!sign_extended(s->entries[i].from, 63) ||
		    !sign_extended(s->entries[i].to, 63) ||
		    (s->entries[i].info & ~ARCH_LBR_INFO_DEFINED))
			return false;
	return true;
}

/*
 * Rule 24, XSAVES and XRSTORS of component 15 (SDM Vol. 1 §13.11, §13.12; Vol. 2B XSAVES,
 * XRSTORS). RFBM is EDX:EAX AND IA32_XSS (XCR0 never holds bit 15). Both raise #GP for an area
 * that is not 64-byte aligned. XSAVES writes the component (DEPTH entries) when RFBM has it,
 * XSTATE_BV = RFBM (choice: the component always counts as in use) and XCOMP_BV = bit 63 |
 * RFBM. XRSTORS raises #GP when XCOMP_BV[63] is clear, XCOMP_BV has a bit other than 15 (choice:
 * the model plays this component alone), XSTATE_BV a bit outside XCOMP_BV, header bytes 16-63
 * are not 0, or the component holds what its WRMSRs would refuse (LBR_CTL's undefined bits, a
 * depth the CPU does not support, a non-canonical address, INFO's undefined bits); else it
 * loads the component, records past its depth zeroed as a DEPTH write does, or with XSTATE_BV[15]
 * clear its initial configuration: every field 0, DEPTH the deepest (choice: its RESET value).
 */
bool emulator_lbr_xsaves(struct emulator_registers *r, const struct emulator_profile *p, void *area,
			 uint64_t mask, bool restore)
{
	struct emulator_lbr *l = &r->lbr;
	struct xsave_header *header = (struct xsave_header *)((char *)area + XSAVE_LEGACY_SIZE);
	struct xsave_arch_lbr *s = (struct xsave_arch_lbr *)((char *)area + XSAVE_ARCH_LBR_OFFSET);
	uint64_t rfbm = mask & l->xss;
	unsigned int i, depth;

	if (!emulator_arch_lbr(p) || (uintptr_t)area % XSAVE_ALIGNMENT)
		return true;
	if (!restore) {
		depth = arch_depth(l, p);
		if (rfbm & XSS_ARCH_LBR) {
			*s = (struct xsave_arch_lbr){ l->ctl, depth, l->ler_from, l->ler_to,
						      l->ler_info };
			for (i = 0; i < depth; i++)
				s->entries[i] = (struct xsave_arch_lbr_entry){ l->from[i], l->to[i],
									       l->info[i] };
		}
		header->xstate_bv = rfbm;
		header->xcomp_bv = XCOMP_BV_COMPACTED | rfbm;
		return false;
	}
	if (!(header->xcomp_bv & XCOMP_BV_COMPACTED) ||
	    (header->xcomp_bv & ~(XCOMP_BV_COMPACTED | XSS_ARCH_LBR)) ||
	    (header->xstate_bv & ~(header->xcomp_bv & ~XCOMP_BV_COMPACTED)))
		return true;
	for (i = 0; i < sizeof(header->reserved) / sizeof(header->reserved[0]); i++)
		if (header->reserved[i])
			return true;
	if (!(rfbm & XSS_ARCH_LBR))
		return false;
	if (!(header->xstate_bv & XSS_ARCH_LBR)) {
		*l = (struct emulator_lbr){ .xss = l->xss };
		return false;
	}
	if (!arch_state_valid(p, s))
		return true;
	l->ctl = s->lbr_ctl;
	l->depth = s->lbr_depth;
	l->ler_from = s->ler_from;
	l->ler_to = s->ler_to;
	l->ler_info = s->ler_info;
	for (i = 0; i < LBR_LEGACY_MAX_DEPTH; i++) {
		bool loaded = i < s->lbr_depth;

		l->from[i] = loaded ? s->entries[i].from : 0;
		l->to[i] = loaded ? s->entries[i].to : 0;
		l->info[i] = loaded ? s->entries[i].info : 0;
	}
	return false;
}
