/* SPDX-License-Identifier: MIT */
/* The emulated CPU's register file: each modelled MSR's RDMSR/WRMSR semantics, and CPUID. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/arch-pebs.h"
#include "arch/x86/cpuid.h"
#include "arch/x86/msr-index.h"
#include "emulator/amd.h"
#include "emulator/arch_pebs.h"
#include "emulator/profile.h"
#include "emulator/registers.h"

/*
 * Sources: SDM Vol. 4 Table 2-2 (architectural MSRs) and the model tables, SDM Vol. 3B
 * "Architectural Performance Monitoring" and "Debug Store", and where the SDM leaves a case
 * open, KVM (arch/x86/kvm/vmx/pmu_intel.c intel_pmu_refresh()/intel_pmu_set_msr(), x86.c),
 * named as such. docs/emulated-cpu.md numbers the rules (6, 7, 8, 9, 14).
 */

#define CANONICAL_BITS 48 /* 4-level paging; LA57 is not modelled */
#define FIRMWARE_COUNT 1000000007ull /* a count firmware left behind: any non-zero (choice) */
#define FIRMWARE_FIXED_FIRST 1 /* "MSR 38d is 330": fields of fixed counters 1 and 2 */
#define FIRMWARE_FIXED_LAST 2

/* IA32_MISC_ENABLE bits the model owns; all read-only (SDM Vol. 4: bit 7 R, bits 11-12 RO). */
#define MISC_ENABLE_MODELLED \
	(MISC_ENABLE_PERFMON_AVAILABLE | MISC_ENABLE_BTS_UNAVAILABLE | MISC_ENABLE_PEBS_UNAVAILABLE)
#define DEBUGCTL_BTS_FEATURE (DEBUGCTL_TR | DEBUGCTL_BTS | DEBUGCTL_BTINT)
#define PEBS_DATACFG_DEFINED                                                              \
	(PEBS_DATACFG_MEMINFO | PEBS_DATACFG_GP | PEBS_DATACFG_XMMS | PEBS_DATACFG_LBRS | \
	 PEBS_DATACFG_LBR_MASK)

static bool in_family(uint32_t index, uint32_t first, unsigned int count, unsigned int *i)
{
	if (index < first || index - first >= count)
		return false;
	*i = index - first;
	return true;
}

static bool canonical(uint64_t address)
{
	uint64_t upper = address >> (CANONICAL_BITS - 1);

	return upper == 0 || upper == (~0ull >> (CANONICAL_BITS - 1));
}

/* A legacy IA32_PMCx write: bits 31:0, sign-extended (SDM Vol. 3B "Full-Width Writes"). */
static uint64_t sign_extend_32(uint64_t value)
{
	return (uint64_t)(int64_t)(int32_t)(uint32_t)value;
}

static uint64_t misc_enable_value(const struct emulator_profile *p)
{
	return (p->perfmon_version && !p->perfmon_disabled ? MISC_ENABLE_PERFMON_AVAILABLE : 0) |
	       (p->bts ? 0 : MISC_ENABLE_BTS_UNAVAILABLE) |
	       (p->pebs ? 0 : MISC_ENABLE_PEBS_UNAVAILABLE);
}

/*
 * Rule 9. PEBS trap is set with PEBS: every profile's part prints "fmtN+". PEBSSaveArchRegs
 * (bit 7) is set with PEBS: every part the profiles play writes the general-purpose registers
 * into its records (SDM "PEBS Record Format": RFLAGS, RIP and RAX-R15 in every format 0-3
 * record; the GPR group of an adaptive one), Linux's setup_pebs_fixed_sample_data() takes
 * them from every format 0-3 record without asking, and KVM passes the host's bit to a PEBS
 * guest (PERF_CAP_PEBS_MASK in vmx_get_perf_capabilities()).
 */
static uint64_t perf_capabilities_value(const struct emulator_profile *p)
{
	uint64_t value = 0;

	if (p->pebs)
		value |= PERF_CAP_PEBS_TRAP | PERF_CAP_PEBS_ARCH_REGS |
			 ((uint64_t)p->pebs_format << PERF_CAP_PEBS_FORMAT_SHIFT);
	if (p->full_width)
		value |= PERF_CAP_FULL_WIDTH_WRITE;
	if (p->pebs_baseline)
		value |= PERF_CAP_PEBS_BASELINE;
	return value | (p->lbr_format & PERF_CAP_LBR_FORMAT_MASK);
}

