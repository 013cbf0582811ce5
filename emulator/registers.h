/* SPDX-License-Identifier: MIT */
/* The emulated CPU's register file: RDMSR, WRMSR and CPUID as the SDM defines them, per profile. */
#ifndef EMULATOR_REGISTERS_H
#define EMULATOR_REGISTERS_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/cpuid.h"
#include "emulator/lbr.h"
#include "emulator/lbr_amd.h"
#include "emulator/profile.h"

/*
 * One logical CPU's MSRs as the model holds them. The engine reads and updates them directly
 * (counting, overflow status, PEBS reloads); software reaches them only through
 * emulator_read_msr() and emulator_write_msr(). Counter values are held at their width
 * (emulator_counter_mask()). debugctl holds LBR only where the profile has a model-specific
 * LBR stack (emulator/lbr.c; elsewhere it is written and dropped); it holds BTF, but for a KVM
 * guest's profile (kvm_debugctl), which drops it as KVM does.
 */
struct emulator_registers {
	uint64_t debugctl, ds_area, pebs_enable, pebs_data_cfg, misc_enable, perf_capabilities;
	uint64_t evtsel[EMULATOR_MAX_GP], counter[EMULATOR_MAX_GP];
	uint64_t fixed_counter[EMULATOR_MAX_FIXED], fixed_ctrl;
	uint64_t global_ctrl, global_status;
	/*
	 * An AMD profile's PERF_CTLn as software wrote them; evtsel[n] then holds the select the
	 * engine counts by (emulator/amd.c). global_ctrl and global_status are PerfMonV2's.
	 */
	uint64_t amd_ctl[EMULATOR_MAX_GP];
	struct emulator_lbr lbr; /* the model-specific LBR stack and its MSRs */
	/*
	 * Architectural PEBS (emulator/arch_pebs.c): IA32_PEBS_BASE, IA32_PEBS_INDEX and the CFG_C
	 * of each counter. pebs_enable then holds CFG_C.EN in PEBS_ENABLE numbering, for the
	 * engine; software cannot reach it (IA32_PEBS_ENABLE raises #GP).
	 */
	uint64_t pebs_base, pebs_index, cfg_c[EMULATOR_MAX_GP], fixed_cfg_c[EMULATOR_MAX_FIXED];
	struct emulator_amd_lbr amd_lbr; /* AMD LbrExtV2 (emulator/lbr_amd.c) */
};

/*
 * The state out of RESET (docs/emulated-cpu.md rule 8). The SDM leaves counters, EVTSELs,
 * PEBS_ENABLE and DS_AREA undefined; the model zeroes them, and sets GLOBAL_CTRL bits n-1:0 for
 * the n GP counters (SDM since 2023). IA32_MISC_ENABLE and IA32_PERF_CAPABILITIES take the
 * profile's values.
 *
 * With profile->firmware_leftovers, firmware has left the PMU running, as Linux's
 * check_hw_exists() reports on real machines ("the BIOS has corrupted hw-PMU resources (MSR
 * 186 is 43003c)", "(MSR 38d is 330)"): IA32_PERFEVTSEL0 counts unhalted core cycles at every
 * CPL and PMC0 holds a count; IA32_FIXED_CTR_CTRL enables fixed counters 1 and 2 at every CPL
 * (those that exist), each holding a count, and GLOBAL_CTRL enables them too (choice: so they
 * run). Every leftover is a value the model itself accepts on WRMSR.
 */
void emulator_registers_reset(struct emulator_registers *registers,
			      const struct emulator_profile *profile);

/*
 * The hardware itself sets the GLOBAL_STATUS bits set and clears those in clear (an overflow, a
 * PEBS assist, OvfBuf, CTR_Frz). Where that changes a bit, it also sets CondChgd, bit 63: "status
 * bits of this register has changed" (SDM Vol. 4 Table 2-2, IA32_PERF_GLOBAL_STATUS; Vol. 3B
 * "Global Counter Control Facilities": it indicates "changes to the state of performance
 * monitoring hardware"; the uncore's CHG bit, defined in the same words, "indicates that at
 * least one status bit ... has changed state"). Software's own writes (GLOBAL_OVF_CTRL,
 * GLOBAL_STATUS_SET) never set it, and only bit 63 of GLOBAL_OVF_CTRL / STATUS_RESET clears it.
 * Not on an AMD part, whose GlobalStatus has no such bit.
 */
void emulator_status_change(struct emulator_registers *registers,
			    const struct emulator_profile *profile, uint64_t set, uint64_t clear);

/*
 * Does the model own this MSR number? The whole family, also members this profile lacks
 * (those raise #GP): IA32_DEBUGCTL, IA32_DS_AREA, IA32_PEBS_ENABLE, MSR_PEBS_DATA_CFG,
 * IA32_PERF_CAPABILITIES, IA32_MISC_ENABLE, IA32_PERFEVTSEL0-7, IA32_PMC0-7, IA32_A_PMC0-7,
 * IA32_FIXED_CTR0-3, IA32_FIXED_CTR_CTRL, IA32_PERF_GLOBAL_CTRL, _STATUS, _OVF_CTRL and, from
 * perfmon v4, _STATUS_SET and _INUSE; the LBR MSRs (emulator_lbr_owns_msr()).
 */
bool emulator_owns_msr(uint32_t index);

/* Does a write to this MSR change which counters count: IA32_PERFEVTSEL0-7,
 * IA32_FIXED_CTR_CTRL or IA32_PERF_GLOBAL_CTRL? */
bool emulator_msr_enables_counters(uint32_t index);

/*
 * RDMSR and WRMSR. Each returns true when the access raises #GP(0); then nothing changed. The
 * semantics, with their sources, are at each MSR in registers.c.
 */
bool emulator_read_msr(const struct emulator_registers *registers,
		       const struct emulator_profile *profile, uint32_t index, uint64_t *value);
bool emulator_write_msr(struct emulator_registers *registers,
			const struct emulator_profile *profile, uint32_t index, uint64_t value);

/*
 * RDPMC of the counter ECX names; allowed is false at CPL > 0 with CR4.PCE clear. Returns true
 * when it raises #GP(0) (registers.c has the rules).
 */
bool emulator_rdpmc(const struct emulator_registers *registers,
		    const struct emulator_profile *profile, uint32_t ecx, bool allowed,
		    uint64_t *value);

/*
 * CPUID, given what the platform itself returned for the leaf (real). Leaf 0: "GenuineIntel",
 * highest basic leaf at least 0AH. Leaf 1: EAX the profile's family, model and stepping; DS,
 * DTES64, DS-CPL and PDCM set or cleared per profile; the rest real. Leaf 0AH: the profile's
 * perfmon, all 7 architectural events available. Any other leaf: real, unchanged.
 */
bool emulator_owns_cpuid(uint32_t leaf);
struct cpuid_result emulator_cpuid(const struct emulator_profile *profile, uint32_t leaf,
				   uint32_t subleaf, struct cpuid_result real);

#endif
