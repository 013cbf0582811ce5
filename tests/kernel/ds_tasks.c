/* SPDX-License-Identifier: MIT */
/* ds suite: areas prepared for stopped tasks, attribution across switches, no MSR writes. */
#include "arch/x86/apic.h"
#include "arch/x86/msr.h"
#include "arch/x86/percpu.h"
#include "arch/x86/witness_marker.h"
#include "tests/kernel/lib/ds_util.h"
#include "tests/kernel/lib/nmi_margin.h"

#define TRACING (DEBUGCTL_TR | DEBUGCTL_BTS)
#define PROBE_ROUNDS 4
#define FILL                                                                                   \
	1000 /* taken branches: over what a round records around its fill (to 560 with LBR and \
		arch-PEBS) */
#define CREDIT_THRESHOLD 256
#define CREDIT_RECORDS 4096 /* room for a fill and more past the threshold */
#define WINDOW_ROUNDS 2 /* without DS-CPL a switch is ~1,400 single steps where emulated */
/* Between two tasks with areas of their own: DEBUGCTL off, IA32_DS_AREA, DEBUGCTL on. */
#define OWN_AREA_WRITES_PER_SWITCH 3

struct traced {
	uint64_t ds_area, debugctl; /* the MSRs while it ran */
	struct probe_run run;
};

static void probe_own_area(void *arg)
{
	struct traced *traced = arg;
	struct ds_target me = self_target();

	traced->ds_area = rdmsr(MSR_IA32_DS_AREA);
	traced->debugctl = rdmsr(MSR_IA32_DEBUGCTL);
	probe_run(ds_area_get(&me), PROBE_ROUNDS, &traced->run);
}

TEST_OBSERVING(ds, area_prepared_for_a_stopped_task_is_activated_when_it_runs, 2100)
{
	struct ds_bts_config config = { .records = 16, .circular = true };
	struct traced traced = { 0 };
	struct ds_target target;
	struct task *task;
	uint64_t area;

	require_bts();
	task = task_create("traced", probe_own_area, &traced, TASK_START_STOPPED);
	if (!task)
		test_abort("task_create failed");
	target = task_target(task);
	check_attached(ds_attach_bts(&target, &config));
	area = (uint64_t)ds_area_get(&target);
	check_eq(0, rdmsr(MSR_IA32_DEBUGCTL) & TRACING); /* not active before it runs */
	check(rdmsr(MSR_IA32_DS_AREA) != area, "IA32_DS_AREA names the stopped task's area");
	task_continue(task);
	check_eq(0, task_join(task, NULL));
	check_eq(area, traced.ds_area);
	check_eq(TRACING, traced.debugctl & TRACING);
	check_probe_run(&traced.run, PROBE_ROUNDS);
	check(ds_area_get(&target) == NULL, "the area outlived its task");
}

/*
 * Each round: FILL taken branches with interrupts off, counted by the index before and after
 * (one record each), then a yield to the other task. PMIs drain the CPU's area now and then.
 * At the end the task notes its own credit: what its exit records later is credited too, but
 * is long (its stack is freed) and not what this test is about. IF does not hold off an NMI
 * (the watchdog's): one in a fill adds its delivery and its IRETQ (rule 21), and on silicon its
 * handler's branches, so a fill is FILL records and at most nmi_extra_records() more for the
 * NMIs this CPU took meanwhile (tests/kernel/lib/nmi_margin.h).
 */

struct filler {
	const struct ds_area *area;
	unsigned int rounds;
	uint64_t filled, credited;
	unsigned long nmis;
};

static void fill_and_yield(void *arg)
{
	struct filler *filler = arg;
	struct loop_span span;

	for (unsigned int round = 0; round < filler->rounds; round++) {
		unsigned long flags = local_irq_save();
		unsigned long ticks = nmi_count();
		uint64_t before = filler->area->bts_index, after;

		counted_loop(FILL + 1, &span);
		after = filler->area->bts_index;
		filler->nmis += nmi_count() - ticks;
		local_irq_restore(flags);
		filler->filled += (after - before) / BTS_RECORD_SIZE;
		sched_yield();
	}
	filler->credited = ds_credit(sched_current()->index).bts_records;
}

/*
 * Each task is credited at least the records of its own fills, and less than a fill more a
 * round (stated tolerance): what it recorded around them (its start, the PMIs, its yields).
 * One fill of the other task's among them would break the bound.
 */
