/* SPDX-License-Identifier: MIT */
/* lbr suite: each task's entries are its own across switches and migrations, and what they cost. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/cpu.h"
#include "arch/x86/percpu.h"
#include "arch/x86/user.h"
#include "lbr/lbr.h"
#include "runner/test.h"
#include "sched/sched.h"
#include "sched/task.h"
#include "tests/kernel/lib/lbr_probe.h"
#include "tests/kernel/lib/lbr_util.h"
#include "tests/kernel/lib/smp_util.h"

#define ENTRIES LBR_LEGACY_MAX_DEPTH
#define ROUNDS 12
#define MIGRATION_ROUNDS 4 /* rounds on each CPU */
#define OWN_CALLS 8 /* of its probe, each round: 8 or 24 conditional branches */

static unsigned int self(void)
{
	return sched_current()->index;
}

static bool in_range(uint64_t address, const void *first, const void *end)
{
	return address >= (uint64_t)first && address < (uint64_t)end;
}

/* One of two tasks that record different code on one CPU, switching at each round. */
struct recorder {
	bool other; /* runs lbr_probe_other(), else lbr_probe() */
	volatile bool *stop;
	unsigned int rounds, foreign, own_missing, older_than_switch_in, full_after_switch_in;
	unsigned int fewest_after_switch_in, unswitched;
	enum lbr_error attach;
	unsigned int last_count;
	struct lbr_entry last[ENTRIES];
};

static unsigned int foreign_entries(const struct recorder *r, const struct lbr_entry *entries,
				    unsigned int count)
{
	unsigned int foreign = 0;

	for (unsigned int i = 0; i < count; i++)
		if (r->other ? in_range(entries[i].from, lbr_probe, lbr_probe_end)
			     : in_range(entries[i].from, lbr_probe_other, lbr_probe_other_end))
			foreign++;
	return foreign;
}

/*
 * Each round: its own code, then a read, which must hold its own branches and none of the
 * other task's; a yield, and a read as soon as it is back, which must hold nothing from before
 * its switch-in: the stack was wiped there (Linux: entries carry no address-space tag), so it
 * holds none of the other task's branches and is not full. Both record conditional branches
 * only (LBR_SELECT), so that the path back from the switch and the read take few entries, and
 * the other task's last branches before its switch-out are its own code's.
 */
static void record_own_code(void *arg)
{
	struct recorder *r = arg;
	struct lbr_config config = { .kernel = true, .branches = LBR_BRANCH_JCC };
	unsigned int task = self(), count;
	uint64_t wipes;
	bool switched;

	r->fewest_after_switch_in = ENTRIES;
	r->attach = lbr_attach(task, &config);
	if (r->attach != LBR_OK)
		return;
	while (!*r->stop && r->rounds < ROUNDS) {
		struct lbr_entry entries[ENTRIES];
		unsigned long flags = local_irq_save();
		bool own = false;

		for (int i = 0; i < OWN_CALLS; i++) {
			if (r->other)
				lbr_probe_other();
			else
				lbr_probe();
		}
		lbr_read(task, entries, ENTRIES, &count);
		local_irq_restore(flags);
		for (unsigned int i = 0; i < count; i++)
			own |= r->other ? in_range(entries[i].from, lbr_probe_other,
						   lbr_probe_other_end)
					: entries[i].from == (uint64_t)lbr_probe_jcc;
		r->own_missing += !own;
		r->foreign += foreign_entries(r, entries, count);
		wipes = lbr_stats(this_cpu_index()).wipes;
		sched_yield();
		switched = lbr_stats(this_cpu_index()).wipes != wipes;
		lbr_read(task, r->last, ENTRIES, &count);
		r->unswitched += !switched;
		r->last_count = count;
		r->foreign += foreign_entries(r, r->last, count);
		/* A yield that found nobody else to run kept the stack: the last ones may. */
		r->full_after_switch_in += switched && count == lbr_support()->depth;
		if (count < r->fewest_after_switch_in)
			r->fewest_after_switch_in = count;
		r->rounds++;
	}
	lbr_detach(task);
}

