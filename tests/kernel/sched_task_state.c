/* SPDX-License-Identifier: MIT */
/* sched suite: an exited task's index takes no state; a pointer that is no task is refused. */
#include <stdint.h>

#include "arch/x86/exceptions.h"
#include "dr/dr.h"
#include "ds/ds.h"
#include "pmu/pmu.h"
#include "runner/test.h"
#include "sched/sched.h"

static volatile uint64_t watched[4] __attribute__((aligned(64)));

static void return_at_once(void *arg)
{
	(void)arg;
}

/*
 * Breakpoints (all four: they would also hold the reservation's slots), a counter and a Debug
 * Store area, asked for on the index of a task that exited and was joined, are refused; the
 * next task given that index starts with none of them.
 */
TEST(sched, an_exited_tasks_index_takes_no_state_and_its_next_task_inherits_none)
{
	static const struct pmu_event instructions = { .event = 0xc0, .kernel = true };
	struct ds_bts_config config = { .records = 16, .circular = true };
	unsigned int runner = sched_current()->index;
	unsigned int free_slots = dr_task_free_slots(runner);
	struct task *task = task_create("exits", return_at_once, NULL, TASK_START_RUNNABLE);
	struct ds_target target = { false, 0 };
	int slot;

	if (!task)
		test_abort("task_create failed");
	target.index = task->index;
	check_eq(0, task_join(task, NULL));
	for (unsigned int i = 0; i < DR_SLOTS; i++) {
		struct dr_breakpoint breakpoint = { (uint64_t)&watched[i], DR_TYPE_WRITE, 8 };

		check_eq(-DR_ERROR_NO_TASK, dr_install(target.index, &breakpoint, NULL, NULL));
	}
	check_eq(-DR_ERROR_NO_TASK, dr_set_single_step(target.index, true));
	check_eq(free_slots, dr_task_free_slots(runner));
	/* No task needs the four slots: a system-wide breakpoint takes one. */
	slot = dr_install_system(&(struct dr_breakpoint){ (uint64_t)&watched[0], DR_TYPE_WRITE, 8 },
				 NULL, NULL);
	check(slot >= 0, "dr_install_system: %s", slot < 0 ? dr_error_name(-slot) : "ok");
	if (slot >= 0)
		check_eq(0, dr_uninstall_system(slot));
	if (pmu_usable())
		check_eq(-1, pmu_add_event(target.index, &instructions));
	if (!ds_support()->bts_reason[0])
		check_eq(DS_ERROR_NO_TARGET, ds_attach_bts(&target, &config));
	/* Out of every table: refused before any lock, not met as a fault under one. */
	check_eq(-DR_ERROR_NO_TASK,
		 dr_install(UINT32_MAX,
			    &(struct dr_breakpoint){ (uint64_t)&watched[0], DR_TYPE_WRITE, 8 },
			    NULL, NULL));
	target.index = UINT32_MAX;
	check_eq(DS_ERROR_NO_TARGET, ds_attach_bts(&target, &config));
	check(ds_area_get(&target) == NULL, "an area out of the table");

	task = task_create("inherits", return_at_once, NULL, TASK_START_STOPPED);
	if (!task)
		test_abort("task_create failed");
	target.index = task->index;
	check_eq(0, dr_task_count(target.index));
	check(ds_area_get(&target) == NULL, "the new task has a Debug Store area");
	if (pmu_usable()) { /* its set is empty: the first event gets index 0 */
		check_eq(0, pmu_add_event(target.index, &instructions));
		/* Not counted: the emulated CPU would step the task (docs/platforms.md). */
		check(pmu_release(target.index), "the event was not there to release");
	}
	task_continue(task);
	check_eq(0, task_join(task, NULL));
}

/* Non-canonical: any access is #GP(0), whatever the page tables map. */
#define NON_CANONICAL 0x8000000000000000ull

static void use_stray_task_pointers(void *arg)
{
	struct task *strays[] = { NULL, (struct task *)NON_CANONICAL,
				  (struct task *)((uintptr_t)sched_current() + 8) };
	unsigned int *refused = arg;

	for (unsigned int i = 0; i < sizeof(strays) / sizeof(strays[0]); i++) {
		*refused += task_join(strays[i], NULL) == TASK_JOIN_NO_TASK;
		*refused += sched_migrate(strays[i], 0) == -1;
		task_stop(strays[i]);
		task_continue(strays[i]);
		sched_wake(strays[i]);
		sched_interrupt(strays[i]);
	}
}

/*
 * NULL, a non-canonical pointer and one into the middle of a task are refused before the
 * scheduler's lock (else the fault, under it, ends the run); so is joining oneself.
 */
TEST(sched, a_pointer_that_is_no_task_is_refused_before_the_lock)
{
	struct isolation_outcome outcome;
	unsigned int refused = 0;

	runner_isolate(use_stray_task_pointers, &refused, 1000, &outcome);
	check(outcome.end == ISOLATION_RETURNED, "end %u, vector %u, rip 0x%llx", outcome.end,
	      outcome.vector, (unsigned long long)outcome.rip);
	check_eq(6, refused);
	check_eq(TASK_JOIN_NO_TASK, task_join(sched_current(), NULL));
}
