/* SPDX-License-Identifier: MIT */
/* The emulated CPU's AMD core PMU: K7, PerfCtrExtCore and PerfMonV2 MSRs, and AMD's CPUID. */
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/cpuid.h"
#include "arch/x86/msr-index.h"
#include "emulator/amd.h"
#include "emulator/lbr_amd.h"
#include "emulator/profile.h"
#include "emulator/registers.h"

/*
 * Sources: AMD APM Vol. 2 §13.2 "Performance Monitoring Counters" (PerfEvtSeln, PerfCtrn, the
 * PerfMonV2 global MSRs), APM Vol. 3 Appendix E (CPUID), Linux arch/x86/events/amd/core.c, and
 * where the APM leaves a case open KVM's arch/x86/kvm/svm/pmu.c, named as such. Rule 26.
 */

/* PERF_CTL: bits 31:0 as Intel's select but 19 and 21, EventSelect[11:8], Host/GuestOnly. */
#define AMD_PERF_CTL_DEFINED                                                             \
	((PERFEVTSEL_ARCH_BITS & ~AMD_PERF_CTL_RESERVED_LOW) | AMD_PERF_CTL_EVENT_HIGH | \
	 AMD_PERF_CTL_GUEST_ONLY | AMD_PERF_CTL_HOST_ONLY)
#define AMD_PERF_CTL_EVENT_HIGH_SHIFT 32
#define AMD_EVENT_LOW_BITS 8
#define AMD_PERF_INTERLEAVE 2 /* 0xC0010200 + 2i is CTLi, + 2i + 1 CTRi */
#define AMD_GLOBAL_MSRS 4 /* 0xC0000300-3 */
#define AMD_DR_MASKS 4 /* DR0_ADDR_MASK, DR1-3_ADDR_MASK */

/* Linux amd_perfmon_event_map (umask 0): the events the model counts on an AMD part. */
#define AMD_EVENT_CYCLES 0x076 /* "Cycles not in Halt" */
#define AMD_EVENT_INSTRUCTIONS 0x0c0 /* "Retired Instructions" */
#define AMD_EVENT_BRANCHES 0x0c2 /* "Retired Branch Instructions" */
/* The same events as the engine counts them: the SDM's architectural encodings (step.c). */
#define ENGINE_EVENT_INSTRUCTIONS 0xc0ull
#define ENGINE_EVENT_BRANCHES 0xc4ull
#define ENGINE_EVENT_NONE 0x00ull /* counts nothing */

#define AMD_HIGHEST_EXTENDED_LEAF CPUID_LEAF_AMD_PERFMON

static bool in_range(uint32_t index, uint32_t first, unsigned int count, unsigned int *i)
{
	if (index < first || index - first >= count)
		return false;
	*i = index - first;
	return true;
}

/* Which counter a PERF_CTL (ctl) or PERF_CTR (!ctl) MSR names, K7 or PerfCtrExtCore alias. */
static bool counter_msr(const struct emulator_profile *p, uint32_t index, bool *ctl,
			unsigned int *i)
{
	unsigned int n;

	if (in_range(index, MSR_K7_EVNTSEL0, AMD_K7_COUNTERS, i)) {
		*ctl = true;
	} else if (in_range(index, MSR_K7_PERFCTR0, AMD_K7_COUNTERS, i)) {
		*ctl = false;
	} else if (in_range(index, MSR_F15H_PERF_CTL0, AMD_CORE_COUNTERS * AMD_PERF_INTERLEAVE,
			    &n)) {
		if (!p->perfctr_core)
			return false;
		*ctl = n % AMD_PERF_INTERLEAVE == 0;
		*i = n / AMD_PERF_INTERLEAVE;
	} else {
		return false;
	}
	return emulator_gp_counter_exists(p, *i);
}

/* The BPEXT address masks: the model enumerates no BPEXT (CPUID 0x80000001 ECX[26] clear). */
static bool bpext_msr(uint32_t index)
{
	unsigned int i;

	return index == MSR_F16H_DR0_ADDR_MASK ||
	       in_range(index, MSR_F16H_DR1_ADDR_MASK, AMD_DR_MASKS - 1, &i);
}

bool emulator_amd_owns_msr(uint32_t index)
{
	unsigned int i;

	if (index < MSR_AMD64_LBR_SELECT) /* the lowest of them */
		return false;
	return emulator_amd_lbr_owns_msr(index) || bpext_msr(index) ||
	       in_range(index, MSR_K7_EVNTSEL0, 2 * AMD_K7_COUNTERS, &i) ||
	       in_range(index, MSR_F15H_PERF_CTL0, AMD_CORE_COUNTERS * AMD_PERF_INTERLEAVE, &i) ||
	       in_range(index, MSR_AMD64_PERF_CNTR_GLOBAL_STATUS, AMD_GLOBAL_MSRS, &i);
}

