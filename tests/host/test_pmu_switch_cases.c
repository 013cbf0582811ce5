/* SPDX-License-Identifier: MIT */
/* Host tests of pmu/switch.c: exact plans for small changes, the save side, the shadow. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "lib/bitops.h"
#include "pmu/event.h"
#include "pmu/switch.h"
#include "tests/host/host_test.h"
#include "tests/host/pmu_msr_sim.h"

/* A shadow with every counter of caps in use, known counts, and GP selects all equal. */
static void all_running(struct pmu_msr_state *state, const struct pmu_caps *caps)
{
	pmu_sim_random_setup(state, caps);
	state->count_known = pmu_counter_mask(caps);
	state->global_ctrl = pmu_counter_mask(caps);
	for (unsigned int c = 0; c < PMU_MAX_GP; c++)
		state->evtsel[c] = c < caps->gp ? 0x4300c0 : 0;
}

HOST_TEST(pmu_switch_one_differing_counter_costs_at_most_four_writes)
{
	const struct pmu_caps *caps = &pmu_sim_caps[0];
	struct pmu_msr_state held, wanted;
	struct pmu_write_plan plan;

	pmu_sim_random_setup(&held, caps);
	held.count_known = pmu_counter_mask(caps);
	held.global_ctrl = pmu_counter_mask(caps);
	held.evtsel[3] = 0x4300c0;
	wanted = held;
	wanted.evtsel[3] = 0x41003c;
	wanted.gp_count[3] = held.gp_count[3] + 1;
	pmu_switch_plan(&held, &wanted, caps, &plan);
	/* Stop counter 3, its select, its count, start it: in that order. */
	host_check_eq_u64(4, plan.writes);
	host_check_eq_u64(SDM_PERF_GLOBAL_CTRL, plan.write[0].msr);
	host_check_eq_u64(held.global_ctrl & ~pmu_global_gp(3), plan.write[0].value);
	host_check_eq_u64(SDM_PERFEVTSEL0 + 3, plan.write[1].msr);
	host_check_eq_u64(SDM_A_PMC0 + 3, plan.write[2].msr);
	host_check_eq_u64(SDM_PERF_GLOBAL_CTRL, plan.write[3].msr);
	host_check_eq_u64(held.global_ctrl, plan.write[3].value);
	pmu_sim_check_plan(&held, &wanted, caps, 0);
}

HOST_TEST(pmu_switch_saves_read_exactly_the_counters_in_use)
{
	for (unsigned int i = 0; i < PMU_SIM_CAPS; i++) {
		const struct pmu_caps *caps = &pmu_sim_caps[i];
		struct pmu_msr_state held, task = { 0 };
		uint32_t msr[PMU_MAX_COUNTERS];
		unsigned int reads;
		struct pmu_sim sim;

		pmu_sim_random_setup(&held, caps);
		held.count_known = 0;
		pmu_sim_from(&sim, &held);
		reads = pmu_switch_saves(&held, caps, msr);
		host_check_eq_u64(bits_set(held.global_ctrl & pmu_counter_mask(caps)), reads);
		for (unsigned int r = 0; r < reads; r++) {
			uint64_t value = pmu_sim_read(&sim, msr[r]);

			host_check(pmu_shadow_update(&held, caps, msr[r], value));
			host_check(pmu_shadow_update(&task, caps, msr[r], value));
		}
		/* Now the shadow knows every count in use, and the task saved them. */
		host_check_eq_u64(held.global_ctrl & pmu_counter_mask(caps), held.count_known);
		for (unsigned int c = 0; c < PMU_MAX_COUNTERS; c++) {
			if (pmu_sim_counter_exists(caps, c) &&
			    (held.global_ctrl & pmu_sim_counter_bit(c)))
				host_checkf(pmu_sim_count(task.gp_count, task.fixed_count, c) ==
						    pmu_sim_count(sim.gp_count, sim.fixed_count, c),
					    "caps %u counter %u", i, c);
		}
	}
}

HOST_TEST(pmu_shadow_update_rejects_other_msrs)
{
	const struct pmu_caps *caps = &pmu_sim_caps[1]; /* 4 GP, 3 fixed */
	struct pmu_msr_state state = { 0 }, before = state;

	host_check(!pmu_shadow_update(&state, caps, SDM_PERFEVTSEL0 + 4, 1));
	host_check(!pmu_shadow_update(&state, caps, SDM_PMC0 + 4, 1));
	host_check(!pmu_shadow_update(&state, caps, SDM_FIXED_CTR0 + 3, 1));
	host_check(!pmu_shadow_update(&state, caps, 0x38e, 1)); /* GLOBAL_STATUS */
	host_check(!pmu_shadow_update(&state, caps, 0, 1));
	host_check(memcmp(&state, &before, sizeof(state)) == 0);
	host_check(pmu_shadow_update(&state, caps, SDM_A_PMC0 + 3, 9));
	host_check_eq_u64(9, state.gp_count[3]);
	host_check_eq_u64(pmu_global_gp(3), state.count_known);
}