TEST_OBSERVING(lbr, two_tasks_recording_different_code_each_read_only_their_own, 30000)
{
	volatile bool stop = false;
	struct recorder a = { .other = false, .stop = &stop }, b = { .other = true, .stop = &stop };
	struct task *ta, *tb;

	require_lbr();
	if (!lbr_support()->select || lbr_support()->depth < ENTRIES)
		test_skip(
			"%u entries%s: the path back from a switch and the read (about 22 "
			"conditional branches on the model) would fill the stack, so a missed wipe "
			"could not show",
			lbr_support()->depth, lbr_support()->select ? "" : " and no LBR_SELECT");
	/* Both on CPU 0, so that each yield switches to the other (and the wipe of the switch-in
	 * counts on that CPU). */
	ta = smp_task_on(0, "lbr-a", record_own_code, &a);
	tb = smp_task_on(0, "lbr-b", record_own_code, &b);
	check_eq(0, task_join(ta, NULL));
	check_eq(0, task_join(tb, NULL));
	test_diag("rounds %u/%u; after each switch-in at most %u entries, full %u/%u times",
		  a.rounds, b.rounds, a.last_count, a.full_after_switch_in, b.full_after_switch_in);
	for (unsigned int i = 0; i < a.last_count; i++)
		test_diag("task a after its last switch-in: entry %u 0x%llx -> 0x%llx", i,
			  (unsigned long long)a.last[i].from, (unsigned long long)a.last[i].to);
	check_eq(LBR_OK, a.attach);
	check_eq(LBR_OK, b.attach);
	check_eq(ROUNDS, a.rounds);
	check_eq(ROUNDS, b.rounds);
	check_eq(0, a.foreign + b.foreign);
	check_eq(0, a.own_missing + b.own_missing);
	check_eq(0, a.full_after_switch_in + b.full_after_switch_in);
	/* Until both run on CPU 0 a yield may find nobody to switch to: most must switch. */
	check(a.rounds + b.rounds - a.unswitched - b.unswitched >= ROUNDS,
	      "only %u of %u yields switched to the other task",
	      a.rounds + b.rounds - a.unswitched - b.unswitched, a.rounds + b.rounds);
}

/* Shared with user_lbr_levels (tests/kernel/lib/lbr_user.asm); offsets fixed there. */
struct lbr_user_rounds {
	volatile uint64_t rounds;
	volatile uint64_t stop;
};

extern const char user_lbr_levels[], user_lbr_level_1[], user_lbr_level_2[];

/*
 * A ring-3 call-stack task's saved stack, read while it is off the CPU: its two levels of
 * calls, newest first, nothing older (the attach wiped the stack), and above them at most the
 * CALL of the system-call gate it yielded through (a preemption between calls has none).
 */
static bool stack_is_levels(const struct lbr_entry *entries, unsigned int count)
{
	uint64_t level_1 = user_text_address(user_lbr_level_1);
	uint64_t level_2 = user_text_address(user_lbr_level_2);
	unsigned int k = count == 3 ? 1 : 0;

	return (count == 2 || count == 3) && entries[k].to == level_2 &&
	       entries[k + 1].to == level_1;
}

static void print_stack(const char *what, const struct lbr_entry *entries, unsigned int count)
{
	for (unsigned int i = 0; i < count; i++)
		test_diag("%s: entry %u 0x%llx -> 0x%llx", what, i,
			  (unsigned long long)entries[i].from, (unsigned long long)entries[i].to);
	test_diag("user_lbr_level_1 0x%llx user_lbr_level_2 0x%llx",
		  (unsigned long long)user_text_address(user_lbr_level_1),
		  (unsigned long long)user_text_address(user_lbr_level_2));
}

/* The ring-3 task, stopped, recording its calls and returns in call-stack mode. */
static struct task *levels_task(struct lbr_user_rounds **rounds)
{
	struct lbr_config config = { .user = true,
				     .branches = LBR_BRANCH_CALLS_AND_RETURNS,
				     .call_stack = true };
	struct task *task =
		task_create_user("lbr-levels", user_lbr_levels, USER_DATA_BASE, TASK_START_STOPPED);
	enum lbr_error error;

	if (!task)
		test_abort("task_create_user failed");
	*rounds = task_user_data(task);
	**rounds = (struct lbr_user_rounds){ 0 };
	error = lbr_attach(task->index, &config);
	if (error != LBR_OK)
		test_abort("lbr_attach: %s", lbr_error_name(error));
	return task;
}

/* Wait until the task has made another round (it is off the CPU again after it). */
static void next_round(const struct lbr_user_rounds *rounds)
{
	uint64_t start = rounds->rounds;

	while (rounds->rounds == start)
		sched_yield();
}

/*
 * Linux's elision (__intel_pmu_lbr_restore()): a call-stack task switched out to a task that
 * records nothing (the runner) and back finds its stack as it left it, and its switch-in writes
 * no LBR MSR (stack, TOS, LBR_SELECT): this CPU still holds the stack. The runner and the task
 * share CPU 0, so each of the runner's yields is one round trip.
 */
