/* SPDX-License-Identifier: MIT */
/* A loop whose retired instructions and branches are known exactly (arch/x86/probe_pmu.asm). */
#ifndef ARCH_X86_PROBE_PMU_H
#define ARCH_X86_PROBE_PMU_H

#include <stdint.h>

#include "arch/x86/msr.h"

/*
 * What the counters count between the WRMSR that writes global_ctrl to IA32_PERF_GLOBAL_CTRL and
 * the one that writes 0: neither WRMSR itself (the first retires before the counters start, the
 * second stops them as it retires: SDM Vol. 3B §20.2.2, and kvm-unit-tests' precise loop counts
 * the same), one MOV, the loop's DEC and JNZ each iteration, then two XORs and a MOV.
 */
#define PROBE_COUNTED_INSTRUCTIONS(iterations) (2 * (uint64_t)(iterations) + 4)
#define PROBE_COUNTED_BRANCHES(iterations) ((uint64_t)(iterations))

void probe_counted_loop_plain(uint64_t global_ctrl, uint64_t iterations);
void probe_counted_loop_diverted(uint64_t global_ctrl, uint64_t iterations);

/*
 * Start the counters global_ctrl enables, run iterations (at least 1) of the loop, stop every
 * counter (GLOBAL_CTRL 0). Perfmon v2 and later; call with interrupts off. The two writes are
 * counted in this_cpu()->writes.msr as the accessors count theirs.
 */
static inline void probe_counted_loop(uint64_t global_ctrl, uint64_t iterations)
{
	this_cpu()->writes.msr += 2;
	if (msr_diverted(MSR_IA32_PERF_GLOBAL_CTRL))
		probe_counted_loop_diverted(global_ctrl, iterations);
	else
		probe_counted_loop_plain(global_ctrl, iterations);
}

#endif
