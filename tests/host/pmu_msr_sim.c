/* SPDX-License-Identifier: MIT */
/* A simulated perfmon MSR file, checked against the SDM rather than against pmu/. */
#include <stdbool.h>
#include <stdint.h>

#include "pmu/event.h"
#include "pmu/switch.h"
#include "tests/host/host_test.h"
#include "tests/host/pmu_msr_sim.h"

const struct pmu_caps pmu_sim_caps[PMU_SIM_CAPS] = {
	{ .gp = 8, .fixed = 4, .full_width = true },
	{ .gp = 4, .fixed = 3, .full_width = true },
	{ .gp = 2, .fixed = 0, .full_width = false },
	{ .gp = 0, .fixed = 3, .full_width = false },
	{ .gp = 6, .fixed = 0, .full_width = true, .amd = true },
	{ .gp = 6, .fixed = 0, .full_width = true, .amd = true, .no_global_ctrl = true },
};

#define SIM_EN (1ull << 22) /* PERF_CTL.EN (APM) */

/* AMD: only AMD's MSRs exist (an Intel one raises #GP there); counters take 48 bits. */
static bool amd_write(struct pmu_sim *sim, const struct pmu_caps *caps, uint32_t msr,
		      uint64_t value)
{
	for (unsigned int i = 0; i < caps->gp; i++) {
		if (msr == APM_PERF_CTL0 + 2 * i) {
			sim->evtsel[i] = value;
			if (caps->no_global_ctrl)
				sim->global_ctrl = value & SIM_EN ? sim->global_ctrl | (1ull << i)
								  : sim->global_ctrl & ~(1ull << i);
			return true;
		}
		if (msr == APM_PERF_CTR0 + 2 * i) {
			sim->gp_count[i] = value & PMU_SIM_WIDTH_MASK;
			return true;
		}
	}
	if (msr != APM_PERF_CNTR_GLOBAL_CTL || caps->no_global_ctrl)
		return false;
	sim->global_ctrl = value;
	return true;
}

/* An MSR write as the SDM describes it; false for an MSR this CPU does not have. */
bool pmu_sim_write(struct pmu_sim *sim, const struct pmu_caps *caps, uint32_t msr, uint64_t value)
{
	if (caps->amd)
		return amd_write(sim, caps, msr, value);
	if (msr >= SDM_PERFEVTSEL0 && msr < SDM_PERFEVTSEL0 + caps->gp)
		sim->evtsel[msr - SDM_PERFEVTSEL0] = value;
	else if (msr >= SDM_PMC0 && msr < SDM_PMC0 + caps->gp) /* sign-extends bit 31 */
		sim->gp_count[msr - SDM_PMC0] =
			(uint64_t)(int64_t)(int32_t)value & PMU_SIM_WIDTH_MASK;
	else if (msr >= SDM_A_PMC0 && msr < SDM_A_PMC0 + caps->gp && caps->full_width)
		sim->gp_count[msr - SDM_A_PMC0] = value & PMU_SIM_WIDTH_MASK;
	else if (msr >= SDM_FIXED_CTR0 && msr < SDM_FIXED_CTR0 + caps->fixed)
		sim->fixed_count[msr - SDM_FIXED_CTR0] = value & PMU_SIM_WIDTH_MASK;
	else if (msr == SDM_FIXED_CTR_CTRL)
		sim->fixed_ctrl = value;
	else if (msr == SDM_PERF_GLOBAL_CTRL)
		sim->global_ctrl = value;
	else
		return false;
	return true;
}

void pmu_sim_global_from_selects(struct pmu_msr_state *state, const struct pmu_caps *caps)
{
	if (!caps->no_global_ctrl)
		return;
	state->global_ctrl = 0;
	for (unsigned int c = 0; c < caps->gp; c++)
		if (state->evtsel[c] & SIM_EN)
			state->global_ctrl |= pmu_global_gp(c);
}

uint64_t pmu_sim_read(const struct pmu_sim *sim, uint32_t msr)
{
	if (msr >= APM_PERF_CTR0 && msr < APM_PERF_CTR0 + 2 * PMU_MAX_GP)
		return sim->gp_count[(msr - APM_PERF_CTR0) / 2];
	if (msr >= SDM_A_PMC0)
		return sim->gp_count[msr - SDM_A_PMC0];
	if (msr >= SDM_FIXED_CTR0)
		return sim->fixed_count[msr - SDM_FIXED_CTR0];
	return sim->gp_count[msr - SDM_PMC0];
}

