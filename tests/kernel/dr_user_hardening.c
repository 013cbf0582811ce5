/* SPDX-License-Identifier: MIT */
/* dr suite: what a user task can do to DR6, to the breakpoint system calls, and see of the kernel.
 */
#include <stdint.h>

#include "arch/x86/debugreg.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/paging.h"
#include "arch/x86/syscall.h"
#include "arch/x86/traps.h"
#include "dr/dr.h"
#include "lib/string.h"
#include "runner/test.h"
#include "sched/sched.h"
#include "tests/kernel/lib/user_programs.h"
#include "tests/kernel/lib/user_script.h"

#define ABOVE_32_BITS (1ul << 32)
#define HIGH_BIT (1ul << 63)
#define WATCHED (USER_DATA_BASE + PAGE_SIZE)
#define HITS_BUFFER (USER_DATA_BASE + 2 * PAGE_SIZE)
#define HITS_OFFSET (2 * PAGE_SIZE)

static struct user_syscall syscall_of(uint64_t number, uint64_t arg0, uint64_t arg1, uint64_t arg2)
{
	return (struct user_syscall){ number, { arg0, arg1, arg2 }, 1 };
}

/*
 * A #DB that dr/ does not handle (a trap flag the task set itself, ICEBP) ends the task; DR6
 * must not keep its BS bit for the next #DB, an unrelated task's breakpoint hit.
 */
TEST(dr, user_debug_trap_dr_does_not_handle_leaves_dr6_clean_for_the_next_hit)
{
	static const struct {
		const char *name;
		const char *program;
	} traps[] = { { "TF set by the task", user_set_trap_flag }, { "ICEBP", user_icebp } };

	for (unsigned int i = 0; i < sizeof(traps) / sizeof(traps[0]); i++) {
		struct task *task =
			task_create_user("trap", traps[i].program, 0, TASK_START_RUNNABLE);
		struct user_dr_script script = { .action = USER_DR_CALL,
						 .target = user_text_address(user_dr_target),
						 .repeat = 1 };
		struct dr_breakpoint breakpoint = { script.target, DR_TYPE_EXECUTE, 1 };
		struct user_fault fault;
		struct dr_hit hit;

		if (!task)
			test_abort("task_create_user failed");
		check_eq(TASK_EXIT_FAULTED, task_join(task, &fault));
		if (fault.vector != X86_EXC_DB) {
			/* QEMU TCG raises #UD for ICEBP. */
			test_diag("%s raised %s, not #DB: nothing to check after it", traps[i].name,
				  exception_name(fault.vector));
			continue;
		}
		task = task_create_user("dr-script", user_dr_script, USER_DATA_BASE,
					TASK_START_STOPPED);
		if (!task)
			test_abort("task_create_user failed");
		memcpy(task_user_data(task), &script, sizeof(script));
		check_eq(0, dr_install_as(task->index, &breakpoint, NULL, NULL, DR_REQUESTER_USER));
		task_continue(task);
		while (task->state != TASK_DEAD)
			sched_sleep_ms(1);
		memcpy(&script, task_user_data(task), sizeof(script));
		check_eq(0, task_join(task, NULL));
		if (!check_eq(1, script.hit_count))
			continue; /* no hit: no DR6 to check */
		memcpy(&hit, script.hits, sizeof(hit));
		check(hit.dr6 == (DR6_RESET | DR6_B0), "after %s: hit dr6=0x%llx, expected 0x%lx",
		      traps[i].name, (unsigned long long)hit.dr6, DR6_RESET | DR6_B0);
	}
}

/*
 * The kernel reads a watched user buffer for SYSCALL_WRITE: those hits are the task's, but their
 * RIP is the kernel's, and SYSCALL_DR_READ_HITS returns them with rip 0 (from_user says where).
 */
TEST(dr, user_hits_taken_in_the_kernel_reach_the_task_without_a_kernel_rip)
{
	static uint8_t data[3 * PAGE_SIZE];
	struct user_syscall_script script = {
		.count = 3,
		.calls = { syscall_of(SYSCALL_DR_INSTALL, WATCHED, DR_TYPE_READ_WRITE, 8),
			   syscall_of(SYSCALL_WRITE, WATCHED, 8, 0),
			   syscall_of(SYSCALL_DR_READ_HITS, HITS_BUFFER, USER_DR_HITS_MAX, 0) },
	};

	user_script_run(&script, data, sizeof(data));
	check_eq(0, script.calls[0].result);
	check_eq(8, script.calls[1].result);
	check(script.calls[2].result >= 1, "%lld hits", (long long)script.calls[2].result);
	for (int64_t i = 0; i < script.calls[2].result && i < USER_DR_HITS_MAX; i++) {
		struct dr_hit hit;

		memcpy(&hit, &data[HITS_OFFSET + i * sizeof(hit)], sizeof(hit));
		check(hit.rip == 0 && !hit.from_user && hit.address == WATCHED,
		      "hit %lld: rip 0x%llx from_user %u address 0x%llx", (long long)i,
		      (unsigned long long)hit.rip, hit.from_user, (unsigned long long)hit.address);
	}
}

/* Half a hit short of the end of the data pages: one whole hit fits, the second faults. */
#define HITS_AT_EDGE (USER_DATA_BASE + USER_DATA_PAGES * PAGE_SIZE - 3 * USER_DR_HIT_SIZE / 2)
#define HITS_AT_EDGE_OFFSET (USER_DATA_PAGES * PAGE_SIZE - 3 * USER_DR_HIT_SIZE / 2)

/*
 * SYSCALL_DR_READ_HITS into a buffer whose end is unmapped delivers the hits that fit and keeps
 * the rest for the next call: of 3 hits, 1 lands before the fault and 2 in the next read.
 */
