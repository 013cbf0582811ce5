/* SPDX-License-Identifier: MIT */
/* ds suite: one DS area shared by BTS and PEBS, independent teardown, and no leaks. */
#include "arch/x86/debugctl.h"
#include "arch/x86/msr.h"
#include "arch/x86/paging.h"
#include "arch/x86/tsc.h"
#include "kernel/pfa.h"
#include "tests/kernel/lib/budget.h"
#include "tests/kernel/lib/ds_util.h"
#include "tests/kernel/lib/emulator_util.h"

/*
 * Attach-detach cycles: budget=quick 2,000 within CYCLE_QUICK_MS, budget=soak 10,000 within
 * CYCLE_SOAK_MS. TCG runs 2,000 in 10 to 40 ms; KVM-PVM about 200 a second, as each cycle maps
 * and zeroes pages there (docs/platforms.md), so its quick run stops at the time budget.
 */
#define CYCLES_QUICK 2000
#define CYCLES_SOAK 10000
#define CYCLE_QUICK_MS 1000
#define CYCLE_SOAK_MS 5000
#define PROBE_ROUNDS 4

static const struct ds_bts_config bts = { .records = 16, .circular = true };
static struct ds_area stray_area __attribute__((aligned(PAGE_SIZE))); /* none of ds/'s */

static void require_bts_and_pebs(void)
{
	require_bts();
	if (ds_support()->pebs_reason[0])
		test_skip("%s", ds_support()->pebs_reason);
}

static void stay_stopped(void *unused)
{
	(void)unused;
}

/*
 * BTS traces ring 3 only where DS-CPL allows: what is shared is the area and the configuration,
 * whatever BTS traces, and where the CPU is emulated the kernel is then not stepped.
 */
TEST_OBSERVING(ds, bts_and_pebs_users_share_one_ds_area, 3800)
{
	struct ds_bts_config bts_user = { .records = 16,
					  .circular = true,
					  .off_os = ds_support()->ds_cpl };
	struct ds_pebs_config pebs = pebs_config(8, 4, 1000);
	struct ds_target target = self_target();
	struct ds_area *area;

	require_bts_and_pebs();
	check_attached(ds_attach_bts(&target, &bts_user));
	area = ds_area_get(&target);
	check_attached(ds_attach_pebs(&target, &pebs));
	check(ds_area_get(&target) == area, "the PEBS user got a second area");
	check(area->bts_base && area->pebs_base && area->bts_base != area->pebs_base,
	      "buffers 0x%llx and 0x%llx", (unsigned long long)area->bts_base,
	      (unsigned long long)area->pebs_base);
	check_eq(DS_ERROR_BUSY, ds_attach_bts(&target, &bts));
	check_eq(DS_ERROR_BUSY, ds_attach_pebs(&target, &pebs));
	check_eq((uint64_t)area, rdmsr(MSR_IA32_DS_AREA));
	check_eq(pebs.enable, rdmsr(MSR_IA32_PEBS_ENABLE));
	check_eq(DS_OK, ds_detach(&target, DS_USER_PEBS));
	check_eq(DS_OK, ds_detach(&target, DS_USER_BTS));
}

TEST_OBSERVING(ds, bts_user_keeps_working_after_the_pebs_user_leaves, 3900)
{
	struct ds_pebs_config pebs = pebs_config(8, 4, 1000);
	struct ds_target target = self_target();
	struct probe_run run;
	struct ds_area *area;

	require_bts_and_pebs();
	/* PEBS first: BTS traces (and, where the CPU is emulated, steps) from its attach on. */
	check_attached(ds_attach_pebs(&target, &pebs));
	check_attached(ds_attach_bts(&target, &bts));
	area = ds_area_get(&target);
	check_eq(DS_OK, ds_detach(&target, DS_USER_PEBS));
	check(ds_area_get(&target) == area, "the area went with the PEBS user");
	check_eq(0, area->pebs_base);
	check_eq(0, rdmsr(MSR_IA32_PEBS_ENABLE));
	check_eq((uint64_t)area, rdmsr(MSR_IA32_DS_AREA));
	probe_run(area, PROBE_ROUNDS, &run);
	check_probe_run(&run, PROBE_ROUNDS);
	check_eq(DS_OK, ds_detach(&target, DS_USER_BTS));
	check(ds_area_get(&target) == NULL, "the area outlived its last user");
	check_eq(DS_ERROR_NOT_ATTACHED, ds_detach(&target, DS_USER_BTS));
}

