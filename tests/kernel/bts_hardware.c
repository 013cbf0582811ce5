/* SPDX-License-Identifier: MIT */
/* bts suite: real Branch Trace Store records; runs on Intel hardware, skips elsewhere. */
#include "arch/x86/cpu.h"
#include "arch/x86/probe.h"
#include "ds/ds.h"
#include "runner/test.h"
#include "sched/sched.h"
#include "tests/kernel/lib/ds_util.h"
#include "tests/kernel/lib/user_programs.h"

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
	check(first >= 0 && second > first, "records %ld and %ld of %ld", first, second, used);
	/* Between them only an interrupt that came there: its delivery and its IRETQ (rule 21). */
	for (long i = first + 1; first >= 0 && i < second; i++)
		check(record_of_an_entry(&records[i]),
		      "record %ld between the two branches: 0x%llx -> 0x%llx", i,
		      (unsigned long long)records[i].from, (unsigned long long)records[i].to);
	ds_detach(&target, DS_USER_BTS);
}

/*
 * The threshold is above what a PMI's own handler records: silicon records its branches while
 * BTS is on (SDM "taken branch, interrupt, or exception"; rule 21), from its delivery until it
 * turns BTS off and from when it turns BTS on again to its IRETQ, 30 to 50 records on the model
 * here. A threshold below that (16 before handlers were recorded) is reached again by the
 * handler alone, and every PMI raises the next.
 */
#define THRESHOLD_RECORDS 64
#define PROBE_CALLS 64
#define PROBE_TAKEN_BRANCHES 4 /* in each probe_branches(): the call, two jumps, the return */
/*
 * Records the CPU may add after the index reaches the threshold and before ds/'s handler drains
 * it: the interrupt's delivery and the handler's branches until it turns BTS off (on the model
 * here, 30 of them: the model records the handler from its hook on, silicon from its gate). The
 * SDM gives no number; this is a generous bound. A lost PMI leaves the buffer to fill up to its
 * 256.
 */
#define DRAIN_SLACK_RECORDS 64

/*
 * DEBUGCTL.BTINT: a PMI each time the index reaches the threshold (SDM "BTS Buffer Full
 * Condition" / DS save area), which ds/ drains. Every taken branch is stored (SDM: "taken branch,
 * interrupt, or exception"), so none of the probes' 4 x 64 may be missing; each PMI drains at
 * least a threshold's worth; and what the detach finds left is less than a threshold and its
 * slack, or a PMI was lost.
 */
TEST_OBSERVING(bts, interrupt_mode_raises_a_pmi_at_the_threshold, 2800)
{
	struct ds_bts_config config = { .records = RECORDS,
					.threshold_records = THRESHOLD_RECORDS };
	struct ds_target target = self();
	uint64_t pmis = ds_pmi_count(), drained_at_pmis, total, left, deadline;
	const struct ds_area *area;

	require_bts();
	ds_credit_reset(target.index);
	if (ds_attach_bts(&target, &config) != DS_OK)
		test_abort("attach failed");
	for (int i = 0; i < PROBE_CALLS; i++)
		probe_branches();
	/*
	 * What no PMI drained yet, read before the detach, whose own path adds records with
	 * interrupts off. A self-IPI may land after the next instruction (SDM), and some platforms
	 * deliver it later still (docs/platforms.md): wait for the PMI of the last threshold the
	 * index reached (this wait's own branches add a few records, drained the same way); a lost
	 * one never comes.
	 */
	area = ds_area_get(&target);
	deadline = rdtsc_ordered() + tsc_cycles_from_ms(PMI_WAIT_MS);
	do
		left = (area->bts_index - area->bts_base) / BTS_RECORD_SIZE;
	while (left >= THRESHOLD_RECORDS + DRAIN_SLACK_RECORDS && rdtsc_ordered() < deadline);
	pmis = ds_pmi_count() - pmis;
	drained_at_pmis = ds_credit(target.index).bts_records;
	ds_detach(&target, DS_USER_BTS);
	total = ds_credit(target.index).bts_records;
	test_diag("%llu PMIs drained %llu records; %llu left after the loop; %llu in all",
		  (unsigned long long)pmis, (unsigned long long)drained_at_pmis,
		  (unsigned long long)left, (unsigned long long)total);
	check(pmis >= 1, "no PMI");
	check(total >= PROBE_CALLS * PROBE_TAKEN_BRANCHES, "%llu records, the probes alone take %u",
	      (unsigned long long)total, PROBE_CALLS * PROBE_TAKEN_BRANCHES);
	check(drained_at_pmis >= pmis * THRESHOLD_RECORDS, "%llu PMIs drained only %llu records",
	      (unsigned long long)pmis, (unsigned long long)drained_at_pmis);
	check(left < THRESHOLD_RECORDS + DRAIN_SLACK_RECORDS,
	      "%llu records left undrained: a PMI at the threshold of %u was lost",
	      (unsigned long long)left, THRESHOLD_RECORDS);
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
	/*
	 * Only ring 3's records are stored (BTS_OFF_OS): the poller's own branches, in .user_text,
	 * and the transfers across the ring boundary (an interrupt's delivery, its IRETQ back).
	 */
	check(count > 0, "the poller saw no record");
	check(bts_record_of_ring_3(from, to),
	      "last record 0x%llx -> 0x%llx is neither in user code nor a transfer from or to it",
	      (unsigned long long)from, (unsigned long long)to);
}