TEST(dr, user_read_hits_into_a_buffer_that_faults_part_way_loses_no_hit)
{
	static uint8_t data[USER_DATA_PAGES * PAGE_SIZE];
	struct user_syscall_script script = {
		.count = 6,
		.calls = { syscall_of(SYSCALL_DR_INSTALL, WATCHED, DR_TYPE_READ_WRITE, 1),
			   syscall_of(SYSCALL_WRITE, WATCHED, 1, 0),
			   syscall_of(SYSCALL_WRITE, WATCHED, 1, 0),
			   syscall_of(SYSCALL_WRITE, WATCHED, 1, 0),
			   syscall_of(SYSCALL_DR_READ_HITS, HITS_AT_EDGE, USER_DR_HITS_MAX, 0),
			   syscall_of(SYSCALL_DR_READ_HITS, HITS_BUFFER, USER_DR_HITS_MAX, 0) },
	};
	struct dr_hit hits[3];
	bool delivered;

	user_script_run(&script, data, sizeof(data));
	check_eq(0, script.calls[0].result);
	for (unsigned int i = 1; i <= 3; i++)
		check_eq(1, script.calls[i].result);
	/* Where data watchpoints never fire (KVM-PVM), there is nothing to deliver or lose. */
	if (!check(script.calls[4].result != 0 || script.calls[5].result != 0,
		   "no hit was recorded: the watchpoint never fired"))
		return;
	delivered = check_eq(1, script.calls[4].result);
	delivered &= check_eq(2, script.calls[5].result);
	if (!delivered)
		return;
	memcpy(&hits[0], &data[HITS_AT_EDGE_OFFSET], sizeof(hits[0]));
	memcpy(&hits[1], &data[HITS_OFFSET], 2 * sizeof(hits[0]));
	for (unsigned int i = 0; i < 3; i++)
		check(hits[i].address == WATCHED && hits[i].slot == 0,
		      "hit %u: address 0x%llx slot %u, expected 0x%lx slot 0", i,
		      (unsigned long long)hits[i].address, hits[i].slot, WATCHED);
}

static const struct named_syscall hostile_calls[] = {
	{ "install slot 0", { SYSCALL_DR_INSTALL, { WATCHED, DR_TYPE_WRITE, 8 }, 0 } },
	{ "uninstall 2^32", { SYSCALL_DR_UNINSTALL, { ABOVE_32_BITS }, -DR_ERROR_NOT_INSTALLED } },
	{ "uninstall 2^64 - 1", { SYSCALL_DR_UNINSTALL, { UINT64_MAX }, -DR_ERROR_NOT_INSTALLED } },
	{ "uninstall slot 0, still there", { SYSCALL_DR_UNINSTALL, { 0 }, 0 } },
	{ "install length 24",
	  { SYSCALL_DR_INSTALL, { WATCHED, DR_TYPE_WRITE, 24 }, -DR_ERROR_LENGTH } },
	{ "install length 2^32 + 8",
	  { SYSCALL_DR_INSTALL, { WATCHED, DR_TYPE_WRITE, ABOVE_32_BITS | 8 }, -DR_ERROR_LENGTH } },
	{ "install type 2^32 + write",
	  { SYSCALL_DR_INSTALL, { WATCHED, ABOVE_32_BITS | DR_TYPE_WRITE, 8 }, -DR_ERROR_TYPE } },
	{ "install at bit 63 + a user address",
	  { SYSCALL_DR_INSTALL,
	    { HIGH_BIT | WATCHED, DR_TYPE_WRITE, 8 },
	    -DR_ERROR_NON_CANONICAL } },
	{ "read hits, capacity 2^64 - 1",
	  { SYSCALL_DR_READ_HITS, { HITS_BUFFER, UINT64_MAX }, 0 } },
	{ "read hits to 2^64 - 8",
	  { SYSCALL_DR_READ_HITS, { UINT64_MAX - 7, 1 }, SYSCALL_ERROR_FAULT } },
	{ "handler at bit 63 + a user address",
	  { SYSCALL_DR_SET_HANDLER, { HIGH_BIT | USER_TEXT_BASE }, SYSCALL_ERROR_FAULT } },
	{ "no handler", { SYSCALL_DR_SET_HANDLER, { 0 }, 0 } },
};

TEST(dr, breakpoint_system_calls_check_arguments_at_full_width)
{
	user_script_check_calls(hostile_calls, sizeof(hostile_calls) / sizeof(hostile_calls[0]));
}

/*
 * SYSCALL with a TF the task set itself: FMASK clears TF, so nothing traps in ring 0, and the
 * IRET back sets TF again: the task, which owns no single step, ends by that #DB in ring 3 and
 * never as an unexpected kernel exception. dr.user_single_step_across_syscall_traps_only_in_ring_3
 * checks the exact trace.
 */
TEST(dr, user_trap_flag_into_syscall_reaches_the_task_not_the_kernel)
{
	struct task *task;
	struct user_fault fault;

	if (syscall_uses_trap())
		test_skip("system calls use the UD2 trap here, not SYSCALL");
	task = task_create_user("step-syscall", user_trap_flag_into_syscall, 0,
				TASK_START_RUNNABLE);
	if (!task)
		test_abort("task_create_user failed");
	check_eq(TASK_EXIT_FAULTED, task_join(task, &fault));
	check(fault.vector == X86_EXC_DB && (fault.dr6 & DR6_BS) &&
		      fault.rip > user_text_address(user_trap_flag_into_syscall),
	      "vector %u dr6 0x%llx rip 0x%llx", fault.vector, (unsigned long long)fault.dr6,
	      (unsigned long long)fault.rip);
}