/* On a stopped task's target: the areas are laid out, never handed to the CPU, never traced. */
TEST(ds, thousands_of_attach_and_detach_cycles_leak_nothing)
{
	struct ds_bts_config interrupt = { .records = 16, .threshold_records = 8 };
	struct ds_pebs_config pebs = pebs_config(8, 4, 1000);
	bool with_pebs = !ds_support()->pebs_reason[0]; /* else BTS alone */
	uint64_t start, deadline;
	unsigned int cycles = 0, wanted = (unsigned int)budget_count(CYCLES_QUICK, CYCLES_SOAK);
	struct ds_target target;
	struct task *task;
	size_t free_before;

	require_bts(); /* without it every attach is refused (DS_ERROR_UNSUPPORTED) */
	task = task_create("never runs", stay_stopped, NULL, TASK_START_STOPPED);
	start = rdtsc_ordered();
	deadline = start + tsc_cycles_from_ms(budget_ms(CYCLE_QUICK_MS, CYCLE_SOAK_MS));
	if (!task)
		test_abort("task_create failed");
	target = task_target(task);
	free_before = pfa_free_count();
	for (; cycles < wanted && rdtsc_ordered() < deadline; cycles++) {
		if (ds_attach_bts(&target, &interrupt) != DS_OK ||
		    (with_pebs && ds_attach_pebs(&target, &pebs) != DS_OK))
			break;
		if (with_pebs && cycles % 2 == 0)
			ds_detach(&target, DS_USER_PEBS); /* either user may leave first */
		ds_detach(&target, DS_USER_BTS);
		if (with_pebs && cycles % 2)
			ds_detach(&target, DS_USER_PEBS);
	}
	test_diag("metric ds.attach_detach_cycles cycles=%u pebs=%d milliseconds=%llu", cycles,
		  with_pebs, (unsigned long long)((rdtsc_ordered() - start) * 1000 / tsc_hz()));
	check(cycles == wanted || rdtsc_ordered() >= deadline, "attach failed at cycle %u", cycles);
	check_eq(free_before, pfa_free_count());
	check(ds_area_get(&target) == NULL, "an area was left behind");
	task_continue(task);
	check_eq(0, task_join(task, NULL));
}

TEST(ds, impossible_buffers_are_refused)
{
	struct ds_target target = self_target();
	struct ds_bts_config empty = { .records = 0, .circular = true };
	struct ds_bts_config threshold = { .records = 4, .threshold_records = 5 };
	struct ds_bts_config no_room = { .records = 16, .threshold_records = 16 };
	struct ds_bts_config huge = { .records = 100000, .circular = true }; /* 2.4 MB */
	struct ds_pebs_config pebs = pebs_config(8, 4, 1000);

	require_bts(); /* without it every attach is refused (DS_ERROR_UNSUPPORTED) */
	check_eq(DS_ERROR_CONFIG, ds_attach_bts(&target, &empty));
	check_eq(DS_ERROR_CONFIG, ds_attach_bts(&target, &threshold));
	check_eq(DS_ERROR_CONFIG, ds_attach_bts(&target, &no_room)); /* a PMI would lose records */
	check_eq(DS_ERROR_NO_MEMORY, ds_attach_bts(&target, &huge));
	if (!ds_support()->pebs_reason[0]) {
		pebs.format++; /* a layout this CPU does not write */
		check_eq(DS_ERROR_CONFIG, ds_attach_pebs(&target, &pebs));
		pebs = pebs_config(100000, 4, 1000);
		/* Format 0 refuses it first: its buffer fits one page (ds/context.c). */
		check_eq(pebs.format == PEBS_FORMAT_0 ? DS_ERROR_CONFIG : DS_ERROR_NO_MEMORY,
			 ds_attach_pebs(&target, &pebs));
	}
	check(ds_area_get(&target) == NULL, "a refused request left an area");
}

