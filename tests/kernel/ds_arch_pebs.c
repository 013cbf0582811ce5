/* SPDX-License-Identifier: MIT */
/* ds suite: architectural PEBS detection, checked against CPUID and the MSR read apart. */
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/cpuid.h"
#include "arch/x86/msr.h"
#include "ds/ds.h"
#include "runner/test.h"

/*
 * Typed here from the Linux arch-PEBS series (update_pmu_cap()), apart from arch/x86/arch-pebs.h
 * and ds/arch_pebs.c: leaf 0x23, sub-leaf 0 EAX bits 4 and 5, sub-leaf 1 EAX/EBX the counters,
 * sub-leaf 4 EBX the CFG_C bits from 32, sub-leaf 5 EAX/ECX the PEBS counters, EBX/EDX PDIST.
 * Runs unchanged on silicon: on a part before arch-PEBS it checks that ds/ refuses it.
 */
#define T_LEAF 0x23u
#define T_PEBS_SUBLEAVES ((1u << 4) | (1u << 5))
#define T_COUNTERS_SUBLEAF (1u << 1)

static uint64_t bits(uint32_t gp, uint32_t fixed)
{
	return (uint64_t)fixed << 32 | gp;
}

TEST(ds, arch_pebs_detection_matches_perf_capabilities_and_leaf_23)
{
	const struct ds_arch_pebs_support *a = &ds_support()->arch_pebs;
	uint64_t caps = 0, counters, pebs, pdist;
	unsigned int format;
	struct cpuid_result sub0, sub1, sub4, sub5;
	bool expect;

	test_diag("arch-PEBS: usable=%u reason '%s' counters 0x%llx pebs 0x%llx pdist 0x%llx "
		  "caps 0x%llx",
		  a->usable, a->reason, (unsigned long long)a->counters,
		  (unsigned long long)a->pebs, (unsigned long long)a->pdist,
		  (unsigned long long)a->caps);
	if (!(cpuid(1, 0).ecx & CPUID_1_ECX_PDCM) ||
	    rdmsr_safe(MSR_IA32_PERF_CAPABILITIES, &caps) != 0) {
		check(!a->usable, "usable without PERF_CAPABILITIES");
		return;
	}
	format = (unsigned int)((caps >> 8) & 0xf);
	if (format != 0xf || cpuid(0, 0).eax < T_LEAF) {
		check(!a->usable, "usable with PEBS_FMT %u, highest leaf 0x%x", format,
		      cpuid(0, 0).eax);
		check(a->reason[0] != '\0', "refused without a reason");
		return;
	}
	sub0 = cpuid(T_LEAF, 0);
	sub1 = cpuid(T_LEAF, 1);
	sub4 = cpuid(T_LEAF, 4);
	sub5 = cpuid(T_LEAF, 5);
	test_diag("CPUID.23H: 0 eax 0x%x; 1 eax 0x%x ebx 0x%x; 4 ebx 0x%x; 5 eax 0x%x ebx 0x%x "
		  "ecx 0x%x edx 0x%x",
		  sub0.eax, sub1.eax, sub1.ebx, sub4.ebx, sub5.eax, sub5.ebx, sub5.ecx, sub5.edx);
	if ((sub0.eax & T_PEBS_SUBLEAVES) != T_PEBS_SUBLEAVES) {
		check(!a->usable, "usable without sub-leaves 4 and 5");
		return;
	}
	if (sub0.eax & T_COUNTERS_SUBLEAF) {
		counters = bits(sub1.eax, sub1.ebx);
	} else {
		struct cpuid_result perfmon = cpuid(0xa, 0);
		unsigned int gp = (perfmon.eax >> 8) & 0xff, fixed = perfmon.edx & 0x1f;

		counters = bits((uint32_t)((1ull << gp) - 1), (uint32_t)((1ull << fixed) - 1));
		if ((perfmon.eax & 0xff) >= 5)
			counters |= (uint64_t)perfmon.ecx << 32;
	}
	pebs = bits(sub5.eax, sub5.ecx);
	pdist = bits(sub5.ebx, sub5.edx);
	expect = pebs && !((pebs | pdist) & ~counters);
	check_eq(expect, a->usable);
	check_eq(counters, a->counters);
	check_eq(pebs, a->pebs);
	check_eq(pdist, a->pdist);
	check_eq((uint64_t)sub4.ebx << 32, a->caps);
	if (!expect)
		check(a->reason[0] != '\0', "refused without a reason");
	/* The DS area's PEBS is not this part's; BTS may still be. */
	check(ds_support()->pebs_reason[0] != '\0', "DS-area PEBS offered on a PEBS_FMT 0xF part");
}
