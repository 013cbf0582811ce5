/* SPDX-License-Identifier: MIT */
/* dr suite: validation of requests, and the hard reservation of the four slots. */
#include <stddef.h>

#include "arch/x86/debugreg.h"
#include "arch/x86/percpu.h"
#include "runner/test.h"
#include "sched/sched.h"
#include "tests/kernel/lib/dr_targets.h"

static const struct {
	const char *name;
	struct dr_breakpoint breakpoint;
	enum dr_requester requester;
	enum dr_error error;
} refusals[] = {
	{ "unknown type", { 0x1000, (enum dr_type)7, 1 }, DR_REQUESTER_KERNEL, DR_ERROR_TYPE },
	{ "length 3", { 0x1000, DR_TYPE_WRITE, 3 }, DR_REQUESTER_KERNEL, DR_ERROR_LENGTH },
	{ "length 24", { 0x1000, DR_TYPE_WRITE, 24 }, DR_REQUESTER_KERNEL, DR_ERROR_LENGTH },
	{ "execute length 4",
	  { 0x1000, DR_TYPE_EXECUTE, 4 },
	  DR_REQUESTER_KERNEL,
	  DR_ERROR_EXECUTE_LENGTH },
	{ "misaligned 8", { 0x1004, DR_TYPE_WRITE, 8 }, DR_REQUESTER_KERNEL, DR_ERROR_ALIGNMENT },
	{ "misaligned 2",
	  { 0x1001, DR_TYPE_READ_WRITE, 2 },
	  DR_REQUESTER_KERNEL,
	  DR_ERROR_ALIGNMENT },
	{ "non-canonical",
	  { 0x0000800000000000ull, DR_TYPE_WRITE, 8 },
	  DR_REQUESTER_KERNEL,
	  DR_ERROR_NON_CANONICAL },
	{ "user watches the kernel",
	  { 0xffffffff80100000ull, DR_TYPE_WRITE, 8 },
	  DR_REQUESTER_USER,
	  DR_ERROR_KERNEL_ADDRESS },
	{ "user watches the first kernel bytes",
	  { 0xffff800000000000ull, DR_TYPE_READ_WRITE, 1 },
	  DR_REQUESTER_USER,
	  DR_ERROR_KERNEL_ADDRESS },
	{ "user asks for a port", { 0x80, DR_TYPE_IO, 1 }, DR_REQUESTER_USER, DR_ERROR_IO_PORT },
	{ "port above 0xffff", { 0x10000, DR_TYPE_IO, 1 }, DR_REQUESTER_KERNEL, DR_ERROR_IO_PORT },
	{ "port length 8", { 0x80, DR_TYPE_IO, 8 }, DR_REQUESTER_KERNEL, DR_ERROR_IO_PORT },
};

TEST(dr, invalid_requests_are_refused_and_nothing_is_written)
{
	unsigned int task = sched_current()->index;
	unsigned long dr7 = dr_shadow().dr7;
	uint64_t writes = this_cpu()->writes.dr;

	for (size_t i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
		int result = dr_install_as(task, &refusals[i].breakpoint, NULL, NULL,
					   refusals[i].requester);

		check(result == -(int)refusals[i].error, "%s: got %d (%s), expected %s",
		      refusals[i].name, result, result < 0 ? dr_error_name(-result) : "a slot",
		      dr_error_name(refusals[i].error));
	}
	check_eq(0, dr_task_count(task));
	check_eq(dr7, dr_shadow().dr7);
	check_eq(writes, this_cpu()->writes.dr);
}

TEST(dr, a_task_gets_four_slots_and_a_fifth_fails)
{
	unsigned int task = sched_current()->index;
	struct dr_breakpoint fifth = { (uint64_t)&dr_target_unused[4], DR_TYPE_WRITE, 8 };

	for (unsigned int i = 0; i < DR_SLOTS; i++)
		check_eq(i, dr_target_install((uint64_t)&dr_target_unused[i], DR_TYPE_WRITE, 8));
	check_eq(0, dr_task_free_slots(task));
	check_eq(-DR_ERROR_NO_SLOT, dr_install(task, &fifth, NULL, NULL));
	check_eq(DR_SLOTS, dr_task_count(task));
	check_eq(DR_SLOTS, dr_uninstall_all(task));
	check_eq(DR_SLOTS, dr_task_free_slots(task));
}

