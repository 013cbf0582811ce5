/* SPDX-License-Identifier: MIT */
/* Host tests of pmu/ on the emulated CPU: boot, the switch plans' writes, rotation, the PMI. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "arch/x86/msr-index.h"
#include "emulator/profile.h"
#include "pmu/event.h"
#include "pmu/pmu.h"
#include "tests/host/console_capture.h"
#include "tests/host/shim/shim.h"

#define TASK_A 1
#define TASK_B 2
#define PERIOD 1000

static const struct pmu_event instructions = { .event = 0xc0, .user = true, .kernel = true };
static const struct pmu_event branches = { .event = 0xc4, .user = true, .kernel = true };
static const struct pmu_event cycles = { .event = 0x3c, .user = true, .kernel = true };

static bool console_has(const char *text)
{
	return host_checkf(strstr(console_capture_text(), text) != NULL,
			   "the console lacks \"%s\"; it has:\n%s", text, console_capture_text());
}

/* What firmware left (emulator/registers.c, leftovers:1): EVTSEL0, fixed 1 and 2, running. */
static void check_init_stops_leftovers(unsigned int gp)
{
	const struct emulator_registers *r = shim_registers(0);

	host_check(r->evtsel[0] != 0 && r->fixed_ctrl != 0 && r->global_ctrl != 0);
	pmu_init();
	host_check(pmu_usable());
	/* GLOBAL_CTRL, FIXED_CTR_CTRL, then the select of each GP counter there is. */
	shim_check_writes_at(
		__FILE__, __LINE__,
		SHIM_WRITE_LIST({ MSR_IA32_PERF_GLOBAL_CTRL, 0 }, { MSR_IA32_FIXED_CTR_CTRL, 0 },
				{ MSR_IA32_PERFEVTSEL0, 0 }, { MSR_IA32_PERFEVTSEL0 + 1, 0 },
				{ MSR_IA32_PERFEVTSEL0 + 2, 0 }, { MSR_IA32_PERFEVTSEL0 + 3, 0 },
				{ MSR_IA32_PERFEVTSEL0 + 4, 0 }, { MSR_IA32_PERFEVTSEL0 + 5, 0 },
				{ MSR_IA32_PERFEVTSEL0 + 6, 0 }, { MSR_IA32_PERFEVTSEL0 + 7, 0 }),
		2 + gp);
	host_check_eq_u64(0, r->global_ctrl | r->fixed_ctrl);
	for (unsigned int i = 0; i < EMULATOR_MAX_GP; i++)
		host_check_eq_u64(0, r->evtsel[i]);
	host_check(pmu_idle());
	console_has("pmu: CPU 0 started with GLOBAL_CTRL=0x6000000");
	console_has("FIXED_CTR_CTRL=0x330");
	console_has("pmu: CPU 0 started with PERFEVTSEL0=0x43003c");
	host_check_eq_u64(0, shim_pmi_hooks()); /* debugstate_init() registers the PMI */
	host_check_eq_u64(1, shim_timer_hooks());
}

SHIM_TEST(pmu_host_init_stops_the_counters_firmware_left_running, "icelake,leftovers:1")
{
	check_init_stops_leftovers(8);
	/* Each other CPU as it starts, on its own MSRs. */
	shim_set_cpus(2);
	shim_set_cpu(1);
	shim_log_clear();
	pmu_init_cpu();
	host_check_eq_u64(10, shim_writes());
	for (size_t i = 0; i < shim_writes(); i++)
		host_check_eq_u64(1, shim_write_at(i)->cpu);
	host_check_eq_u64(0, shim_registers(1)->global_ctrl | shim_registers(1)->evtsel[0]);
}

SHIM_TEST(pmu_host_init_on_core2_stops_only_the_counters_it_has, "core2,leftovers:1")
{
	check_init_stops_leftovers(2);
}

SHIM_TEST(pmu_host_init_out_of_reset_clears_global_ctrl, "icelake")
{
	/* GLOBAL_CTRL comes out of reset with the GP enables set (SDM since 2023). */
	host_check_eq_u64(0xff, shim_registers(0)->global_ctrl);
	pmu_init();
	host_check_eq_u64(0, shim_registers(0)->global_ctrl);
	host_check(shim_writes() > 0 && shim_write_at(0)->msr == MSR_IA32_PERF_GLOBAL_CTRL);
}

