/* SPDX-License-Identifier: MIT */
/* Planning the perfmon MSR writes of a context switch against the per-CPU shadow. */
#include <stdbool.h>
#include <stdint.h>

#include "pmu/event.h"
#include "pmu/switch.h"

/* AMD's PerfCtrExtCore interleaves PERF_CTLi and PERF_CTRi (Linux amd_pmu_addr_offset()). */
#define AMD_PERF_STRIDE 2

uint32_t pmu_evtsel_msr(const struct pmu_caps *caps, unsigned int counter)
{
	return caps->amd ? MSR_F15H_PERF_CTL0 + AMD_PERF_STRIDE * counter
			 : MSR_IA32_PERFEVTSEL0 + counter;
}

uint32_t pmu_gp_count_msr(const struct pmu_caps *caps, unsigned int counter)
{
	if (caps->amd)
		return MSR_F15H_PERF_CTR0 + AMD_PERF_STRIDE * counter;
	return (caps->full_width ? MSR_IA32_A_PMC0 : MSR_IA32_PMC0) + counter;
}

uint32_t pmu_global_ctrl_msr(const struct pmu_caps *caps)
{
	return caps->amd ? MSR_AMD64_PERF_CNTR_GLOBAL_CTL : MSR_IA32_PERF_GLOBAL_CTRL;
}

/* Which GP counter's select (*evtsel) or count an MSR of caps' layout is; false for neither.
 * On Intel both count aliases, IA32_PMCi and IA32_A_PMCi, are the count. */
static bool gp_msr_counter(const struct pmu_caps *caps, uint32_t msr, unsigned int gp,
			   unsigned int *counter, bool *evtsel)
{
	for (unsigned int i = 0; i < gp; i++) {
		*counter = i;
		*evtsel = msr == pmu_evtsel_msr(caps, i);
		if (*evtsel || msr == pmu_gp_count_msr(caps, i) ||
		    (!caps->amd && (msr == MSR_IA32_PMC0 + i || msr == MSR_IA32_A_PMC0 + i)))
			return true;
	}
	return false;
}

uint64_t pmu_counter_mask(const struct pmu_caps *caps)
{
	uint64_t mask = 0;

	for (unsigned int counter = 0; counter < caps->gp && counter < PMU_MAX_GP; counter++)
		mask |= pmu_global_gp(counter);
	for (unsigned int counter = 0; counter < caps->fixed && counter < PMU_MAX_FIXED; counter++)
		mask |= pmu_global_fixed(counter);
	return mask;
}

unsigned int pmu_switch_saves(const struct pmu_msr_state *held, const struct pmu_caps *caps,
			      uint32_t msr[PMU_MAX_COUNTERS])
{
	unsigned int reads = 0;

	for (unsigned int counter = 0; counter < caps->gp && counter < PMU_MAX_GP; counter++) {
		if (held->global_ctrl & pmu_global_gp(counter))
			msr[reads++] = pmu_gp_count_msr(caps, counter);
	}
	for (unsigned int counter = 0; counter < caps->fixed && counter < PMU_MAX_FIXED;
	     counter++) {
		if (held->global_ctrl & pmu_global_fixed(counter))
			msr[reads++] = MSR_IA32_FIXED_CTR0 + counter;
	}
	return reads;
}

static void plan_write(struct pmu_write_plan *plan, uint32_t msr, uint64_t value)
{
	plan->write[plan->writes++] = (struct pmu_msr_write){ .msr = msr, .value = value };
}

/* Whether wanted uses the counter with this GLOBAL_CTRL bit and held may hold another count. */
static bool count_differs(const struct pmu_msr_state *held, const struct pmu_msr_state *wanted,
			  uint64_t bit, uint64_t held_count, uint64_t wanted_count)
{
	return (wanted->global_ctrl & bit) &&
	       (!(held->count_known & bit) || held_count != wanted_count);
}

/*
 * Without a global control (AMD before PerfMonV2) a select write starts or stops its counter, and
 * switches a running counter from one setup to the other at once. A running counter whose count
 * is loaded is stopped first (its EN cleared), so it never counts wanted's event from held's count.
 */
static void plan_without_global(const struct pmu_msr_state *held,
				const struct pmu_msr_state *wanted, const struct pmu_caps *caps,
				unsigned int gp, uint64_t load, struct pmu_write_plan *plan)
{
	uint64_t now[PMU_MAX_GP];

	for (unsigned int counter = 0; counter < gp; counter++) {
		now[counter] = held->evtsel[counter];
		if ((now[counter] & EVTSEL_EN) && (load & pmu_global_gp(counter))) {
			now[counter] &= ~EVTSEL_EN;
			plan_write(plan, pmu_evtsel_msr(caps, counter), now[counter]);
		}
	}
	for (unsigned int counter = 0; counter < gp; counter++) {
		if (load & pmu_global_gp(counter))
			plan_write(plan, pmu_gp_count_msr(caps, counter),
				   wanted->gp_count[counter]);
	}
	for (unsigned int counter = 0; counter < gp; counter++) {
		if (now[counter] != wanted->evtsel[counter])
			plan_write(plan, pmu_evtsel_msr(caps, counter), wanted->evtsel[counter]);
	}
}

