/* SPDX-License-Identifier: MIT */
/* The TSC frequency, and time in TSC cycles. */
#ifndef ARCH_X86_TSC_H
#define ARCH_X86_TSC_H

#include <stdbool.h>
#include <stdint.h>

/* Find the TSC frequency: CPUID 0x15, the hypervisor leaf 0x40000010, else the PIT. */
bool tsc_calibrate(void);
uint64_t tsc_hz(void);
/* Where tsc_hz() came from: "cpuid-0x15", "hypervisor-leaf", "pit". */
const char *tsc_source(void);

static inline uint64_t tsc_cycles_from_ms(uint64_t ms)
{
	return tsc_hz() / 1000 * ms;
}

#endif
