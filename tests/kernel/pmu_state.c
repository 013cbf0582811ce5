/* SPDX-License-Identifier: MIT */
/* pmu suite: the state the counters start in, whatever firmware left (SDM Vol. 3B reset state). */
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/cpuid.h"
#include "arch/x86/msr.h"
#include "arch/x86/percpu.h"
#include "kernel/smp.h"
#include "pmu/pmu.h"
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

	out->global_ctrl = rdmsr(MSR_IA32_PERF_GLOBAL_CTRL);
	out->fixed_ctrl = rdmsr(MSR_IA32_FIXED_CTR_CTRL);
	/* This CPU's own counters: a hybrid part's core types have different counts. */
	unsigned int gp = CPUID_PERFMON_GP_COUNTERS(cpuid(CPUID_LEAF_PERFMON, 0).eax);

	for (unsigned int i = 0; i < gp && i < PMU_MAX_GP; i++)
		out->evtsel_or |= rdmsr(MSR_IA32_PERFEVTSEL0 + i);
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
