/* SPDX-License-Identifier: MIT */
/* A simulated perfmon MSR file and random counter setups, for the host tests of pmu/switch.c. */
#ifndef TESTS_HOST_PMU_MSR_SIM_H
#define TESTS_HOST_PMU_MSR_SIM_H

#include <stdbool.h>
#include <stdint.h>

#include "pmu/event.h"
#include "pmu/switch.h"

#define PMU_SIM_WIDTH_MASK ((1ull << 48) - 1) /* CPUID.0AH:EAX[23:16] = 48 on recent parts */

/* MSR numbers from the SDM (Vol. 4 Table 2-2), not from pmu/event.h, to check those too. */
#define SDM_PMC0 0xc1
#define SDM_PERFEVTSEL0 0x186
#define SDM_FIXED_CTR0 0x309
#define SDM_FIXED_CTR_CTRL 0x38d
#define SDM_PERF_GLOBAL_CTRL 0x38f
#define SDM_A_PMC0 0x4c1
/* AMD's, from the APM (Vol. 2 §13.2): PerfCtrExtCore's interleaved CTL/CTR, PerfMonV2's GlobalCtl.
 */
#define APM_PERF_CTL0 0xc0010200 /* + 2i */
#define APM_PERF_CTR0 0xc0010201 /* + 2i */
#define APM_PERF_CNTR_GLOBAL_CTL 0xc0000301

/* The MSRs as the hardware holds them, written only through pmu_sim_write(). */
struct pmu_sim {
	uint64_t evtsel[PMU_MAX_GP], fixed_ctrl, global_ctrl;
	uint64_t gp_count[PMU_MAX_GP], fixed_count[PMU_MAX_FIXED];
};

#define PMU_SIM_CAPS 6

/* Six CPUs: all counters full-width, a client part, legacy writes only, fixed counters only,
 * an AMD PerfMonV2 part (6 counters, no fixed ones, AMD's MSRs), and an AMD part without
 * PerfMonV2 (no global control: a counter runs while its select's EN is set). */
extern const struct pmu_caps pmu_sim_caps[PMU_SIM_CAPS];

/* An MSR write as the SDM describes it; false for an MSR this CPU does not have. */
bool pmu_sim_write(struct pmu_sim *sim, const struct pmu_caps *caps, uint32_t msr, uint64_t value);
/* Without a global control, a state's GLOBAL_CTRL bits are its selects' EN bits: make them so. */
void pmu_sim_global_from_selects(struct pmu_msr_state *state, const struct pmu_caps *caps);
/* A counter MSR's value. */
uint64_t pmu_sim_read(const struct pmu_sim *sim, uint32_t msr);

/* Counter c is GP counter c below PMU_MAX_GP, else fixed counter c - PMU_MAX_GP. */
uint64_t pmu_sim_counter_bit(unsigned int c);
bool pmu_sim_counter_exists(const struct pmu_caps *caps, unsigned int c);
/* Counter c's event select, or its FIXED_CTR_CTRL field in place. */
uint64_t pmu_sim_select(const uint64_t evtsel[], uint64_t fixed_ctrl, unsigned int c);
uint64_t pmu_sim_count(const uint64_t gp[], const uint64_t fixed[], unsigned int c);

/* xorshift64, seeded: the same sequence on every run. */
unsigned int pmu_sim_random_below(unsigned int bound);
/* A random setup from few distinct values, so two setups often agree counter by counter. */
void pmu_sim_random_setup(struct pmu_msr_state *state, const struct pmu_caps *caps);
/* The hardware behind shadow held: its values, and other counts where held knows none. */
void pmu_sim_from(struct pmu_sim *sim, const struct pmu_msr_state *held);
/* Every counter GLOBAL_CTRL enables has all of before's setup and count, or all of wanted's. */
bool pmu_sim_consistent(const struct pmu_sim *now, const struct pmu_sim *before,
			const struct pmu_msr_state *wanted, const struct pmu_caps *caps);

/*
 * Plans held -> wanted with pmu_switch_plan(), runs the plan on the simulation, and checks
 * (reporting failures as host checks): the write bound, consistency after every write, and
 * that the hardware and the shadow end as wanted. pair names the case in messages.
 */
bool pmu_sim_check_plan(const struct pmu_msr_state *held, const struct pmu_msr_state *wanted,
			const struct pmu_caps *caps, unsigned int pair);

#endif
