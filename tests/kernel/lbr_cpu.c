/* SPDX-License-Identifier: MIT */
/* lbr suite: a CPU's own request records every task there without one, and no other CPU. */
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/cpu.h"
#include "arch/x86/percpu.h"
#include "lbr/lbr.h"
#include "runner/test.h"
#include "sched/sched.h"
#include "sched/task.h"
#include "tests/kernel/lib/lbr_probe.h"
#include "tests/kernel/lib/lbr_util.h"
#include "tests/kernel/lib/smp_util.h"

#define ENTRIES LBR_LEGACY_MAX_DEPTH
#define ROUNDS 8
#define OWN_CALLS 8 /* of its probe, each round */
#define RECORDING_CPU 1

static bool in_range(uint64_t address, const void *first, const void *end)
{
	return address >= (uint64_t)first && address < (uint64_t)end;
}

static unsigned int entries_in(const struct lbr_entry *entries, unsigned int count,
			       const void *first, const void *end)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < count; i++)
		n += in_range(entries[i].from, first, end);
	return n;
}

struct cpu_run {
	volatile bool stop;
	enum lbr_error attach, attach_again, detach, read_other_cpu, partner_attach;
	unsigned int rounds, own_missing, foreign, partner_rounds, partner_foreign;
	unsigned int partner_own_missing, unswitched, full_after_switch_in, bystander_rounds;
	struct lbr_stats before0, after0;
};

/*
 * The partner on the recording CPU, with a request of its own (conditional branches in ring 0):
 * it runs lbr_probe_other(), and its reads hold none of lbr_probe()'s branches, which the CPU's
 * request recorded before its switch-in.
 */
static void partner(void *arg)
{
	struct cpu_run *run = arg;
	struct lbr_config config = { .kernel = true, .branches = LBR_BRANCH_JCC };
	unsigned int self = sched_current()->index;

	run->partner_attach = lbr_attach(self, &config);
	if (run->partner_attach != LBR_OK)
		return;
	while (!run->stop) {
		struct lbr_entry entries[ENTRIES];
		unsigned long flags = local_irq_save();
		unsigned int count = 0;

		for (int i = 0; i < OWN_CALLS; i++)
			lbr_probe_other();
		lbr_read(self, entries, ENTRIES, &count);
		local_irq_restore(flags);
		run->partner_own_missing +=
			!entries_in(entries, count, lbr_probe_other, lbr_probe_other_end);
		run->partner_foreign += entries_in(entries, count, lbr_probe, lbr_probe_end);
		run->partner_rounds++;
		/* Its last branches before the switch fill the stack: the worker must not see them.
		 */
		for (int i = 0; i < OWN_CALLS; i++)
			lbr_probe_other();
		sched_yield();
	}
	lbr_detach(self);
}

/* A task on CPU 0 with no request, switching there: CPU 0 asked for nothing. */
static void bystander(void *arg)
{
	struct cpu_run *run = arg;

	while (!run->stop) {
		run->bystander_rounds++;
		sched_sleep_ms(1);
	}
}

/*
 * The worker on the recording CPU, with no request of its own: it asks for the CPU's, runs
 * lbr_probe() and reads the CPU's stack (its own probe's JCC must be there), yields to the
 * partner, and reads again at once (none of the partner's branches: the stack was wiped at its
 * switch-in, since the partner's request used it). A read of CPU 0's stack from here is refused.
 */
static void worker(void *arg)
{
	struct cpu_run *run = arg;
	struct lbr_config config = { .kernel = true, .branches = LBR_BRANCH_JCC };
	struct lbr_entry entries[ENTRIES];
	unsigned int count = 0;

	run->attach = lbr_attach_cpu(RECORDING_CPU, &config);
	if (run->attach != LBR_OK)
		return;
	run->attach_again = lbr_attach_cpu(RECORDING_CPU, &config);
	run->read_other_cpu = lbr_read_cpu(0, entries, ENTRIES, &count);
	while (!run->stop && run->rounds < ROUNDS) {
		unsigned long flags = local_irq_save();
		unsigned int partner_rounds;
		bool own;

		for (int i = 0; i < OWN_CALLS; i++)
			lbr_probe();
		lbr_read_cpu(RECORDING_CPU, entries, ENTRIES, &count);
		local_irq_restore(flags);
		own = false;
		for (unsigned int i = 0; i < count; i++)
			own |= entries[i].from == (uint64_t)lbr_probe_jcc;
		run->own_missing += !own;
		run->foreign += entries_in(entries, count, lbr_probe_other, lbr_probe_other_end);
		partner_rounds = run->partner_rounds;
		sched_yield();
		lbr_read_cpu(RECORDING_CPU, entries, ENTRIES, &count);
		run->unswitched += run->partner_rounds == partner_rounds;
		/* Wiped at the switch-in: only the path back from the switch since, not a full
		 * stack. */
		run->full_after_switch_in +=
			run->partner_rounds != partner_rounds && count == lbr_support()->depth;
		run->foreign += entries_in(entries, count, lbr_probe_other, lbr_probe_other_end);
		run->rounds++;
	}
	run->detach = lbr_detach_cpu(RECORDING_CPU);
}

