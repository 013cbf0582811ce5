/* SPDX-License-Identifier: MIT */
/* CPUID: the instruction, and the feature bits switchyard reads (SDM Vol. 2A CPUID). */
#ifndef ARCH_X86_CPUID_H
#define ARCH_X86_CPUID_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/divert.h"

/* The CPU's own answer, even for a leaf a registered CPU model owns. Never faults. */
static inline struct cpuid_result cpuid_silicon(uint32_t leaf, uint32_t subleaf)
{
	struct cpuid_result r;

	asm volatile("cpuid"
		     : "=a"(r.eax), "=b"(r.ebx), "=c"(r.ecx), "=d"(r.edx)
		     : "a"(leaf), "c"(subleaf));
	return r;
}

/*
 * Never faults. A leaf above the maximum returns the highest basic leaf's data on Intel. A leaf
 * that a registered CPU model owns is answered by the model (arch/x86/divert.h).
 */
static inline struct cpuid_result cpuid(uint32_t leaf, uint32_t subleaf)
{
	struct cpuid_result r;

	if (cpuid_diverted(leaf))
		asm volatile("1: ud2; cpuid\n" _ASM_DIVERT(1b)
			     : "=a"(r.eax), "=b"(r.ebx), "=c"(r.ecx), "=d"(r.edx)
			     : "a"(leaf), "c"(subleaf));
	else
		r = cpuid_silicon(leaf, subleaf);
	return r;
}

#define CPUID_LEAF_VENDOR 0x00 /* EAX: highest basic leaf; EBX, EDX, ECX: vendor string */
#define CPUID_VENDOR_INTEL_EBX 0x756e6547u /* "Genu" */
#define CPUID_VENDOR_INTEL_EDX 0x49656e69u /* "ineI" */
#define CPUID_VENDOR_INTEL_ECX 0x6c65746eu /* "ntel" */

#define CPUID_LEAF_FEATURES 0x01 /* EAX: family, model, stepping; ECX, EDX: feature bits */
#define CPUID_1_EAX_STEPPING(eax) ((eax)&0xfu)
#define CPUID_1_EAX_MODEL(eax) (((eax) >> 4) & 0xfu)
#define CPUID_1_EAX_FAMILY(eax) (((eax) >> 8) & 0xfu)
#define CPUID_1_EAX_EXTENDED_MODEL(eax) (((eax) >> 16) & 0xfu)
#define CPUID_1_EAX_EXTENDED_FAMILY(eax) (((eax) >> 20) & 0xffu)
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
#define CPUID_PERFMON_GP_COUNTERS_SHIFT 8 /* EAX */
#define CPUID_PERFMON_GP_WIDTH_SHIFT 16 /* EAX */
#define CPUID_PERFMON_EVENTS_LENGTH_SHIFT 24 /* EAX: how many EBX bits enumerate events */
#define CPUID_PERFMON_ARCH_EVENTS 7 /* EBX bits 6:0, each set bit an unavailable event */
#define CPUID_PERFMON_FIXED_WIDTH_SHIFT 5 /* EDX */
#define CPUID_PERFMON_EDX_ANYTHREAD_DEPRECATED (1u << 15) /* read from perfmon v5 */

