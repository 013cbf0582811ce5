/* SPDX-License-Identifier: MIT */
/* The TSC frequency, and time in TSC cycles. */
#ifndef ARCH_X86_TSC_H
#define ARCH_X86_TSC_H

#include <stdint.h>

#include "arch/x86/cpu.h"

/*
 * The TSC's frequency in Hz, 0 until platform/pc/tsc_calibrate.c found it, and where it came
 * from: "cpuid-0x15", "cpuid-0x16", "hypervisor-leaf", "pit", "pmtimer", "hpet" or "none".
 */
void tsc_set_hz(uint64_t hz, const char *source);
uint64_t tsc_hz(void);
const char *tsc_source(void);

/* Saturating: UINT64_MAX when the cycles do not fit in 64 bits. */
static inline uint64_t tsc_cycles_from_ms(uint64_t ms)
{
	uint64_t cycles;

	return __builtin_mul_overflow(tsc_hz() / 1000, ms, &cycles) ? UINT64_MAX : cycles;
}

/* The TSC ms milliseconds from now; saturating: UINT64_MAX, which the TSC never reaches. */
static inline uint64_t tsc_deadline_after_ms(uint64_t ms)
{
	uint64_t deadline;

	return __builtin_add_overflow(rdtsc_ordered(), tsc_cycles_from_ms(ms), &deadline)
		       ? UINT64_MAX
		       : deadline;
}

#endif
