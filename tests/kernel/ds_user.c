/* SPDX-License-Identifier: MIT */
/* ds suite: the owning user task's read-only view of its Debug Store. */
#include "arch/x86/exceptions.h"
#include "arch/x86/witness_marker.h"
#include "tests/kernel/lib/ds_util.h"
#include "tests/kernel/lib/user_programs.h"

/*
 * user_ds_poll starts "mov rsi, rdi" (3 bytes), "mov ecx, 16" (5), then its loop: "dec ecx"
 * (2) at +8 and "jnz" (75 rel8) at +10, taken 15 times. The bytes are checked before use.
 */
#define POLL_LOOP_DEC 8
#define POLL_LOOP_JNZ 10
#define POLL_LOOP_TAKEN 15
#define JNZ_REL8 0x75
#define JNZ_REL8_LENGTH 2
/* Room for the loop and two records for each of hundreds of ticks (KVM-PVM steps slowly). */
#define POLL_RECORDS 2048

TEST(ds, owner_user_task_polls_its_index_and_finds_the_last_record)
{
	/*
	 * BTS_OFF_OS: ring 3 is recorded, so the buffer holds the poller's loop and the transfers
	 * across the ring boundary (rule 21).
	 */
	struct ds_bts_config config = { .records = POLL_RECORDS, .circular = true, .off_os = true };
	const uint8_t *code = (const uint8_t *)user_ds_poll;
	struct task *task;
	struct ds_target target;
	const uint64_t *seen;
	uint64_t result[3];
	uint64_t loop_start = user_text_address(user_ds_poll) + POLL_LOOP_DEC;
	uint64_t loop_end = user_text_address(user_ds_poll) + POLL_LOOP_JNZ;

	require_bts();
	if (!ds_support()->ds_cpl)
		test_skip("CPUID.1:ECX.DS-CPL=0");
	if (code[POLL_LOOP_JNZ] != JNZ_REL8 ||
	    (int8_t)code[POLL_LOOP_JNZ + 1] != POLL_LOOP_DEC - POLL_LOOP_JNZ - 2)
		test_abort("user_ds_poll changed: no JNZ to +%u at +%u", POLL_LOOP_DEC,
			   POLL_LOOP_JNZ);
	task = task_create_user("poller", user_ds_poll, USER_DATA_BASE, TASK_START_STOPPED);
	if (!task)
		test_abort("task_create_user failed");
	target = task_target(task);
	check_attached(ds_attach_bts(&target, &config));
	witness_begin(WITNESS_BTS_USER);
	task_continue(task);
	while (task->state != TASK_DEAD)
		sched_sleep_ms(1);
	witness_end(WITNESS_BTS_USER);
	seen = task_user_data(task);
	result[0] = seen[0];
	result[1] = seen[1];
	result[2] = seen[2];
	test_diag("the poller saw %llu records, the last 0x%llx -> 0x%llx",
		  (unsigned long long)result[0], (unsigned long long)result[1],
		  (unsigned long long)result[2]);
	check_eq(0, task_join(task, NULL));
	/*
	 * Besides the loop, the transfers across the ring boundary while the poller ran (SDM
	 * DEBUGCTL.TR: a record for each "taken branch, interrupt, or exception"; Linux
	 * intel_pmu_drain_bts_buffer(): such records are stored under BTS_OFF_OS): the IRETQ that
	 * first enters ring 3, and for each interrupt taken in ring 3 its delivery and its IRETQ
	 * back, a pair. How many interrupts is the platform's (KVM catches up on missed ticks), so
	 * the count is the loop's, one, and pairs; the witness checks the exact number.
	 */
	check(result[0] >= POLL_LOOP_TAKEN + 1 && (result[0] - POLL_LOOP_TAKEN - 1) % 2 == 0 &&
		      result[0] < POLL_RECORDS,
	      "expected %u loop records, the entry and pairs for interrupts, under %u; got %llu",
	      POLL_LOOP_TAKEN, POLL_RECORDS, (unsigned long long)result[0]);
	/* The loop's last branch, or a tick that came after it, before the read. */
	if (result[1] != loop_end) {
		uint64_t user_end = in_user_code(result[1]) ? result[1] : result[2];

		check(bts_record_of_ring_3(result[1], result[2]) && user_end >= loop_start &&
			      user_end <= loop_end + JNZ_REL8_LENGTH,
		      "last record 0x%llx -> 0x%llx: neither the loop's JNZ nor a transfer from "
		      "or to its end",
		      (unsigned long long)result[1], (unsigned long long)result[2]);
	} else {
		check_eq(loop_start, result[2]);
	}
}

/*
 * The owner's area traces ring 0 too: its #PF's handler, which ends the task, is stepped (rule
 * 21), about 1,860 instructions.
 */
TEST_OBSERVING(ds, user_write_to_its_view_faults_and_other_tasks_have_no_view, 1900)
{
	struct ds_bts_config config = { .records = 16, .circular = true };
	struct task *owner, *other;
	struct ds_target target;
	struct user_fault fault;

	require_bts();
	owner = task_create_user("owner", user_write_byte, USER_DS_BASE, TASK_START_STOPPED);
	other = task_create_user("other", user_read_byte, USER_DS_BASE, TASK_START_STOPPED);
	if (!owner || !other)
		test_abort("task_create_user failed");
	target = task_target(owner);
	check_attached(ds_attach_bts(&target, &config));
	task_continue(owner);
	check_eq(TASK_EXIT_FAULTED, task_join(owner, &fault));
	check_eq(X86_EXC_PF, fault.vector);
	check_eq(PF_ERROR_PRESENT | PF_ERROR_WRITE | PF_ERROR_USER, fault.error_code);
	check_eq(USER_DS_BASE, fault.cr2);
	task_continue(other);
	check_eq(TASK_EXIT_FAULTED, task_join(other, &fault));
	check_eq(X86_EXC_PF, fault.vector);
	check_eq(PF_ERROR_USER, fault.error_code & (PF_ERROR_PRESENT | PF_ERROR_USER));
	check_eq(USER_DS_BASE, fault.cr2);
}

/* BTS maximum's low byte in the view: 16 records of 24 bytes past a page-aligned base, 0x80. */
#define BTS_MAX_VIEW (USER_DS_BASE + offsetof(struct ds_area, bts_max))

/*
 * A task's view is mapped in its own address space and no other. ds/ takes the root from the
 * task: when callers named it (struct ds_target.address_space), another task's root showed that
 * task this one's area, and a kernel page named as the root was rewritten as a page table.
 */
TEST_OBSERVING(ds, only_the_owner_sees_its_area, 1900) /* its #PF handlers, stepped: 1,875 */
{
	struct ds_bts_config config = { .records = 16, .circular = true };
	struct task *owner, *other;
	struct ds_target target;
	struct user_fault fault;
	uint64_t max_byte;

	require_bts();
	owner = task_create_user("owner", user_read_byte, BTS_MAX_VIEW, TASK_START_STOPPED);
	other = task_create_user("other", user_read_byte, BTS_MAX_VIEW, TASK_START_STOPPED);
	if (!owner || !other)
		test_abort("task_create_user failed");
	target = task_target(owner);
	check_attached(ds_attach_bts(&target, &config));
	max_byte = ds_area_get(&target)->bts_max & 0xff; /* what the owner reads there */
	task_continue(other);
	check_eq(TASK_EXIT_FAULTED, task_join(other, &fault));
	check_eq(X86_EXC_PF, fault.vector);
	check_eq(BTS_MAX_VIEW, fault.cr2);
	task_continue(owner);
	check_eq(max_byte, task_join(owner, NULL));
}
