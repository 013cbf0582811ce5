/* SPDX-License-Identifier: MIT */
/* Architectural performance monitoring: what CPUID leaf 0xA says this CPU has. */
#ifndef PMU_DETECT_H
#define PMU_DETECT_H

#include <stdbool.h>
#include <stdint.h>

struct pmu_info {
	bool intel;
	/*
	 * AMD (docs/hardware-facts.md §5; Linux amd_core_pmu_init()): gp_counters from
	 * CPUID 0x80000022 EBX[3:0] with PerfMonV2, else 6 with PerfCtrExtCore, else 4; 48 bits.
	 * pmu/ drives AMD counters through PerfCtrExtCore's MSRs (K7-only parts are refused).
	 */
	bool amd;
	bool amd_perfctr_core; /* CPUID 0x80000001 ECX[23] */
	bool amd_perfmon_v2; /* CPUID 0x80000022 EAX[0] */
	unsigned int version; /* CPUID.0AH:EAX[7:0] */
	unsigned int gp_counters; /* EAX[15:8] */
	unsigned int gp_width; /* EAX[23:16] */
	unsigned int fixed_counters; /* EDX[4:0], version 2 and later */
	unsigned int fixed_width; /* EDX[12:5] */
	uint32_t unavailable_events; /* EBX: bit set = architectural event not available */
	unsigned int core_type; /* hybrid parts: CPUID.1AH:EAX[31:24] (Core 0x40, Atom 0x20) */
	char reason[128]; /* why counters cannot be used here; "" when they can */
};

/* Read CPUID once: Intel architectural perfmon, or AMD's core counters with PerfMonV2. */
void pmu_detect(void);
/*
 * The same for the calling CPU, into out: on a hybrid part each core type has its own counters
 * (Alder Lake and later; SDM CPUID leaves 0AH and 1AH are per logical processor).
 */
void pmu_detect_cpu(struct pmu_info *out);
const struct pmu_info *pmu_info(void);

#endif
