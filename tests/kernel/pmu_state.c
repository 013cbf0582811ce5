/* SPDX-License-Identifier: MIT */
/* pmu suite: the state the counters start in, whatever firmware left (SDM Vol. 3B reset state). */
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/cpuid.h"
#include "arch/x86/msr.h"
#include "arch/x86/percpu.h"
#include "kernel/smp.h"
#include "pmu/pmu.h"
#include "pmu/switch.h"
#include "runner/test.h"

struct stopped {
	uint64_t global_ctrl, fixed_ctrl, evtsel_or;
	bool read;
};

static DEFINE_PER_CPU(struct stopped, stopped_on);

/* On the CPU concerned: what the counters' controls hold while no task there uses them. */
static void read_controls(void *arg)
{
	struct stopped *out = this_cpu_ptr(stopped_on);

	(void)arg;

	/* This CPU's own counters: a hybrid part's core types have different counts. */
	struct pmu_info here;
	struct pmu_caps caps;

	pmu_detect_cpu(&here);
	caps = (struct pmu_caps){ .gp = here.gp_counters,
				  .amd = here.amd,
				  .no_global_ctrl = here.amd && !here.amd_perfmon_v2 };
	/* Without a global control the selects' EN bits say what runs (evtsel_or below). */
	out->global_ctrl = caps.no_global_ctrl ? 0 : rdmsr(pmu_global_ctrl_msr(&caps));
	out->fixed_ctrl = here.fixed_counters ? rdmsr(MSR_IA32_FIXED_CTR_CTRL) : 0;
	for (unsigned int i = 0; i < caps.gp && i < PMU_MAX_GP; i++)
		out->evtsel_or |= rdmsr(pmu_evtsel_msr(&caps, i));
	out->read = true;
}

/*
 * Out of reset GLOBAL_CTRL enables the GP counters, and firmware may leave counters running
 * (Linux's check_hw_exists() meets it). pmu/ must not assume zeros: with no event in use, every
 * control reads 0 on every CPU.
 */
TEST(pmu, counters_left_running_by_firmware_are_stopped_on_every_cpu)
{
	if (!pmu_usable())
		test_skip("%s", pmu_info()->reason);
	for (unsigned int cpu = 0; cpu < smp_cpus(); cpu++) {
		struct stopped *seen = per_cpu_ptr(stopped_on, cpu);

		*seen = (struct stopped){ 0 };
		check(smp_call(cpu, read_controls, NULL), "CPU %u took no call", cpu);
		if (!seen->read)
			continue;
		test_diag("CPU %u: GLOBAL_CTRL 0x%llx FIXED_CTR_CTRL 0x%llx", cpu,
			  (unsigned long long)seen->global_ctrl,
			  (unsigned long long)seen->fixed_ctrl);
		check_eq(0, seen->global_ctrl);
		check_eq(0, seen->fixed_ctrl);
		check_eq(0, seen->evtsel_or);
	}
}