/*
 * AnyThread (EVTSEL bit 21, FIXED_CTR_CTRL bit 2 + 4i) is defined from perfmon version 3 (SDM
 * Vol. 3B "Architectural Performance Monitoring Version 3") and deprecated from version 5,
 * which the model enumerates in CPUID.0AH:EDX[15] and then treats as reserved, as KVM does
 * for every guest (intel_pmu_refresh(): reserved_bits 0xffffffff00200000).
 */
static bool any_thread_defined(const struct emulator_profile *p)
{
	return p->perfmon_version == 3 || p->perfmon_version == 4;
}

/*
 * IA32_DEBUGCTL (SDM Vol. 4 Table 2-2). LBR is accepted everywhere, kept where the profile has a
 * model-specific LBR stack and dropped elsewhere (emulator_lbr_debugctl_kept()). BTF is kept, and
 * the engine single-steps on branches with it. BTS_OFF_OS/USR are accepted and stored on every
 * profile (the table ties them to CPU models, not to DS-CPL); the engine applies them only with
 * DS-CPL. Bits 11-12 need PDCM and perfmon version 2 ("If CPUID.01H:ECX[15] = 1 &&
 * CPUID.0AH:EAX[7:0] > 1"). Every other bit (bus-lock detect, SMM freeze, RTM debug, ...) is not
 * modelled: #GP.
 */
static uint64_t debugctl_defined(const struct emulator_profile *p)
{
	uint64_t bits;

	/*
	 * AMD's DebugCtl (APM Vol. 2 §13.1.1.6): LBR and BTF, FREEZE_LBRS_ON_PMI with LbrExtV2's
	 * freeze (rule 27); PB0-3 and the rest not modelled.
	 */
	if (p->amd)
		return DEBUGCTL_LBR | DEBUGCTL_BTF | emulator_amd_lbr_debugctl_bits(p);
	bits = DEBUGCTL_LBR | DEBUGCTL_BTF | DEBUGCTL_BTS_FEATURE | DEBUGCTL_BTS_OFF_OS |
	       DEBUGCTL_BTS_OFF_USR;

	if (p->pdcm && p->perfmon_version >= 2)
		bits |= DEBUGCTL_FREEZE_LBRS_ON_PMI | DEBUGCTL_FREEZE_PERFMON_ON_PMI;
	return bits;
}

/*
 * A KVM guest without LBR (kvm_debugctl): vmx_set_msr() drops BTF and LBR without a fault, "for
 * compatibility with old guests", and every bit vmx_get_supported_debugctl() does not list
 * raises #GP: the freeze bits (FREEZE_LBRS_ON_PMI comes only with guest LBR), TR, BTS, BTINT,
 * BTS_OFF_OS/USR. Bus-lock detect and RTM debug, which it may list, are not modelled.
 */
#define DEBUGCTL_KVM_DROPPED (DEBUGCTL_BTF | DEBUGCTL_LBR)

/* TR, BTS or BTINT while IA32_MISC_ENABLE.BTS_UNAVAILABLE is set: #GP, as under KVM (rule 6). */
static bool write_debugctl(struct emulator_registers *r, const struct emulator_profile *p,
			   uint64_t value)
{
	if (p->kvm_debugctl) {
		if (value & ~DEBUGCTL_KVM_DROPPED)
			return true;
		r->debugctl = 0;
		return false;
	}
	if (value & ~debugctl_defined(p))
		return true;
	if (!p->bts && (value & DEBUGCTL_BTS_FEATURE))
		return true;
	r->debugctl = value & ~(DEBUGCTL_LBR & ~emulator_lbr_debugctl_kept(p));
	return false;
}

/*
 * IA32_PERFEVTSELx: bits 31:0 (AnyThread per version) and bit 34 with adaptive PEBS. Bits
 * 32-33 (TSX IN_TX/IN_TXCP) are not modelled: #GP.
 */