/* Counter c (0..7 GP, 8.. fixed): its GLOBAL_CTRL bit, configuration and count. */
uint64_t pmu_sim_counter_bit(unsigned int c)
{
	return c < PMU_MAX_GP ? pmu_global_gp(c) : pmu_global_fixed(c - PMU_MAX_GP);
}

bool pmu_sim_counter_exists(const struct pmu_caps *caps, unsigned int c)
{
	return c < PMU_MAX_GP ? c < caps->gp : c - PMU_MAX_GP < caps->fixed;
}

uint64_t pmu_sim_select(const uint64_t evtsel[], uint64_t fixed_ctrl, unsigned int c)
{
	return c < PMU_MAX_GP ? evtsel[c] : fixed_ctrl & pmu_fixed_ctrl_mask(c - PMU_MAX_GP);
}

uint64_t pmu_sim_count(const uint64_t gp[], const uint64_t fixed[], unsigned int c)
{
	return c < PMU_MAX_GP ? gp[c] : fixed[c - PMU_MAX_GP];
}

static uint64_t random_state = 0xda942042e4dd58b5ull;

unsigned int pmu_sim_random_below(unsigned int bound)
{
	random_state ^= random_state << 13;
	random_state ^= random_state >> 7;
	random_state ^= random_state << 17;
	return (unsigned int)(random_state % bound);
}

/* Few distinct values, so that held and wanted often agree counter by counter. */
void pmu_sim_random_setup(struct pmu_msr_state *state, const struct pmu_caps *caps)
{
	static const uint64_t selects[] = { 0, 0x4300c0, 0x41003c, 0x0300c0, 0x5101d1 };
	static const uint64_t counts[] = { 0, 1, 0x7fffffff, 0x123456789aull };

	*state = (struct pmu_msr_state){ 0 };
	for (unsigned int c = 0; c < PMU_MAX_COUNTERS; c++) {
		uint64_t count = counts[pmu_sim_random_below(caps->full_width ? 4 : 3)];

		if (!pmu_sim_counter_exists(caps, c))
			continue;
		if (c < PMU_MAX_GP) {
			state->evtsel[c] = selects[pmu_sim_random_below(5)];
			state->gp_count[c] = count;
		} else {
			state->fixed_ctrl |= (uint64_t)pmu_sim_random_below(16)
					     << (FIXED_CTRL_FIELD_SIZE * (c - PMU_MAX_GP));
			state->fixed_count[c - PMU_MAX_GP] = count;
		}
		if (caps->no_global_ctrl ? (state->evtsel[c] & SIM_EN) != 0
					 : pmu_sim_random_below(2))
			state->global_ctrl |= pmu_sim_counter_bit(c);
		if (pmu_sim_random_below(4))
			state->count_known |= pmu_sim_counter_bit(c);
	}
}

void pmu_sim_from(struct pmu_sim *sim, const struct pmu_msr_state *held)
{
	*sim = (struct pmu_sim){ .fixed_ctrl = held->fixed_ctrl, .global_ctrl = held->global_ctrl };
	for (unsigned int c = 0; c < PMU_MAX_GP; c++) {
		sim->evtsel[c] = held->evtsel[c];
		/* An unknown count is something else entirely. */
		sim->gp_count[c] =
			held->gp_count[c] + (held->count_known & pmu_sim_counter_bit(c) ? 0 : 5);
	}
	for (unsigned int c = 0; c < PMU_MAX_FIXED; c++)
		sim->fixed_count[c] =
			held->fixed_count[c] + (held->count_known & pmu_global_fixed(c) ? 0 : 5);
}