/*
 * A CPU's request (lbr_attach_cpu()) records the tasks on CPU 1 that have none of their own,
 * with its filters: the worker reads its own branches there each round. A task with its own
 * request on the same CPU keeps it: each sees none of the other's branches across ROUNDS
 * switches both ways. CPU 0, which asked for nothing, writes no LBR MSR meanwhile and has no
 * stack to read.
 */
TEST_OBSERVING(lbr, a_cpu_request_records_every_task_there_without_its_own, 32000)
{
	static struct cpu_run run;
	struct lbr_entry entries[ENTRIES];
	struct task *w, *p, *b;
	unsigned int count = 0;

	smp_require_cpus(2);
	require_lbr();
	if (!lbr_support()->select)
		test_skip("no MSR_LBR_SELECT (LBR format %u): the requests filter JCC",
			  lbr_support()->format);
	if (this_cpu_index() != 0)
		test_abort("the runner is on CPU %u, not CPU 0", this_cpu_index());
	run = (struct cpu_run){ 0 };
	run.before0 = lbr_stats(0);
	b = smp_task_on(0, "lbr-cpu-bystander", bystander, &run);
	p = smp_task_on(RECORDING_CPU, "lbr-cpu-partner", partner, &run);
	w = smp_task_on(RECORDING_CPU, "lbr-cpu-worker", worker, &run);
	check_eq(0, task_join(w, NULL));
	run.stop = true;
	check_eq(0, task_join(p, NULL));
	check_eq(0, task_join(b, NULL));
	run.after0 = lbr_stats(0);
	test_diag("%u rounds (%u without a switch to the partner): %u missing their own JCC, %u "
		  "foreign entries, %u full after a switch-in; partner: %u rounds, %u foreign, %u "
		  "missing; CPU 0's bystander: %u rounds",
		  run.rounds, run.unswitched, run.own_missing, run.foreign,
		  run.full_after_switch_in, run.partner_rounds, run.partner_foreign,
		  run.partner_own_missing, run.bystander_rounds);
	check_eq(LBR_OK, run.attach);
	check_eq(LBR_OK, run.partner_attach);
	check_eq(LBR_ERROR_BUSY, run.attach_again);
	check_eq(LBR_ERROR_BUSY, run.read_other_cpu);
	check_eq(LBR_OK, run.detach);
	check_eq(ROUNDS, run.rounds);
	check(run.rounds > run.unswitched, "no round switched to the partner and back");
	check_eq(0, run.own_missing);
	check_eq(0, run.foreign);
	/* The path back from a switch and the read take about 22 conditional branches on the
	 * model: a stack of fewer than 32 entries is full after it with or without the wipe. */
	if (lbr_support()->depth >= ENTRIES)
		check_eq(0, run.full_after_switch_in);
	else
		test_diag("%u entries: a full stack after a switch-in is not judged",
			  lbr_support()->depth);
	check(run.bystander_rounds >= 2, "CPU 0's bystander switched in %u times",
	      run.bystander_rounds);
	check(run.partner_rounds >= ROUNDS / 2, "the partner made %u rounds", run.partner_rounds);
	check_eq(0, run.partner_foreign);
	check_eq(0, run.partner_own_missing);
	check_eq(LBR_ERROR_NOT_ATTACHED, lbr_read_cpu(0, entries, ENTRIES, &count));
	check_eq(0, count);
	check_eq(0, run.after0.stack_writes - run.before0.stack_writes);
	check_eq(0, run.after0.select_writes - run.before0.select_writes);
	check_eq(0, run.after0.debugctl_writes - run.before0.debugctl_writes);
}

/* The rules of a CPU's request: no call-stack mode, no CPU past the last, one at a time. */
TEST(lbr, a_cpu_request_refuses_call_stack_mode_and_unknown_cpus)
{
	struct lbr_config call_stack = { .user = true,
					 .branches = LBR_BRANCH_CALLS_AND_RETURNS,
					 .call_stack = true };
	struct lbr_config all = { .kernel = true, .user = true, .branches = LBR_BRANCH_ALL };

	require_lbr();
	check_eq(lbr_support()->call_stack ? LBR_ERROR_CONFIG : LBR_ERROR_UNSUPPORTED,
		 lbr_attach_cpu(0, &call_stack));
	check_eq(LBR_ERROR_NO_TARGET, lbr_attach_cpu(percpu_count(), &all));
	check_eq(LBR_ERROR_NOT_ATTACHED, lbr_detach_cpu(0));
	check_eq(LBR_ERROR_NO_TARGET, lbr_detach_cpu(percpu_count()));
}
