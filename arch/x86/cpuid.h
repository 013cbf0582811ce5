/* SPDX-License-Identifier: MIT */
/* CPUID: the instruction, and the feature bits switchyard reads (SDM Vol. 2A CPUID). */
#ifndef ARCH_X86_CPUID_H
#define ARCH_X86_CPUID_H

#include <stdbool.h>
#include <stdint.h>

struct cpuid_result {
	uint32_t eax, ebx, ecx, edx;
};

/* Never faults. A leaf above the maximum returns the highest basic leaf's data on Intel. */
static inline struct cpuid_result cpuid(uint32_t leaf, uint32_t subleaf)
{
	struct cpuid_result r;

	asm volatile("cpuid"
		     : "=a"(r.eax), "=b"(r.ebx), "=c"(r.ecx), "=d"(r.edx)
		     : "a"(leaf), "c"(subleaf));
	return r;
}

#define CPUID_1_ECX_DTES64 (1u << 2)
#define CPUID_1_ECX_DS_CPL (1u << 4)
#define CPUID_1_ECX_PDCM (1u << 15)
#define CPUID_1_ECX_X2APIC (1u << 21)
#define CPUID_1_ECX_TSC_DEADLINE (1u << 24)
#define CPUID_1_ECX_XSAVE (1u << 26)
#define CPUID_1_ECX_HYPERVISOR (1u << 31)
#define CPUID_1_EDX_DE (1u << 2)
#define CPUID_1_EDX_TSC (1u << 4)
#define CPUID_1_EDX_MSR (1u << 5)
#define CPUID_1_EDX_APIC (1u << 9)
#define CPUID_1_EDX_FXSR (1u << 24)
#define CPUID_1_EDX_DS (1u << 21)

#define CPUID_LEAF_PERFMON 0x0a
#define CPUID_PERFMON_VERSION(eax) ((eax)&0xff)
#define CPUID_PERFMON_GP_COUNTERS(eax) (((eax) >> 8) & 0xff)
#define CPUID_PERFMON_GP_WIDTH(eax) (((eax) >> 16) & 0xff)
#define CPUID_PERFMON_FIXED_COUNTERS(edx) ((edx)&0x1f)
#define CPUID_PERFMON_FIXED_WIDTH(edx) (((edx) >> 5) & 0xff)

#define CPUID_LEAF_TSC 0x15 /* EAX/EBX: TSC to crystal ratio; ECX: crystal Hz */
#define CPUID_LEAF_HYPERVISOR 0x40000000 /* EBX, ECX, EDX: signature */
#define CPUID_LEAF_HYPERVISOR_TIMING 0x40000010 /* EAX: TSC kHz (KVM, VMware) */
#define CPUID_LEAF_EXTENDED 0x80000000

/* The vendor string (12 characters and a NUL). */
void cpuid_vendor(char vendor[13]);

#endif