/* Every counter GLOBAL_CTRL enables has all of held's setup or all of wanted's. */
bool pmu_sim_consistent(const struct pmu_sim *now, const struct pmu_sim *before,
			const struct pmu_msr_state *wanted, const struct pmu_caps *caps)
{
	for (unsigned int c = 0; c < PMU_MAX_COUNTERS; c++) {
		uint64_t select, count;

		if (!pmu_sim_counter_exists(caps, c) ||
		    !(now->global_ctrl & pmu_sim_counter_bit(c)))
			continue;
		select = pmu_sim_select(now->evtsel, now->fixed_ctrl, c);
		count = pmu_sim_count(now->gp_count, now->fixed_count, c);
		if (select == pmu_sim_select(before->evtsel, before->fixed_ctrl, c) &&
		    count == pmu_sim_count(before->gp_count, before->fixed_count, c))
			continue;
		if (select == pmu_sim_select(wanted->evtsel, wanted->fixed_ctrl, c) &&
		    count == pmu_sim_count(wanted->gp_count, wanted->fixed_count, c))
			continue;
		return false;
	}
	return true;
}

/* Plans held -> wanted, runs it on the simulation and checks every stated property. */
bool pmu_sim_check_plan(const struct pmu_msr_state *held, const struct pmu_msr_state *wanted,
			const struct pmu_caps *caps, unsigned int pair)
{
	struct pmu_write_plan plan;
	struct pmu_msr_state shadow = *held, want = *wanted;
	struct pmu_sim sim, before;
	unsigned int rewritten = 0;
	bool ok = true;

	pmu_sim_from(&sim, held);
	before = sim;
	for (unsigned int c = 0; c < PMU_MAX_COUNTERS; c++) {
		if (!pmu_sim_counter_exists(caps, c))
			continue;
		if (pmu_sim_select(sim.evtsel, sim.fixed_ctrl, c) !=
			    pmu_sim_select(want.evtsel, want.fixed_ctrl, c) ||
		    ((wanted->global_ctrl & pmu_sim_counter_bit(c)) &&
		     pmu_sim_count(sim.gp_count, sim.fixed_count, c) !=
			     pmu_sim_count(want.gp_count, want.fixed_count, c)))
			rewritten++;
	}
	pmu_switch_plan(held, wanted, caps, &plan);
	ok &= host_checkf(plan.writes <= (caps->no_global_ctrl ? 3 * rewritten : 2 * rewritten + 2),
			  "pair %u: %u writes for %u counters", pair, plan.writes, rewritten);
	ok &= host_checkf(rewritten || held->global_ctrl != wanted->global_ctrl || !plan.writes,
			  "pair %u: nothing differs but %u writes", pair, plan.writes);
	for (unsigned int i = 0; i < plan.writes && ok; i++) {
		ok &= host_checkf(pmu_sim_write(&sim, caps, plan.write[i].msr, plan.write[i].value),
				  "pair %u write %u: MSR %#x", pair, i, plan.write[i].msr);
		ok &= host_check(
			pmu_shadow_update(&shadow, caps, plan.write[i].msr, plan.write[i].value));
		ok &= host_checkf(pmu_sim_consistent(&sim, &before, wanted, caps),
				  "pair %u: after write %u of %u (MSR %#x) a counter counts with "
				  "a half-written setup",
				  pair, i, plan.writes, plan.write[i].msr);
	}
	/* The CPU now holds what was wanted, and the shadow says so. */
	for (unsigned int c = 0; c < PMU_MAX_COUNTERS && ok; c++) {
		if (!pmu_sim_counter_exists(caps, c))
			continue;
		ok &= host_checkf(pmu_sim_select(sim.evtsel, sim.fixed_ctrl, c) ==
					  pmu_sim_select(want.evtsel, want.fixed_ctrl, c),
				  "pair %u counter %u: select", pair, c);
		if (wanted->global_ctrl & pmu_sim_counter_bit(c))
			ok &= host_checkf(
				pmu_sim_count(sim.gp_count, sim.fixed_count, c) ==
						pmu_sim_count(want.gp_count, want.fixed_count, c) &&
					(shadow.count_known & pmu_sim_counter_bit(c)),
				"pair %u counter %u: count", pair, c);
	}
	ok &= host_checkf(sim.global_ctrl == wanted->global_ctrl &&
				  shadow.global_ctrl == wanted->global_ctrl &&
				  shadow.fixed_ctrl == sim.fixed_ctrl,
			  "pair %u: GLOBAL_CTRL or shadow", pair);
	return ok;
}
