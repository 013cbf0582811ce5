/* SPDX-License-Identifier: MIT */
/* Exception-table fix-ups: how the _safe accessors report a fault instead of taking it. */
#ifndef ARCH_X86_EXTABLE_H
#define ARCH_X86_EXTABLE_H

#include <stdint.h>

/*
 * A fault at an address listed in .extable resumes at its fix-up address with the fault
 * described in %rdi as an exinfo: EXINFO_VALID | error code << 8 | vector. An accessor that
 * starts with %rdi = 0 therefore reads 0 when nothing faulted. A test compares one value:
 * check_eq(EXINFO(X86_EXC_GP, 0), fault).
 */
#define EXINFO_VALID (1u << 31)
#define EXINFO(vector, error_code) \
	(EXINFO_VALID | (((uint32_t)(error_code)&0x7fffffu) << 8) | ((uint32_t)(vector)&0xffu))

static inline unsigned int exinfo_vector(uint32_t exinfo)
{
	return exinfo & 0xffu;
}

static inline uint32_t exinfo_error_code(uint32_t exinfo)
{
	return (exinfo >> 8) & 0x7fffffu;
}

/* One entry: the faulting instruction and where to resume. Emitted by _ASM_EXTABLE. */
struct extable_entry {
	uint64_t fault;
	uint64_t fixup;
};

#define _ASM_EXTABLE(fault, fixup)         \
	".pushsection .extable, \"a\"\n\t" \
	".balign 8\n\t"                    \
	".quad " #fault ", " #fixup "\n\t" \
	".popsection\n\t"

/* The fix-up for a fault at rip, or 0. Used by the exception dispatcher. */
uint64_t extable_find(uint64_t rip);

#endif
