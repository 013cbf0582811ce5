/* SPDX-License-Identifier: MIT */
/* smp suite: every CPU comes up with its own tables, stacks and tick; calls and IPIs reach it. */
#include "arch/x86/apic.h"
#include "arch/x86/cpu.h"
#include "arch/x86/gdt.h"
#include "arch/x86/percpu.h"
#include "arch/x86/tsc.h"
#include "kernel/smp.h"
#include "lib/sort.h"
#include "runner/options.h"
#include "tests/kernel/lib/budget.h"
#include "tests/kernel/lib/smp_util.h"

#define CALL_SAMPLES 64
#define PLACED_ROUNDS 50
/*
 * The idle window of the tick test: 2 ticks at 250 Hz with budget=quick (an idle CPU may take
 * 1), 25 with budget=soak. The busy window ends as soon as every CPU with a task ticked.
 */
#define TICK_WAIT_QUICK_MS 8
#define TICK_WAIT_SOAK_MS 100
#define TICK_POLL_MS 2
/* With more vCPUs than host cores (docs/platforms.md), a vCPU may not run for a while: the busy
 * window lasts until each CPU ticked, at most this long. */
#define TICK_WAIT_BUSY_LIMIT_MS 2000

/* What a CPU says about itself, from inside a call. */
struct identity {
	unsigned int index, apic_id;
	uint64_t gs_self, gdt, ist_top;
	uint16_t task_register;
	uint64_t ticks;
};

static void identify(void *arg)
{
	struct identity *identity = arg;

	identity->index = this_cpu_index();
	identity->apic_id = apic_id();
	identity->gs_self = (uint64_t)this_cpu();
	identity->gdt = gdt_loaded_base();
	identity->task_register = task_register_loaded();
	identity->ist_top = tss_ist_stack_top(IST_DOUBLE_FAULT);
	identity->ticks = this_cpu()->ticks;
}

static struct identity identify_cpu(unsigned int cpu)
{
	struct identity identity = { .index = UINT32_MAX };

	if (!smp_call(cpu, identify, &identity))
		test_abort("CPU %u did not take a call within %u ms", cpu, SMP_CALL_TIMEOUT_MS);
	return identity;
}

/* What each CPU reported of itself, for the test under way. */
static DEFINE_PER_CPU(struct identity, identities);

TEST(smp, every_cpu_comes_up_and_reports_its_apic_id)
{

	if (run_options.expect_cpus)
		check_eq(run_options.expect_cpus, smp_cpus());
	smp_require_cpus(2);
	for (unsigned int cpu = 0; cpu < smp_cpus(); cpu++) {
		struct identity *identity = per_cpu_ptr(identities, cpu);

		*identity = identify_cpu(cpu);
		test_diag("CPU %u: APIC id %u", cpu, identity->apic_id);
		check_eq(cpu, identity->index);
		check_eq(percpu_get(cpu)->apic_id, identity->apic_id);
		for (unsigned int other = 0; other < cpu; other++)
			check(per_cpu_ptr(identities, other)->apic_id != identity->apic_id,
			      "CPUs %u and %u both report APIC id %u", other, cpu,
			      identity->apic_id);
	}
}

TEST(smp, each_cpu_has_its_own_per_cpu_data_tables_and_stacks)
{
	smp_require_cpus(2);
	for (unsigned int cpu = 0; cpu < smp_cpus(); cpu++) {
		struct identity *identity = per_cpu_ptr(identities, cpu);

		*identity = identify_cpu(cpu);
		check_eq((uint64_t)percpu_get(cpu), identity->gs_self);
		check_eq(GDT_TSS, identity->task_register);
		for (unsigned int other = 0; other < cpu; other++) {
			check(per_cpu_ptr(identities, other)->gdt != identity->gdt,
			      "CPUs %u and %u share a GDT at 0x%llx", other, cpu,
			      (unsigned long long)identity->gdt);
			check(per_cpu_ptr(identities, other)->ist_top != identity->ist_top,
			      "CPUs %u and %u share a #DF stack", other, cpu);
		}
	}
}