#define CPUID_LEAF_EXTENDED_FEATURES 0x07 /* sub-leaf 0 */
#define CPUID_7_EBX_HLE (1u << 4) /* TSX: hardware lock elision */
#define CPUID_7_EBX_RTM (1u << 11) /* TSX: restricted transactional memory */
#define CPUID_7_ECX_UMIP (1u << 2) /* CR4.UMIP exists */
#define CPUID_7_EDX_ARCH_LBR (1u << 19) /* architectural LBR: leaf 0x1C enumerates it */
#define CPUID_LEAF_ARCH_LBR 0x1c
#define CPUID_1C_EAX_DEPTHS 0xffu /* bit n: depth 8 (n + 1) supported */
#define CPUID_1C_EAX_DEEP_C_RESET (1u << 30) /* deep C-states may reset the records */
#define CPUID_1C_EAX_LIP (1u << 31) /* IPs are linear addresses */
#define CPUID_1C_EBX_CPL_FILTER (1u << 0)
#define CPUID_1C_EBX_BRANCH_FILTER (1u << 1)
#define CPUID_1C_EBX_CALL_STACK (1u << 2)
#define CPUID_1C_ECX_MISPREDICT (1u << 0)
#define CPUID_1C_ECX_TIMED (1u << 1)
#define CPUID_1C_ECX_BRANCH_TYPE (1u << 2)
#define CPUID_7_EDX_HYBRID (1u << 15) /* cores of more than one type: leaf 0x1A tells each's */
#define CPUID_7_EDX_ARCH_CAPABILITIES (1u << 29) /* IA32_ARCH_CAPABILITIES exists */
/* Leaf 0DH (SDM Vol. 2A CPUID, "Processor Extended State Enumeration"). */
#define CPUID_LEAF_XSTATE 0x0d
#define CPUID_D1_EAX_XSAVES (1u << 3) /* sub-leaf 1: XSAVES, XRSTORS and IA32_XSS */
/* Sub-leaf 1 ECX: the IA32_XSS bits that may be set; sub-leaf n EAX: component n's size. */
#define CPUID_D_ECX_SUPERVISOR (1u << 0) /* sub-leaf n >= 2: a supervisor (IA32_XSS) component */
#define CPUID_D_ECX_ALIGNED (1u << 1) /* sub-leaf n >= 2: 64-byte aligned in the compacted form */
#define CPUID_LEAF_HYBRID 0x1a /* EAX[31:24]: this core's type */
#define CPUID_HYBRID_CORE_TYPE(eax) ((eax) >> 24)
#define CPUID_HYBRID_ATOM 0x20
#define CPUID_HYBRID_CORE 0x40
#define CPUID_LEAF_TSC 0x15 /* EAX/EBX: TSC to crystal ratio; ECX: crystal Hz */
#define CPUID_LEAF_FREQUENCY 0x16 /* EAX: base MHz (SDM Vol. 2A, CPUID leaf 16H) */
#define CPUID_16_EAX_BASE_MHZ 0xffffu /* bits 15:0 */
#define CPUID_LEAF_HYPERVISOR 0x40000000 /* EBX, ECX, EDX: signature */
#define CPUID_LEAF_HYPERVISOR_TIMING 0x40000010 /* EAX: TSC kHz (KVM, VMware) */
#define CPUID_LEAF_EXTENDED 0x80000000 /* EAX: highest extended leaf */
/* AMD (APM Vol. 3 Appendix E "Obtaining Processor Information Via the CPUID Instruction"). */
#define CPUID_VENDOR_AMD_EBX 0x68747541u /* "Auth" */
#define CPUID_VENDOR_AMD_EDX 0x69746e65u /* "enti" */
#define CPUID_VENDOR_AMD_ECX 0x444d4163u /* "cAMD" */
#define CPUID_LEAF_AMD_FEATURES 0x80000001
#define CPUID_80000001_ECX_PERFCTR_CORE (1u << 23) /* PerfCtrExtCore: six core counters */
#define CPUID_80000001_ECX_BPEXT (1u << 26) /* DR0-DR3 address-mask MSRs */
#define CPUID_LEAF_AMD_PERFMON 0x80000022 /* "Extended Performance Monitoring and Debug" */
#define CPUID_80000022_EAX_PERFMON_V2 (1u << 0)
#define CPUID_80000022_EAX_LBR_EXT_V2 (1u << 1)
#define CPUID_80000022_EAX_LBR_PMC_FREEZE (1u << 2)
#define CPUID_80000022_EBX_CORE_COUNTERS(ebx) ((ebx)&0xfu) /* NumPerfCtrCore */
#define CPUID_80000022_EBX_LBR_STACK_SHIFT 4
#define CPUID_80000022_EBX_LBR_STACK(ebx) \
	(((ebx) >> CPUID_80000022_EBX_LBR_STACK_SHIFT) & 0x3fu) /* LbrV2StackSize */

/* The vendor string (12 characters and a NUL). */
void cpuid_vendor(char vendor[13]);

#endif
