/* SPDX-License-Identifier: MIT */
/* What Debug Store support this CPU has, checked by CPUID and by reading back MSR writes. */
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/arch-pebs.h"
#include "arch/x86/cpuid.h"
#include "arch/x86/msr-index.h"
#include "arch/x86/msr.h"
#include "arch/x86/paging.h"
#include "arch/x86/percpu.h"
#include "ds/arch_pebs.h"
#include "ds/detect.h"
#include "ds/ds.h"
#include "ds/records.h"
#include "ds/state.h"
#include "lib/format.h"

#define PEBS_ENABLE_FIXED_CTR0_SHIFT 32 /* fixed counter i at bit 32 + i */

static struct ds_support support;
/* A page for the read-back probe; BTS and PEBS stay off, so nothing is ever written to it. */
static uint8_t probe_page[PAGE_SIZE] __attribute__((aligned(PAGE_SIZE)));

const struct ds_support *ds_support(void)
{
	return &support;
}

/* An accepted write proves nothing (TCG drops it and reads 0): write, read back, restore. */
static bool ds_area_keeps_value(void)
{
	uint64_t old, readback = 0;
	bool kept;

	if (rdmsr_safe(MSR_IA32_DS_AREA, &old) ||
	    wrmsr_safe(MSR_IA32_DS_AREA, (uint64_t)probe_page))
		return false;
	kept = rdmsr_safe(MSR_IA32_DS_AREA, &readback) == 0 && readback == (uint64_t)probe_page;
	wrmsr_safe(MSR_IA32_DS_AREA, old);
	return kept;
}

/*
 * The first condition that fails, in the order the SDM and Linux check them
 * (docs/hardware-facts.md §1).
 */
static void first_missing(char *reason, size_t size, bool pebs)
{
	uint64_t misc = 0;

	if (!support.ds)
		format(reason, size, "CPUID.1:EDX.DS=0");
	else if (!support.dtes64)
		format(reason, size, "CPUID.1:ECX.DTES64=0 (no 64-bit DS layout)");
	else if (rdmsr_safe(MSR_IA32_MISC_ENABLE, &misc))
		format(reason, size, "IA32_MISC_ENABLE cannot be read");
	else if (!pebs && support.bts_unavailable)
		format(reason, size, "IA32_MISC_ENABLE.BTS_UNAVAILABLE=1");
	else if (pebs && support.pebs_unavailable)
		format(reason, size, "IA32_MISC_ENABLE.PEBS_UNAVAILABLE=1");
	else if (pebs && !support.pdcm)
		format(reason, size, "CPUID.1:ECX.PDCM=0 (no PEBS record format)");
	else if (pebs && support.pebs_format == PERF_CAP_PEBS_FORMAT_ARCH)
		format(reason, size, "PEBS format 0xF is architectural PEBS: not in the DS area");
	else if (pebs && support.pebs_format > PEBS_FORMAT_MAX_KNOWN)
		format(reason, size, "PEBS record format %u is unknown", support.pebs_format);
	else if (!support.ds_area_keeps_value)
		format(reason, size, "IA32_DS_AREA does not keep a written value");
	else
		reason[0] = '\0';
}

/*
 * Which counters PEBS may use: with baseline every GP counter and the fixed ones at bit 32 + i;
 * before it PMC0-3 (format 0: PMC0 only, Core 2 and Bonnell). The load-latency and precise-store
 * bits of Nehalem to Skylake are model-specific and never set here (SDM Vol. 4, Linux ds.c).
 */
static DEFINE_PER_CPU(uint64_t, pebs_enable_here); /* ds_detect_cpu() */

static uint64_t pebs_counters_here(unsigned int *gp_counters, unsigned int *fixed_counters)
{
	struct cpuid_result leaf = { 0 };
	unsigned int gp_pebs;
	uint64_t valid;

	if (cpuid(0, 0).eax >= CPUID_LEAF_PERFMON)
		leaf = cpuid(CPUID_LEAF_PERFMON, 0);
	*gp_counters = CPUID_PERFMON_GP_COUNTERS(leaf.eax);
	*fixed_counters =
		CPUID_PERFMON_VERSION(leaf.eax) >= 2 ? CPUID_PERFMON_FIXED_COUNTERS(leaf.edx) : 0;
	gp_pebs = support.pebs_baseline ? *gp_counters : support.pebs_format == 0 ? 1 : 4;
	if (gp_pebs > *gp_counters)
		gp_pebs = *gp_counters;
	valid = gp_pebs >= 64 ? UINT64_MAX : (1ull << gp_pebs) - 1;
	if (support.pebs_baseline)
		valid |= ((1ull << *fixed_counters) - 1) << PEBS_ENABLE_FIXED_CTR0_SHIFT;
	return valid;
}

/*
 * The calling CPU's PEBS_ENABLE bits. On a hybrid part each core type has its own counters
 * (SDM CPUID leaf 1AH), so a bit the boot CPU has may #GP on a small core; Linux keeps
 * pebs_events_mask per hybrid PMU for the same reason.
 */
void ds_detect_cpu(void)
{
	unsigned int gp, fixed;

	*this_cpu_ptr(pebs_enable_here) = pebs_counters_here(&gp, &fixed);
}

uint64_t ds_pebs_enable_valid_here(void)
{
	return *this_cpu_ptr(pebs_enable_here);
}

static void detect_pebs_counters(void)
{
	support.pebs_enable_valid =
		pebs_counters_here(&support.gp_counters, &support.fixed_counters);
	*this_cpu_ptr(pebs_enable_here) = support.pebs_enable_valid;
}

void ds_detect(void)
{
	struct cpuid_result leaf1 = cpuid(1, 0);
	uint64_t value = 0;

	support.ds = leaf1.edx & CPUID_1_EDX_DS;
	support.dtes64 = leaf1.ecx & CPUID_1_ECX_DTES64;
	support.ds_cpl = leaf1.ecx & CPUID_1_ECX_DS_CPL;
	support.pdcm = leaf1.ecx & CPUID_1_ECX_PDCM;
	if (rdmsr_safe(MSR_IA32_MISC_ENABLE, &value) == 0) {
		support.bts_unavailable = value & MISC_ENABLE_BTS_UNAVAILABLE;
		support.pebs_unavailable = value & MISC_ENABLE_PEBS_UNAVAILABLE;
	}
	if (support.pdcm && rdmsr_safe(MSR_IA32_PERF_CAPABILITIES, &value) == 0) {
		support.pebs_format = (unsigned int)((value & PERF_CAP_PEBS_FORMAT_MASK) >>
						     PERF_CAP_PEBS_FORMAT_SHIFT);
		support.pebs_baseline = value & PERF_CAP_PEBS_BASELINE;
		support.pebs_arch_regs = value & PERF_CAP_PEBS_ARCH_REGS;
	}
	detect_pebs_counters();
	ds_arch_pebs_detect(support.pdcm, support.pebs_format, &support.arch_pebs);
	/* Probe only where CPUID promises a DS area: elsewhere the write may #GP or vanish. */
	support.ds_area_keeps_value = support.ds && support.dtes64 && ds_area_keeps_value();
	first_missing(support.bts_reason, sizeof(support.bts_reason), false);
	first_missing(support.pebs_reason, sizeof(support.pebs_reason), true);
	ds_state_pebs_in_ds_area(support.pebs_reason[0] == '\0');
}
