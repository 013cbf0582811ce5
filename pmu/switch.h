/* SPDX-License-Identifier: MIT */
/* The fewest, safely ordered perfmon MSR writes for a context switch, and what to save. Pure. */
#ifndef PMU_SWITCH_H
#define PMU_SWITCH_H

#include <stdbool.h>
#include <stdint.h>

#include "pmu/event.h"

#define PMU_MAX_COUNTERS (PMU_MAX_GP + PMU_MAX_FIXED)
/* Every event select, FIXED_CTR_CTRL, every count, and GLOBAL_CTRL twice. */
#define PMU_SWITCH_MAX_WRITES (PMU_MAX_GP + 1 + PMU_MAX_COUNTERS + 2)

/* What this CPU's PMU has (CPUID leaf 0AH; docs/hardware-facts.md §1). */
struct pmu_caps {
	unsigned int gp; /* GP counters, CPUID.0AH:EAX[15:8], at most PMU_MAX_GP */
	unsigned int fixed; /* fixed counters, CPUID.0AH:EDX[4:0], at most PMU_MAX_FIXED */
	bool full_width; /* PERF_CAPABILITIES.FW_WRITE: counts go through IA32_A_PMCx */
	/*
	 * AMD PerfMonV2 (docs/hardware-facts.md §5): the same model through other MSRs, PERF_CTLi
	 * and PERF_CTRi (PerfCtrExtCore's, 48-bit writes) and PerfCntrGlobalCtl; no fixed counters.
	 */
	bool amd;
	/*
	 * AMD without PerfMonV2: no global control. A counter runs while its PERF_CTL.EN is set;
	 * the GLOBAL_CTRL-layout bits of a state (global_ctrl) are then those selects' EN bits,
	 * and a plan stops and starts counters through their selects (Linux amd_pmu_disable_all()).
	 */
	bool no_global_ctrl;
};

/*
 * The counter MSRs: as a CPU holds them (the per-CPU shadow), or as a task wants them.
 * A counter is in use when its GLOBAL_CTRL bit is set; a task's counts matter only for
 * counters in use. count_known (GLOBAL_CTRL layout) is the shadow's alone: the counter held
 * exactly that count when last read or written (and still does, unless it counted since: see
 * pmu_switch_plan() on CPL 0). Counts are kept as read; with the legacy IA32_PMCx aliases (no
 * full_width) only counts below 2^31 restore exactly, since those writes sign-extend bit 31
 * (SDM §20.2.6).
 */
struct pmu_msr_state {
	uint64_t evtsel[PMU_MAX_GP];
	uint64_t fixed_ctrl;
	uint64_t global_ctrl;
	uint64_t gp_count[PMU_MAX_GP];
	uint64_t fixed_count[PMU_MAX_FIXED];
	uint64_t count_known;
	/* wanted's alone (GLOBAL_CTRL layout): PEBS counters, whose counts are loaded only while
	 * they are stopped ("Counters MUST be stopped before writing", SDM PEBS facility). */
	uint64_t pebs;
};

struct pmu_msr_write {
	uint32_t msr;
	uint64_t value;
};

/* The writes, to be done in order: wrmsr(write[i].msr, write[i].value). */
struct pmu_write_plan {
	unsigned int writes;
	struct pmu_msr_write write[PMU_SWITCH_MAX_WRITES];
};

/* The MSRs of caps' layout: GP counter i's select and count, and the global control. */
uint32_t pmu_evtsel_msr(const struct pmu_caps *caps, unsigned int counter);
uint32_t pmu_gp_count_msr(const struct pmu_caps *caps, unsigned int counter);
uint32_t pmu_global_ctrl_msr(const struct pmu_caps *caps);

/* The GLOBAL_CTRL bits of the counters caps describes. */
uint64_t pmu_counter_mask(const struct pmu_caps *caps);

/*
 * Switch-out: the counters whose values must be read (those held in use), as MSR numbers in
 * msr[], GP then fixed, ascending; returns how many. Hand each value read to
 * pmu_shadow_update() on the shadow (so the planner knows what the counter holds) and on the
 * outgoing task's state (its saved count).
 */
unsigned int pmu_switch_saves(const struct pmu_msr_state *held, const struct pmu_caps *caps,
			      uint32_t msr[PMU_MAX_COUNTERS]);

/*
 * Switch-in: the writes that take the CPU from held (the shadow, after the saves) to wanted.
 * A counter's setup changes when its select (or fixed field) differs; its count is loaded when
 * wanted uses it and the shadow does not know it to hold wanted's count. The order:
 *  1. if a counter whose setup changes is running, or a PEBS counter (wanted->pebs) whose count
 *     is loaded: GLOBAL_CTRL without it (and without the counters wanted does not use), so no
 *     counter ever counts with half its new setup, and no PEBS counter is written counting;
 *  2. the differing event selects;  3. FIXED_CTR_CTRL if it differs;
 *  4. the counts to load; a running counter whose setup stays and that is not a PEBS counter
 *     is loaded in place, as it counts wanted's event either way;
 *  5. GLOBAL_CTRL = wanted's, if it differs.
 * Identical setups and known counts: no writes. Identical setups, j counts differ: j writes.
 * k counters that differ in any way: at most 2k + 2 writes (no_global_ctrl: at most 3k, in
 * the order stop each running counter whose count is loaded by clearing its EN, load, write
 * the selects that differ). Counters outside caps are left
 * alone. A caller that accounts by deltas instead of restoring counts copies the shadow's
 * counts into wanted, and loads none. Kernel-mode counting also sees the switch path itself:
 * a counter counting at CPL 0 moves on between its save read and its stop or reload.
 */
void pmu_switch_plan(const struct pmu_msr_state *held, const struct pmu_msr_state *wanted,
		     const struct pmu_caps *caps, struct pmu_write_plan *plan);

/*
 * Record in state that msr holds value (after a wrmsr, or an rdmsr of a counter). Returns
 * false, and changes nothing, for an MSR that is not one of caps' counter MSRs.
 */
bool pmu_shadow_update(struct pmu_msr_state *state, const struct pmu_caps *caps, uint32_t msr,
		       uint64_t value);

#endif