HOST_TEST(pmu_switch_same_setup_other_counts_writes_only_the_counts)
{
	const struct pmu_caps *caps = &pmu_sim_caps[1];
	struct pmu_msr_state held, wanted;
	struct pmu_write_plan plan;

	all_running(&held, caps);
	wanted = held;
	wanted.gp_count[0] ^= 6;
	wanted.fixed_count[2] ^= 6;
	pmu_switch_plan(&held, &wanted, caps, &plan);
	/* Loaded in place: the counters count wanted's events whatever GLOBAL_CTRL says. */
	host_check_eq_u64(2, plan.writes);
	host_check_eq_u64(SDM_A_PMC0 + 0, plan.write[0].msr);
	host_check_eq_u64(SDM_FIXED_CTR0 + 2, plan.write[1].msr);
	host_check_eq_u64(wanted.fixed_count[2], plan.write[1].value);
	pmu_sim_check_plan(&held, &wanted, caps, 0);
	/* An unknown count is loaded even when the shadow's copy happens to match. */
	held.count_known &= ~pmu_global_gp(1);
	pmu_switch_plan(&held, &wanted, caps, &plan);
	host_check_eq_u64(3, plan.writes);
	host_check_eq_u64(SDM_A_PMC0 + 1, plan.write[1].msr);
}

/*
 * A PEBS counter is never written while it counts: "Counters MUST be stopped before writing"
 * (SDM PEBS facility). Its count is loaded between a stop and a start; the other counter whose
 * count differs is still loaded in place.
 */
HOST_TEST(pmu_switch_stops_a_pebs_counter_before_loading_its_count)
{
	const struct pmu_caps *caps = &pmu_sim_caps[1];
	struct pmu_msr_state held, wanted;
	struct pmu_write_plan plan;

	all_running(&held, caps);
	wanted = held;
	wanted.gp_count[0] ^= 6;
	wanted.gp_count[1] ^= 6;
	wanted.pebs = pmu_global_gp(0);
	pmu_switch_plan(&held, &wanted, caps, &plan);
	host_check_eq_u64(4, plan.writes);
	host_check_eq_u64(SDM_PERF_GLOBAL_CTRL, plan.write[0].msr);
	host_check_eq_u64(held.global_ctrl & ~pmu_global_gp(0), plan.write[0].value);
	host_check_eq_u64(SDM_A_PMC0 + 0, plan.write[1].msr);
	host_check_eq_u64(SDM_A_PMC0 + 1, plan.write[2].msr);
	host_check_eq_u64(SDM_PERF_GLOBAL_CTRL, plan.write[3].msr);
	host_check_eq_u64(wanted.global_ctrl, plan.write[3].value);
	pmu_sim_check_plan(&held, &wanted, caps, 0);
}

HOST_TEST(pmu_switch_stops_unused_counters_with_the_first_write)
{
	const struct pmu_caps *caps = &pmu_sim_caps[1];
	struct pmu_msr_state held, wanted;
	struct pmu_write_plan plan;

	/* Only stopping counter 2 and fixed 0: one write, at the end. */
	all_running(&held, caps);
	wanted = held;
	wanted.global_ctrl &= ~(pmu_global_gp(2) | pmu_global_fixed(0));
	pmu_switch_plan(&held, &wanted, caps, &plan);
	host_check_eq_u64(1, plan.writes);
	host_check_eq_u64(wanted.global_ctrl, plan.write[0].value);
	/* Also reprogramming counter 1: the first write stops 1, 2 and fixed 0 together. */
	wanted.evtsel[1] = 0x41003c;
	pmu_switch_plan(&held, &wanted, caps, &plan);
	host_check_eq_u64(3, plan.writes);
	host_check_eq_u64(SDM_PERF_GLOBAL_CTRL, plan.write[0].msr);
	host_check_eq_u64(wanted.global_ctrl & ~pmu_global_gp(1), plan.write[0].value);
	host_check_eq_u64(SDM_PERFEVTSEL0 + 1, plan.write[1].msr);
	host_check_eq_u64(wanted.global_ctrl, plan.write[2].value);
	pmu_sim_check_plan(&held, &wanted, caps, 1);
}