bool emulator_amd_msr_enables_counters(uint32_t index)
{
	unsigned int i;

	return in_range(index, MSR_K7_EVNTSEL0, AMD_K7_COUNTERS, &i) ||
	       (in_range(index, MSR_F15H_PERF_CTL0, AMD_CORE_COUNTERS * AMD_PERF_INTERLEAVE, &i) &&
		i % AMD_PERF_INTERLEAVE == 0) ||
	       index == MSR_AMD64_PERF_CNTR_GLOBAL_CTL;
}

/* The 12-bit event of a PERF_CTL. */
static unsigned int amd_event(uint64_t ctl)
{
	return (unsigned int)(ctl & PERFEVTSEL_EVENT_MASK) |
	       (unsigned int)((ctl & AMD_PERF_CTL_EVENT_HIGH) >> AMD_PERF_CTL_EVENT_HIGH_SHIFT)
		       << AMD_EVENT_LOW_BITS;
}

/*
 * The select the engine counts counter i by: the flags, unit mask and counter mask of bits
 * 31:0, the event in the SDM's encoding (any other counts nothing), and EN only where
 * PerfMonV2's global control also enables the counter (APM: a counter counts when both do).
 * Host/GuestOnly are kept in amd_ctl and not applied: the model never runs a guest.
 */
static uint64_t engine_select(const struct emulator_registers *r, const struct emulator_profile *p,
			      unsigned int i)
{
	uint64_t ctl = r->amd_ctl[i];
	uint64_t select = ctl & PERFEVTSEL_ARCH_BITS & ~(PERFEVTSEL_EVENT_MASK | PERFEVTSEL_EN);
	bool enabled = (ctl & PERFEVTSEL_EN) && (!p->perfmon_v2 || (r->global_ctrl & (1ull << i)));

	switch (amd_event(ctl)) {
	case AMD_EVENT_CYCLES:
		select |= PERFEVTSEL_EVENT_CORE_CYCLES;
		break;
	case AMD_EVENT_INSTRUCTIONS:
		select |= ENGINE_EVENT_INSTRUCTIONS;
		break;
	case AMD_EVENT_BRANCHES:
		select |= ENGINE_EVENT_BRANCHES;
		break;
	default:
		select |= ENGINE_EVENT_NONE;
	}
	return enabled ? select | PERFEVTSEL_EN : select;
}

static void engine_sync(struct emulator_registers *r, const struct emulator_profile *p)
{
	for (unsigned int i = 0; i < EMULATOR_MAX_GP; i++)
		r->evtsel[i] = emulator_gp_counter_exists(p, i) ? engine_select(r, p, i) : 0;
}

void emulator_amd_reset(struct emulator_registers *r, const struct emulator_profile *p)
{
	for (unsigned int i = 0; i < EMULATOR_MAX_GP; i++)
		r->amd_ctl[i] = r->evtsel[i] = r->counter[i] = 0;
	r->global_status = 0;
	r->global_ctrl = p->perfmon_v2 ? emulator_counter_bits(p) : 0;
}

static bool read_global(const struct emulator_registers *r, uint32_t index, uint64_t *value)
{
	switch (index) {
	case MSR_AMD64_PERF_CNTR_GLOBAL_STATUS:
		*value = r->global_status;
		return false;
	case MSR_AMD64_PERF_CNTR_GLOBAL_CTL:
		*value = r->global_ctrl;
		return false;
	default: /* STATUS_CLR and STATUS_SET read 0, as KVM's kvm_pmu_get_msr() returns */
		*value = 0;
		return false;
	}
}

/* Which of the profile's AMD PMU MSRs index is; AMD_MSR_NONE raises #GP. */
enum amd_msr { AMD_MSR_NONE, AMD_MSR_GLOBAL, AMD_MSR_COUNTER };

static enum amd_msr amd_msr_of(const struct emulator_profile *p, uint32_t index, bool *ctl,
			       unsigned int *i)
{
	if (!p->amd || bpext_msr(index))
		return AMD_MSR_NONE;
	if (index >= MSR_AMD64_PERF_CNTR_GLOBAL_STATUS &&
	    index < MSR_AMD64_PERF_CNTR_GLOBAL_STATUS + AMD_GLOBAL_MSRS)
		return p->perfmon_v2 ? AMD_MSR_GLOBAL : AMD_MSR_NONE;
	return counter_msr(p, index, ctl, i) ? AMD_MSR_COUNTER : AMD_MSR_NONE;
}

