/* SPDX-License-Identifier: MIT */
/* smp suite, Debug Store: areas allocated on one CPU and filled on another by real branches,
 * one area per CPU, a task's area following it, and a detach that unmaps a view at once. */
#include "arch/x86/exceptions.h"
#include "arch/x86/msr.h"
#include "arch/x86/percpu.h"
#include "arch/x86/user.h"
#include "kernel/smp.h"
#include "tests/kernel/lib/ds_util.h"
#include "tests/kernel/lib/smp_util.h"
#include "tests/kernel/lib/user_programs.h"

#define TRACING (DEBUGCTL_TR | DEBUGCTL_BTS)
#define PROBE_ROUNDS 4
#define PROBE_BRANCHES 8

static const struct ds_bts_config circular = { .records = 16, .circular = true };

/* What a CPU's DS_AREA and DEBUGCTL hold, read there by RDMSR. */
struct ds_msrs {
	uint64_t ds_area, debugctl;
};

static void read_here(void *arg)
{
	struct ds_msrs *msrs = arg;

	msrs->ds_area = rdmsr(MSR_IA32_DS_AREA);
	msrs->debugctl = rdmsr(MSR_IA32_DEBUGCTL);
}

static struct ds_msrs read_on(unsigned int cpu)
{
	struct ds_msrs msrs = { 0, 0 };

	if (!smp_call(cpu, read_here, &msrs))
		test_abort("CPU %u took no call", cpu);
	return msrs;
}

static bool tracing_into(struct ds_msrs msrs, const struct ds_area *area)
{
	return msrs.ds_area == (uint64_t)area && (msrs.debugctl & TRACING) == TRACING;
}

static void activate_here(void *unused)
{
	(void)unused;
	ds_activate_cpu();
}

/* A task that runs the probe loop on a given area and says where it ran. */
struct prober {
	const struct ds_area *area;
	unsigned long rounds;
	unsigned int cpu;
	struct probe_run run;
	enum ds_error detached; /* probe_own_cpu_area(): its CPU's area, detached there */
};

static void probe_there(void *arg)
{
	struct prober *prober = arg;

	prober->cpu = this_cpu_index();
	probe_run(prober->area, prober->rounds, &prober->run);
}

TEST_OBSERVING(smp, ds_area_allocated_on_cpu_0_for_cpu_1_is_activated_and_filled_there, 4900)
{
	struct ds_target target = cpu_target(1);
	struct prober prober = { .rounds = PROBE_ROUNDS };
	struct ds_area *area;

	smp_require_cpus(2);
	require_bts();
	check_attached(ds_attach_bts(&target, &circular)); /* allocated and filled here, CPU 0 */
	area = ds_area_get(&target);
	check(!tracing_into(read_on(1), area), "CPU 1 traces before its activation");
	check(smp_call(1, activate_here, NULL), "CPU 1 took no call");
	check(tracing_into(read_on(1), area), "CPU 1 does not trace into its area");
	check(!tracing_into(read_on(0), area), "CPU 0 traces into CPU 1's area");
	prober.area = area;
	check_eq(0, task_join(smp_task_on(1, "prober", probe_there, &prober), NULL));
	check_eq(1, prober.cpu);
	check_probe_run(&prober.run, PROBE_ROUNDS);
	check_eq(DS_OK, ds_detach(&target, DS_USER_BTS)); /* from CPU 0: CPU 1 stops first */
	check_eq(0, read_on(1).debugctl & TRACING);
}

static DEFINE_PER_CPU(struct prober, probers);
static DEFINE_PER_CPU(struct task *, prober_tasks);

/*
 * Activate this CPU's area, probe it, and detach it, all on this CPU: where the CPU is emulated,
 * a CPU area has every instruction on its CPU single-stepped, so it is active for the probe and
 * little else.
 */