/* The planner's order (pmu/switch.h): stop, selects, FIXED_CTR_CTRL, counts, start. */
static void check_add_and_release(uint32_t count_msr)
{
	uint64_t select0 = pmu_evtsel_encode(&instructions, true);
	uint64_t select1 = pmu_evtsel_encode(&branches, true);

	shim_boot();
	if (!host_check_eq_i64(0, pmu_add_event(0, &instructions)))
		return;
	shim_check_writes({ MSR_IA32_PERFEVTSEL0, select0 }, { count_msr, 0 },
			  { MSR_IA32_PERF_GLOBAL_CTRL, 1 });
	shim_registers(0)->counter[0] += 5000; /* the CPU counts */
	host_check_eq_u64(5000, pmu_read(0, 0).count);
	shim_log_clear();
	if (!host_check_eq_i64(1, pmu_add_event(0, &branches)))
		return;
	/* Counter 0 keeps running: its setup does not change. */
	shim_check_writes({ MSR_IA32_PERFEVTSEL0 + 1, select1 }, { count_msr + 1, 0 },
			  { MSR_IA32_PERF_GLOBAL_CTRL, 3 });
	shim_registers(0)->counter[0] += 10;
	shim_registers(0)->counter[1] += 7;
	shim_log_clear();
	host_check(pmu_release(0));
	shim_check_writes({ MSR_IA32_PERF_GLOBAL_CTRL, 0 }, { MSR_IA32_PERFEVTSEL0, 0 },
			  { MSR_IA32_PERFEVTSEL0 + 1, 0 });
	host_check(pmu_idle());
}

SHIM_TEST(pmu_host_adding_events_writes_select_count_then_global_ctrl, "icelake")
{
	check_add_and_release(MSR_IA32_A_PMC0); /* full-width writes */
}

SHIM_TEST(pmu_host_adding_events_without_full_width_loads_the_legacy_pmc, "nehalem")
{
	check_add_and_release(MSR_IA32_PMC0);
}

/*
 * Linux's max_period: without full-width writes a legacy PMCx write sign-extends bit 31, so a
 * period of 2^31 would load a positive count, which never overflows where it should; with them,
 * the counter's top bit must start set. Longer periods are refused, the longest is loaded exactly.
 */
static void check_max_period(uint64_t max_period)
{
	shim_boot();
	host_check_eq_u64(max_period, pmu_max_period());
	host_check_eq_i64(-1, pmu_add_sampling_event(0, &instructions, max_period + 1));
	if (!host_check_eq_i64(0, pmu_add_sampling_event(0, &instructions, max_period)))
		return;
	shim_switch(0, TASK_A);
	shim_switch(TASK_A, 0);
	host_check_eq_u64((0 - max_period) & ((1ull << 48) - 1), shim_registers(0)->counter[0]);
	host_check(pmu_release(0));
}

SHIM_TEST(pmu_host_sampling_periods_stop_below_2_to_the_31_without_full_width, "nehalem")
{
	check_max_period((1ull << 31) - 1);
}

SHIM_TEST(pmu_host_sampling_periods_stop_below_the_counters_top_bit_with_full_width, "icelake")
{
	check_max_period((1ull << 47) - 1);
}

SHIM_TEST(pmu_host_a_fixed_event_writes_its_field_count_and_global_bit, "icelake")
{
	uint64_t field = pmu_fixed_ctrl_encode(1, &cycles);

	shim_boot();
	if (!host_check_eq_i64(0, pmu_add_fixed_event(0, 1, &cycles)))
		return;
	shim_check_writes({ MSR_IA32_FIXED_CTR_CTRL, field }, { MSR_IA32_FIXED_CTR0 + 1, 0 },
			  { MSR_IA32_PERF_GLOBAL_CTRL, PERF_GLOBAL_FIXED_CTR0 << 1 });
	shim_log_clear();
	host_check(pmu_release(0));
	shim_check_writes({ MSR_IA32_PERF_GLOBAL_CTRL, 0 }, { MSR_IA32_FIXED_CTR_CTRL, 0 });
}

