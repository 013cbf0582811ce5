/* SPDX-License-Identifier: MIT */
/* bts suite: real Branch Trace Store records; runs on Intel hardware, skips elsewhere. */
#include "arch/x86/cpu.h"
#include "arch/x86/probe.h"
#include "arch/x86/user.h"
#include "ds/ds.h"
#include "runner/test.h"
#include "sched/sched.h"
#include "tests/kernel/ds_util.h"

#define RECORDS 256

static struct ds_target self(void)
{
	return (struct ds_target){ false, sched_current()->index };
}

/* Index of the record (from -> to) in [first, last), or -1. */
static long find_record(const struct bts_record *records, long first, long last, uint64_t from,
			uint64_t to)
{
	for (long i = first; i < last; i++)
		if (records[i].from == from && records[i].to == to)
			return i;
	return -1;
}

TEST(bts, known_branch_sequence_is_recorded_in_order)
{
	struct ds_bts_config config = { .records = RECORDS, .circular = true };
	struct ds_target target = self();
	const struct bts_record *records;
	long used, first, second;

	require_bts();
	if (ds_attach_bts(&target, &config) != DS_OK)
		test_abort("attach failed");
	probe_branches();
	records = (const struct bts_record *)ds_area_get(&target)->bts_base;
	used = (long)((ds_area_get(&target)->bts_index - ds_area_get(&target)->bts_base) /
		      BTS_RECORD_SIZE);
	first = find_record(records, 0, used, (uint64_t)probe_branch_1,
			    (uint64_t)probe_branch_1_target);
	second = find_record(records, first + 1, used, (uint64_t)probe_branch_2,
			     (uint64_t)probe_branch_2_target);
	ds_detach(&target, DS_USER_BTS);
	check(first >= 0 && second == first + 1, "records %ld and %ld of %ld", first, second, used);
}

TEST(bts, interrupt_mode_raises_a_pmi_at_the_threshold)
{
	struct ds_bts_config config = { .records = RECORDS, .threshold_records = 16 };
	struct ds_target target = self();
	uint64_t pmis = ds_pmi_count();

	require_bts();
	ds_credit_reset(target.index);
	if (ds_attach_bts(&target, &config) != DS_OK)
		test_abort("attach failed");
	for (int i = 0; i < 32; i++)
		probe_branches(); /* two jumps, a call and a return each */
	ds_detach(&target, DS_USER_BTS);
	/* A self-IPI may land after the next instruction (SDM; KVM-PVM delivers it later still). */
	wait_for_pmis(pmis + 1);
	check(ds_pmi_count() > pmis, "no PMI");
	check(ds_credit(target.index).bts_records >= 64, "%llu records",
	      (unsigned long long)ds_credit(target.index).bts_records);
}

/* Records of probe_branches() in kernel code, with DEBUGCTL.BTS_OFF_OS as off_os says. */
static long kernel_probe_records(bool off_os)
{
	struct ds_bts_config config = { .records = RECORDS, .circular = true, .off_os = off_os };
	struct ds_target target = self();
	struct ds_area *area;
	long used;

	if (ds_attach_bts(&target, &config) != DS_OK)
		test_abort("attach failed");
	probe_branches();
	area = ds_area_get(&target);
	used = (long)((area->bts_index - area->bts_base) / BTS_RECORD_SIZE);
	ds_detach(&target, DS_USER_BTS);
	return used;
}

TEST(bts, bts_off_os_keeps_kernel_branches_out)
{
	long with_os;

	require_bts();
	if (!ds_support()->ds_cpl)
		test_skip("CPUID.1:ECX.DS-CPL=0");
	/* The control: without BTS_OFF_OS the same kernel code is recorded. */
	with_os = kernel_probe_records(false);
	check(with_os > 0, "%ld records without BTS_OFF_OS", with_os);
	check_eq(0, kernel_probe_records(true));
}

TEST(bts, user_task_polling_its_index_sees_its_records)
{
	struct ds_bts_config config = { .records = RECORDS, .circular = true, .off_os = true };
	struct task *task;
	struct ds_target target;
	const uint64_t *seen;
	uint64_t count, from, to;

	require_bts();
	if (!ds_support()->ds_cpl)
		test_skip("CPUID.1:ECX.DS-CPL=0");
	task = task_create_user("poller", user_ds_poll, USER_DATA_BASE, TASK_START_STOPPED);
	if (!task)
		test_abort("task_create_user failed");
	target = (struct ds_target){ false, task->index };
	if (ds_attach_bts(&target, &config) != DS_OK)
		test_abort("attach failed");
	task_continue(task);
	while (task->state != TASK_DEAD)
		sched_sleep_ms(1);
	seen = task_user_data(task);
	count = seen[0];
	from = seen[1];
	to = seen[2];
	task_join(task, NULL);
	/* Only ring-3 branches are stored (BTS_OFF_OS): the poller's own, in .user_text. */
	check(count > 0, "the poller saw no record");
	check(from >= USER_TEXT_BASE && from < USER_DATA_BASE && to >= USER_TEXT_BASE &&
		      to < USER_DATA_BASE,
	      "last record 0x%llx -> 0x%llx is not in user code", (unsigned long long)from,
	      (unsigned long long)to);
}