TEST_OBSERVING_USER(lbr, a_call_stack_survives_a_switch_with_no_lbr_write, 2000)
{
	struct lbr_entry entries[ENTRIES];
	struct lbr_user_rounds *rounds;
	struct lbr_stats before, after;
	unsigned int count = 0, broken = 0;
	struct task *task;

	require_call_stack();
	task = levels_task(&rounds);
	task_continue(task);
	next_round(rounds); /* the first switch-in wiped; from here on it is restored or kept */
	before = lbr_stats(0);
	for (int round = 0; round < ROUNDS; round++) {
		next_round(rounds);
		check_eq(LBR_OK, lbr_read(task->index, entries, ENTRIES, &count));
		if (!stack_is_levels(entries, count) && broken++ == 0)
			print_stack("round", entries, count);
	}
	after = lbr_stats(0);
	rounds->stop = 1;
	check_eq(0, task_join(task, NULL));
	print_stack("last", entries, count);
	test_diag("%d rounds: %llu stack writes, %llu LBR_SELECT writes, %llu restores, %llu "
		  "skipped, %llu wipes",
		  ROUNDS, (unsigned long long)(after.stack_writes - before.stack_writes),
		  (unsigned long long)(after.select_writes - before.select_writes),
		  (unsigned long long)(after.restores - before.restores),
		  (unsigned long long)(after.restores_elided - before.restores_elided),
		  (unsigned long long)(after.wipes - before.wipes));
	check_eq(0, broken);
	check_eq(0, after.stack_writes - before.stack_writes);
	check_eq(0, after.select_writes - before.select_writes);
	check_eq(0, after.restores - before.restores);
	check(after.restores_elided - before.restores_elided >= ROUNDS, "%llu restores skipped",
	      (unsigned long long)(after.restores_elided - before.restores_elided));
}

/* A partner that records nothing: each yield of the task on its CPU switches to it and back. */
static void yield_until_stopped(void *arg)
{
	volatile bool *stop = arg;

	while (!*stop)
		sched_yield();
}

/*
 * Migration: the call-stack task moves to CPU 1 and back, a partner on CPU 1; after every
 * switch its stack is still its own calls, restored on the CPU that did not hold it (the
 * log_id changed with its save elsewhere).
 */
TEST_OBSERVING_USER(lbr, a_call_stack_is_restored_on_the_cpu_it_migrates_to, 4000)
{
	struct lbr_stats cpu0_before, cpu1_before;
	struct lbr_entry entries[ENTRIES];
	struct lbr_user_rounds *rounds;
	volatile bool stop = false;
	unsigned int count = 0, broken = 0;
	struct task *task, *partner;

	smp_require_cpus(2);
	require_call_stack();
	task = levels_task(&rounds);
	partner = smp_task_on(1, "lbr-partner", yield_until_stopped, (void *)&stop);
	task_continue(task);
	next_round(rounds);
	cpu0_before = lbr_stats(0);
	cpu1_before = lbr_stats(1);
	for (unsigned int move = 1; move <= 2; move++) {
		check_eq(0, sched_migrate(task, move % 2));
		for (int round = 0; round < MIGRATION_ROUNDS; round++) {
			uint64_t start = rounds->rounds;

			while (rounds->rounds < start + 1)
				sched_yield();
			check_eq(LBR_OK, lbr_read(task->index, entries, ENTRIES, &count));
			if (!stack_is_levels(entries, count) && broken++ == 0)
				print_stack("round", entries, count);
		}
	}
	rounds->stop = 1;
	check_eq(0, task_join(task, NULL));
	stop = true;
	check_eq(0, task_join(partner, NULL));
	print_stack("last", entries, count);
	test_diag("CPU 1: %llu restores, %llu skipped; CPU 0: %llu restores, %llu skipped",
		  (unsigned long long)(lbr_stats(1).restores - cpu1_before.restores),
		  (unsigned long long)(lbr_stats(1).restores_elided - cpu1_before.restores_elided),
		  (unsigned long long)(lbr_stats(0).restores - cpu0_before.restores),
		  (unsigned long long)(lbr_stats(0).restores_elided - cpu0_before.restores_elided));
	check_eq(0, broken);
	check(lbr_stats(1).restores > cpu1_before.restores, "CPU 1 restored no stack");
	check(lbr_stats(0).restores > cpu0_before.restores, "CPU 0 restored no stack on return");
}

