/* SPDX-License-Identifier: MIT */
/* ds_synth suite: the owning user task's read-only view of its Debug Store. */
#include "arch/x86/exceptions.h"
#include "arch/x86/user.h"
#include "tests/kernel/ds_synth_util.h"

#define RECORDS 7

TEST(ds_synth, owner_user_task_polls_the_index_and_finds_the_last_record)
{
	struct task *task =
		task_create_user("poller", user_ds_poll, USER_DATA_BASE, TASK_START_STOPPED);
	struct ds_bts_config config = { .records = 16, .circular = true };
	struct ds_target target = cpu_target();
	const uint64_t *seen;
	uint64_t result[3];

	require_synthetic_backend();
	if (!task)
		test_abort("task_create_user failed");
	target.address_space = task->address_space; /* the view goes to the poller only */
	check_attached(ds_attach_bts(&target, &config));
	for (unsigned int i = 0; i < RECORDS; i++)
		ds_synth_branch(SYNTH_FROM + i, SYNTH_TO + i);
	task_continue(task);
	while (task->state != TASK_DEAD)
		sched_sleep_ms(1);
	seen = task_user_data(task);
	result[0] = seen[0];
	result[1] = seen[1];
	result[2] = seen[2];
	check_eq(0, task_join(task, NULL));
	ds_detach(&target, DS_USER_BTS);
	check_eq(RECORDS, result[0]);
	check_eq(SYNTH_FROM + RECORDS - 1, result[1]);
	check_eq(SYNTH_TO + RECORDS - 1, result[2]);
}

TEST(ds_synth, user_write_to_its_view_faults_and_other_tasks_have_no_view)
{
	struct task *owner =
		task_create_user("owner", user_write_byte, USER_DS_BASE, TASK_START_STOPPED);
	struct task *other =
		task_create_user("other", user_read_byte, USER_DS_BASE, TASK_START_STOPPED);
	struct ds_bts_config config = { .records = 16, .circular = true };
	struct ds_target target;
	struct user_fault fault;

	if (!owner || !other)
		test_abort("task_create_user failed");
	target = task_target(owner);
	check_attached(ds_attach_bts(&target, &config));
	task_continue(owner);
	check_eq(TASK_EXIT_FAULTED, task_join(owner, &fault));
	check_eq(X86_EXC_PF, fault.vector);
	check_eq(PF_ERROR_PRESENT | PF_ERROR_WRITE | PF_ERROR_USER, fault.error_code);
	task_continue(other);
	check_eq(TASK_EXIT_FAULTED, task_join(other, &fault));
	check_eq(X86_EXC_PF, fault.vector);
	check_eq(PF_ERROR_USER, fault.error_code & (PF_ERROR_PRESENT | PF_ERROR_USER));
}
