/* SPDX-License-Identifier: MIT */
/* dr suite: how many debug-register writes a context switch makes, lazy and eager. */
#include "arch/x86/debugreg.h"
#include "arch/x86/percpu.h"
#include "runner/test.h"
#include "sched/sched.h"
#include "tests/kernel/lib/dr_targets.h"
#include "tests/kernel/lib/switch_window.h"

#define ROUNDS 100
#define EAGER_WRITES_PER_SWITCH 6 /* DR7 to reset, DR0-DR3, DR7 */

struct measured {
	uint64_t dr_writes;
	uint64_t switches;
};

/* Give the two tasks their breakpoints (k of them differ), run them, return the window. */
static struct measured run_pair(unsigned int differing)
{
	struct switch_window window = { .rounds = ROUNDS, .witnessed = true };
	struct task *a = task_create("a", switch_window_measure, &window, TASK_START_STOPPED);
	struct task *b = task_create("b", switch_window_yield, &window, TASK_START_STOPPED);

	for (unsigned int slot = 0; slot < DR_SLOTS; slot++) {
		struct dr_breakpoint same = { (uint64_t)&dr_target_unused[slot], DR_TYPE_WRITE, 8 };
		struct dr_breakpoint other = { (uint64_t)&dr_target_unused[4 + slot], DR_TYPE_WRITE,
					       8 };

		dr_install(a->index, &same, NULL, NULL);
		dr_install(b->index, slot < differing ? &other : &same, NULL, NULL);
	}
	task_continue(a);
	task_continue(b);
	task_join(a, NULL);
	task_join(b, NULL);
	test_diag("%u differing slots, %s: %llu DR writes in %llu switches", differing,
		  dr_is_lazy() ? "lazy" : "eager", (unsigned long long)window.writes.dr,
		  (unsigned long long)window.switches);
	return (struct measured){ window.writes.dr, window.switches };
}

TEST(dr, switch_between_identical_configurations_writes_nothing)
{
	struct measured measured = run_pair(0);

	check(measured.switches >= ROUNDS, "%llu switches", (unsigned long long)measured.switches);
	check_eq(0, measured.dr_writes);
}

TEST(dr, switch_between_configurations_differing_in_k_slots_writes_at_most_k_plus_2)
{
	for (unsigned int k = 1; k <= DR_SLOTS; k++) {
		struct measured measured = run_pair(k);

		/* Stated bound: k address writes, plus one DR7 write to disable the k slots
		 * before their addresses change and one to enable them again. */
		check(measured.dr_writes <= (k + 2) * measured.switches,
		      "k=%u: %llu writes in %llu switches, bound %u per switch", k,
		      (unsigned long long)measured.dr_writes, (unsigned long long)measured.switches,
		      k + 2);
		check(measured.dr_writes >= k * measured.switches,
		      "k=%u: only %llu writes in %llu switches", k,
		      (unsigned long long)measured.dr_writes,
		      (unsigned long long)measured.switches);
	}
}

TEST(dr, eager_mode_writes_everything_on_every_switch)
{
	bool lazy = dr_is_lazy();
	struct measured measured;

	dr_set_lazy(false);
	measured = run_pair(0);
	dr_set_lazy(lazy);
	check_eq(EAGER_WRITES_PER_SWITCH * measured.switches, measured.dr_writes);
}