static void probe_own_cpu_area(void *arg)
{
	struct prober *prober = arg;
	struct ds_target target = cpu_target(this_cpu_index());

	ds_activate_cpu();
	probe_there(prober);
	prober->detached = ds_detach(&target, DS_USER_BTS);
}

/*
 * The areas are attached from CPU 0, its own last: an area attached on its own CPU is active
 * there at once, and the others are activated by their probers. The probers are created first,
 * stopped, for the same reason.
 */
TEST_OBSERVING(smp, each_cpu_has_its_own_area_and_records_its_own_branches, 3000)
{
	unsigned int cpus = smp_cpus();

	smp_require_cpus(2);
	require_bts();
	for (unsigned int cpu = 0; cpu < cpus; cpu++) {
		struct task *task = task_create("prober", probe_own_cpu_area,
						per_cpu_ptr(probers, cpu), TASK_START_STOPPED);

		if (!task || sched_migrate(task, cpu) != 0)
			test_abort("no prober on CPU %u", cpu);
		*per_cpu_ptr(prober_tasks, cpu) = task;
	}
	for (unsigned int cpu = cpus; cpu-- > 0;) {
		struct ds_target target = cpu_target(cpu);

		check_attached(ds_attach_bts(&target, &circular));
		for (unsigned int other = cpu + 1; other < cpus; other++) {
			struct ds_target later = cpu_target(other);

			check(ds_area_get(&later) != ds_area_get(&target),
			      "CPUs %u and %u share an area", cpu, other);
		}
		/* Distinct round counts: another CPU's records would break the index arithmetic. */
		*per_cpu_ptr(probers, cpu) =
			(struct prober){ .area = ds_area_get(&target), .rounds = cpu + 2 };
	}
	for (unsigned int cpu = 0; cpu < cpus; cpu++)
		task_continue(*per_cpu_ptr(prober_tasks, cpu));
	for (unsigned int cpu = 0; cpu < cpus; cpu++) {
		const struct prober *prober = per_cpu_ptr(probers, cpu);

		check_eq(0, task_join(*per_cpu_ptr(prober_tasks, cpu), NULL));
		check_eq(cpu, prober->cpu);
		check_probe_run(&prober->run, prober->rounds);
		check_eq(DS_OK, prober->detached);
	}
}

struct mover {
	const struct ds_area *area;
	struct probe_run before, after; /* on CPU 0, then on CPU 1 */
	struct ds_msrs left, arrived;
};

static void probe_move_probe(void *arg)
{
	struct mover *mover = arg;

	probe_run(mover->area, PROBE_ROUNDS, &mover->before);
	smp_move_self(1);
	mover->left = read_on(0);
	mover->arrived = read_on(1);
	probe_run(mover->area, PROBE_ROUNDS + 1, &mover->after);
}

TEST_OBSERVING(smp, task_ds_area_follows_the_task_to_another_cpu, 4500)
{
	struct mover mover = { 0 };
	struct ds_target target;
	struct task *task;

	smp_require_cpus(2);
	require_bts();
	task = task_create("mover", probe_move_probe, &mover, TASK_START_STOPPED);
	if (!task || sched_migrate(task, 0) != 0)
		test_abort("no mover on CPU 0");
	target = task_target(task);
	check_attached(ds_attach_bts(&target, &circular));
	mover.area = ds_area_get(&target);
	task_continue(task);
	check_eq(0, task_join(task, NULL)); /* its exit freed the area */
	check_probe_run(&mover.before, PROBE_ROUNDS);
	check_probe_run(&mover.after, PROBE_ROUNDS + 1);
	check(!tracing_into(mover.left, mover.area), "CPU 0 still traces into the area it left");
	check(tracing_into(mover.arrived, mover.area), "CPU 1 does not trace into the task's area");
}