static uint64_t evtsel_defined(const struct emulator_profile *p)
{
	uint64_t bits = PERFEVTSEL_ARCH_BITS & ~PERFEVTSEL_ANY_THREAD;

	if (any_thread_defined(p))
		bits |= PERFEVTSEL_ANY_THREAD;
	if (emulator_pebs_adaptive(p))
		bits |= PERFEVTSEL_ADAPTIVE;
	return bits;
}

/* IA32_FIXED_CTR_CTRL: one field per existing counter (rule 9), adaptive bit 32 + 4i. */
static uint64_t fixed_ctrl_defined(const struct emulator_profile *p)
{
	uint64_t field = FIXED_CTR_CTRL_OS | FIXED_CTR_CTRL_USR | FIXED_CTR_CTRL_PMI;
	uint64_t bits = 0;

	if (any_thread_defined(p))
		field |= FIXED_CTR_CTRL_ANY_THREAD;
	for (unsigned int i = 0; i < EMULATOR_MAX_FIXED; i++) {
		if (!emulator_fixed_counter_exists(p, i))
			continue;
		bits |= field << (FIXED_CTR_CTRL_FIELD_BITS * i);
		if (emulator_pebs_adaptive(p))
			bits |= FIXED_CTR_CTRL_ADAPTIVE << (FIXED_CTR_CTRL_FIELD_BITS * i);
	}
	return bits;
}

/*
 * IA32_PERF_GLOBAL_OVF_CTRL (IA32_PERF_GLOBAL_STATUS_RESET from v4): the counters' bits,
 * OvfBuf and CondChgd, and from v4 LBR_Frz and CTR_Frz. Uncore, ToPA and ASCI are not
 * modelled.
 */
static uint64_t ovf_ctrl_defined(const struct emulator_profile *p)
{
	uint64_t bits = emulator_counter_bits(p) | PERF_GLOBAL_STATUS_BUFFER_OVF |
			PERF_GLOBAL_STATUS_COND_CHANGED | emulator_arch_pebs_status_bits(p);

	if (p->perfmon_version >= 4)
		bits |= PERF_GLOBAL_STATUS_LBRS_FROZEN | PERF_GLOBAL_STATUS_COUNTERS_FROZEN;
	return bits;
}

/*
 * IA32_PERF_GLOBAL_STATUS_SET (perfmon v4, SDM Vol. 3B §20.2.4.2): writing 1 sets the status
 * bit IA32_PERF_GLOBAL_STATUS_RESET clears, but CondChgd, which has no set bit; no PMI comes of
 * it. Reads 0, as OVF_CTRL does (the SDM gives neither a read value).
 */
static uint64_t status_set_defined(const struct emulator_profile *p)
{
	return ovf_ctrl_defined(p) & ~PERF_GLOBAL_STATUS_COND_CHANGED;
}

/*
 * IA32_PERF_GLOBAL_INUSE (perfmon v4, SDM Vol. 3B §20.2.4.3), read-only: bit i while
 * IA32_PERFEVTSELi[7:0] (the event select) is not 0; bit 32+i while fixed counter i's enable
 * field, IA32_FIXED_CTR_CTRL[4i+1:4i], is not 0; bit 63 (PMI in use) while a GP counter sets
 * INT, a fixed counter its PMI bit, or IA32_PEBS_ENABLE enables a counter.
 */
static uint64_t global_inuse(const struct emulator_registers *r, const struct emulator_profile *p)
{
	uint64_t value = 0;

	for (unsigned int i = 0; i < EMULATOR_MAX_GP; i++) {
		if (!emulator_gp_counter_exists(p, i))
			continue;
		if (r->evtsel[i] & PERFEVTSEL_EVENT_MASK)
			value |= 1ull << i;
		if (r->evtsel[i] & PERFEVTSEL_INT)
			value |= PERF_GLOBAL_INUSE_PMI;
	}
	for (unsigned int i = 0; i < EMULATOR_MAX_FIXED; i++) {
		uint64_t field = r->fixed_ctrl >> (FIXED_CTR_CTRL_FIELD_BITS * i);

		if (!emulator_fixed_counter_exists(p, i))
			continue;
		if (field & (FIXED_CTR_CTRL_OS | FIXED_CTR_CTRL_USR))
			value |= PERF_GLOBAL_FIXED_CTR0 << i;
		if (field & FIXED_CTR_CTRL_PMI)
			value |= PERF_GLOBAL_INUSE_PMI;
	}
	if (r->pebs_enable & emulator_counter_bits(p))
		value |= PERF_GLOBAL_INUSE_PMI;
	return value;
}

