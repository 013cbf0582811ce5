/* SPDX-License-Identifier: MIT */
/* ds suite: BTS buffers filled by real branches, circular and in interrupt mode. */
#include "arch/x86/apic.h"
#include "arch/x86/cpu.h"
#include "arch/x86/msr.h"
#include "tests/kernel/lib/ds_util.h"

#define CIRCULAR_RECORDS 8
#define PROBE_ROUNDS 4 /* 19 taken branches: more than twice round the buffer */
#define THRESHOLD 64
#define ROUNDS 3
/*
 * Stated tolerance: a PMI drains what the buffer holds when the handler turns tracing off,
 * which is the threshold plus what was recorded meanwhile (silicon records the interrupt and
 * the handler's own branches; the SDM does not bound the delivery). Fewer than the threshold.
 */
#define AFTER_THRESHOLD_MAX (THRESHOLD - 1)
#define FULL_RECORDS 64
#define FULL_THRESHOLD 56

/*
 * About 1,200 steps under TCG; 8,684 in a KVM-PVM boot where 4 of the watchdog's NMIs came in
 * the probe, and 3 of 6 such boots ran into the 10 s limit: declared so, the pace skips it there.
 */
TEST_OBSERVING(ds, circular_bts_buffer_wraps_and_raises_no_pmi, 9000)
{
	struct ds_bts_config config = { .records = CIRCULAR_RECORDS, .circular = true };
	struct ds_target target = self_target();
	uint64_t pmis = ds_pmi_count();
	struct probe_run run;

	require_bts();
	check_attached(ds_attach_bts(&target, &config));
	probe_run(ds_area_get(&target), PROBE_ROUNDS, &run);
	check_probe_run(&run, PROBE_ROUNDS);
	check(ds_canary_intact(&target, DS_USER_BTS), "written past the absolute maximum");
	check_eq(DS_OK, ds_detach(&target, DS_USER_BTS));
	check_eq(pmis, ds_pmi_count());
	check(ds_area_get(&target) == NULL, "the area outlived its last user");
}

TEST_OBSERVING(ds, bts_interrupt_mode_raises_one_pmi_per_threshold_and_drains, 1000)
{
	struct ds_bts_config config = { .records = 2 * THRESHOLD, .threshold_records = THRESHOLD };
	struct ds_target target = self_target();
	struct fill_run fills[ROUNDS];
	uint64_t pmis, credited, threshold;
	struct ds_area *area;

	require_bts();
	ds_credit_reset(target.index);
	check_attached(ds_attach_bts(&target, &config));
	area = ds_area_get(&target);
	threshold = area->bts_threshold;
	pmis = ds_pmi_count();
	credited = ds_credit(target.index).bts_records;
	for (unsigned int round = 0; round < ROUNDS; round++) {
		bts_fill_to_threshold(area, &fills[round]);
		wait_for_pmis(pmis + round + 1);
	}
	pmis = ds_pmi_count() - pmis;
	credited = ds_credit(target.index).bts_records - credited;
	check(!apic_pmi_masked(), "LVTPC left masked after a PMI");
	check_eq(DS_OK, ds_detach(&target, DS_USER_BTS));
	for (unsigned int round = 0; round < ROUNDS; round++) {
		const struct fill_run *fill = &fills[round];

		if (fill->nmis) {
			/* Its records came among the loop's (nmi_margin.h): past the threshold. */
			check(fill->index_after >= threshold &&
				      fill->index_after <=
					      threshold + nmi_extra_records(fill->nmis) *
								  BTS_RECORD_SIZE,
			      "round %u: index 0x%llx, threshold 0x%llx, %lu NMIs", round,
			      (unsigned long long)fill->index_after, (unsigned long long)threshold,
			      fill->nmis);
			continue;
		}
		check_eq(threshold, fill->index_after);
		check_eq(fill->loop_branch, fill->newest.from);
		check_eq(fill->loop_head, fill->newest.to);
	}
	check_eq(ROUNDS, pmis);
	check(credited >= ROUNDS * THRESHOLD &&
		      credited <= ROUNDS * (THRESHOLD + AFTER_THRESHOLD_MAX),
	      "%llu records credited by %u PMIs at %u", (unsigned long long)credited, ROUNDS,
	      THRESHOLD);
}

TEST_OBSERVING(ds, bts_buffer_never_writes_past_its_absolute_maximum, 1000)
{
	struct ds_bts_config config = { .records = FULL_RECORDS,
					.threshold_records = FULL_THRESHOLD };
	struct ds_target target = self_target();
	uint64_t pmis, credited, index, max;
	bool intact;

	require_bts();
	check_attached(ds_attach_bts(&target, &config));
	local_irq_disable(); /* hold the PMI back: the buffer fills and the CPU must stop */
	pmis = ds_pmi_count();
	credited = ds_credit(target.index).bts_records;
	probe_instruction_loop(FULL_RECORDS + 16); /* 79 taken JNZs */
	index = ds_area_get(&target)->bts_index;
	max = ds_area_get(&target)->bts_max;
	intact = ds_canary_intact(&target, DS_USER_BTS);
	local_irq_enable(); /* now the PMI drains the full buffer */
	wait_for_pmis(pmis + 1);
	pmis = ds_pmi_count() - pmis;
	credited = ds_credit(target.index).bts_records - credited;
	ds_detach(&target, DS_USER_BTS);
	check_eq(max, index);
	check(intact, "written past the absolute maximum");
	check_eq(1, pmis);
	check_eq(FULL_RECORDS, credited);
}

static void stay_stopped(void *unused)
{
	(void)unused;
}

TEST(ds, nothing_is_recorded_without_an_active_area)
{
	struct ds_bts_config config = { .records = 16, .circular = true };
	struct ds_target target;
	struct ds_area *area;
	struct task *task;

	require_bts();
	task = task_create("idle owner", stay_stopped, NULL, TASK_START_STOPPED);
	if (!task)
		test_abort("task_create failed");
	target = task_target(task);
	check_attached(ds_attach_bts(&target, &config));
	area = ds_area_get(&target);
	for (unsigned int i = 0; i < 4; i++)
		probe_branches(); /* this task has no area; the stopped one's is not active */
	check_eq(0, rdmsr(MSR_IA32_DEBUGCTL) & (DEBUGCTL_TR | DEBUGCTL_BTS));
	check_eq(area->bts_base, area->bts_index);
	check_eq(DS_OK, ds_detach(&target, DS_USER_BTS));
	task_continue(task);
	check_eq(0, task_join(task, NULL));
}
