/* SPDX-License-Identifier: MIT */
/* Host tests of pmu/switch.c: write plans run on a simulated MSR file, checked after each write. */
#include <stdbool.h>
#include <stdint.h>

#include "pmu/event.h"
#include "pmu/switch.h"
#include "tests/host/host_test.h"
#include "tests/host/pmu_msr_sim.h"

#define PAIRS 20000

HOST_TEST(pmu_switch_identical_configurations_write_nothing)
{
	for (unsigned int i = 0; i < PMU_SIM_CAPS; i++) {
		for (unsigned int pair = 0; pair < 1000; pair++) {
			struct pmu_msr_state held, wanted;
			struct pmu_write_plan plan;

			pmu_sim_random_setup(&held, &pmu_sim_caps[i]);
			held.count_known = pmu_counter_mask(&pmu_sim_caps[i]);
			wanted = held;
			wanted.count_known = 0; /* the task's copy carries none */
			pmu_switch_plan(&held, &wanted, &pmu_sim_caps[i], &plan);
			if (!host_check_eq_u64(0, plan.writes))
				return;
		}
	}
}

HOST_TEST(pmu_switch_random_pairs_are_bounded_safe_and_exact)
{
	for (unsigned int i = 0; i < PMU_SIM_CAPS; i++) {
		for (unsigned int pair = 0; pair < PAIRS; pair++) {
			struct pmu_msr_state held, wanted;

			pmu_sim_random_setup(&held, &pmu_sim_caps[i]);
			pmu_sim_random_setup(&wanted, &pmu_sim_caps[i]);
			/* Half the time, wanted differs from held in a few counters only. */
			if (pmu_sim_random_below(2)) {
				unsigned int c = pmu_sim_random_below(PMU_MAX_GP);
				uint64_t keep = wanted.evtsel[c];

				wanted = held;
				wanted.evtsel[c] = keep;
				if (pmu_sim_random_below(2))
					wanted.gp_count[pmu_sim_random_below(PMU_MAX_GP)] ^= 6;
				pmu_sim_global_from_selects(&wanted, &pmu_sim_caps[i]);
			}
			if (!pmu_sim_check_plan(&held, &wanted, &pmu_sim_caps[i], pair))
				return;
		}
	}
}
