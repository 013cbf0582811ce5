/* SPDX-License-Identifier: MIT */
/* dr suite: a seeded random sequence of install, uninstall, switch and trigger over 16 tasks,
 * each step checked against a reference model of who owns which slot and what must fire. */
#include "arch/x86/cpu.h"
#include "arch/x86/debug-registers.h"
#include "arch/x86/tsc.h"
#include "runner/test.h"
#include "sched/sched.h"
#include "tests/kernel/lib/budget.h"
#include "tests/kernel/lib/dr_targets.h"

#define STRESS_TASKS 16
/*
 * budget=quick: 1,000 operations, about 400 installs, 250 uninstalls, 50 system-wide
 * changes and 300 runs (each checks every slot's hits against the model), ~19 runs a task.
 * budget=soak: 1,000,000. Either stops early at its time budget, BUDGET_QUICK_MS or
 * BUDGET_SOAK_MS (docs/platforms.md: which platforms reach it).
 */
#define OPERATIONS_QUICK 1000
#define OPERATIONS_SOAK 1000000
#define BUDGET_QUICK_MS 3000
#define BUDGET_SOAK_MS 60000

/* The reference model: plain arrays, no reservation arithmetic shared with dr/. */
struct model_task {
	uint8_t used; /* logical slots in use */
	uint8_t target[DR_SLOTS]; /* which stress target each one watches */
};

struct model {
	struct model_task tasks[STRESS_TASKS];
	uint8_t system_used; /* hardware slots */
	uint8_t system_target[DR_SLOTS];
};

/* What a task reports after a run: its hits per logical slot, and registers vs shadow. */
struct stress_task {
	struct task *task;
	unsigned int hits[DR_SLOTS];
	unsigned int stray_hits;
	bool registers_match_shadow;
	volatile bool done;
	volatile bool released;
};

static struct model model;
static struct stress_task stress[STRESS_TASKS];
static volatile unsigned int system_hits[DR_SLOTS];
static uint64_t random_state;

static uint64_t random_next(void)
{
	/* xorshift64* (Vigna): reproducible from the printed seed. */
	random_state ^= random_state >> 12;
	random_state ^= random_state << 25;
	random_state ^= random_state >> 27;
	return random_state * 0x2545f4914f6cdd1dull;
}

static unsigned int count_bits(uint8_t mask)
{
	unsigned int count = 0;

	for (; mask; mask &= (uint8_t)(mask - 1))
		count++;
	return count;
}

static unsigned int model_max_task(void)
{
	unsigned int max = 0;

	for (unsigned int t = 0; t < STRESS_TASKS; t++)
		if (count_bits(model.tasks[t].used) > max)
			max = count_bits(model.tasks[t].used);
	return max;
}

static bool registers_match_shadow(void)
{
	struct dr_hardware shadow = dr_shadow();

	if (read_dr7() != shadow.dr7)
		return false;
	for (unsigned int slot = 0; slot < DR_SLOTS; slot++)
		if ((shadow.dr7 & dr7_slot_enable_mask(slot)) &&
		    read_dr_address(slot) != shadow.address[slot])
			return false;
	return true;
}

/* A stress task: stopped until the runner continues it, then one run, then stopped again. */
static void stress_task_main(void *arg)
{
	struct stress_task *self = arg;
	struct dr_hit hits[16];

	for (;;) {
		task_stop(sched_current());
		if (self->released)
			return;
		for (unsigned int k = 0; k < DR_STRESS_TARGETS; k++)
			dr_stress_targets[k]();
		self->registers_match_shadow = registers_match_shadow();
		for (unsigned int i = 0, n = dr_target_hits(hits); i < n; i++) {
			if (hits[i].slot < DR_SLOTS)
				self->hits[hits[i].slot]++;
			else
				self->stray_hits++;
		}
		self->done = true;
	}
}

static bool step_install(unsigned int t)
{
	struct model_task *m = &model.tasks[t];
	unsigned int target = (unsigned int)(random_next() % DR_STRESS_TARGETS);
	struct dr_breakpoint breakpoint = { (uint64_t)dr_stress_targets[target], DR_TYPE_EXECUTE,
					    1 };
	bool fits = count_bits(model.system_used) + count_bits(m->used) + 1 <= DR_SLOTS;
	int expected = -DR_ERROR_NO_SLOT, slot;

	if (fits)
		for (expected = 0; m->used & (1u << expected); expected++)
			;
	slot = dr_install(stress[t].task->index, &breakpoint, NULL, NULL);
	if (slot != expected)
		return check_eq(expected, slot);
	if (slot >= 0) {
		m->used |= (uint8_t)(1u << slot);
		m->target[slot] = (uint8_t)target;
	}
	return true;
}

static bool step_uninstall(unsigned int t)
{
	struct model_task *m = &model.tasks[t];
	int slot = (int)(random_next() % DR_SLOTS);
	int expected = (m->used & (1u << slot)) ? 0 : -DR_ERROR_NOT_INSTALLED;

	m->used &= (uint8_t) ~(1u << slot);
	return check_eq(expected, dr_uninstall(stress[t].task->index, slot));
}

static void count_system_hit(const struct dr_hit *hit, struct cpu_regs *regs, void *context)
{
	(void)regs;
	(void)context;
	system_hits[hit->hardware_slot]++;
}