/* The GLOBAL_* MSRs and FIXED_CTR_CTRL: from version 2 (KVM's rule; the SDM contradicts itself). */
static bool has_global_msrs(const struct emulator_profile *p)
{
	return p->perfmon_version >= 2;
}

static void leave_firmware_state(struct emulator_registers *r, const struct emulator_profile *p)
{
	uint64_t all_rings = FIXED_CTR_CTRL_OS | FIXED_CTR_CTRL_USR;

	if (emulator_gp_counter_exists(p, 0)) {
		r->evtsel[0] = PERFEVTSEL_EVENT_CORE_CYCLES | PERFEVTSEL_USR | PERFEVTSEL_OS |
			       PERFEVTSEL_EN;
		r->counter[0] = FIRMWARE_COUNT & emulator_counter_mask(p, false);
	}
	for (unsigned int i = FIRMWARE_FIXED_FIRST; i <= FIRMWARE_FIXED_LAST; i++) {
		if (!emulator_fixed_counter_exists(p, i))
			continue;
		r->fixed_ctrl |= all_rings << (FIXED_CTR_CTRL_FIELD_BITS * i);
		r->fixed_counter[i] = FIRMWARE_COUNT & emulator_counter_mask(p, true);
		r->global_ctrl |= PERF_GLOBAL_FIXED_CTR0 << i;
	}
}

void emulator_registers_reset(struct emulator_registers *r, const struct emulator_profile *p)
{
	*r = (struct emulator_registers){ 0 };
	r->misc_enable = misc_enable_value(p);
	r->perf_capabilities = perf_capabilities_value(p);
	if (has_global_msrs(p))
		r->global_ctrl = emulator_counter_bits(p) & (PERF_GLOBAL_FIXED_CTR0 - 1);
	if (p->firmware_leftovers)
		leave_firmware_state(r, p);
	if (p->amd)
		emulator_amd_reset(r, p);
}

/* Every AMD MSR the model owns lies at or above this; every Intel one below 0x2000. */
#define AMD_MSR_FLOOR 0xc0000000u

void emulator_status_change(struct emulator_registers *r, const struct emulator_profile *p,
			    uint64_t set, uint64_t clear)
{
	uint64_t status = (r->global_status | set) & ~clear;

	if (status != r->global_status && !p->amd && has_global_msrs(p))
		status |= PERF_GLOBAL_STATUS_COND_CHANGED;
	r->global_status = status;
}

bool emulator_owns_msr(uint32_t index)
{
	unsigned int i;

	/*
	 * Every accessor asks this, also in counted code (ds.partial_pebs_*, pmu.instructions_*,
	 * emulator.amd_counters_count_by_amds_event_encodings, whose 64-instruction slack an
	 * arch-PEBS check before AMD's overran by 16): AMD's range goes straight to AMD's table,
	 * and LBR's and arch-PEBS's CFG_C families come last.
	 */
	if (index >= AMD_MSR_FLOOR)
		return emulator_amd_owns_msr(index);
	switch (index) {
	case MSR_IA32_DEBUGCTL:
	case MSR_IA32_DS_AREA:
	case MSR_IA32_PEBS_ENABLE:
	case MSR_PEBS_DATA_CFG:
	case MSR_IA32_PERF_CAPABILITIES:
	case MSR_IA32_MISC_ENABLE:
	case MSR_IA32_FIXED_CTR_CTRL:
	case MSR_IA32_PERF_GLOBAL_CTRL:
	case MSR_IA32_PERF_GLOBAL_STATUS:
	case MSR_IA32_PERF_GLOBAL_OVF_CTRL:
	case MSR_IA32_PERF_GLOBAL_STATUS_SET:
	case MSR_IA32_PERF_GLOBAL_INUSE:
		return true;
	}
	return in_family(index, MSR_IA32_PERFEVTSEL0, EMULATOR_MAX_GP, &i) ||
	       in_family(index, MSR_IA32_PMC0, EMULATOR_MAX_GP, &i) ||
	       in_family(index, MSR_IA32_A_PMC0, EMULATOR_MAX_GP, &i) ||
	       in_family(index, MSR_IA32_FIXED_CTR0, EMULATOR_MAX_FIXED, &i) ||
	       emulator_lbr_owns_msr(index) || emulator_arch_pebs_owns_msr(index);
}