TEST(dr, many_breakpoints_go_in_all_or_nothing)
{
	unsigned int task = sched_current()->index;
	struct dr_breakpoint three[3] = {
		{ (uint64_t)&dr_target_unused[0], DR_TYPE_WRITE, 8 },
		{ (uint64_t)&dr_target_unused[1], DR_TYPE_WRITE, 8 },
		{ (uint64_t)&dr_target_unused[2], DR_TYPE_WRITE, 8 },
	};
	struct dr_breakpoint bad[2] = {
		{ (uint64_t)&dr_target_unused[3], DR_TYPE_WRITE, 8 },
		{ (uint64_t)&dr_target_unused[4] + 1, DR_TYPE_WRITE, 8 }, /* misaligned */
	};
	int slots[3];

	check_eq(0, dr_install_many(task, three, 2, slots));
	/* One slot left: three more cannot fit, and nothing of them stays. */
	check_eq(-DR_ERROR_NO_SLOT, dr_install_many(task, three, 3, slots));
	check_eq(2, dr_task_count(task));
	check_eq(-DR_ERROR_ALIGNMENT, dr_install_many(task, bad, 2, slots));
	check_eq(2, dr_task_count(task));
	check_eq(2, dr_task_free_slots(task));
	dr_uninstall_all(task);
}

static void hold_two_breakpoints(void *arg)
{
	volatile bool *released = arg;

	dr_target_install((uint64_t)&dr_target_unused[0], DR_TYPE_WRITE, 8);
	dr_target_install((uint64_t)&dr_target_unused[1], DR_TYPE_WRITE, 8);
	while (!*released)
		sched_yield();
}

TEST(dr, system_wide_breakpoints_reduce_every_tasks_slots_and_never_steal)
{
	unsigned int task = sched_current()->index;
	struct dr_breakpoint system = { (uint64_t)&dr_target_unused[6], DR_TYPE_WRITE, 8 };
	volatile bool released = false;
	struct task *holder =
		task_create("holder", hold_two_breakpoints, (void *)&released, TASK_START_RUNNABLE);
	int slots[3];

	while (dr_task_count(holder->index) < 2)
		sched_yield();
	/* The holder needs 2: two system-wide fit, a third would take one of its slots. */
	slots[0] = dr_install_system(&system, NULL, NULL);
	slots[1] = dr_install_system(&system, NULL, NULL);
	check(slots[0] == 3 && slots[1] == 2, "system-wide slots %d and %d", slots[0], slots[1]);
	check_eq(-DR_ERROR_NO_SLOT, dr_install_system(&system, NULL, NULL));
	check_eq(2, dr_task_free_slots(task));
	check_eq(0, dr_task_free_slots(holder->index));
	released = true;
	check_eq(0, task_join(holder, NULL));
	/* The holder's exit gave its reservation back: now a third system-wide one fits. */
	slots[2] = dr_install_system(&system, NULL, NULL);
	check_eq(1, slots[2]);
	check_eq(1, dr_task_free_slots(task));
	for (unsigned int i = 0; i < 3; i++)
		check_eq(0, dr_uninstall_system(slots[i]));
	check_eq(DR_SLOTS, dr_task_free_slots(task));
}

TEST(dr, uninstalling_an_empty_slot_is_an_error)
{
	unsigned int task = sched_current()->index;

	check_eq(-DR_ERROR_NOT_INSTALLED, dr_uninstall(task, 0));
	check_eq(-DR_ERROR_NOT_INSTALLED, dr_uninstall(task, 7));
	check_eq(-DR_ERROR_NOT_INSTALLED, dr_uninstall_system(2));
}
