/* SPDX-License-Identifier: MIT */
/* arch suite helpers for the local APIC tests: the skip of x2APIC-only tests. */
#ifndef TESTS_KERNEL_ARCH_APIC_H
#define TESTS_KERNEL_ARCH_APIC_H

#include "arch/x86/apic.h"
#include "arch/x86/cpuid.h"
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

#endif