static void record_call(void *arg)
{
	uint64_t *cpu = arg;

	*cpu = this_cpu_index();
}

TEST(smp, a_call_runs_on_its_target_cpu_and_the_caller_waits_for_it)
{
	uint64_t samples[CALL_SAMPLES];

	smp_require_cpus(2);
	for (unsigned int cpu = 0; cpu < smp_cpus(); cpu++) {
		uint64_t ran_on = UINT64_MAX;

		check(smp_call(cpu, record_call, &ran_on), "CPU %u took no call", cpu);
		check_eq(cpu, ran_on);
	}
	for (unsigned int i = 0; i < CALL_SAMPLES; i++) {
		uint64_t ran_on = UINT64_MAX, start = rdtsc_ordered();

		smp_call(1, record_call, &ran_on);
		samples[i] = rdtsc_ordered() - start;
		check_eq(1, ran_on);
	}
	sort_u64(samples, CALL_SAMPLES);
	test_diag("metric smp.call_cycles median=%llu p90=%llu samples=%u slowest_so_far=%llu",
		  (unsigned long long)samples[CALL_SAMPLES / 2],
		  (unsigned long long)samples[CALL_SAMPLES * 9 / 10], CALL_SAMPLES,
		  (unsigned long long)smp_call_slowest());
	check(smp_call_all(record_call, &samples[0]) == smp_cpus(), "not every CPU took the call");
}

static void record_interrupt_depth(void *arg)
{
	uint64_t *depth = arg;

	*depth = this_cpu()->interrupt_depth;
}

static void return_at_once(void *arg)
{
	(void)arg;
}

/*
 * A call is an interrupt handler on its CPU: depth 1 there, whatever ran before. Each CPU's
 * first task (CPU 0's runner, the others' idle task) ran before its first switch-in; a task
 * switched out inside a handler must come back at that handler's depth, or the handler's end
 * leaves the CPU's count wrong (below zero) for good.
 */
TEST(smp, a_call_to_an_idle_cpu_runs_inside_exactly_one_interrupt_handler)
{
	smp_require_cpus(2);
	for (unsigned int cpu = 1; cpu < smp_cpus(); cpu++) {
		uint64_t depth = UINT64_MAX;

		/* The idle task is switched out for it (in the reschedule IPI) and back. */
		check_eq(0, task_join(smp_task_on(cpu, "returns", return_at_once, NULL), NULL));
		check(smp_call(cpu, record_interrupt_depth, &depth), "CPU %u took no call", cpu);
		check_eq(1, depth);
	}
}

/* The rounds the placed task ran on each CPU. */
static DEFINE_PER_CPU(unsigned int, placed_seen);

static void note_cpu(void *arg)
{
	(void)arg;
	for (unsigned int round = 0; round < PLACED_ROUNDS; round++) {
		(*this_cpu_ptr(placed_seen))++;
		sched_yield();
	}
}

TEST(smp, a_task_runs_only_on_the_cpu_it_is_placed_on)
{
	smp_require_cpus(2);
	for (unsigned int cpu = 0; cpu < smp_cpus(); cpu++) {
		struct task *task;

		for (unsigned int other = 0; other < smp_cpus(); other++)
			*per_cpu_ptr(placed_seen, other) = 0;
		task = smp_task_on(cpu, "placed", note_cpu, NULL);
		check_eq(0, task_join(task, NULL));
		for (unsigned int other = 0; other < smp_cpus(); other++)
			check_eq(other == cpu ? PLACED_ROUNDS : 0,
				 *per_cpu_ptr(placed_seen, other));
	}
}

/* The CPU of each step of the mover: as many steps as CPUs, so one entry per CPU. */
static DEFINE_PER_CPU(unsigned int, mover_path);

struct mover {
	unsigned int steps;
};