bool emulator_msr_enables_counters(uint32_t index)
{
	unsigned int i;

	return index == MSR_IA32_FIXED_CTR_CTRL || index == MSR_IA32_PERF_GLOBAL_CTRL ||
	       emulator_amd_msr_enables_counters(index) ||
	       in_family(index, MSR_IA32_PERFEVTSEL0, EMULATOR_MAX_GP, &i);
}

/* Rule 6: a counter, EVTSEL or A_PMC beyond CPUID.0AH raises #GP; A_PMC without full-width. */
static bool read_counter_family(const struct emulator_registers *r,
				const struct emulator_profile *p, uint32_t index, uint64_t *value)
{
	unsigned int i;

	if (in_family(index, MSR_IA32_PERFEVTSEL0, EMULATOR_MAX_GP, &i)) {
		if (!emulator_gp_counter_exists(p, i))
			return true;
		*value = r->evtsel[i];
	} else if (in_family(index, MSR_IA32_PMC0, EMULATOR_MAX_GP, &i) ||
		   (in_family(index, MSR_IA32_A_PMC0, EMULATOR_MAX_GP, &i) && p->full_width)) {
		if (!emulator_gp_counter_exists(p, i))
			return true;
		*value = r->counter[i] & emulator_counter_mask(p, false);
	} else if (in_family(index, MSR_IA32_FIXED_CTR0, EMULATOR_MAX_FIXED, &i)) {
		if (!emulator_fixed_counter_exists(p, i))
			return true;
		*value = r->fixed_counter[i] & emulator_counter_mask(p, true);
	} else {
		return true;
	}
	return false;
}

bool emulator_read_msr(const struct emulator_registers *r, const struct emulator_profile *p,
		       uint32_t index, uint64_t *value)
{
	uint64_t v;

	/* Rule 26: AMD's MSRs are AMD's; on an AMD part every Intel one but DEBUGCTL is absent. */
	if (emulator_amd_owns_msr(index))
		return emulator_amd_read_msr(r, p, index, value);
	if (p->amd && index != MSR_IA32_DEBUGCTL)
		return true;
	if (emulator_lbr_owns_msr(index))
		return emulator_lbr_read_msr(r, p, index, value);
	if (emulator_arch_pebs_serves_msr(p, index)) /* rule 25 */
		return emulator_arch_pebs_read_msr(r, p, index, value);

	switch (index) {
	case MSR_IA32_DEBUGCTL:
		v = r->debugctl;
		break;
	case MSR_IA32_DS_AREA: /* exists with CPUID.1:EDX.DS */
		if (!p->ds)
			return true;
		v = r->ds_area;
		break;
	case MSR_IA32_PEBS_ENABLE: /* exists with PEBS (MISC_ENABLE bit 12 clear) */
		if (!p->pebs)
			return true;
		v = r->pebs_enable;
		break;
	case MSR_PEBS_DATA_CFG:
		if (!emulator_pebs_adaptive(p))
			return true;
		v = r->pebs_data_cfg;
		break;
	case MSR_IA32_PERF_CAPABILITIES: /* exists with CPUID.1:ECX.PDCM */
		if (!p->pdcm)
			return true;
		v = r->perf_capabilities;
		break;
	case MSR_IA32_MISC_ENABLE:
		v = r->misc_enable;
		break;
	case MSR_IA32_FIXED_CTR_CTRL:
		if (!has_global_msrs(p))
			return true;
		v = r->fixed_ctrl;
		break;
	case MSR_IA32_PERF_GLOBAL_CTRL:
		if (!has_global_msrs(p))
			return true;
		v = r->global_ctrl;
		break;
	case MSR_IA32_PERF_GLOBAL_STATUS:
		if (!has_global_msrs(p))
			return true;
		v = r->global_status;
		break;
	case MSR_IA32_PERF_GLOBAL_OVF_CTRL: /* write-only in effect: reads 0, as under KVM */
		if (!has_global_msrs(p))
			return true;
		v = 0;
		break;
	case MSR_IA32_PERF_GLOBAL_STATUS_SET: /* v4; write-only in effect, as OVF_CTRL */
		if (p->perfmon_version < 4)
			return true;
		v = 0;
		break;
	case MSR_IA32_PERF_GLOBAL_INUSE:
		if (p->perfmon_version < 4)
			return true;
		v = global_inuse(r, p);
		break;
	default:
		if (read_counter_family(r, p, index, &v))
			return true;
	}
	*value = v;
	return false;
}

