/* SPDX-License-Identifier: MIT */
/* The TSC frequency, and time in TSC cycles. */
#ifndef ARCH_X86_TSC_H
#define ARCH_X86_TSC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/cpu.h"

/*
 * Find the TSC frequency: from the source tsc.source= names, else from the first of CPUID
 * 0x15/0x16, the hypervisor leaf 0x40000010, the PIT, the ACPI PM timer and the HPET that
 * answers, printing "# tsc: SOURCE: why not" for each one before it. rsdp[0, rsdp_length) is the
 * loader's copy of the RSDP (length 0: scan the BIOS areas). On failure writes why into error
 * (a forced source that is missing: "option 'tsc.source': ...") and returns false.
 */
bool tsc_calibrate(const void *rsdp, size_t rsdp_length, char *error, size_t size);
/* Whether tsc.source= named a source: its failure is then a usage error. */
bool tsc_source_forced(void);
uint64_t tsc_hz(void);
/* Where tsc_hz() came from: "cpuid-0x15", "cpuid-0x16", "hypervisor-leaf", "pit", "pmtimer",
 * "hpet". */
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