static void move_through_every_cpu(void *arg)
{
	struct mover *mover = arg;

	for (unsigned int cpu = smp_cpus(); cpu-- > 0;) {
		smp_move_self(cpu);
		*per_cpu_ptr(mover_path, mover->steps++) = this_cpu_index();
	}
}

TEST(smp, a_task_moves_itself_and_goes_on_running_on_the_new_cpu)
{
	struct mover mover = { 0 };
	struct task *task;

	smp_require_cpus(2);
	task = smp_task_on(0, "mover", move_through_every_cpu, &mover);
	check_eq(0, task_join(task, NULL));
	check_eq(smp_cpus(), mover.steps);
	for (unsigned int step = 0; step < mover.steps; step++)
		check_eq(smp_cpus() - 1 - step, *per_cpu_ptr(mover_path, step));
}

struct sleeper {
	volatile uint64_t woken_tsc;
	volatile bool asleep;
	unsigned int cpu;
};

static void sleep_until_woken(void *arg)
{
	struct sleeper *sleeper = arg;

	sleeper->asleep = true;
	sched_sleep_ms(60000);
	sleeper->woken_tsc = rdtsc_ordered();
	sleeper->cpu = this_cpu_index();
}

TEST(smp, a_wake_up_from_another_cpu_runs_the_task_on_its_own_idle_cpu)
{
	struct sleeper sleeper = { 0, false, UINT32_MAX };
	struct task *task;
	uint64_t start;

	smp_require_cpus(2);
	task = smp_task_on(1, "sleeper", sleep_until_woken, &sleeper);
	while (!sleeper.asleep || task->state != TASK_BLOCKED)
		sched_yield();
	start = rdtsc_ordered();
	sched_wake(task);
	check_eq(0, task_join(task, NULL));
	check_eq(1, sleeper.cpu);
	test_diag("wake-up on CPU 0 to running on CPU 1: %llu cycles",
		  (unsigned long long)(sleeper.woken_tsc - start));
}

struct spinner {
	volatile uint64_t count;
	volatile bool stop;
};

static void spin_counting(void *arg)
{
	struct spinner *spinner = arg;

	while (!spinner->stop)
		spinner->count++;
}

TEST(smp, stopping_a_task_running_on_another_cpu_takes_it_off_that_cpu)
{
	struct spinner spinner = { 0, false };
	struct task *task;
	uint64_t stopped_at;

	smp_require_cpus(2);
	task = smp_task_on(1, "spinner", spin_counting, &spinner);
	while (spinner.count == 0)
		cpu_relax();
	task_stop(task);
	check_eq(TASK_STOPPED, task->state);
	stopped_at = spinner.count;
	sched_sleep_ms(8); /* two ticks: a spinner still on CPU 1 counts millions */
	check_eq(stopped_at, spinner.count);
	task_continue(task);
	while (spinner.count == stopped_at)
		cpu_relax();
	spinner.stop = true;
	check_eq(0, task_join(task, NULL));
}

static void spin_forever(void *arg)
{
	struct spinner *spinner = arg;

	for (;;)
		spinner->count++;
}

static void wait_forever(void *arg)
{
	(void)arg;
	for (;;)
		sched_sleep_ms(1000);
}

TEST(smp, a_timed_out_test_ends_the_tasks_it_left_on_other_cpus)
{
	struct spinner spinner = { 0, false };
	struct isolation_outcome outcome;
	struct task *task;

	smp_require_cpus(2);
	task = smp_task_on(1, "spinner", spin_forever, &spinner);
	runner_isolate(wait_forever, NULL, 8, &outcome); /* two ticks */
	check_eq(ISOLATION_TIMEOUT, outcome.end);
	/* Still alive on CPU 1 (RUNNING, or RUNNABLE for the instant its tick requeues it). */
	check(task->state == TASK_RUNNING || task->state == TASK_RUNNABLE, "state %u", task->state);
	check_eq(1, task->cpu);
	check_eq(1, sched_kill_others()); /* what the runner does after every test */
	check(smp_read_registers(1).cpu == 1, "CPU 1 does not take calls after the kill");
}