void pmu_switch_plan(const struct pmu_msr_state *held, const struct pmu_msr_state *wanted,
		     const struct pmu_caps *caps, struct pmu_write_plan *plan)
{
	unsigned int gp = caps->gp < PMU_MAX_GP ? caps->gp : PMU_MAX_GP;
	unsigned int fixed = caps->fixed < PMU_MAX_FIXED ? caps->fixed : PMU_MAX_FIXED;
	uint64_t rewrite = 0, load = 0, stop, global; /* GLOBAL_CTRL layout */

	plan->writes = 0;
	for (unsigned int counter = 0; counter < gp; counter++) {
		uint64_t bit = pmu_global_gp(counter);

		if (count_differs(held, wanted, bit, held->gp_count[counter],
				  wanted->gp_count[counter]))
			load |= bit;
		if (held->evtsel[counter] != wanted->evtsel[counter])
			rewrite |= bit;
	}
	if (caps->no_global_ctrl) {
		plan_without_global(held, wanted, caps, gp, load, plan);
		return;
	}
	for (unsigned int counter = 0; counter < fixed; counter++) {
		uint64_t bit = pmu_global_fixed(counter);

		if (count_differs(held, wanted, bit, held->fixed_count[counter],
				  wanted->fixed_count[counter]))
			load |= bit;
		if ((held->fixed_ctrl ^ wanted->fixed_ctrl) & pmu_fixed_ctrl_mask(counter))
			rewrite |= bit;
	}

	/*
	 * 1. Stop every running counter whose setup changes, and every PEBS counter to load; in
	 * the same write, if one is needed anyway, stop those wanted does not use (otherwise step
	 * 5 stops them).
	 */
	stop = rewrite | (load & wanted->pebs);
	global = held->global_ctrl;
	if (global & stop) {
		global &= ~stop & (wanted->global_ctrl | ~pmu_counter_mask(caps));
		plan_write(plan, pmu_global_ctrl_msr(caps), global);
	}
	/* 2, 3. Configurations of stopped (or never started) counters. */
	for (unsigned int counter = 0; counter < gp; counter++) {
		if (held->evtsel[counter] != wanted->evtsel[counter])
			plan_write(plan, pmu_evtsel_msr(caps, counter), wanted->evtsel[counter]);
	}
	if (held->fixed_ctrl != wanted->fixed_ctrl)
		plan_write(plan, MSR_IA32_FIXED_CTR_CTRL, wanted->fixed_ctrl);
	/*
	 * 4. Counts: of stopped counters, or in place on a running counter whose setup does not
	 * change and that is not a PEBS counter, since then it counts wanted's event either way.
	 */
	for (unsigned int counter = 0; counter < gp; counter++) {
		if (load & pmu_global_gp(counter))
			plan_write(plan, pmu_gp_count_msr(caps, counter),
				   wanted->gp_count[counter]);
	}
	for (unsigned int counter = 0; counter < fixed; counter++) {
		if (load & pmu_global_fixed(counter))
			plan_write(plan, MSR_IA32_FIXED_CTR0 + counter,
				   wanted->fixed_count[counter]);
	}
	/* 5. Start: everything every started counter depends on is now written. */
	if (wanted->global_ctrl != global)
		plan_write(plan, pmu_global_ctrl_msr(caps), wanted->global_ctrl);
}

/* AMD's layout (pmu_shadow_update() keeps Intel's path as short as it was). */
static bool amd_shadow_update(struct pmu_msr_state *state, const struct pmu_caps *caps,
			      uint32_t msr, uint64_t value, unsigned int gp)
{
	unsigned int counter;
	bool evtsel;

	if (msr == MSR_AMD64_PERF_CNTR_GLOBAL_CTL && !caps->no_global_ctrl) {
		state->global_ctrl = value;
	} else if (gp_msr_counter(caps, msr, gp, &counter, &evtsel) && evtsel) {
		state->evtsel[counter] = value;
		if (caps->no_global_ctrl && (value & EVTSEL_EN))
			state->global_ctrl |= pmu_global_gp(counter);
		else if (caps->no_global_ctrl)
			state->global_ctrl &= ~pmu_global_gp(counter);
	} else if (gp_msr_counter(caps, msr, gp, &counter, &evtsel)) {
		state->gp_count[counter] = value;
		state->count_known |= pmu_global_gp(counter);
	} else {
		return false;
	}
	return true;
}

bool pmu_shadow_update(struct pmu_msr_state *state, const struct pmu_caps *caps, uint32_t msr,
		       uint64_t value)
{
	unsigned int gp = caps->gp < PMU_MAX_GP ? caps->gp : PMU_MAX_GP;
	unsigned int fixed = caps->fixed < PMU_MAX_FIXED ? caps->fixed : PMU_MAX_FIXED;

	if (caps->amd)
		return amd_shadow_update(state, caps, msr, value, gp);
	if (msr == MSR_IA32_FIXED_CTR_CTRL) {
		state->fixed_ctrl = value;
	} else if (msr == MSR_IA32_PERF_GLOBAL_CTRL) {
		state->global_ctrl = value;
	} else if (msr - MSR_IA32_PERFEVTSEL0 < gp) {
		state->evtsel[msr - MSR_IA32_PERFEVTSEL0] = value;
	} else if (msr - MSR_IA32_PMC0 < gp || msr - MSR_IA32_A_PMC0 < gp) {
		unsigned int counter =
			msr - MSR_IA32_PMC0 < gp ? msr - MSR_IA32_PMC0 : msr - MSR_IA32_A_PMC0;

		state->gp_count[counter] = value;
		state->count_known |= pmu_global_gp(counter);
	} else if (msr - MSR_IA32_FIXED_CTR0 < fixed) {
		state->fixed_count[msr - MSR_IA32_FIXED_CTR0] = value;
		state->count_known |= pmu_global_fixed(msr - MSR_IA32_FIXED_CTR0);
	} else {
		return false;
	}
	return true;
}
