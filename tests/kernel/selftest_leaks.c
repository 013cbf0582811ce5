/* SPDX-License-Identifier: MIT */
/* leaks suite (manual): a test that leaves state behind fails itself, and the next starts clean. */
#include "arch/x86/apic.h"
#include "arch/x86/cpuid.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/msr-index.h"
#include "arch/x86/msr.h"
#include "arch/x86/percpu.h"
#include "arch/x86/probe.h"
#include "ds/ds.h"
#include "pmu/pmu.h"
#include "runner/test.h"
#include "sched/sched.h"
#include "tests/kernel/db_trace.h"

/*
 * Run with tests=leaks.*: each leaks_* test leaves something behind and must fail with the
 * runner's message; each finds_* test after it must pass, finding nothing of it.
 */
static struct ds_target self(void)
{
	return (struct ds_target){ false, sched_current()->index };
}

TEST_FLAGS(leaks, leaks_a_debug_store_user, TEST_MANUAL)
{
	struct ds_bts_config config = { .records = 16, .circular = true };
	struct ds_target target = self();

	if (ds_support()->bts_reason[0])
		test_skip("%s", ds_support()->bts_reason);
	check_eq(DS_OK, ds_attach_bts(&target, &config));
}

TEST_FLAGS(leaks, finds_no_debug_store_user, TEST_MANUAL)
{
	struct ds_target target = self();
	struct ds_registers registers = ds_registers();

	check(ds_area_get(&target) == NULL, "an area is still attached");
	check_eq(0, registers.ds_area);
	check_eq(0, registers.debugctl);
}

TEST_FLAGS(leaks, leaks_a_counter, TEST_MANUAL)
{
	static const struct pmu_event instructions = { .event = 0xc0, .kernel = true };

	if (!pmu_usable())
		test_skip("%s", pmu_info()->reason);
	check_eq(0, pmu_add_event(sched_current()->index, &instructions));
}

TEST_FLAGS(leaks, finds_no_counter, TEST_MANUAL)
{
	if (!pmu_usable())
		test_skip("%s", pmu_info()->reason);
	check(pmu_idle(), "a counter is still enabled");
	check_eq(0, pmu_read(sched_current()->index, 0).time_enabled);
}

/* The last GP counter, counting kernel instructions, enabled by hand behind pmu/'s back. */
TEST_FLAGS(leaks, leaks_a_counter_enabled_behind_pmus_back, TEST_MANUAL)
{
	unsigned int counter = CPUID_PERFMON_GP_COUNTERS(cpuid(CPUID_LEAF_PERFMON, 0).eax) - 1;

	if (!pmu_usable())
		test_skip("%s", pmu_info()->reason);
	wrmsr(MSR_IA32_PERFEVTSEL0 + counter, 0xc0 | PERFEVTSEL_OS | PERFEVTSEL_EN);
	wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 1ull << counter);
	check_eq(1ull << counter, rdmsr(MSR_IA32_PERF_GLOBAL_CTRL));
}

TEST_FLAGS(leaks, finds_no_counter_enabled, TEST_MANUAL)
{
	unsigned int counter = CPUID_PERFMON_GP_COUNTERS(cpuid(CPUID_LEAF_PERFMON, 0).eax) - 1;

	if (!pmu_usable())
		test_skip("%s", pmu_info()->reason);
	check_eq(0, rdmsr(MSR_IA32_PERF_GLOBAL_CTRL));
	wrmsr(MSR_IA32_PERFEVTSEL0 + counter, 0); /* the selector the runner left as it was */
}

static void sleep_for_ever(void *arg)
{
	(void)arg;
	for (;;)
		sched_sleep_ms(1000);
}

TEST_FLAGS(leaks, leaks_a_task, TEST_MANUAL)
{
	check(task_create("leaked", sleep_for_ever, NULL, TASK_START_RUNNABLE) != NULL,
	      "task_create");
}

TEST_FLAGS(leaks, finds_no_task, TEST_MANUAL)
{
	check_eq(0, sched_kill_others());
}

TEST_FLAGS(leaks, leaks_exception_handlers, TEST_MANUAL)
{
	static struct db_trace trace;

	db_trace_start(&trace); /* #DB, #BP and #UD, never given back */
	check_eq(0, trace.count);
}

static void raise_unowned_single_step(void *arg)
{
	(void)arg;
	probe_single_step();
}

/* dr/'s handler again: a single step no one owns is an unexpected #DB, not a recorded one. */
TEST_FLAGS(leaks, finds_the_exception_handlers_given_back, TEST_MANUAL)
{
	struct isolation_outcome outcome;

	runner_isolate(raise_unowned_single_step, NULL, 100, &outcome);
	check_eq(ISOLATION_EXCEPTION, outcome.end);
	check_eq(X86_EXC_DB, outcome.vector);
}

/* As a task switched back in at the wrong depth leaves it: one handler's end too few. */
TEST_FLAGS(leaks, leaks_an_interrupt_depth, TEST_MANUAL)
{
	this_cpu()->interrupt_depth++;
}

TEST_FLAGS(leaks, finds_the_interrupt_depth_zero, TEST_MANUAL)
{
	check_eq(0, this_cpu()->interrupt_depth);
}

/* A test that runs the tick faster for its measurement and forgets to set it back. */
static struct {
	unsigned int hz, slice_ticks;
} leaked_timer;

TEST_FLAGS(leaks, leaks_a_faster_tick, TEST_MANUAL)
{
	leaked_timer.hz = timer_hz();
	leaked_timer.slice_ticks = sched_slice_ticks();
	timer_set_hz(leaked_timer.hz * 4);
	sched_set_slice_ticks(leaked_timer.slice_ticks + 1);
}

TEST_FLAGS(leaks, finds_the_tick_it_started_with, TEST_MANUAL)
{
	check_eq(leaked_timer.hz, timer_hz());
	check_eq(leaked_timer.slice_ticks, sched_slice_ticks());
}