SHIM_TEST(pmu_host_two_tasks_with_identical_events_switch_without_a_write, "icelake")
{
	uint64_t select = pmu_evtsel_encode(&instructions, true);

	shim_boot();
	if (!host_check_eq_i64(0, pmu_add_event(TASK_A, &instructions)) ||
	    !host_check_eq_i64(0, pmu_add_event(TASK_B, &instructions)))
		return;
	shim_check_no_writes(); /* neither runs */
	shim_switch(0, TASK_A);
	shim_check_writes({ MSR_IA32_PERFEVTSEL0, select }, { MSR_IA32_A_PMC0, 0 },
			  { MSR_IA32_PERF_GLOBAL_CTRL, 1 });
	shim_log_clear();
	shim_registers(0)->counter[0] += 100;
	shim_switch(TASK_A, TASK_B);
	shim_registers(0)->counter[0] += 50;
	shim_switch(TASK_B, TASK_A);
	shim_registers(0)->counter[0] += 1;
	shim_check_no_writes();
	/* Delta accounting: each task has what counted while it ran. */
	host_check_eq_u64(101, pmu_read(TASK_A, 0).count);
	host_check_eq_u64(50, pmu_read(TASK_B, 0).count);
	shim_switch(TASK_A, 0);
	shim_check_writes({ MSR_IA32_PERF_GLOBAL_CTRL, 0 }, { MSR_IA32_PERFEVTSEL0, 0 });
	host_check(pmu_release(TASK_A) && pmu_release(TASK_B));
	host_check(pmu_idle());
}

/* Core 2 has two GP counters: a third event rotates in, one counter reprogrammed, stopped. */
SHIM_TEST(pmu_host_a_rotation_reprograms_one_counter_while_it_is_stopped, "core2")
{
	uint64_t select_cycles = pmu_evtsel_encode(&cycles, true);

	shim_boot();
	if (!host_check_eq_i64(0, pmu_add_event(0, &instructions)) ||
	    !host_check_eq_i64(1, pmu_add_event(0, &branches)) ||
	    !host_check_eq_i64(2, pmu_add_event(0, &cycles)))
		return;
	shim_log_clear();
	shim_tick();
	shim_check_writes({ MSR_IA32_PERF_GLOBAL_CTRL, 2 }, { MSR_IA32_PERFEVTSEL0, select_cycles },
			  { MSR_IA32_PERF_GLOBAL_CTRL, 3 });
	host_check(pmu_release(0));
	host_check(pmu_idle());
}

/*
 * The PMI (SDM Vol. 3B 21.8, Linux intel_pmu_handle_irq()): counters off first, each sampling
 * counter reloaded, every counter overflow in GLOBAL_STATUS acknowledged, counters on last.
 */
SHIM_TEST(pmu_host_the_pmi_stops_acknowledges_every_overflow_and_restarts_last, "icelake")
{
	struct emulator_registers *r = shim_registers(0);
	uint64_t reload = (0 - (uint64_t)PERIOD) & emulator_counter_mask(shim_profile(), false);
	uint64_t status = (1ull << 0) | (1ull << 1) | PERF_GLOBAL_FIXED_CTR0;

	shim_boot();
	if (!host_check_eq_i64(0, pmu_add_sampling_event(0, &instructions, PERIOD)) ||
	    !host_check_eq_i64(1, pmu_add_event(0, &branches)))
		return;
	host_check_eq_u64(reload, r->counter[0]);
	host_check(r->evtsel[0] & EVTSEL_INT);
	r->global_status = status; /* both GP counters and fixed counter 0 wrapped */
	shim_log_clear();
	shim_pmi();
	shim_check_writes({ MSR_IA32_PERF_GLOBAL_CTRL, 0 }, { MSR_IA32_A_PMC0, reload },
			  { MSR_IA32_PERF_GLOBAL_OVF_CTRL, status },
			  { MSR_IA32_PERF_GLOBAL_CTRL, 3 });
	host_check_eq_u64(0, r->global_status);
	host_check_eq_u64(1, pmu_read(0, 0).overflows);
	host_check_eq_u64(0, pmu_read(0, 1).overflows);
	/* Nothing overflowed: stopped and restarted, nothing acknowledged. */
	shim_log_clear();
	shim_pmi();
	shim_check_writes({ MSR_IA32_PERF_GLOBAL_CTRL, 0 }, { MSR_IA32_PERF_GLOBAL_CTRL, 3 });
	host_check(pmu_release(0));
	host_check(pmu_idle());
}