static void check_credit(const char *name, const struct filler *filler, uint64_t at_exit)
{
	test_diag("%s: %llu records credited for %llu of its own in %u rounds, %llu at its exit",
		  name, (unsigned long long)filler->credited, (unsigned long long)filler->filled,
		  filler->rounds, (unsigned long long)at_exit);
	test_diag("%s: %lu NMIs during its fills", name, filler->nmis);
	check(filler->filled >= filler->rounds * FILL &&
		      filler->filled <= filler->rounds * FILL + nmi_extra_records(filler->nmis),
	      "%s: %llu records in %u fills of %u branches, with %lu NMIs", name,
	      (unsigned long long)filler->filled, filler->rounds, FILL, filler->nmis);
	check(filler->credited >= filler->filled &&
		      filler->credited < filler->filled + filler->rounds * FILL,
	      "%s: %llu records credited for %llu of its own in %u rounds", name,
	      (unsigned long long)filler->credited, (unsigned long long)filler->filled,
	      filler->rounds);
	check(at_exit >= filler->credited, "%s: credit fell from %llu to %llu", name,
	      (unsigned long long)filler->credited, (unsigned long long)at_exit);
}

TEST_OBSERVING(ds, records_in_a_cpu_area_are_credited_to_the_task_that_wrote_them, 17000)
{
	struct ds_bts_config config = { .records = CREDIT_RECORDS,
					.threshold_records = CREDIT_THRESHOLD };
	struct ds_target target = cpu_target(this_cpu_index());
	struct filler a = { .rounds = 1 }, b = { .rounds = 2 };
	struct task *task_a, *task_b;

	require_bts();
	task_a = task_create("a", fill_and_yield, &a, TASK_START_STOPPED);
	task_b = task_create("b", fill_and_yield, &b, TASK_START_STOPPED);
	if (!task_a || !task_b)
		test_abort("task_create failed");
	ds_credit_reset(task_a->index);
	ds_credit_reset(task_b->index);
	check_attached(ds_attach_bts(&target, &config)); /* active here at once, for every task */
	a.area = b.area = ds_area_get(&target);
	task_continue(task_a);
	task_continue(task_b);
	check_eq(0, task_join(task_a, NULL));
	check_eq(0, task_join(task_b, NULL));
	check_eq(DS_OK, ds_detach(&target, DS_USER_BTS));
	check_credit("a", &a, ds_credit(task_a->index).bts_records);
	check_credit("b", &b, ds_credit(task_b->index).bts_records);
}

/*
 * Two tasks yield to each other; the first attaches the pair's areas, counts the MSR writes of a
 * window, and detaches them again: tracing (single-stepped where the CPU is emulated) covers the
 * window and little else.
 */
struct pair {
	struct ds_target targets[2];
	unsigned int areas;
	enum ds_error attached;
	uint64_t msr_writes, switches;
	volatile bool done;
};

/*
 * Ring 3 only where DS-CPL allows (these kernel tasks then record nothing, and where the CPU is
 * emulated their switches are not stepped): what a switch compares is the configuration,
 * whatever it traces.
 */
static struct ds_bts_config pair_config(void)
{
	return (struct ds_bts_config){ .records = 16,
				       .circular = true,
				       .off_os = ds_support()->ds_cpl };
}

static void measure_window(void *arg)
{
	struct pair *pair = arg;
	struct ds_bts_config config = pair_config();
	uint64_t msr, switches;

	for (unsigned int i = 0; i < pair->areas && pair->attached == DS_OK; i++)
		pair->attached = ds_attach_bts(&pair->targets[i], &config);
	sched_yield(); /* the other task switches in with its configuration once */
	msr = this_cpu()->writes.msr;
	switches = sched_stats().switches;
	witness_begin(WITNESS_DS_SWITCH_WRITES);
	for (int i = 0; i < WINDOW_ROUNDS; i++)
		sched_yield();
	witness_end(WITNESS_DS_SWITCH_WRITES);
	pair->msr_writes = this_cpu()->writes.msr - msr;
	pair->switches = sched_stats().switches - switches;
	for (unsigned int i = 0; i < pair->areas; i++)
		ds_detach(&pair->targets[i], DS_USER_BTS);
	pair->done = true;
}

static void yield_until_done(void *arg)
{
	struct pair *pair = arg;

	while (!pair->done)
		sched_yield();
}

enum areas {
	NO_AREA,
	CPU_AREA, /* one for both: the same configuration */
	OWN_AREAS, /* one each: the control, different areas cost writes */
};

static struct pair run_pair(const char *name, enum areas areas)
{
	struct pair pair = { .attached = DS_OK };
	struct task *a = task_create("a", measure_window, &pair, TASK_START_STOPPED);
	struct task *b = task_create("b", yield_until_done, &pair, TASK_START_STOPPED);

