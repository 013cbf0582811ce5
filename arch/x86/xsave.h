/* SPDX-License-Identifier: MIT */
/* XSAVES and XRSTORS of supervisor state: the accessors (the area: arch/x86/xstate.h). */
#ifndef ARCH_X86_XSAVE_H
#define ARCH_X86_XSAVE_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/divert.h"
#include "arch/x86/extable.h"
#include "arch/x86/percpu.h"
#include "arch/x86/xstate.h"

/* Whether XSAVES/XRSTORS of exactly these supervisor components is served by a CPU model. */
bool xsaves_diverted(uint64_t components);

/*
 * XSAVES and XRSTORS of the components in mask (SDM Vol. 2B), at area: 64-byte aligned,
 * compacted. Return 0, or the exinfo of the fault (#GP for a bad header or state, #UD without
 * CR4.OSXSAVE). Never fault themselves. Each is one instruction; xrstors_safe() is counted in
 * this_cpu()->writes.xrstors. Operands in fixed registers (RSI the area, EDX:EAX the mask): the
 * model reads them from there (arch/x86/divert.c).
 */
static inline uint32_t xsaves_safe(void *area, uint64_t mask)
{
	uint64_t fault = 0;

	if (xsaves_diverted(mask))
		asm volatile("1: ud2; xsaves64 (%%rsi)\n2:\n" _ASM_EXTABLE(1b, 2b) _ASM_DIVERT(1b)
			     : "+D"(fault)
			     : "S"(area), "a"((uint32_t)mask), "d"((uint32_t)(mask >> 32))
			     : "memory");
	else
		asm volatile("1: xsaves64 (%%rsi)\n2:\n" _ASM_EXTABLE(1b, 2b)
			     : "+D"(fault)
			     : "S"(area), "a"((uint32_t)mask), "d"((uint32_t)(mask >> 32))
			     : "memory");
	return (uint32_t)fault;
}

static inline uint32_t xrstors_safe(const void *area, uint64_t mask)
{
	uint64_t fault = 0;

	this_cpu()->writes.xrstors++;
	if (xsaves_diverted(mask))
		asm volatile("1: ud2; xrstors64 (%%rsi)\n2:\n" _ASM_EXTABLE(1b, 2b) _ASM_DIVERT(1b)
			     : "+D"(fault)
			     : "S"(area), "a"((uint32_t)mask), "d"((uint32_t)(mask >> 32))
			     : "memory");
	else
		asm volatile("1: xrstors64 (%%rsi)\n2:\n" _ASM_EXTABLE(1b, 2b)
			     : "+D"(fault)
			     : "S"(area), "a"((uint32_t)mask), "d"((uint32_t)(mask >> 32))
			     : "memory");
	return (uint32_t)fault;
}

#endif