bool emulator_amd_read_msr(const struct emulator_registers *r, const struct emulator_profile *p,
			   uint32_t index, uint64_t *value)
{
	unsigned int i = 0;
	bool ctl = false;

	if (emulator_amd_lbr_owns_msr(index))
		return emulator_amd_lbr_read_msr(r, p, index, value);
	switch (amd_msr_of(p, index, &ctl, &i)) {
	case AMD_MSR_GLOBAL:
		return read_global(r, index, value);
	case AMD_MSR_COUNTER:
		break;
	default:
		return true;
	}
	*value = ctl ? r->amd_ctl[i] : r->counter[i] & emulator_counter_mask(p, false);
	return false;
}

/*
 * PerfMonV2's global MSRs take bit i per existing counter, and STATUS_CLR/SET LbrExtV2's
 * LBRS_FROZEN (rule 27); any other bit raises #GP, as KVM's kvm_pmu_set_msr() does
 * (global_ctrl_rsvd, global_status_rsvd). GLOBAL_STATUS is read-only.
 */
static bool write_global(struct emulator_registers *r, const struct emulator_profile *p,
			 uint32_t index, uint64_t value)
{
	uint64_t status_bits = emulator_counter_bits(p) | emulator_amd_lbr_status_bits(p);

	if (value &
	    ~(index == MSR_AMD64_PERF_CNTR_GLOBAL_CTL ? emulator_counter_bits(p) : status_bits))
		return true;
	switch (index) {
	case MSR_AMD64_PERF_CNTR_GLOBAL_CTL:
		r->global_ctrl = value;
		engine_sync(r, p);
		return false;
	case MSR_AMD64_PERF_CNTR_GLOBAL_STATUS_CLR:
		r->global_status &= ~value;
		return false;
	case MSR_AMD64_PERF_CNTR_GLOBAL_STATUS_SET:
		r->global_status |= value;
		return false;
	default:
		return true;
	}
}

/*
 * A PERF_CTL bit the APM reserves raises #GP (KVM instead drops it: amd_pmu_set_msr(), choice).
 * A PERF_CTR takes bits 47:0; bits 63:48 are reserved: #GP (choice; Linux never sets them). Without
 * PerfMonV2 nothing records an overflow but the counter itself (Linux amd_pmu_handle_irq()
 * tests the sign bit): the engine's overflow bit of the counter is cleared by the write that
 * reloads it, and is not visible to software.
 */
bool emulator_amd_write_msr(struct emulator_registers *r, const struct emulator_profile *p,
			    uint32_t index, uint64_t value)
{
	unsigned int i = 0;
	bool ctl = false;

	if (emulator_amd_lbr_owns_msr(index))
		return emulator_amd_lbr_write_msr(r, p, index, value);
	switch (amd_msr_of(p, index, &ctl, &i)) {
	case AMD_MSR_GLOBAL:
		return write_global(r, p, index, value);
	case AMD_MSR_COUNTER:
		break;
	default:
		return true;
	}
	if (ctl) {
		if (value & ~AMD_PERF_CTL_DEFINED)
			return true;
		r->amd_ctl[i] = value;
		r->evtsel[i] = engine_select(r, p, i);
		return false;
	}
	if (value & ~emulator_counter_mask(p, false))
		return true;
	r->counter[i] = value;
	if (!p->perfmon_v2)
		r->global_status &= ~(1ull << i);
	return false;
}

bool emulator_amd_owns_cpuid(uint32_t leaf)
{
	return leaf == CPUID_LEAF_EXTENDED || leaf == CPUID_LEAF_AMD_FEATURES ||
	       leaf == CPUID_LEAF_AMD_PERFMON;
}

struct cpuid_result emulator_amd_cpuid(const struct emulator_profile *p, uint32_t leaf,
				       struct cpuid_result real)
{
	switch (leaf) {
	case CPUID_LEAF_EXTENDED:
		if (p->perfmon_v2 && real.eax < AMD_HIGHEST_EXTENDED_LEAF)
			real.eax = AMD_HIGHEST_EXTENDED_LEAF;
		return real;
	case CPUID_LEAF_AMD_FEATURES:
		if (p->perfctr_core)
			real.ecx |= CPUID_80000001_ECX_PERFCTR_CORE;
		else
			real.ecx &= ~CPUID_80000001_ECX_PERFCTR_CORE;
		real.ecx &= ~CPUID_80000001_ECX_BPEXT;
		return real;
	case CPUID_LEAF_AMD_PERFMON:
		if (!p->perfmon_v2)
			return (struct cpuid_result){ 0 };
		return (struct cpuid_result){
			.eax = CPUID_80000022_EAX_PERFMON_V2 | emulator_amd_lbr_cpuid_eax(p),
			.ebx = p->gp_counters | emulator_amd_lbr_cpuid_ebx(p)
		};
	default:
		return real;
	}
}