/*
 * After a write behind ds/'s back, ds_registers_rewrite() puts back what ds/ holds in the SDM's
 * order: IA32_DS_AREA is written before BTS or PEBS is enabled (SDM "Setting Up the DS Save
 * Area"), and not replaced while either is on. First the test turns both off and clears the
 * area behind ds/'s back, as a test that wrote the MSRs itself would leave them; then, with
 * ds/ holding nothing, it leaves PEBS on over an area of its own. The emulated CPU reports
 * either order broken (rules 19 and 4). BTS traces ring 3 only where DS-CPL allows, so the
 * kernel is not stepped.
 */
TEST_OBSERVING(ds, registers_rewritten_behind_its_back_keep_the_sdm_order, 3800)
{
	struct ds_bts_config bts_user = { .records = 16,
					  .circular = true,
					  .off_os = ds_support()->ds_cpl };
	struct ds_pebs_config pebs = pebs_config(8, 4, 1000);
	bool with_bts = !ds_support()->bts_reason[0], with_pebs = !ds_support()->pebs_reason[0];
	struct ds_target target = self_target();
	char text[EMULATOR_VIOLATION_MAX];
	struct ds_registers held;
	uint64_t area, debugctl, pebs_enable = 0;
	unsigned long flags;
	unsigned int reported;

	require_emulator();
	if (!with_bts && !with_pebs)
		test_skip("%s; %s", ds_support()->bts_reason, ds_support()->pebs_reason);
	if (with_bts)
		check_attached(ds_attach_bts(&target, &bts_user));
	if (with_pebs)
		check_attached(ds_attach_pebs(&target, &pebs));
	flags = local_irq_save();
	held = ds_registers();
	if (with_pebs)
		wrmsr(MSR_IA32_PEBS_ENABLE, 0);
	wrmsr(MSR_IA32_DEBUGCTL, debugctl_shadow() & ~held.debugctl);
	wrmsr(MSR_IA32_DS_AREA, 0);
	emulator_take_violations(NULL, 0);
	ds_registers_rewrite();
	reported = emulator_take_violations(text, sizeof(text));
	area = rdmsr(MSR_IA32_DS_AREA);
	debugctl = rdmsr(MSR_IA32_DEBUGCTL);
	if (with_pebs)
		pebs_enable = rdmsr(MSR_IA32_PEBS_ENABLE);
	local_irq_restore(flags);
	test_diag("reported: %s", reported ? text : "nothing");
	check_eq(0, reported);
	check_eq(held.ds_area, area);
	check_eq(held.debugctl, debugctl & held.debugctl);
	check_eq(held.pebs_enable, pebs_enable);
	if (with_pebs)
		check_eq(DS_OK, ds_detach(&target, DS_USER_PEBS));
	if (with_bts)
		check_eq(DS_OK, ds_detach(&target, DS_USER_BTS));
	if (!with_pebs)
		return;
	flags = local_irq_save();
	wrmsr(MSR_IA32_DS_AREA, (uint64_t)&stray_area);
	wrmsr(MSR_IA32_PEBS_ENABLE, pebs.enable);
	emulator_take_violations(NULL, 0);
	ds_registers_rewrite();
	reported = emulator_take_violations(text, sizeof(text));
	area = rdmsr(MSR_IA32_DS_AREA);
	pebs_enable = rdmsr(MSR_IA32_PEBS_ENABLE);
	local_irq_restore(flags);
	test_diag("turning off, reported: %s", reported ? text : "nothing");
	check_eq(0, reported);
	check_eq(0, area);
	check_eq(0, pebs_enable);
}
