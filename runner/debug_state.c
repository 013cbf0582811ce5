/* SPDX-License-Identifier: MIT */
/* Checking, between tests and on every CPU, that DR7, DEBUGCTL, DS_AREA and PEBS_ENABLE are at
 * reset values, that LVTPC is as the kernel set it, that no #DB handling was left unended, and
 * that no counter counts that pmu/ does not hold. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/apic.h"
#include "arch/x86/debug-registers.h"
#include "arch/x86/msr-index.h"
#include "arch/x86/msr.h"
#include "arch/x86/percpu.h"
#include "dr/dr.h"
#include "ds/ds.h"
#include "kernel/smp.h"
#include "lib/format.h"
#include "lib/ktap.h"
#include "lib/report.h"
#include "pmu/pmu.h"
#include "runner/debug_state.h"

struct msr_state {
	const char *name;
	uint32_t index;
	bool readable; /* RDMSR did not fault at boot */
};

/* Reset value 0 for all of them (SDM Vol. 4). */
static struct msr_state msrs[] = {
	{ "IA32_DEBUGCTL", MSR_IA32_DEBUGCTL, false },
	{ "IA32_DS_AREA", MSR_IA32_DS_AREA, false },
	{ "IA32_PEBS_ENABLE", MSR_IA32_PEBS_ENABLE, false },
};

#define MSR_COUNT (sizeof(msrs) / sizeof(msrs[0]))

void debug_state_init(void)
{
	for (size_t i = 0; i < MSR_COUNT; i++) {
		uint64_t value;

		msrs[i].readable = rdmsr_safe(msrs[i].index, &value) == 0;
	}
}

void debug_state_describe(void)
{
	char names[96] = "DR7 LVTPC";
	size_t length = 9;

	for (size_t i = 0; i < MSR_COUNT; i++)
		if (msrs[i].readable)
			length += (size_t)format(names + length, sizeof(names) - length, " %s",
						 msrs[i].name);
	ktap_diag(0, "debug state checked before the first test and after each, on every CPU: %s",
		  names);
}

struct check_request {
	const char *when;
	bool clean;
};

/*
 * On the CPU being checked (by a call IPI from the runner's, which waits): report what is not at
 * its reset value, in the hardware and in ds/'s and pmu/'s own views of it, and make the
 * hardware what the owners' shadows say again, through the owners, so that the next test starts
 * clean and no shadow is left believing a register holds what it does not.
 */
static void check_here(void *arg)
{
	struct check_request *request = arg;
	char where[16] = "";
	unsigned long dr7;
	uint32_t lvtpc;

	if (smp_cpus() > 1)
		format(where, sizeof(where), " (CPU %u)", this_cpu_index());
	/* Before DR7 is read: while the handling lasts, dr/ keeps DR7 clear. */
	if (dr_debug_recover()) {
		report_fail("debug state %s the test%s: a #DB handling never ended (an exception "
			    "in a breakpoint handler); dr/ ended it, DR7 0x%lx",
			    request->when, where, read_dr7());
		request->clean = false;
	}
	/* The delivery status is the APIC's, not a setting: a PMI may be on its way. */
	lvtpc = apic_read_lvtpc() & ~APIC_LVT_DELIVERY_PENDING;
	if (lvtpc != apic_lvtpc_configured()) {
		bool masked = (lvtpc & ~apic_lvtpc_configured()) & APIC_LVT_MASKED;

		report_fail("debug state %s the test%s: LVTPC expected 0x%x, got 0x%x%s",
			    request->when, where, apic_lvtpc_configured(), lvtpc,
			    masked ? " (masked: a PMI that never ended)" : "");
		apic_write_lvtpc(apic_lvtpc_configured());
		request->clean = false;
	}
	dr7 = read_dr7();
	if (dr7 != DR7_RESET) {
		report_fail("debug state %s the test%s: DR7 expected 0x%lx, got 0x%lx",
			    request->when, where, DR7_RESET, dr7);
		write_dr7(DR7_RESET);
		request->clean = false;
	}
	struct ds_registers ds = ds_registers();
	bool rewrite = false;

	if (ds.ds_area || ds.debugctl || ds.pebs_enable) {
		report_fail("debug state %s the test%s: ds/ holds DS_AREA 0x%llx DEBUGCTL 0x%llx "
			    "PEBS_ENABLE 0x%llx",
			    request->when, where, (unsigned long long)ds.ds_area,
			    (unsigned long long)ds.debugctl, (unsigned long long)ds.pebs_enable);
		request->clean = false;
	}
	if (pmu_usable() && !pmu_idle()) {
		report_fail("debug state %s the test%s: pmu/ has counters enabled", request->when,
			    where);
		request->clean = false;
	} else if (pmu_usable()) {
		uint64_t global;

		/* pmu/ holds nothing, so no counter may count: a test that wrote the MSRs itself
		 * and was ended before it undid them would leave them counting (and an emulated
		 * CPU stepping every instruction for them). */
		if (rdmsr_safe(MSR_IA32_PERF_GLOBAL_CTRL, &global) == 0 && global != 0) {
			report_fail("debug state %s the test%s: IA32_PERF_GLOBAL_CTRL expected 0x0 "
				    "(pmu/ holds no counter), got 0x%llx",
				    request->when, where, (unsigned long long)global);
			wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 0);
			request->clean = false;
		}
	}
	for (size_t i = 0; i < MSR_COUNT; i++) {
		uint64_t value;

		if (!msrs[i].readable || rdmsr_safe(msrs[i].index, &value) || value == 0)
			continue;
		report_fail("debug state %s the test%s: %s expected 0x0, got 0x%llx", request->when,
			    where, msrs[i].name, (unsigned long long)value);
		rewrite = true;
		request->clean = false;
	}
	if (rewrite)
		ds_registers_rewrite(); /* DEBUGCTL too, after IA32_DS_AREA (SDM order) */
}

bool debug_state_check(const char *when)
{
	struct check_request request = { when, true };

	for (unsigned int cpu = 0; cpu < smp_cpus(); cpu++) {
		if (!smp_call(cpu, check_here, &request)) {
			report_fail("debug state %s the test: CPU %u took no call in %u ms", when,
				    cpu, SMP_CALL_TIMEOUT_MS);
			request.clean = false;
		}
	}
	return request.clean;
}
