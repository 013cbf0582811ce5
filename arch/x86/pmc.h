/* SPDX-License-Identifier: MIT */
/* RDPMC accessors: a CPU model that owns the counters serves them (arch/x86/divert.h). */
#ifndef ARCH_X86_PMC_H
#define ARCH_X86_PMC_H

#include <stdint.h>

#include "arch/x86/divert.h"
#include "arch/x86/extable.h"

/*
 * The counter ECX names (RDPMC_FIXED, RDPMC_FAST: arch/x86/msr-index.h), in EDX:EAX. Returns
 * 0, or the exinfo of the fault (#GP(0) for a counter that does not exist); *value is 0 after a
 * fault. Never faults itself.
 */
static inline uint32_t rdpmc_safe(uint32_t ecx, uint64_t *value)
{
	uint32_t low = 0, high = 0;
	uint64_t fault = 0;

	if (rdpmc_diverted())
		asm volatile("1: ud2; rdpmc\n2:\n" _ASM_EXTABLE(1b, 2b) _ASM_DIVERT(1b)
			     : "=a"(low), "=d"(high), "+D"(fault)
			     : "c"(ecx));
	else
		asm volatile("1: rdpmc\n2:\n" _ASM_EXTABLE(1b, 2b)
			     : "=a"(low), "=d"(high), "+D"(fault)
			     : "c"(ecx));
	*value = fault ? 0 : ((uint64_t)high << 32) | low;
	return (uint32_t)fault;
}

/* #GP(0) for a counter that does not exist. */
static inline uint64_t rdpmc(uint32_t ecx)
{
	uint32_t low, high;

	if (rdpmc_diverted())
		asm volatile("1: ud2; rdpmc\n" _ASM_DIVERT(1b) : "=a"(low), "=d"(high) : "c"(ecx));
	else
		asm volatile("rdpmc" : "=a"(low), "=d"(high) : "c"(ecx));
	return ((uint64_t)high << 32) | low;
}

#endif