/*
 * A PEBS sampling event (Linux handle_pmi_common() ignores PEBS-enabled status bits): no INT
 * ("Do NOT set local counter PMI/INT bit", SDM "Requirements to Program PEBS"), and a PMI that
 * finds its status bit set acknowledges it but neither counts an overflow nor reloads the
 * counter, which the PEBS assist reloads from its reset slot.
 */
SHIM_TEST(pmu_host_a_pebs_event_has_no_int_and_the_pmi_leaves_its_counter_alone, "icelake")
{
	struct emulator_registers *r = shim_registers(0);
	struct pmu_event pebs = instructions;
	uint64_t reload = (0 - (uint64_t)PERIOD) & emulator_counter_mask(shim_profile(), false);

	pebs.pebs = true;
	shim_boot();
	if (!host_check_eq_i64(0, pmu_add_sampling_event(0, &pebs, PERIOD)))
		return;
	host_check_eq_u64(reload, r->counter[0]);
	host_check_eq_u64(0, r->evtsel[0] & EVTSEL_INT);
	r->global_status = 1; /* it overflowed: PEBS is armed */
	shim_log_clear();
	shim_pmi();
	shim_check_writes({ MSR_IA32_PERF_GLOBAL_CTRL, 0 }, { MSR_IA32_PERF_GLOBAL_OVF_CTRL, 1 },
			  { MSR_IA32_PERF_GLOBAL_CTRL, 1 });
	host_check_eq_u64(0, pmu_read(0, 0).overflows);
	host_check(pmu_release(0));
	host_check(pmu_idle());
}

/*
 * A sampling event on a counter the caller names (pmu_add_sampling_event_on(), for a PEBS user
 * of that counter): GP counter 5 gets the event's select with INT and -period; fixed counter 1
 * its field with the PMI bit (Linux intel_pmu_enable_fixed(): 0x8 unless PEBS) and -period at
 * the fixed counters' width; a PMI that finds fixed counter 1's status bit reloads it and counts
 * the overflow. A PEBS event on a fixed counter has no PMI bit. A second event, a counter that
 * does not exist, a period beyond the counter's half are refused.
 */
SHIM_TEST(pmu_host_a_sampling_event_goes_on_the_gp_or_fixed_counter_named, "icelake")
{
	struct emulator_registers *r = shim_registers(0);
	uint64_t gp_reload = (0 - (uint64_t)PERIOD) & emulator_counter_mask(shim_profile(), false);
	uint64_t fixed_mask = emulator_counter_mask(shim_profile(), true);
	uint64_t fixed_reload = (0 - (uint64_t)PERIOD) & fixed_mask;
	uint64_t fixed_1 = PERF_GLOBAL_FIXED_CTR0 << 1;
	struct pmu_event pebs = instructions;

	pebs.pebs = true;
	shim_boot();
	host_check_eq_i64(-1, pmu_add_sampling_event_on(0, 8, &instructions, PERIOD));
	host_check_eq_i64(-1, pmu_add_sampling_event_on(0, 32 + 4, &instructions, PERIOD));
	host_check_eq_i64(-1, pmu_add_sampling_event_on(0, 33, &instructions, fixed_mask));
	if (!host_check_eq_i64(0, pmu_add_sampling_event_on(0, 5, &instructions, PERIOD)))
		return;
	host_check_eq_u64(gp_reload, r->counter[5]);
	host_check(r->evtsel[5] & EVTSEL_INT);
	host_check_eq_u64(0, r->evtsel[0]);
	host_check_eq_u64(1u << 5, r->global_ctrl);
	host_check_eq_i64(-1, pmu_add_sampling_event_on(0, 33, &instructions, PERIOD));
	host_check(pmu_release(0));
	if (!host_check_eq_i64(0, pmu_add_sampling_event_on(0, 33, &cycles, PERIOD)))
		return;
	host_check_eq_u64(fixed_reload, r->fixed_counter[1]);
	host_check_eq_u64((uint64_t)(FIXED_CTRL_OS | FIXED_CTRL_USR | FIXED_CTRL_PMI)
				  << FIXED_CTRL_FIELD_SIZE,
			  r->fixed_ctrl);
	host_check_eq_u64(fixed_1, r->global_ctrl);
	r->global_status = fixed_1;
	r->fixed_counter[1] = 3; /* it wrapped and counted on */
	shim_log_clear();
	shim_pmi();
	shim_check_writes(
		{ MSR_IA32_PERF_GLOBAL_CTRL, 0 }, { MSR_IA32_FIXED_CTR0 + 1, fixed_reload },
		{ MSR_IA32_PERF_GLOBAL_OVF_CTRL, fixed_1 }, { MSR_IA32_PERF_GLOBAL_CTRL, fixed_1 });
	host_check_eq_u64(1, pmu_read(0, 0).overflows);
	host_check(pmu_release(0));
	if (!host_check_eq_i64(0, pmu_add_sampling_event_on(0, 33, &pebs, PERIOD)))
		return;
	host_check_eq_u64((uint64_t)(FIXED_CTRL_OS | FIXED_CTRL_USR) << FIXED_CTRL_FIELD_SIZE,
			  r->fixed_ctrl);
	host_check_eq_u64(fixed_reload, r->fixed_counter[1]);
	host_check(pmu_release(0));
	host_check(pmu_idle());
}

