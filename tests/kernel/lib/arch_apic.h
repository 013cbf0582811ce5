/* SPDX-License-Identifier: MIT */
/* arch suite helpers for the local APIC tests: the skip of x2APIC-only tests, and a bounded wait.
 */
#ifndef TESTS_KERNEL_LIB_ARCH_APIC_H
#define TESTS_KERNEL_LIB_ARCH_APIC_H

#include "arch/x86/apic.h"
#include "arch/x86/cpu.h"
#include "arch/x86/cpuid.h"
#include "arch/x86/tsc.h"
#include "runner/test.h"

/* Skip unless the APIC runs in x2APIC mode, saying why it does not. */
static inline void apic_require_x2apic(void)
{
	if (apic_mode() == APIC_MODE_X2APIC)
		return;
	if (cpuid_silicon(CPUID_LEAF_FEATURES, 0).ecx & CPUID_1_ECX_X2APIC)
		test_skip("xAPIC mode: apic=xapic");
	test_skip("xAPIC mode: CPUID.1:ECX[21] is 0: no x2APIC");
}

/* Wait, interrupts on, until *count reaches want or ms milliseconds pass. */
static inline void apic_test_wait_for(volatile unsigned int *count, unsigned int want,
				      unsigned int ms)
{
	uint64_t start = rdtsc_ordered();

	while (*count < want && rdtsc_ordered() - start < tsc_cycles_from_ms(ms))
		cpu_relax();
}

#endif
