/* SPDX-License-Identifier: MIT */
/*
 * RDMSR and WRMSR accessors. Every write is counted in this_cpu()->writes.msr. An MSR that a
 * registered CPU model owns is served by the model, with the same faults (arch/x86/divert.h).
 */
#ifndef ARCH_X86_MSR_H
#define ARCH_X86_MSR_H

#include <stdint.h>

#include "arch/x86/divert.h"
#include "arch/x86/extable.h"
#include "arch/x86/msr-index.h"
#include "arch/x86/percpu.h"

/* #GP(0) if the MSR does not exist; use rdmsr_safe() for anything optional. */
static inline uint64_t rdmsr(uint32_t index)
{
	uint32_t low, high;

	if (msr_diverted(index))
		asm volatile("1: ud2; rdmsr\n" _ASM_DIVERT(1b)
			     : "=a"(low), "=d"(high)
			     : "c"(index));
	else
		asm volatile("rdmsr" : "=a"(low), "=d"(high) : "c"(index));
	return ((uint64_t)high << 32) | low;
}

/* Returns 0, or the exinfo of the fault; *value is 0 after a fault. Never faults itself. */
static inline uint32_t rdmsr_safe(uint32_t index, uint64_t *value)
{
	uint32_t low = 0, high = 0;
	uint64_t fault = 0;

	if (msr_diverted(index))
		asm volatile("1: ud2; rdmsr\n2:\n" _ASM_EXTABLE(1b, 2b) _ASM_DIVERT(1b)
			     : "=a"(low), "=d"(high), "+D"(fault)
			     : "c"(index));
	else
		asm volatile("1: rdmsr\n2:\n" _ASM_EXTABLE(1b, 2b)
			     : "=a"(low), "=d"(high), "+D"(fault)
			     : "c"(index));
	*value = fault ? 0 : ((uint64_t)high << 32) | low;
	return (uint32_t)fault;
}

/* #GP(0) for a missing MSR or a reserved bit. Counted. */
static inline void wrmsr(uint32_t index, uint64_t value)
{
	this_cpu()->writes.msr++;
	if (msr_diverted(index))
		asm volatile("1: ud2; wrmsr\n" _ASM_DIVERT(1b)
			     :
			     : "c"(index), "a"((uint32_t)value), "d"((uint32_t)(value >> 32))
			     : "memory");
	else
		asm volatile("wrmsr"
			     :
			     : "c"(index), "a"((uint32_t)value), "d"((uint32_t)(value >> 32))
			     : "memory");
}

/* Returns 0, or the exinfo of the fault. Counted whether or not it faults. */
static inline uint32_t wrmsr_safe(uint32_t index, uint64_t value)
{
	uint64_t fault = 0;

	this_cpu()->writes.msr++;
	if (msr_diverted(index))
		asm volatile("1: ud2; wrmsr\n2:\n" _ASM_EXTABLE(1b, 2b) _ASM_DIVERT(1b)
			     : "+D"(fault)
			     : "c"(index), "a"((uint32_t)value), "d"((uint32_t)(value >> 32))
			     : "memory");
	else
		asm volatile("1: wrmsr\n2:\n" _ASM_EXTABLE(1b, 2b)
			     : "+D"(fault)
			     : "c"(index), "a"((uint32_t)value), "d"((uint32_t)(value >> 32))
			     : "memory");
	return (uint32_t)fault;
}

/* The one uncounted write: it makes this_cpu() valid, so it cannot use it. */
static inline void write_gs_base_uncounted(uint64_t value)
{
	asm volatile("wrmsr"
		     :
		     : "c"(MSR_GS_BASE), "a"((uint32_t)value), "d"((uint32_t)(value >> 32))
		     : "memory");
}

#endif
