/* SPDX-License-Identifier: MIT */
/* dr suite: breakpoints belong to their task: only the owner traps, and switches keep them. */
#include <stddef.h>

#include "arch/x86/debug-registers.h"
#include "runner/test.h"
#include "sched/sched.h"
#include "tests/kernel/lib/budget.h"
#include "tests/kernel/lib/dr_targets.h"

/* Yields per checker: budget=quick 300, budget=soak 2,000 (docs/platforms.md: what a switch
 * costs). */
#define SWITCH_ROUNDS_QUICK 300
#define SWITCH_ROUNDS_SOAK 2000
#define CHECKERS 3

struct caller {
	volatile bool released;
	unsigned int hits;
	unsigned int calls;
};

static void call_the_target(void *arg)
{
	struct caller *caller = arg;
	struct dr_hit hits[16];

	for (int i = 0; i < 4; i++) {
		dr_target_function();
		caller->calls++;
		sched_yield();
	}
	caller->hits = dr_target_hits(hits);
	while (!caller->released)
		sched_yield();
}

TEST(dr, only_the_owner_of_a_breakpoint_on_shared_code_traps)
{
	struct caller owner = { false, 0, 0 }, other = { false, 0, 0 };
	struct task *owner_task = task_create("owner", call_the_target, &owner, TASK_START_STOPPED);
	struct task *other_task = task_create("other", call_the_target, &other, TASK_START_STOPPED);
	struct dr_breakpoint breakpoint = { (uint64_t)dr_target_function, DR_TYPE_EXECUTE, 1 };

	/* Attached while the owner is stopped: it takes effect when it next runs. */
	check_eq(0, dr_install(owner_task->index, &breakpoint, NULL, NULL));
	task_continue(owner_task);
	task_continue(other_task);
	while (owner.calls < 4 || other.calls < 4)
		sched_yield();
	owner.released = other.released = true;
	task_join(owner_task, NULL);
	task_join(other_task, NULL);
	check_eq(4, owner.hits);
	check_eq(0, other.hits);
}

/* Each checker holds its own configuration and compares the registers with it after yields. */
struct checker {
	unsigned int number;
	unsigned int mismatches;
	unsigned int rounds;
};

static void check_registers_across_switches(void *arg)
{
	struct checker *checker = arg;
	unsigned int count = checker->number + 1; /* checker k holds k + 1 breakpoints */
	unsigned int rounds = (unsigned int)budget_count(SWITCH_ROUNDS_QUICK, SWITCH_ROUNDS_SOAK);

	for (unsigned int i = 0; i < count; i++)
		dr_target_install((uint64_t)&dr_target_unused[checker->number + i], DR_TYPE_WRITE,
				  8);
	for (checker->rounds = 0; checker->rounds < rounds; checker->rounds++) {
		sched_yield();
		for (unsigned int slot = 0; slot < DR_SLOTS; slot++) {
			enum dr_type type;
			unsigned int length;
			bool enabled = dr7_decode(read_dr7(), slot, &type, &length);
			bool want = slot < count;

			if (enabled != want ||
			    (want && (read_dr_address(slot) !=
					      (uint64_t)&dr_target_unused[checker->number + slot] ||
				      type != DR_TYPE_WRITE || length != 8)))
				checker->mismatches++;
		}
	}
}

TEST(dr, registers_hold_each_tasks_configuration_across_many_switches)
{
	struct checker checkers[CHECKERS];
	struct task *tasks[CHECKERS];

	for (unsigned int i = 0; i < CHECKERS; i++) {
		checkers[i] = (struct checker){ i, 0, 0 };
		tasks[i] = task_create("checker", check_registers_across_switches, &checkers[i],
				       TASK_START_RUNNABLE);
	}
	for (unsigned int i = 0; i < CHECKERS; i++) {
		task_join(tasks[i], NULL);
		check(checkers[i].mismatches == 0 &&
			      checkers[i].rounds ==
				      budget_count(SWITCH_ROUNDS_QUICK, SWITCH_ROUNDS_SOAK),
		      "checker %u: %u mismatches in %u rounds", i, checkers[i].mismatches,
		      checkers[i].rounds);
	}
	/* Their exits gave every slot back. */
	check_eq(DR_SLOTS, dr_task_free_slots(sched_current()->index));
}
