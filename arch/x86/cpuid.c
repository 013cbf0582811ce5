/* SPDX-License-Identifier: MIT */
/* CPUID helpers that need more than one instruction. */
#include "arch/x86/cpuid.h"
#include "lib/string.h"

void cpuid_vendor(char vendor[13])
{
	struct cpuid_result leaf0 = cpuid(0, 0);

	memcpy(vendor, &leaf0.ebx, 4);
	memcpy(vendor + 4, &leaf0.edx, 4);
	memcpy(vendor + 8, &leaf0.ecx, 4);
	vendor[12] = '\0';
}