/*
 * Rule 7. A legacy IA32_PMCx write sign-extends bit 31 to the width (bits 63:32 of the value
 * are ignored, as KVM ignores them). IA32_A_PMCx and IA32_FIXED_CTRx take the full width;
 * bits beyond it "must be written as zeros": #GP (KVM raises it for A_PMCx).
 */
static bool write_counter_family(struct emulator_registers *r, const struct emulator_profile *p,
				 uint32_t index, uint64_t value)
{
	uint64_t gp_mask = emulator_counter_mask(p, false);
	unsigned int i;

	if (in_family(index, MSR_IA32_PERFEVTSEL0, EMULATOR_MAX_GP, &i)) {
		if (!emulator_gp_counter_exists(p, i) || (value & ~evtsel_defined(p)))
			return true;
		r->evtsel[i] = value;
	} else if (in_family(index, MSR_IA32_PMC0, EMULATOR_MAX_GP, &i)) {
		if (!emulator_gp_counter_exists(p, i))
			return true;
		r->counter[i] = sign_extend_32(value) & gp_mask;
	} else if (in_family(index, MSR_IA32_A_PMC0, EMULATOR_MAX_GP, &i) && p->full_width) {
		if (!emulator_gp_counter_exists(p, i) || (value & ~gp_mask))
			return true;
		r->counter[i] = value;
	} else if (in_family(index, MSR_IA32_FIXED_CTR0, EMULATOR_MAX_FIXED, &i)) {
		if (!emulator_fixed_counter_exists(p, i) ||
		    (value & ~emulator_counter_mask(p, true)))
			return true;
		r->fixed_counter[i] = value;
	} else {
		return true;
	}
	return false;
}

bool emulator_write_msr(struct emulator_registers *r, const struct emulator_profile *p,
			uint32_t index, uint64_t value)
{
	if (emulator_amd_owns_msr(index))
		return emulator_amd_write_msr(r, p, index, value);
	if (p->amd && index != MSR_IA32_DEBUGCTL)
		return true;
	if (emulator_lbr_owns_msr(index))
		return emulator_lbr_write_msr(r, p, index, value);
	if (emulator_arch_pebs_serves_msr(p, index)) /* rule 25 */
		return emulator_arch_pebs_write_msr(r, p, index, value);
	switch (index) {
	case MSR_IA32_DEBUGCTL:
		return write_debugctl(r, p, value);
	case MSR_IA32_DS_AREA: /* a non-canonical address faults at the WRMSR (SDM WRMSR) */
		if (!p->ds || !canonical(value))
			return true;
		r->ds_area = value;
		return false;
	case MSR_IA32_PEBS_ENABLE: /* rule 6: the bits the profile's part defines */
		if (!p->pebs || (value & ~p->pebs_enable_mask))
			return true;
		r->pebs_enable = value;
		return false;
	case MSR_PEBS_DATA_CFG: /* groups 3:0, LBR entries 31:24 (KVM: ~0xff00000f reserved) */
		if (!emulator_pebs_adaptive(p) || (value & ~PEBS_DATACFG_DEFINED))
			return true;
		r->pebs_data_cfg = value;
		return false;
	case MSR_IA32_PERF_CAPABILITIES: /* read-only */
		return true;
	case MSR_IA32_MISC_ENABLE:
		/*
		 * The model owns bits 7, 11 and 12, all read-only: a write that would change one
		 * raises #GP, as KVM does for 11 and 12 (MSR_IA32_MISC_ENABLE_PMU_RO_MASK). The
		 * other bits (fast strings, thermal control, ...) are not modelled: a write is
		 * accepted, ignored, and they read 0 (choice).
		 */
		return ((value ^ r->misc_enable) & MISC_ENABLE_MODELLED) != 0;
	case MSR_IA32_FIXED_CTR_CTRL:
		if (!has_global_msrs(p) || (value & ~fixed_ctrl_defined(p)))
			return true;
		r->fixed_ctrl = value;
		return false;
	case MSR_IA32_PERF_GLOBAL_CTRL:
		if (!has_global_msrs(p) || (value & ~emulator_counter_bits(p)))
			return true;
		r->global_ctrl = value;
		return false;
	case MSR_IA32_PERF_GLOBAL_STATUS: /* read-only: GLOBAL_STATUS_SET sets it from v4 */
		return true;
	case MSR_IA32_PERF_GLOBAL_STATUS_SET:
		if (p->perfmon_version < 4 || (value & ~status_set_defined(p)))
			return true;
		r->global_status |= value;
		return false;
	case MSR_IA32_PERF_GLOBAL_INUSE: /* read-only */
		return true;
	case MSR_IA32_PERF_GLOBAL_OVF_CTRL: /* rule 14: write 1 to clear */
		if (!has_global_msrs(p) || (value & ~ovf_ctrl_defined(p)))
			return true;
		r->global_status &= ~value;
		return false;
	default:
		return write_counter_family(r, p, index, value);
	}
}

