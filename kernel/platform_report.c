/* SPDX-License-Identifier: MIT */
/* The platform report: what this CPU says it has, and what its MSRs really keep. */
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/cpuid.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/msr-index.h"
#include "arch/x86/msr.h"
#include "arch/x86/paging.h"
#include "arch/x86/traps.h"
#include "arch/x86/tsc.h"
#include "kernel/platform_report.h"
#include "lib/format.h"
#include "lib/ktap.h"
#include "platform/pc/cpu_identity.h"

/* A page for the DS_AREA read-back probe: never used as a DS area (BTS and PEBS stay off). */
static uint8_t probe_page[PAGE_SIZE] __attribute__((aligned(PAGE_SIZE)));

static void report_cpu(const char *what, struct cpuid_result leaf0, struct cpuid_result leaf1)
{
	struct cpu_identity identity;

	cpu_identity_decode(&leaf0, &leaf1, &identity);
	ktap_diag(0, "%s: vendor=%s family=%u model=%u stepping=%u", what, identity.vendor,
		  identity.family, identity.model, identity.stepping);
}

/* The silicon (or hypervisor) first; then, if one is registered, the CPU model's identity. */
static void report_identity(void)
{
	struct cpuid_result leaf1 = cpuid_silicon(1, 0);

	report_cpu("platform", cpuid_silicon(0, 0), leaf1);
	if (cpu_model_registered())
		report_cpu("platform: emulated cpu", cpuid(0, 0), cpuid(1, 0));
	if (leaf1.ecx & CPUID_1_ECX_HYPERVISOR) {
		struct cpuid_result hv = cpuid(CPUID_LEAF_HYPERVISOR, 0);
		char signature[13];

		cpu_identity_signature(&hv, signature);
		ktap_diag(0, "platform: hypervisor=\"%s\" max_leaf=0x%x", signature, hv.eax);
	} else {
		ktap_diag(0, "platform: hypervisor=none");
	}
	ktap_diag(0, "platform: tsc_hz=%llu source=%s", (unsigned long long)tsc_hz(), tsc_source());
}

static void report_features(void)
{
	struct cpuid_result leaf1 = cpuid(1, 0), perfmon = { 0 };
	uint64_t value;
	uint32_t fault;

	if (cpu_model_registered())
		ktap_diag(0, "features: emulated: CPUID leaves 0, 1 and 0xA, and the DS, BTS, PEBS "
			     "and perfmon MSRs below are the emulated CPU's, not the silicon's");
	ktap_diag(0, "features: ds=%u dtes64=%u ds_cpl=%u pdcm=%u de=%u",
		  !!(leaf1.edx & CPUID_1_EDX_DS), !!(leaf1.ecx & CPUID_1_ECX_DTES64),
		  !!(leaf1.ecx & CPUID_1_ECX_DS_CPL), !!(leaf1.ecx & CPUID_1_ECX_PDCM),
		  !!(leaf1.edx & CPUID_1_EDX_DE));
	if (cpuid(0, 0).eax >= CPUID_LEAF_PERFMON)
		perfmon = cpuid(CPUID_LEAF_PERFMON, 0);
	ktap_diag(0,
		  "features: perfmon_version=%u gp_counters=%u gp_width=%u fixed_counters=%u "
		  "fixed_width=%u",
		  CPUID_PERFMON_VERSION(perfmon.eax), CPUID_PERFMON_GP_COUNTERS(perfmon.eax),
		  CPUID_PERFMON_GP_WIDTH(perfmon.eax), CPUID_PERFMON_FIXED_COUNTERS(perfmon.edx),
		  CPUID_PERFMON_FIXED_WIDTH(perfmon.edx));
	fault = rdmsr_safe(MSR_IA32_MISC_ENABLE, &value);
	if (fault)
		ktap_diag(0, "features: IA32_MISC_ENABLE faults (%s)",
			  exception_name(exinfo_vector(fault)));
	else
		ktap_diag(0, "features: IA32_MISC_ENABLE bts_unavailable=%u pebs_unavailable=%u",
			  !!(value & MISC_ENABLE_BTS_UNAVAILABLE),
			  !!(value & MISC_ENABLE_PEBS_UNAVAILABLE));
	fault = rdmsr_safe(MSR_IA32_PERF_CAPABILITIES, &value);
	if (fault)
		ktap_diag(0, "features: IA32_PERF_CAPABILITIES faults (%s)",
			  exception_name(exinfo_vector(fault)));
	else
		ktap_diag(0, "features: IA32_PERF_CAPABILITIES=0x%llx pebs_format=%llu%s",
			  (unsigned long long)value,
			  (unsigned long long)((value & PERF_CAP_PEBS_FORMAT_MASK) >>
					       PERF_CAP_PEBS_FORMAT_SHIFT),
			  leaf1.ecx & CPUID_1_ECX_PDCM ? "" : " (no PDCM: not architectural)");
}

/*
 * Whether an MSR keeps a written value. An accepted write proves nothing (TCG accepts every
 * write and reads back 0), so write, read back, and put the old value back.
 */
static void report_read_back(const char *name, uint32_t index, uint64_t probe)
{
	uint64_t old, readback = 0;
	uint32_t fault = rdmsr_safe(index, &old);

	if (fault) {
		ktap_diag(0, "read-back: %s read faults (%s)", name,
			  exception_name(exinfo_vector(fault)));
		return;
	}
	fault = wrmsr_safe(index, probe);
	if (fault) {
		ktap_diag(0, "read-back: %s write of 0x%llx faults (%s)", name,
			  (unsigned long long)probe, exception_name(exinfo_vector(fault)));
		return;
	}
	rdmsr_safe(index, &readback);
	wrmsr_safe(index, old);
	ktap_diag(0, "read-back: %s wrote 0x%llx read 0x%llx: %s", name, (unsigned long long)probe,
		  (unsigned long long)readback,
		  readback == probe ? "keeps value" : "does not keep value");
}

void platform_report(void)
{
	report_identity();
	report_features();
	report_read_back("IA32_DEBUGCTL", MSR_IA32_DEBUGCTL, DEBUGCTL_LBR);
	report_read_back("IA32_DS_AREA", MSR_IA32_DS_AREA, (uint64_t)probe_page);
}
