/* SPDX-License-Identifier: MIT */
/* Architectural performance monitoring: what CPUID leaf 0xA says this CPU has. */
#ifndef PMU_DETECT_H
#define PMU_DETECT_H

#include <stdbool.h>
#include <stdint.h>

struct pmu_info {
	bool intel;
	unsigned int version; /* CPUID.0AH:EAX[7:0] */
	unsigned int gp_counters; /* EAX[15:8] */
	unsigned int gp_width; /* EAX[23:16] */
	unsigned int fixed_counters; /* EDX[4:0], version 2 and later */
	unsigned int fixed_width; /* EDX[12:5] */
	uint32_t unavailable_events; /* EBX: bit set = architectural event not available */
	char reason[128]; /* why counters cannot be used here; "" when they can */
};

/* Read CPUID once; intel only (AMD has its own counter MSRs, not supported yet). */
void pmu_detect(void);
const struct pmu_info *pmu_info(void);

#endif