/*
 * RDPMC (SDM Vol. 2B RDPMC; Vol. 3B §20.2.1 and §20.2.2): ECX[30] selects the fixed counters,
 * ECX[29:0] the counter, which must exist (else #GP(0)); the value is the counter's, at its
 * width. ECX[31] is the fast read, played as KVM plays it (intel_rdpmc_ecx_to_pmc(): the low
 * 32 bits; the SDM describes it for older parts only). At CPL > 0 with CR4.PCE clear: #GP(0).
 */
bool emulator_rdpmc(const struct emulator_registers *r, const struct emulator_profile *p,
		    uint32_t ecx, bool allowed, uint64_t *value)
{
	uint32_t index = ecx & RDPMC_INDEX_MASK;
	uint64_t v;

	if (!allowed || !p->perfmon_version)
		return true;
	if (ecx & RDPMC_FIXED) {
		if (index >= EMULATOR_MAX_FIXED || !emulator_fixed_counter_exists(p, index))
			return true;
		v = r->fixed_counter[index] & emulator_counter_mask(p, true);
	} else {
		if (index >= EMULATOR_MAX_GP || !emulator_gp_counter_exists(p, index))
			return true;
		v = r->counter[index] & emulator_counter_mask(p, false);
	}
	*value = ecx & RDPMC_FAST ? (uint32_t)v : v;
	return false;
}

bool emulator_owns_cpuid(uint32_t leaf)
{
	return leaf == CPUID_LEAF_VENDOR || leaf == CPUID_LEAF_FEATURES ||
	       leaf == CPUID_LEAF_PERFMON || leaf == CPUID_LEAF_EXTENDED_FEATURES ||
	       leaf == CPUID_LEAF_HYBRID || leaf == CPUID_LEAF_ARCH_LBR ||
	       leaf == CPUID_LEAF_XSTATE || emulator_amd_owns_cpuid(leaf) ||
	       emulator_arch_pebs_owns_cpuid(leaf);
}

static uint32_t set_bit_if(uint32_t word, uint32_t bit, bool set)
{
	return set ? word | bit : word & ~bit;
}

/* CPUID.0AH (SDM Vol. 2A CPUID, "Architectural Performance Monitoring Leaf"). */
static struct cpuid_result perfmon_leaf(const struct emulator_profile *p)
{
	struct cpuid_result r = { 0 };

