/* SPDX-License-Identifier: MIT */
/* The CPU's identity as CPUID states it: vendor, family, model, stepping, hypervisor signature. */
#ifndef PLATFORM_PC_CPU_IDENTITY_H
#define PLATFORM_PC_CPU_IDENTITY_H

#include <stdbool.h>

#include "arch/x86/divert.h"

struct cpu_identity {
	char vendor[13]; /* leaf 0's EBX, EDX, ECX: "GenuineIntel" */
	unsigned int family, model, stepping; /* displayed, as Linux's /proc/cpuinfo */
	bool hypervisor; /* leaf 1's ECX.HYPERVISOR */
};

/*
 * Decode leaves 0 and 1 (SDM Vol. 2A CPUID, "Version Information"): the displayed family adds the
 * extended family where the family is 0xF; the displayed model takes the extended model as its
 * high nibble where the family is 0x6 or 0xF and above, as Linux's x86_family()/x86_model().
 */
void cpu_identity_decode(const struct cpuid_result *leaf0, const struct cpuid_result *leaf1,
			 struct cpu_identity *identity);

/* A hypervisor leaf's signature (0x40000000 and its repeats): EBX, ECX, EDX as 12 characters. */
void cpu_identity_signature(const struct cpuid_result *leaf, char signature[13]);

#endif
