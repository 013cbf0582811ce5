/* SPDX-License-Identifier: MIT */
/* ds suite: the quiescent period before a PEBS buffer is freed (SDM "Re-configuring PEBS"). */
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/msr-index.h"
#include "arch/x86/msr.h"
#include "arch/x86/paging.h"
#include "arch/x86/syscall.h"
#include "arch/x86/tsc.h"
#include "arch/x86/user-abi.h"
#include "ds/buffer.h"
#include "ds/ds.h"
#include "emulator/emulator.h"
#include "kernel/pfa.h"
#include "pmu/pmu.h"
#include "runner/test.h"
#include "sched/sched.h"
#include "sched/task.h"
#include "tests/kernel/lib/ds_util.h"

extern const char user_pebs_overflow_at_exit[]; /* tests/kernel/lib/pebs_user_armed.asm */

#define ARMED_ITERATIONS 100ull
#define RECORDS 16 /* one page in every format */
#define CANARY 0xca11ab1e5afe0dd5ull
#define CANARY_PAGES 2 /* the buffer's page and the DS save area's, freed by the detach */
#define LANDING_WAIT_US 4000 /* 4 x EMULATOR_PEBS_FLIGHT_US: what is in flight has landed */

/*
 * Take the two pages the detach freed back from the first-fit allocator, as the next user of
 * memory would, and fill them with the canary: page[0] the buffer's, page[1] the area's (0 if
 * not found among TAKE_BACK_MAX pages); the others go back.
 */
#define TAKE_BACK_MAX 64
static void take_back(uint64_t buffer, uint64_t area, uint64_t page[CANARY_PAGES])
{
	uint64_t taken[TAKE_BACK_MAX];
	unsigned int n = 0;

	page[0] = page[1] = 0;
	while (n < TAKE_BACK_MAX && !(page[0] && page[1])) {
		uint64_t phys = pfa_alloc();

		if (!phys)
			break;
		if (phys == buffer || phys == area) {
			uint64_t *qwords = phys_to_virt(phys);

			for (unsigned int q = 0; q < PAGE_SIZE / 8; q++)
				qwords[q] = CANARY;
			page[phys == area] = phys;
			continue;
		}
		taken[n++] = phys;
	}
	while (n)
		pfa_free(taken[--n]);
}

/* Busy-wait, then read an MSR: on the emulated CPU a record in flight lands at such an entry. */
static void wait_us_then_read(uint64_t us)
{
	uint64_t end = rdtsc_ordered() + tsc_hz() / 1000000 * us;
	uint64_t value;

	while (rdtsc_ordered() < end)
		cpu_relax();
	(void)rdmsr_safe(MSR_IA32_PEBS_ENABLE, &value);
}

/*
 * A CPU area's PEBS counter of one user task's ring-3 instructions, with a period of exactly its
 * ring-3 instructions: it overflows at the task's last one, the SYSCALL of its exit, and is
 * armed when the task ends (its next event never comes). PEBS stays on (a CPU area) until
 * ds_detach() turns it off. The SDM allows a record to be in flight then ("Re-configuring PEBS
 * Facilities": a quiescent period lets "latent residual PEBS records" complete "at their
 * previously specified buffer address"), and the emulated CPU plays one: it lands
 * EMULATOR_PEBS_FLIGHT_US after the disable. ds_detach() must not free the buffer and the DS
 * save area before it can land. Here the two pages the detach frees are taken back at once and
 * filled with a canary, and the record given all the time it could take: the canary must hold.
 * Where the record landed in time, ds_detach() drained it: the task running, this one, is
 * credited with it (on the model exactly that record; silicon may write none). About 210 ring-3
 * steps.
 */
TEST_OBSERVING_USER(ds, a_pebs_record_in_flight_lands_before_its_buffer_is_freed, 300)
{
	struct ds_target target = cpu_target(this_cpu_index());
	uint64_t period = 2 * ARMED_ITERATIONS + (syscall_uses_trap() ? 4 : 5);
	struct pmu_event event = { .event = INST_RETIRED, .user = true, .pebs = true };
	struct ds_pebs_config config;
	struct emulator_stats before, after;
	uint64_t buffer, area, page[CANARY_PAGES];
	unsigned int corrupted = 0, first = 0, self = sched_current()->index;
	struct task *task;
	uint64_t detach_start, detach_end;

	require_pebs();
	config = pebs_config(RECORDS, RECORDS - ds_threshold_room(RECORDS), period);
	task = task_create_user("armed", user_pebs_overflow_at_exit, USER_DATA_BASE,
				TASK_START_STOPPED);
	if (!task)
		test_abort("task_create_user failed");
	*(uint64_t *)task_user_data(task) = ARMED_ITERATIONS;
	ds_credit_reset(self);
	check_attached(ds_attach_pebs(&target, &config));
	buffer = virt_to_phys((const void *)ds_area_get(&target)->pebs_base);
	area = virt_to_phys(ds_area_get(&target));
	if (pmu_add_sampling_event(task->index, &event, period) != 0)
		test_abort("pmu_add_sampling_event did not get counter 0");
	before = emulator_stats();
	task_continue(task);
	check_eq(0, task_join(task, NULL));
	detach_start = rdtsc_ordered();
	check_eq(DS_OK, ds_detach(&target, DS_USER_PEBS));
	detach_end = rdtsc_ordered();
	take_back(buffer, area, page);
	wait_us_then_read(LANDING_WAIT_US);
	after = emulator_stats();
	for (unsigned int i = 0; i < CANARY_PAGES; i++) {
		const uint64_t *qwords = page[i] ? phys_to_virt(page[i]) : NULL;

		for (unsigned int q = 0; qwords && q < PAGE_SIZE / 8; q++)
			if (qwords[q] != CANARY && !corrupted++)
				first = i * (PAGE_SIZE / 8) + q;
		if (page[i])
			pfa_free(page[i]);
	}
	test_diag("ds_detach() took %llu us",
		  (unsigned long long)((detach_end - detach_start) / (tsc_hz() / 1000000)));
	test_diag(
		"buffer 0x%llx, area 0x%llx, pages taken back 0x%llx 0x%llx; %u records credited, "
		"%llu landed late",
		(unsigned long long)buffer, (unsigned long long)area, (unsigned long long)page[0],
		(unsigned long long)page[1], (unsigned int)ds_credit(self).pebs_records,
		(unsigned long long)(after.pebs_late - before.pebs_late));
	check(page[0] == buffer && page[1] == area,
	      "the allocator did not hand the freed buffer 0x%llx and area 0x%llx back",
	      (unsigned long long)buffer, (unsigned long long)area);
	check(corrupted == 0, "%u qwords of freed memory overwritten, the first at page %u + 0x%x",
	      corrupted, (unsigned int)(first / (PAGE_SIZE / 8)),
	      (unsigned int)(first % (PAGE_SIZE / 8) * 8));
	if (emulator_active()) {
		check_eq(1, after.pebs_late - before.pebs_late);
		check_eq(1, ds_credit(self).pebs_records);
	} else {
		check(ds_credit(self).pebs_records <= 1, "%llu records from one overflow",
		      (unsigned long long)ds_credit(self).pebs_records);
	}
}