/*
 * A sampling period goes on across switches: what the counter had left when its task left is
 * what it gets back (Linux: period_left), not a new period. One that wrapped starts a new one.
 */
SHIM_TEST(pmu_host_a_sampling_counter_keeps_what_was_left_of_its_period_across_a_switch, "icelake")
{
	struct emulator_registers *r = shim_registers(0);
	uint64_t mask = emulator_counter_mask(shim_profile(), false);

	shim_boot();
	if (!host_check_eq_i64(0, pmu_add_sampling_event(TASK_A, &instructions, PERIOD)))
		return;
	shim_switch(0, TASK_A);
	host_check_eq_u64((0 - (uint64_t)PERIOD) & mask, r->counter[0]);
	r->counter[0] += 300; /* 700 left */
	shim_switch(TASK_A, TASK_B);
	r->counter[0] += 5; /* stopped: TASK_B counts nothing */
	shim_log_clear();
	shim_switch(TASK_B, TASK_A);
	host_check_eq_u64((0 - 700ull) & mask, r->counter[0]);
	r->counter[0] = 3; /* wrapped: its overflow is the PMI's */
	shim_switch(TASK_A, TASK_B);
	shim_switch(TASK_B, TASK_A);
	host_check_eq_u64((0 - (uint64_t)PERIOD) & mask, r->counter[0]);
	shim_switch(TASK_A, 0);
	host_check(pmu_release(TASK_A));
	host_check(pmu_idle());
}

/* Firmware that turned perfmon off (IA32_MISC_ENABLE bit 7 clear): pmu/ stays out, and says why. */
SHIM_TEST(pmu_host_perfmon_turned_off_by_firmware_is_refused_with_its_reason,
	  "icelake,perfmon_available:0")
{
	shim_boot();
	host_check(!pmu_usable());
	host_check_str("IA32_MISC_ENABLE.PERFMON_AVAILABLE=0 (firmware turned performance "
		       "monitoring off)",
		       pmu_info()->reason);
	host_check_eq_i64(-1, pmu_add_event(0, &instructions));
}

/* Perfmon version 1 has no GLOBAL_CTRL (its MSRs #GP): pmu/ stays out, and says why. */
SHIM_TEST(pmu_host_perfmon_version_1_is_refused_with_its_reason, "icelake,fixed:0,perfmon:1")
{
	shim_boot();
	host_check(!pmu_usable());
	host_check_str(
		"CPUID.0AH:EAX[7:0]=1: perfmon version 1 has no GLOBAL_CTRL, which pmu/ uses",
		pmu_info()->reason);
	console_has("# pmu: CPUID.0AH:EAX[7:0]=1: perfmon version 1");
	host_check_eq_u64(1, shim_pmi_hooks()); /* ds/'s alone */
	host_check_eq_u64(0, shim_timer_hooks());
	host_check_eq_i64(-1, pmu_add_event(0, &instructions));
	host_check_eq_i64(-1, pmu_add_sampling_event(0, &instructions, PERIOD));
	pmu_init_cpu();
	shim_switch(0, TASK_A);
	shim_check_no_writes();
}