HOST_TEST(pmu_switch_uses_legacy_counter_msrs_without_full_width_writes)
{
	const struct pmu_caps *caps = &pmu_sim_caps[2]; /* 2 GP, legacy writes */
	struct pmu_msr_state held = { 0 }, wanted = { 0 };
	struct pmu_write_plan plan;
	uint32_t msr[PMU_MAX_COUNTERS];

	wanted.evtsel[1] = 0x4300c0;
	wanted.gp_count[1] = 0x7ffffff0;
	wanted.global_ctrl = pmu_global_gp(1);
	pmu_switch_plan(&held, &wanted, caps, &plan);
	host_check_eq_u64(3, plan.writes);
	host_check_eq_u64(SDM_PMC0 + 1, plan.write[1].msr);
	host_check_eq_u64(1, pmu_switch_saves(&wanted, caps, msr));
	host_check_eq_u64(SDM_PMC0 + 1, msr[0]);
	pmu_sim_check_plan(&held, &wanted, caps, 0);
}

/* AMD PerfMonV2: the same plan through PERF_CTLi/PERF_CTRi (interleaved) and GlobalCtl. */
HOST_TEST(pmu_switch_plans_amd_perfmon_v2_through_amds_msrs)
{
	const struct pmu_caps *caps = &pmu_sim_caps[4];
	struct pmu_msr_state held = { 0 }, wanted = { 0 };
	struct pmu_write_plan plan;

	host_check(caps->amd && caps->gp == 6 && caps->fixed == 0);
	host_check_eq_u64(APM_PERF_CTL0 + 10, pmu_evtsel_msr(caps, 5));
	host_check_eq_u64(APM_PERF_CTR0 + 10, pmu_gp_count_msr(caps, 5));
	host_check_eq_u64(APM_PERF_CNTR_GLOBAL_CTL, pmu_global_ctrl_msr(caps));
	held.global_ctrl = pmu_global_gp(2);
	held.evtsel[2] = 0x4300c0;
	held.count_known = pmu_global_gp(2) | pmu_global_gp(5);
	wanted.global_ctrl = pmu_global_gp(5);
	wanted.evtsel[5] = 0x4300c2;
	wanted.gp_count[5] = 0x123456789aull;
	pmu_switch_plan(&held, &wanted, caps, &plan);
	/* Counter 2 runs and its select changes: GlobalCtl stops it first (step 1), then the
	 * selects, counter 5's 40-bit count at full width, and GlobalCtl starts counter 5. */
	host_check_eq_u64(5, plan.writes);
	host_check_eq_u64(APM_PERF_CNTR_GLOBAL_CTL, plan.write[0].msr);
	host_check_eq_u64(0, plan.write[0].value);
	host_check_eq_u64(APM_PERF_CTL0 + 4, plan.write[1].msr);
	host_check_eq_u64(0, plan.write[1].value);
	host_check_eq_u64(APM_PERF_CTL0 + 10, plan.write[2].msr);
	host_check_eq_u64(0x4300c2, plan.write[2].value);
	host_check_eq_u64(APM_PERF_CTR0 + 10, plan.write[3].msr);
	host_check_eq_u64(0x123456789aull, plan.write[3].value);
	host_check_eq_u64(APM_PERF_CNTR_GLOBAL_CTL, plan.write[4].msr);
	host_check_eq_u64(pmu_global_gp(5), plan.write[4].value);
	/* Intel's MSRs are not this layout's: the shadow refuses them. */
	host_check(!pmu_shadow_update(&held, caps, SDM_PERFEVTSEL0, 1));
	host_check(!pmu_shadow_update(&held, caps, SDM_PERF_GLOBAL_CTRL, 1));
	host_check(!pmu_shadow_update(&held, caps, SDM_FIXED_CTR_CTRL, 1));
	host_check(pmu_shadow_update(&held, caps, APM_PERF_CTR0 + 2, 7));
	host_check_eq_u64(7, held.gp_count[1]);
}

HOST_TEST(pmu_generic_events_are_linuxs_intel_and_amd_maps)
{
	host_check_eq_u64(0x3c, pmu_generic_event(false, PMU_GENERIC_CYCLES).event);
	host_check_eq_u64(0xc0, pmu_generic_event(false, PMU_GENERIC_INSTRUCTIONS).event);
	host_check_eq_u64(0xc4, pmu_generic_event(false, PMU_GENERIC_BRANCHES).event);
	host_check_eq_u64(0xc5, pmu_generic_event(false, PMU_GENERIC_BRANCH_MISSES).event);
	host_check_eq_u64(0x76, pmu_generic_event(true, PMU_GENERIC_CYCLES).event);
	host_check_eq_u64(0xc0, pmu_generic_event(true, PMU_GENERIC_INSTRUCTIONS).event);
	host_check_eq_u64(0xc2, pmu_generic_event(true, PMU_GENERIC_BRANCHES).event);
	host_check_eq_u64(0xc3, pmu_generic_event(true, PMU_GENERIC_BRANCH_MISSES).event);
	host_check_eq_u64(0, pmu_generic_event(true, PMU_GENERIC_BRANCHES).umask);
}