TEST_OBSERVING_USER(smp, detaching_a_user_tasks_area_on_another_cpu_unmaps_its_view_there_at_once,
		    3500)
{
	volatile uint64_t *reads;
	struct user_fault fault = { 0 };
	struct ds_target target;
	struct task *task;
	uint64_t at_return, start;

	smp_require_cpus(2);
	require_bts();
	task = task_create_user("reader", user_ds_read_loop, USER_DATA_BASE, TASK_START_STOPPED);
	if (!task)
		test_abort("task_create_user failed");
	reads = task_user_data(task);
	target = task_target(task);
	check_attached(ds_attach_bts(&target, &circular));
	check_eq(0, sched_migrate(task, 1));
	task_continue(task);
	start = rdtsc_ordered();
	while (*reads < 1000 && rdtsc_ordered() - start < tsc_cycles_from_ms(2000))
		sched_yield();
	check(*reads >= 1000, "the reader made %llu reads on CPU 1", (unsigned long long)*reads);
	/* From CPU 0, while it reads on CPU 1 through a translation that CPU 1 has cached. */
	check_eq(DS_OK, ds_detach(&target, DS_USER_BTS));
	at_return = *reads;
	start = rdtsc_ordered();
	while (task->state != TASK_DEAD && rdtsc_ordered() - start < tsc_cycles_from_ms(2000))
		sched_yield();
	check(task->state == TASK_DEAD, "CPU 1 still reads the unmapped view: %llu reads since",
	      (unsigned long long)(*reads - at_return));
	if (task->state != TASK_DEAD)
		return; /* the runner ends it */
	/* A read that had passed its load when the flush came may still count itself. */
	check(*reads - at_return <= 1, "%llu reads after ds_detach() returned",
	      (unsigned long long)(*reads - at_return));
	check_eq(TASK_EXIT_FAULTED, task_join(task, &fault));
	check_eq(X86_EXC_PF, fault.vector);
	check_eq(USER_DS_BASE, fault.cr2);
}

static void branch_there(void *arg)
{
	struct loop_span span;

	(void)arg;
	counted_loop(PROBE_BRANCHES, &span);
}

/*
 * Detaching one user of an area that is active on another CPU leaves the other user's fields
 * alone: the CPU there still traces into them (SDM: never change the fields under a tracing CPU).
 * ds_detach() drained every user, and reset the live BTS index under CPU 1 (found by the
 * kernel-API fuzzer as the emulated CPU's rule 3).
 */
TEST_OBSERVING(smp, ds_detach_of_one_user_leaves_the_other_tracing_on_another_cpu, 4900)
{
	struct ds_target target = cpu_target(1);
	/* A threshold no idle CPU reaches in this test: no PMI drains the index meanwhile. */
	struct ds_bts_config interrupt = { .records = 2048, .threshold_records = 1900 };
	struct ds_pebs_config pebs;
	struct ds_area *area;
	uint64_t index;

	smp_require_cpus(2);
	require_bts();
	require_pebs();
	pebs = pebs_config(16, 1, 1000);
	check_attached(ds_attach_bts(&target, &interrupt));
	check_attached(ds_attach_pebs(&target, &pebs));
	area = ds_area_get(&target);
	check(smp_call(1, activate_here, NULL), "CPU 1 took no call");
	check_eq(0, task_join(smp_task_on(1, "brancher", branch_there, NULL), NULL));
	index = area->bts_index;
	check(index > area->bts_base, "CPU 1 recorded no branch");
	check_eq(DS_OK, ds_detach(&target, DS_USER_PEBS)); /* from CPU 0, BTS live on CPU 1 */
	check(area->bts_index >= index, "BTS index 0x%llx, 0x%llx before the PEBS detach",
	      (unsigned long long)area->bts_index, (unsigned long long)index);
	check(tracing_into(read_on(1), area), "CPU 1 stopped tracing with its BTS user attached");
	check_eq(DS_OK, ds_detach(&target, DS_USER_BTS));
	check_eq(0, read_on(1).debugctl & TRACING);
}
