/* SPDX-License-Identifier: MIT */
/* ds_synth suite: areas prepared for stopped tasks, attribution across switches, no MSR writes. */
#include "arch/x86/msr-index.h"
#include "tests/kernel/ds_synth_util.h"

#define ROUNDS 4
#define WINDOW_ROUNDS 200

struct emitter {
	unsigned int per_round;
	uint64_t area_while_running;
	volatile bool done;
};

static void emit_branches(void *arg)
{
	struct emitter *emitter = arg;

	emitter->area_while_running = ds_registers().ds_area;
	for (unsigned int round = 0; round < ROUNDS; round++) {
		for (unsigned int i = 0; i < emitter->per_round; i++)
			ds_synth_branch(SYNTH_FROM + i, SYNTH_TO + i);
		sched_yield();
	}
	emitter->done = true;
}

TEST(ds_synth, area_prepared_for_a_stopped_task_is_activated_when_it_runs)
{
	struct emitter emitter = { .per_round = 5 };
	struct task *task = task_create("emitter", emit_branches, &emitter, TASK_START_STOPPED);
	struct ds_bts_config config = { .records = 64, .threshold_records = 64 };
	struct ds_target target = task_target(task);
	uint64_t area;

	require_synthetic_backend();
	ds_credit_reset(task->index);
	check_attached(ds_attach_bts(&target, &config));
	area = (uint64_t)ds_area_get(&target);
	/* DS_AREA may still hold a freed area's address that this one reuses: what would show an
	 * early activation is tracing on with this area. */
	check(ds_registers().ds_area != area || !(ds_registers().debugctl & DEBUGCTL_BTS),
	      "activated before the task ran: DS_AREA=0x%llx DEBUGCTL=0x%llx",
	      (unsigned long long)ds_registers().ds_area,
	      (unsigned long long)ds_registers().debugctl);
	task_continue(task);
	task_join(task, NULL);
	check_eq(area, emitter.area_while_running);
	/* Its exit drained and freed the area: every record was credited to it. */
	check_eq(ROUNDS * 5, ds_credit(target.index).bts_records);
}

TEST(ds_synth, records_in_a_cpu_area_are_credited_to_the_task_that_wrote_them)
{
	struct emitter a = { .per_round = 3 }, b = { .per_round = 5 };
	struct task *task_a = task_create("a", emit_branches, &a, TASK_START_STOPPED);
	struct task *task_b = task_create("b", emit_branches, &b, TASK_START_STOPPED);
	struct ds_bts_config config = { .records = 64, .threshold_records = 64 };
	struct ds_target target = cpu_target();

	require_synthetic_backend();
	ds_credit_reset(task_a->index);
	ds_credit_reset(task_b->index);
	check_attached(ds_attach_bts(&target, &config));
	task_continue(task_a);
	task_continue(task_b);
	task_join(task_a, NULL);
	task_join(task_b, NULL);
	ds_detach(&target, DS_USER_BTS);
	check_eq(ROUNDS * 3, ds_credit(task_a->index).bts_records);
	check_eq(ROUNDS * 5, ds_credit(task_b->index).bts_records);
}

/* Two tasks yield to each other; the first counts the DS MSR writes of a window. */
struct pair {
	struct ds_msr_writes writes;
	volatile bool done;
};

static void measure_window(void *arg)
{
	struct pair *pair = arg;
	struct ds_msr_writes before;

	sched_yield();
	before = ds_msr_writes();
	for (int i = 0; i < WINDOW_ROUNDS; i++)
		sched_yield();
	pair->writes.ds_area = ds_msr_writes().ds_area - before.ds_area;
	pair->writes.debugctl = ds_msr_writes().debugctl - before.debugctl;
	pair->writes.pebs_enable = ds_msr_writes().pebs_enable - before.pebs_enable;
	pair->done = true;
}

static void yield_until_done(void *arg)
{
	struct pair *pair = arg;

	while (!pair->done)
		sched_yield();
}

/* Run the pair, each with its own BTS area when own_areas; return the window's writes. */
static struct ds_msr_writes run_pair(const char *name, bool own_areas)
{
	struct pair pair = { { 0, 0, 0 }, false };
	struct task *a = task_create("a", measure_window, &pair, TASK_START_STOPPED);
	struct task *b = task_create("b", yield_until_done, &pair, TASK_START_STOPPED);
	struct ds_bts_config config = { .records = 16, .circular = true };

	if (own_areas) {
		struct ds_target target_a = task_target(a), target_b = task_target(b);

		check_attached(ds_attach_bts(&target_a, &config));
		check_attached(ds_attach_bts(&target_b, &config));
	}
	task_continue(a);
	task_continue(b);
	task_join(a, NULL);
	task_join(b, NULL);
	test_diag("%s: DS_AREA %llu, DEBUGCTL %llu, PEBS_ENABLE %llu writes in %u rounds", name,
		  (unsigned long long)pair.writes.ds_area, (unsigned long long)pair.writes.debugctl,
		  (unsigned long long)pair.writes.pebs_enable, WINDOW_ROUNDS);
	return pair.writes;
}

TEST(ds_synth, switches_between_tasks_with_the_same_configuration_write_no_msr)
{
	struct ds_bts_config config = { .records = 16, .circular = true };
	struct ds_target target = cpu_target();
	struct ds_msr_writes none, shared, own;

	none = run_pair("no area", false);
	check_attached(ds_attach_bts(&target, &config));
	shared = run_pair("the CPU's area", false);
	ds_detach(&target, DS_USER_BTS);
	own = run_pair("own areas", true); /* the control: different areas cost writes */
	check_eq(0, none.ds_area + none.debugctl + none.pebs_enable);
	check_eq(0, shared.ds_area + shared.debugctl + shared.pebs_enable);
	check(own.ds_area >= WINDOW_ROUNDS, "own areas: only %llu DS_AREA writes",
	      (unsigned long long)own.ds_area);
}
