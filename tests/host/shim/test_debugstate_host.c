/* SPDX-License-Identifier: MIT */
/* Host tests of debugstate/: the MSR writes of a switch, an exit and a PMI, in their order. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/msr-index.h"
#include "ds/ds.h"
#include "ds/records.h"
#include "kernel/switch_hooks.h"
#include "pmu/pmu.h"
#include "tests/host/shim/shim.h"

#define TASK_A 1
#define PERIOD 1000
#define BTS_ARMED (DEBUGCTL_TR | DEBUGCTL_BTS | DEBUGCTL_BTINT) /* interrupt mode */

static const struct pmu_event instructions = { .event = 0xc0, .user = true, .kernel = true };

/* Format 4 (icelake), basic records, GP counter 0, a record per overflow. */
static struct ds_pebs_config pebs_on_counter_0(void)
{
	return (struct ds_pebs_config){
		.format = 4,
		.record_size = PEBS_BASIC_GROUP_SIZE,
		.records = 16,
		.threshold_records = 1,
		.enable = 1,
		.reset_value =
			(0 - (uint64_t)PERIOD) & emulator_counter_mask(shim_profile(), false),
	};
}

/* TASK_A samples with PEBS on GP counter 0: its own area, its counter's PEBS_ENABLE bit. */
static bool pebs_task(void)
{
	struct ds_target a = { false, TASK_A };
	struct ds_pebs_config config = pebs_on_counter_0();
	struct pmu_event pebs = instructions;

	pebs.pebs = true;
	return host_check_eq_u64(DS_OK, ds_attach_pebs(&a, &config)) &&
	       host_check_eq_i64(0, pmu_add_sampling_event(TASK_A, &pebs, PERIOD));
}

/*
 * Switch-in: the area, then PEBS_ENABLE (ds/), then the counter and GLOBAL_CTRL last (pmu/), so
 * that the PEBS counter starts with its bit and area in place (rule 18: PEBS_ENABLE before
 * GLOBAL_CTRL). Switch-out: the counter stops (pmu/) before PEBS_ENABLE and the area go (ds/).
 */
SHIM_TEST(debugstate_host_a_pebs_task_switches_with_its_counters_stopped_around_pebs_enable,
	  "icelake")
{
	struct ds_target a = { false, TASK_A };
	uint64_t select, reload, area;

	shim_boot();
	if (!pebs_task())
		return;
	area = (uint64_t)ds_area_get(&a);
	select = pmu_evtsel_encode(&instructions, true);
	reload = (0 - (uint64_t)PERIOD) & emulator_counter_mask(shim_profile(), false);
	shim_check_no_writes(); /* TASK_A is not running */
	shim_switch(0, TASK_A);
	shim_check_writes({ MSR_IA32_DS_AREA, area }, { MSR_IA32_PEBS_ENABLE, 1 },
			  { MSR_IA32_PERFEVTSEL0, select }, { MSR_IA32_A_PMC0, reload },
			  { MSR_IA32_PERF_GLOBAL_CTRL, 1 });
	shim_log_clear();
	shim_switch(TASK_A, 0);
	/* To a task without counters: its empty programming before ds/'s switch-in (rule 15). */
	shim_check_writes({ MSR_IA32_PERF_GLOBAL_CTRL, 0 }, { MSR_IA32_PERFEVTSEL0, 0 },
			  { MSR_IA32_PEBS_ENABLE, 0 }, { MSR_IA32_DS_AREA, 0 });
	host_check(pmu_release(TASK_A));
	host_check_eq_u64(DS_OK, ds_detach(&a, DS_USER_PEBS));
	shim_check_clean();
}

/* An ended task that was running: its counter stops (pmu/) before its PEBS bit goes (ds/). */
SHIM_TEST(debugstate_host_an_exiting_pebs_task_stops_its_counter_before_its_pebs_bit, "icelake")
{
	struct switch_task a = shim_task(TASK_A);

	shim_boot();
	if (!pebs_task())
		return;
	shim_switch(0, TASK_A);
	shim_log_clear();
	switch_hooks_run_exit(&a);
	shim_check_writes({ MSR_IA32_PERF_GLOBAL_CTRL, 0 }, { MSR_IA32_PERFEVTSEL0, 0 },
			  { MSR_IA32_PEBS_ENABLE, 0 }, { MSR_IA32_DS_AREA, 0 });
	host_check(ds_area_get(&(struct ds_target){ false, TASK_A }) == NULL);
	host_check(pmu_idle());
	shim_check_clean();
}

/*
 * A PMI for a BTS threshold and a sampling counter's overflow at once: counters stopped and BTS
 * off, the area drained and BUFFER_OVF acknowledged, the counter reloaded and its overflow
 * acknowledged, BTS on and counters restarted, in that order (intel_pmu_handle_irq(), with
 * intel_bts_disable_local() and intel_bts_enable_local() inside the counters' stop and start).
 */
SHIM_TEST(debugstate_host_a_pmi_stops_drains_reloads_acknowledges_and_restarts_in_order, "icelake")
{
	struct emulator_registers *r = shim_registers(0);
	struct ds_target self = { false, 0 };
	struct ds_bts_config bts = { .records = 64, .threshold_records = 2 };
	uint64_t reload = (0 - (uint64_t)PERIOD) & emulator_counter_mask(shim_profile(), false);
	const struct ds_area *area;

	shim_boot();
	if (!host_check_eq_u64(DS_OK, ds_attach_bts(&self, &bts)) ||
	    !host_check_eq_i64(0, pmu_add_sampling_event(0, &instructions, PERIOD)))
		return;
	area = ds_area_get(&self);
	shim_bts_store(0x1000, 0x2000);
	shim_bts_store(0x3000, 0x4000); /* the threshold: BUFFER_OVF */
	r->global_status |= 1; /* and GP counter 0 wrapped */
	shim_log_clear();
	shim_pmi();
	shim_check_writes({ MSR_IA32_PERF_GLOBAL_CTRL, 0 }, { MSR_IA32_DEBUGCTL, 0 },
			  { MSR_IA32_PERF_GLOBAL_OVF_CTRL, PERF_GLOBAL_STATUS_BUFFER_OVF },
			  { MSR_IA32_A_PMC0, reload }, { MSR_IA32_PERF_GLOBAL_OVF_CTRL, 1 },
			  { MSR_IA32_DEBUGCTL, BTS_ARMED }, { MSR_IA32_PERF_GLOBAL_CTRL, 1 });
	host_check_eq_u64(0, r->global_status);
	host_check_eq_u64(area->bts_base, area->bts_index);
	host_check_eq_u64(2, ds_credit(0).bts_records);
	host_check_eq_u64(1, pmu_read(0, 0).overflows);
	host_check(pmu_release(0));
	host_check_eq_u64(DS_OK, ds_detach(&self, DS_USER_BTS));
	shim_check_clean();
}