	if (!p->perfmon_version)
		return r;
	r.eax = p->perfmon_version | (p->gp_counters << CPUID_PERFMON_GP_COUNTERS_SHIFT) |
		(p->gp_width << CPUID_PERFMON_GP_WIDTH_SHIFT) |
		((uint32_t)CPUID_PERFMON_ARCH_EVENTS << CPUID_PERFMON_EVENTS_LENGTH_SHIFT);
	r.ebx = 0; /* no architectural event is unavailable */
	if (p->perfmon_version >= 5) {
		r.ecx = p->fixed_bitmap;
		r.edx = CPUID_PERFMON_EDX_ANYTHREAD_DEPRECATED;
	}
	if (p->perfmon_version >= 2)
		r.edx |= p->fixed_counters | (p->fixed_width << CPUID_PERFMON_FIXED_WIDTH_SHIFT);
	return r;
}

struct cpuid_result emulator_cpuid(const struct emulator_profile *p, uint32_t leaf,
				   uint32_t subleaf, struct cpuid_result real)
{
	switch (leaf) {
	case CPUID_LEAF_VENDOR:
		if (p->amd) { /* the real highest basic leaf: AMD's leaf 0AH reads 0 */
			real.ebx = CPUID_VENDOR_AMD_EBX;
			real.edx = CPUID_VENDOR_AMD_EDX;
			real.ecx = CPUID_VENDOR_AMD_ECX;
			return real;
		}
		if (real.eax < (p->core_type ? CPUID_LEAF_HYBRID : CPUID_LEAF_PERFMON))
			real.eax = p->core_type ? CPUID_LEAF_HYBRID : CPUID_LEAF_PERFMON;
		if (emulator_arch_lbr(p) && real.eax < CPUID_LEAF_ARCH_LBR)
			real.eax = CPUID_LEAF_ARCH_LBR;
		if (real.eax < emulator_arch_pebs_max_leaf(p))
			real.eax = emulator_arch_pebs_max_leaf(p);
		real.ebx = CPUID_VENDOR_INTEL_EBX;
		real.edx = CPUID_VENDOR_INTEL_EDX;
		real.ecx = CPUID_VENDOR_INTEL_ECX;
		return real;
	case CPUID_LEAF_FEATURES:
		real.eax = p->family_model_stepping;
		real.ecx = set_bit_if(real.ecx, CPUID_1_ECX_DTES64, p->dtes64);
		real.ecx = set_bit_if(real.ecx, CPUID_1_ECX_DS_CPL, p->ds_cpl);
		real.ecx = set_bit_if(real.ecx, CPUID_1_ECX_PDCM, p->pdcm);
		real.edx = set_bit_if(real.edx, CPUID_1_EDX_DS, p->ds);
		return real;
	case CPUID_LEAF_PERFMON:
		return perfmon_leaf(p);
	case CPUID_LEAF_EXTENDED_FEATURES:
		if (subleaf == 0) {
			real.edx = set_bit_if(real.edx, CPUID_7_EDX_HYBRID, p->core_type != 0);
			/* TSX as the profile has it: LBR's FROM format depends on it (rule 24). */
			real.ebx = set_bit_if(real.ebx, CPUID_7_EBX_HLE | CPUID_7_EBX_RTM, p->tsx);
			/* Architectural LBR as the profile has it (rule 24). */
			real.edx = set_bit_if(real.edx, CPUID_7_EDX_ARCH_LBR, emulator_arch_lbr(p));
		}
		return real;
	case CPUID_LEAF_ARCH_LBR: {
		struct cpuid_result r = { 0 };

		emulator_arch_lbr_cpuid(p, &r.eax, &r.ebx, &r.ecx);
		return r;
	}
	case CPUID_LEAF_XSTATE:
		/* XSAVES and component 15 as the profile has them (rule 24). */
		emulator_lbr_xstate_cpuid(p, subleaf, &real.eax, &real.ebx, &real.ecx, &real.edx);
		return real;
	case CPUID_LEAF_HYBRID:
		/* The core type, and a native model id of 0 (SDM Vol. 2A CPUID leaf 1AH). */
		return (struct cpuid_result){ p->core_type ? (uint32_t)p->core_type << 24 : 0, 0, 0,
					      0 };
	case CPUID_LEAF_PERFMON_EXT:
		return emulator_arch_pebs_cpuid(p, subleaf);
	default:
		return emulator_amd_cpuid(p, leaf, real);
	}
}
