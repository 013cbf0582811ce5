/* SPDX-License-Identifier: MIT */
/* leaks suite (manual): a test that leaves state behind fails itself, and the next starts clean. */
#include "arch/x86/apic.h"
#include "arch/x86/cpu.h"
#include "arch/x86/cpuid.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/msr-index.h"
#include "arch/x86/msr.h"
#include "arch/x86/percpu.h"
#include "arch/x86/probe.h"
#include "arch/x86/traps.h"
#include "arch/x86/tsc.h"
#include "ds/ds.h"
#include "kernel/switch_hooks.h"
#include "pmu/pmu.h"
#include "runner/test.h"
#include "sched/sched.h"
#include "tests/kernel/lib/db_trace.h"
#include "tests/kernel/lib/dr_targets.h"
#include "tests/kernel/lib/emulator_util.h"
#include "tests/kernel/lib/smp_util.h"

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

static void faulting_breakpoint_handler(const struct dr_hit *hit, struct cpu_regs *regs,
					void *context)
{
	(void)hit;
	(void)regs;
	(void)context;
	ud2();
}

/* The #DB handler's own handler faults: dr/'s end of the #DB (DR7 back on) never runs. */
TEST_FLAGS(leaks, leaks_a_fault_in_a_breakpoint_handler, TEST_MANUAL)
{
	struct dr_breakpoint breakpoint = { (uint64_t)dr_target_function, DR_TYPE_EXECUTE, 1 };

	check_eq(0, dr_install(sched_current()->index, &breakpoint, faulting_breakpoint_handler,
			       NULL));
	dr_target_function(); /* the hit is recorded, then its handler faults: the test ends */
	check(false, "the breakpoint handler returned");
}

/* No hit of the last test's is left to read, and a new breakpoint fires here again. */
TEST_FLAGS(leaks, finds_breakpoints_firing_and_no_earlier_hit, TEST_MANUAL)
{
	void (*target)(void) = dr_stress_targets[0];
	struct dr_hit hits[16];
	unsigned int count;

	check_eq(0, dr_target_hits(hits));
	check_eq(0, dr_target_install((uint64_t)target, DR_TYPE_EXECUTE, 1));
	target();
	count = dr_target_hits(hits);
	check_eq(1, count);
	if (count)
		check_eq((uint64_t)target, hits[0].address);
	check_eq(1, dr_uninstall_all(sched_current()->index));
}

static void fault_in_a_breakpoint_handler_here(void *arg)
{
	struct dr_breakpoint breakpoint = { (uint64_t)dr_target_function, DR_TYPE_EXECUTE, 1 };

	(void)arg;
	if (dr_install(sched_current()->index, &breakpoint, faulting_breakpoint_handler, NULL) == 0)
		dr_target_function(); /* the task ends here, and its test with it */
}

/* The same on CPU 1, in a task of the test's: that CPU's #DB handling is left unended. */
TEST_FLAGS(leaks, leaks_a_fault_in_a_breakpoint_handler_on_cpu_1, TEST_MANUAL)
{
	struct task *task;

	smp_require_cpus(2);
	task = smp_task_on(1, "faults", fault_in_a_breakpoint_handler_here, NULL);
	task_join(task, NULL);
	check(false, "the task's breakpoint handler returned");
}

static void hit_once_here(void *arg)
{
	void (*target)(void) = dr_stress_targets[1];
	struct dr_breakpoint breakpoint = { (uint64_t)target, DR_TYPE_EXECUTE, 1 };
	struct dr_hit hits[16];
	unsigned int *count = arg;

	if (dr_install(sched_current()->index, &breakpoint, NULL, NULL) != 0)
		return;
	target();
	*count = dr_read_hits(sched_current()->index, hits, 16, NULL);
	dr_uninstall_all(sched_current()->index);
}

TEST_FLAGS(leaks, finds_breakpoints_firing_on_cpu_1, TEST_MANUAL)
{
	unsigned int count = 0;

	smp_require_cpus(2);
	check_eq(0, task_join(smp_task_on(1, "hits", hit_once_here, &count), NULL));
	check_eq(1, count);
}

/* A PMI at VECTOR_TEST from the model's test counter (as tests/kernel/emulator_pmi.c arms it). */
#define PMI_OVERFLOW_AFTER 64 /* instructions */
#define PMI_LOOP 100
#define PMI_WAIT_MS 2000

static volatile unsigned int leak_pmis;

static void faulting_pmi(struct cpu_regs *regs)
{
	(void)regs;
	ud2();
}

static void counting_pmi(struct cpu_regs *regs)
{
	(void)regs;
	leak_pmis++;
}