	if (!a || !b)
		test_abort("task_create failed");
	if (areas == CPU_AREA) {
		pair.targets[pair.areas++] = cpu_target(this_cpu_index());
	} else if (areas == OWN_AREAS) {
		pair.targets[pair.areas++] = task_target(a);
		pair.targets[pair.areas++] = task_target(b);
	}
	task_continue(a);
	task_continue(b);
	task_join(a, NULL);
	task_join(b, NULL);
	check_eq(DS_OK, pair.attached);
	test_diag("%s: %llu MSR writes in %llu switches (%u rounds)", name,
		  (unsigned long long)pair.msr_writes, (unsigned long long)pair.switches,
		  WINDOW_ROUNDS);
	check(pair.switches >= 2 * WINDOW_ROUNDS, "%s: %llu switches", name,
	      (unsigned long long)pair.switches);
	return pair;
}

TEST_OBSERVING(ds, switches_between_tasks_with_the_same_configuration_write_no_msr, 24000)
{
	struct pair none, shared, own;

	require_bts();
	none = run_pair("no area", NO_AREA);
	shared = run_pair("the CPU's area", CPU_AREA);
	own = run_pair("own areas", OWN_AREAS);
	check_eq(0, none.msr_writes);
	check_eq(0, shared.msr_writes);
	check_eq(OWN_AREA_WRITES_PER_SWITCH * own.switches, own.msr_writes);
}

/*
 * A task that attaches this CPU's area, and so is traced (single-stepped where the CPU is
 * emulated) from there on, yields to a task that the tick preempted: that one goes on inside
 * the tick's handler, which must run untraced and unstepped as on entry, and is traced again
 * once the handler returns. Before the model cleared its TF at such a switch, the handler took
 * a single step nobody owned, as an unexpected #DB.
 */
#define YIELDS_MAX 100
#define PREEMPT_HZ 1000

struct preempted_pair {
	struct ds_target target;
	volatile bool spinner_started, yield_back, stop;
	enum ds_error attached, detached;
};

/* Spins until the tick preempts it; once back, and traced, it yields when asked: no tick is
 * needed while it is stepped (some platforms deliver few then: docs/platforms.md). */
static void spin_until_stopped(void *arg)
{
	struct preempted_pair *pair = arg;

	pair->spinner_started = true;
	while (!pair->stop) {
		if (pair->yield_back) {
			pair->yield_back = false;
			sched_yield();
		}
	}
}

static void attach_and_yield(void *arg)
{
	struct preempted_pair *pair = arg;
	struct ds_bts_config config = { .records = CREDIT_RECORDS,
					.threshold_records = CREDIT_THRESHOLD };

	pair->attached = ds_attach_bts(&pair->target, &config); /* active here at once */
	pair->yield_back = true;
	/* The first goes into the spinner, inside the tick handler that preempted it; the spinner
	 * may be preempted again before it sees the request (a tick was due). */
	for (unsigned int yields = 0; pair->yield_back && yields < YIELDS_MAX; yields++)
		sched_yield();
	pair->stop = true;
	if (pair->attached == DS_OK)
		pair->detached = ds_detach(&pair->target, DS_USER_BTS);
}

TEST_OBSERVING(ds, a_traced_task_yielding_to_a_preempted_one_leaves_its_handler_untraced, 2500)
{
	struct preempted_pair pair = { .target = cpu_target(this_cpu_index()) };
	unsigned int hz = timer_hz(), slice = sched_slice_ticks(), spinner_index;
	struct task *spinner, *attacher;

	require_bts();
	timer_set_hz(PREEMPT_HZ);
	sched_set_slice_ticks(1); /* the tick preempts the spinner within a millisecond */
	spinner = task_create("spinner", spin_until_stopped, &pair, TASK_START_STOPPED);
	attacher = task_create("attacher", attach_and_yield, &pair, TASK_START_STOPPED);
	if (!spinner || !attacher)
		test_abort("task_create failed");
	spinner_index = spinner->index;
	ds_credit_reset(spinner_index);
	task_continue(spinner);
	while (!pair.spinner_started)
		sched_yield();
	task_continue(attacher); /* runs when the tick preempts the spinner */
	check_eq(0, task_join(attacher, NULL));
	check_eq(0, task_join(spinner, NULL));
	sched_set_slice_ticks(slice);
	timer_set_hz(hz);
	check_eq(DS_OK, pair.attached);
	check_eq(DS_OK, pair.detached);
	check(!pair.yield_back, "the spinner did not run after the yield");
	/* Its loop after the yield, traced into the CPU's area, is credited to it at its switch. */
	check(ds_credit(spinner_index).bts_records > 0, "no record credited to the spinner");
}
