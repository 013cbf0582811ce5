/* SPDX-License-Identifier: MIT */
/* AMD LbrExtV2 for lbr/ (lbr/amd.c): its detection and the MSRs that differ from Intel's. */
#ifndef LBR_AMD_H
#define LBR_AMD_H

#include <stdbool.h>
#include <stdint.h>

#include "lbr/lbr.h"

/*
 * Detection on a part that is not GenuineIntel: AuthenticAMD with LbrExtV2 and PerfMonV2
 * (Linux amd_pmu_lbr_init()), the depth from CPUID 0x80000022 EBX[9:4], the MSRs checked to
 * read. Fills support, or its reason with the CPUID leaf or MSR that decided.
 */
void lbr_amd_detect(struct lbr_support *support);

/* Entry i's FROM and TO: interleaved at 0xC0010300 + 2i and + 2i + 1. */
static inline uint32_t lbr_amd_from_msr(unsigned int i)
{
	return MSR_AMD_SAMP_BR_FROM + 2 * i;
}

static inline uint32_t lbr_amd_to_msr(unsigned int i)
{
	return MSR_AMD_SAMP_BR_FROM + 2 * i + 1;
}

/* An entry as lbr_read() returns it (Linux amd_pmu_lbr_read(): address bits 57:0 extended). */
struct lbr_entry lbr_amd_decode(uint64_t from, uint64_t to);

#endif