/* A kernel task that records every kind of branch in ring 0 and yields, until told to stop. */
static void record_and_yield(void *arg)
{
	volatile bool *stop = arg;
	struct lbr_config config = { .kernel = true, .branches = LBR_BRANCH_ALL };

	if (lbr_attach(self(), &config) != LBR_OK)
		return;
	while (!*stop) {
		/* More than a 32-deep stack: the entry at the other task's TOS is overwritten. */
		for (int i = 0; i < OWN_CALLS; i++)
			lbr_probe();
		sched_yield();
	}
	lbr_detach(self());
}

/* One run of restores: the task's last stack, and the counts on CPU 0. */
struct restore_run {
	struct lbr_entry last[ENTRIES];
	unsigned int count, broken;
	struct lbr_stats before, after;
	uint64_t xrstors_executed; /* this_cpu()->writes.xrstors, the instructions themselves */
};

/*
 * ROUNDS runs of a call-stack task on CPU 0, a ring-0 recorder between each two of them: its
 * switch-in wipes the stack, so each of the task's restores it. label names a broken round.
 */
static void recorded_rounds(const char *label, struct restore_run *run)
{
	struct lbr_user_rounds *rounds;
	volatile bool stop = false;
	struct task *task, *recorder;
	uint64_t executed;

	task = levels_task(&rounds);
	recorder = smp_task_on(0, "lbr-recorder", record_and_yield, (void *)&stop);
	if (sched_migrate(task, 0) != 0)
		test_abort("sched_migrate refused");
	task_continue(task);
	next_round(rounds);
	run->before = lbr_stats(0);
	executed = this_cpu()->writes.xrstors;
	for (int round = 0; round < ROUNDS; round++) {
		next_round(rounds);
		check_eq(LBR_OK, lbr_read(task->index, run->last, ENTRIES, &run->count));
		if (!stack_is_levels(run->last, run->count) && run->broken++ == 0)
			print_stack(label, run->last, run->count);
	}
	run->after = lbr_stats(0);
	run->xrstors_executed = this_cpu()->writes.xrstors - executed;
	rounds->stop = 1;
	check_eq(0, task_join(task, NULL));
	stop = true;
	check_eq(0, task_join(recorder, NULL));
}

/* recorded_rounds(), the stack saved and restored by XSAVES and XRSTORS or by the MSR loop. */
static void restore_rounds(bool xsaves, struct restore_run *run)
{
	lbr_set_xsaves(xsaves);
	recorded_rounds(xsaves ? "XRSTORS round" : "MSR loop round", run);
}

/*
 * Another task recorded on the CPU between two runs of the call-stack task: its switch-in wiped
 * the stack (and this CPU forgot whose it held, as intel_pmu_lbr_reset() clears last_task_ctx),
 * so the call-stack task's switch-in restores every entry and TOS. The writes are exact
 * (lbr_expected_stack_writes()).
 */
TEST_OBSERVING(lbr, a_call_stack_is_restored_after_another_task_recorded, 6000)
{
	static struct restore_run run;
	uint64_t restores, wipes;

	require_call_stack();
	run = (struct restore_run){ 0 };
	recorded_rounds("round", &run);
	restores = run.after.restores - run.before.restores;
	wipes = run.after.wipes - run.before.wipes;
	test_diag("%d rounds: %llu restores, %llu skipped, %llu wipes, %llu stack writes", ROUNDS,
		  (unsigned long long)restores,
		  (unsigned long long)(run.after.restores_elided - run.before.restores_elided),
		  (unsigned long long)wipes,
		  (unsigned long long)(run.after.stack_writes - run.before.stack_writes));
	check_eq(0, run.broken);
	check(restores >= ROUNDS, "%llu restores in %d rounds", (unsigned long long)restores,
	      ROUNDS);
	check_eq(lbr_expected_stack_writes(&run.before, &run.after),
		 run.after.stack_writes - run.before.stack_writes);
}

static uint64_t run_count(const struct restore_run *run, size_t offset)
{
	return *(const uint64_t *)((const char *)&run->after + offset) -
	       *(const uint64_t *)((const char *)&run->before + offset);
}

#define RUN_COUNT(run, field) run_count((run), offsetof(struct lbr_stats, field))

/*
 * Architectural LBR with XSAVES (Linux intel_pmu_arch_lbr_xsaves()/_xrstors()): the same
 * call-stack task, its stack wiped by a recorder between each two of its runs, is restored
 * first by one XRSTORS per restore and no stack WRMSR, then by the MSR loop's 3 WRMSRs per
 * entry (and DEPTH) and no XRSTORS; each run's stacks are its two levels, and the last stack of
 * each is the same entries.
 */
