/* SPDX-License-Identifier: MIT */
/* Host shim of arch/x86/xsave.h: no XSAVES on the host; both accessors report #UD. */
#ifndef SHIM_ARCH_X86_XSAVE_H
#define SHIM_ARCH_X86_XSAVE_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/exceptions.h"
#include "arch/x86/extable.h"

/* The real accessors are instructions: renamed out of the way, never called. */
#define xsaves_safe shim_unused_asm_xsaves_safe
#define xrstors_safe shim_unused_asm_xrstors_safe
#define xsaves_diverted shim_unused_xsaves_diverted
#include_next "arch/x86/xsave.h"
#undef xsaves_safe
#undef xrstors_safe
#undef xsaves_diverted

/* As a CPU without CR4.OSXSAVE: lbr/ finds no XSAVES and keeps the MSR loop. */
static inline uint32_t xsaves_safe(void *area, uint64_t mask)
{
	(void)area;
	(void)mask;
	return EXINFO(X86_EXC_UD, 0);
}

static inline uint32_t xrstors_safe(const void *area, uint64_t mask)
{
	(void)area;
	(void)mask;
	return EXINFO(X86_EXC_UD, 0);
}

#endif