static bool step_system(void)
{
	if (random_next() % 2) {
		unsigned int target = (unsigned int)(random_next() % DR_STRESS_TARGETS);
		struct dr_breakpoint breakpoint = { (uint64_t)dr_stress_targets[target],
						    DR_TYPE_EXECUTE, 1 };
		int expected = -DR_ERROR_NO_SLOT, slot;

		if (count_bits(model.system_used) + 1 + model_max_task() <= DR_SLOTS)
			for (expected = DR_SLOTS - 1; model.system_used & (1u << expected);
			     expected--)
				;
		slot = dr_install_system(&breakpoint, count_system_hit, NULL);
		if (slot != expected)
			return check_eq(expected, slot);
		if (slot >= 0) {
			model.system_used |= (uint8_t)(1u << slot);
			model.system_target[slot] = (uint8_t)target;
		}
		return true;
	} else {
		int slot = (int)(random_next() % DR_SLOTS);
		int expected = (model.system_used & (1u << slot)) ? 0 : -DR_ERROR_NOT_INSTALLED;

		model.system_used &= (uint8_t) ~(1u << slot);
		return check_eq(expected, dr_uninstall_system(slot));
	}
}

/* Run task t once: each of its breakpoints and each system-wide one must fire exactly once. */
static bool step_run(unsigned int t)
{
	struct stress_task *s = &stress[t];
	unsigned int before[DR_SLOTS];
	bool ok = true;

	for (unsigned int slot = 0; slot < DR_SLOTS; slot++) {
		s->hits[slot] = 0;
		before[slot] = system_hits[slot];
	}
	s->stray_hits = 0;
	s->done = false;
	task_continue(s->task);
	while (!s->done)
		sched_yield();
	for (unsigned int slot = 0; slot < DR_SLOTS; slot++) {
		unsigned int want = (model.tasks[t].used >> slot) & 1;
		unsigned int want_system = (model.system_used >> slot) & 1;

		ok &= check(s->hits[slot] == want, "task %u slot %u: %u hits, model %u", t, slot,
			    s->hits[slot], want);
		ok &= check(system_hits[slot] - before[slot] == want_system,
			    "system slot %u: %u hits, model %u", slot,
			    system_hits[slot] - before[slot], want_system);
	}
	ok &= check(s->stray_hits == 0, "task %u: %u stray hits", t, s->stray_hits);
	ok &= check(s->registers_match_shadow, "task %u: registers differ from the shadow", t);
	return ok;
}

/* After every step: each task's count and free slots equal the model's. */
static bool check_reservation(void)
{
	for (unsigned int t = 0; t < STRESS_TASKS; t++) {
		unsigned int held = count_bits(model.tasks[t].used);
		unsigned int free = DR_SLOTS - count_bits(model.system_used) - held;

		if (dr_task_count(stress[t].task->index) != held ||
		    dr_task_free_slots(stress[t].task->index) != free)
			return check(false, "task %u: %u held, %u free; model %u held, %u free", t,
				     dr_task_count(stress[t].task->index),
				     dr_task_free_slots(stress[t].task->index), held, free);
	}
	return true;
}

TEST(dr, stress)
{
	uint64_t operations_max = budget_count(OPERATIONS_QUICK, OPERATIONS_SOAK);
	uint64_t budget = budget_ms(BUDGET_QUICK_MS, BUDGET_SOAK_MS);
	uint64_t start = rdtsc_ordered(), deadline = start + tsc_cycles_from_ms(budget);
	unsigned int operations = 0, runs = 0;
	bool ok = true;

	random_state = test_seed() | 1;
	model = (struct model){ 0 };
	for (unsigned int t = 0; t < STRESS_TASKS; t++) {
		stress[t] = (struct stress_task){ 0 };
		stress[t].task =
			task_create("stress", stress_task_main, &stress[t], TASK_START_RUNNABLE);
	}
	sched_yield(); /* each one runs to its first task_stop() */
	for (; ok && operations < operations_max && rdtsc_ordered() < deadline; operations++) {
		unsigned int t = (unsigned int)(random_next() % STRESS_TASKS);
		unsigned int choice = (unsigned int)(random_next() % 100);

		if (choice < 40)
			ok = step_install(t);
		else if (choice < 65)
			ok = step_uninstall(t);
		else if (choice < 70)
			ok = step_system();
		else {
			ok = step_run(t);
			runs++;
		}
		ok = ok && check_reservation() &&
		     check(registers_match_shadow(), "runner: registers differ from the shadow");
	}
	test_diag("metric dr.stress operations=%u planned=%llu runs=%u milliseconds=%llu seed=%llu "
		  "budget=%s",
		  operations, (unsigned long long)operations_max, runs,
		  (unsigned long long)((rdtsc_ordered() - start) * 1000 / tsc_hz()),
		  (unsigned long long)test_seed(), budget_name());
	if (ok && operations < operations_max)
		test_diag("time budget of %llu ms reached before %llu operations",
			  (unsigned long long)budget, (unsigned long long)operations_max);
	for (unsigned int t = 0; t < STRESS_TASKS; t++) {
		stress[t].released = true;
		task_continue(stress[t].task);
		task_join(stress[t].task, NULL);
	}
	dr_uninstall_all_system();
	check(operations > 0, "no operation ran");
}