TEST_OBSERVING(lbr, xsaves_and_the_msr_loop_restore_the_same_stack, 12000)
{
	static struct restore_run by_xsaves, by_msrs;
	bool was = lbr_uses_xsaves();

	require_call_stack();
	if (!lbr_support()->xsaves)
		test_skip("the MSR loop only: %s",
			  lbr_support()->architectural ? lbr_support()->xsaves_reason
						       : "model-specific LBR has no XSAVES state");
	if (this_cpu_index() != 0)
		test_abort("the runner is on CPU %u: the counts are CPU 0's", this_cpu_index());
	by_xsaves = (struct restore_run){ 0 };
	by_msrs = (struct restore_run){ 0 };
	restore_rounds(true, &by_xsaves);
	restore_rounds(false, &by_msrs);
	lbr_set_xsaves(was);
	test_diag("XRSTORS: %llu restores, %llu XRSTORS (%llu executed), %llu stack writes, %llu "
		  "wipes",
		  (unsigned long long)RUN_COUNT(&by_xsaves, restores),
		  (unsigned long long)RUN_COUNT(&by_xsaves, xrstors),
		  (unsigned long long)by_xsaves.xrstors_executed,
		  (unsigned long long)RUN_COUNT(&by_xsaves, stack_writes),
		  (unsigned long long)RUN_COUNT(&by_xsaves, wipes));
	test_diag("MSR loop: %llu restores of %llu entries, %llu XRSTORS, %llu stack writes, "
		  "%llu wipes",
		  (unsigned long long)RUN_COUNT(&by_msrs, restores),
		  (unsigned long long)RUN_COUNT(&by_msrs, restored_entries),
		  (unsigned long long)by_msrs.xrstors_executed,
		  (unsigned long long)RUN_COUNT(&by_msrs, stack_writes),
		  (unsigned long long)RUN_COUNT(&by_msrs, wipes));
	print_stack("XRSTORS last", by_xsaves.last, by_xsaves.count);
	print_stack("MSR loop last", by_msrs.last, by_msrs.count);
	check_eq(0, by_xsaves.broken);
	check_eq(0, by_msrs.broken);
	check(RUN_COUNT(&by_xsaves, restores) >= ROUNDS, "%llu restores by XRSTORS",
	      (unsigned long long)RUN_COUNT(&by_xsaves, restores));
	check_eq(RUN_COUNT(&by_xsaves, restores), RUN_COUNT(&by_xsaves, xrstors));
	check_eq(RUN_COUNT(&by_xsaves, xrstors), by_xsaves.xrstors_executed);
	check_eq(RUN_COUNT(&by_xsaves, saves), RUN_COUNT(&by_xsaves, xsaves));
	check_eq(RUN_COUNT(&by_xsaves, wipes), RUN_COUNT(&by_xsaves, stack_writes));
	check_eq(0, RUN_COUNT(&by_xsaves, restored_entries));
	check(RUN_COUNT(&by_msrs, restores) >= ROUNDS, "%llu restores by the MSR loop",
	      (unsigned long long)RUN_COUNT(&by_msrs, restores));
	check_eq(0, RUN_COUNT(&by_msrs, xrstors));
	check_eq(0, RUN_COUNT(&by_msrs, xsaves));
	check_eq(0, by_msrs.xrstors_executed);
	check_eq(lbr_expected_stack_writes(&by_msrs.before, &by_msrs.after),
		 RUN_COUNT(&by_msrs, stack_writes));
	check(RUN_COUNT(&by_msrs, restored_entries) >= 2 * RUN_COUNT(&by_msrs, restores),
	      "%llu entries in %llu restores",
	      (unsigned long long)RUN_COUNT(&by_msrs, restored_entries),
	      (unsigned long long)RUN_COUNT(&by_msrs, restores));
	if (stack_is_levels(by_xsaves.last, by_xsaves.count) &&
	    stack_is_levels(by_msrs.last, by_msrs.count)) {
		unsigned int kx = by_xsaves.count - 2, km = by_msrs.count - 2;

		for (unsigned int i = 0; i < 2; i++) {
			check_eq(by_xsaves.last[kx + i].from, by_msrs.last[km + i].from);
			check_eq(by_xsaves.last[kx + i].to, by_msrs.last[km + i].to);
		}
	}
}