/* Overflow the model's test counter after PMI_OVERFLOW_AFTER instructions, and wait for it. */
static void raise_a_pmi(void)
{
	unsigned int counter = emulator_test_counter();
	uint64_t deadline;

	wrmsr(MSR_IA32_PERF_GLOBAL_OVF_CTRL, rdmsr(MSR_IA32_PERF_GLOBAL_STATUS));
	wrmsr(MSR_IA32_PMC0 + counter, (0 - PMI_OVERFLOW_AFTER) & emulator_counter_width_mask());
	wrmsr(MSR_IA32_PERFEVTSEL0 + counter,
	      0xc0 | PERFEVTSEL_OS | PERFEVTSEL_INT | PERFEVTSEL_EN);
	wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 1ull << counter);
	probe_instruction_loop(PMI_LOOP);
	/* The self-IPI may come late (emulator_pmi.c): wait counting ring 3 only, unstepped. */
	wrmsr(MSR_IA32_PERFEVTSEL0 + counter,
	      0xc0 | PERFEVTSEL_USR | PERFEVTSEL_INT | PERFEVTSEL_EN);
	deadline = rdtsc_ordered() + tsc_cycles_from_ms(PMI_WAIT_MS);
	while (leak_pmis == 0 && rdtsc_ordered() < deadline)
		cpu_relax();
}

static void stop_the_counter(void)
{
	unsigned long flags = local_irq_save();

	wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 0);
	wrmsr(MSR_IA32_PERFEVTSEL0 + emulator_test_counter(), 0);
	wrmsr(MSR_IA32_PERF_GLOBAL_OVF_CTRL, rdmsr(MSR_IA32_PERF_GLOBAL_STATUS));
	local_irq_restore(flags);
}

/* The model masks LVTPC as it delivers the PMI (as Intel's APIC does); the handler faults. */
TEST_FLAGS(leaks, leaks_a_fault_in_a_pmi, TEST_MANUAL)
{
	require_emulator();
	interrupt_register(VECTOR_TEST, faulting_pmi);
	apic_write_lvtpc(VECTOR_TEST);
	raise_a_pmi(); /* the fault ends the test here */
	check(false, "no PMI came in %u ms", PMI_WAIT_MS);
}

/* LVTPC as the kernel set it, unmasked: a PMI gets through (at VECTOR_TEST, mask bit kept). */
TEST_FLAGS(leaks, finds_lvtpc_unmasked_and_a_pmi_delivered, TEST_MANUAL)
{
	uint32_t lvtpc = apic_read_lvtpc();

	require_emulator();
	check_eq(apic_lvtpc_configured(), lvtpc);
	leak_pmis = 0;
	interrupt_register(VECTOR_TEST, counting_pmi);
	apic_write_lvtpc((lvtpc & ~APIC_LVT_VECTOR_MASK) | VECTOR_TEST);
	raise_a_pmi();
	stop_the_counter();
	apic_write_lvtpc(lvtpc);
	interrupt_register(VECTOR_TEST, NULL);
	emulator_take_violations(NULL, 0); /* counting_pmi acknowledges nothing: rule 14 */
	check_eq(1, leak_pmis);
}

/* Hooks of a test's own: each counts its calls. */
static volatile unsigned int leaked_ticks, leaked_pmi_calls, leaked_switches;

static void counting_tick(struct cpu_regs *regs)
{
	(void)regs;
	leaked_ticks++;
}

static void counting_pmi_enter(struct cpu_regs *regs)
{
	(void)regs;
	leaked_pmi_calls++;
}

static void counting_switch(const struct switch_task *prev, const struct switch_task *next)
{
	(void)prev;
	(void)next;
	leaked_switches++;
}

static const struct pmi_hooks counting_pmi_hooks = { .enter = counting_pmi_enter };
static const struct switch_hooks counting_switch_hooks = { .switch_in = counting_switch };

/* A tick, PMI and switch hook, never unregistered; a sleep shows each of the first two runs. */
TEST_FLAGS(leaks, leaks_hooks, TEST_MANUAL)
{
	leaked_ticks = leaked_switches = 0;
	timer_register_hook(counting_tick);
	pmi_register(&counting_pmi_hooks);
	check(switch_hooks_register(&counting_switch_hooks) >= 0, "no switch-hook handle free");
	sched_sleep_ms(20);
	check(leaked_ticks > 0, "the tick hook never ran");
	check(leaked_switches > 0, "the switch hook never ran");
}

/* Ticks, switches (a sleep) and a PMI (a self-IPI at VECTOR_PMI) run none of them. */
TEST_FLAGS(leaks, finds_no_hook_of_the_last_test, TEST_MANUAL)
{
	unsigned int ticks = leaked_ticks, pmis = leaked_pmi_calls, switches = leaked_switches;
	uint64_t deadline;

	sched_sleep_ms(20);
	apic_send_self_ipi(VECTOR_PMI);
	deadline = rdtsc_ordered() + tsc_cycles_from_ms(20);
	while (rdtsc_ordered() < deadline && leaked_pmi_calls == pmis)
		cpu_relax();
	check_eq(ticks, leaked_ticks);
	check_eq(switches, leaked_switches);
	check_eq(pmis, leaked_pmi_calls);
}