/* Per CPU: its spinner, the spinner's task, and its tick count before the wait. */
static DEFINE_PER_CPU(struct spinner, spinners);
static DEFINE_PER_CPU(struct task *, spinner_tasks);
static DEFINE_PER_CPU(uint64_t, ticks_before);
static DEFINE_PER_CPU(uint64_t, ticks_after);

static unsigned int cpus_not_ticked(void)
{
	unsigned int count = 0;

	for (unsigned int cpu = 0; cpu < smp_cpus(); cpu++)
		count += percpu_get(cpu)->ticks == *per_cpu_ptr(ticks_before, cpu);
	return count;
}

TEST(smp, each_cpu_ticks_while_it_runs_a_task_and_only_cpu_0_ticks_when_idle)
{
	uint64_t wait_ms = budget_ms(TICK_WAIT_QUICK_MS, TICK_WAIT_SOAK_MS), waited;

	smp_require_cpus(2);
	for (unsigned int cpu = 1; cpu < smp_cpus(); cpu++) {
		*per_cpu_ptr(spinners, cpu) = (struct spinner){ 0, false };
		*per_cpu_ptr(spinner_tasks, cpu) =
			smp_task_on(cpu, "spinner", spin_counting, per_cpu_ptr(spinners, cpu));
	}
	for (unsigned int cpu = 0; cpu < smp_cpus(); cpu++)
		*per_cpu_ptr(ticks_before, cpu) = percpu_get(cpu)->ticks;
	for (waited = 0; cpus_not_ticked() && waited < TICK_WAIT_BUSY_LIMIT_MS;
	     waited += TICK_POLL_MS)
		sched_sleep_ms(TICK_POLL_MS);
	test_diag("every CPU with a task ticked within %llu ms", (unsigned long long)waited);
	for (unsigned int cpu = 0; cpu < smp_cpus(); cpu++)
		check(percpu_get(cpu)->ticks > *per_cpu_ptr(ticks_before, cpu),
		      "CPU %u: no tick in %llu ms with a task", cpu, (unsigned long long)waited);
	for (unsigned int cpu = 1; cpu < smp_cpus(); cpu++) {
		per_cpu_ptr(spinners, cpu)->stop = true;
		check_eq(0, task_join(*per_cpu_ptr(spinner_tasks, cpu), NULL));
	}
	/* Idle now: the other CPUs stop their tick (one tick may still be under way). */
	sched_sleep_ms(4);
	for (unsigned int cpu = 0; cpu < smp_cpus(); cpu++)
		*per_cpu_ptr(ticks_before, cpu) = percpu_get(cpu)->ticks;
	sched_sleep_ms(wait_ms);
	for (unsigned int cpu = 0; cpu < smp_cpus(); cpu++)
		*per_cpu_ptr(ticks_after, cpu) = percpu_get(cpu)->ticks;
	/* Another CPU's tick may wake this sleeper while the host holds CPU 0 back: wait for it. */
	for (waited = wait_ms; percpu_get(0)->ticks == *per_cpu_ptr(ticks_before, 0) &&
			       waited < TICK_WAIT_BUSY_LIMIT_MS;
	     waited += TICK_POLL_MS)
		sched_sleep_ms(TICK_POLL_MS);
	check(percpu_get(0)->ticks > *per_cpu_ptr(ticks_before, 0),
	      "CPU 0 stopped ticking: none in %llu ms idle", (unsigned long long)waited);
	for (unsigned int cpu = 1; cpu < smp_cpus(); cpu++)
		check(*per_cpu_ptr(ticks_after, cpu) - *per_cpu_ptr(ticks_before, cpu) <= 1,
		      "idle CPU %u took %llu ticks in %llu ms", cpu,
		      (unsigned long long)(*per_cpu_ptr(ticks_after, cpu) -
					   *per_cpu_ptr(ticks_before, cpu)),
		      (unsigned long long)wait_ms);
}
