/* SPDX-License-Identifier: MIT */
/* dr suite: breakpoints of user tasks, installed for them or by their own system calls. */
#include "arch/x86/debugreg.h"
#include "arch/x86/paging.h"
#include "dr/dr.h"
#include "dr/state.h"
#include "emulator/decode.h"
#include "lib/string.h"
#include "runner/test.h"
#include "sched/sched.h"
#include "tests/kernel/lib/user_programs.h"

#define REPEAT 3

/* user_dr_script reads at most USER_DR_HITS_MAX hits: room for all that a task can have. */
_Static_assert(DR_HITS_MAX <= USER_DR_HITS_MAX, "USER_DR_HITS_MAX: DR_HITS_MAX");

/* A stopped user task running user_dr_script with *script copied into its data page. */
static struct task *script_task(const struct user_dr_script *script)
{
	struct task *task =
		task_create_user("dr-script", user_dr_script, USER_DATA_BASE, TASK_START_STOPPED);

	if (!task)
		test_abort("task_create_user failed");
	memcpy(task_user_data(task), script, sizeof(*script));
	return task;
}

/* Run it to its end, and give back what it wrote (its data page is freed by the join). */
static void script_run(struct task *task, struct user_dr_script *result)
{
	task_continue(task);
	while (task->state != TASK_DEAD)
		sched_sleep_ms(1);
	memcpy(result, task_user_data(task), sizeof(*result));
	check_eq(0, task_join(task, NULL));
}

static struct dr_hit script_hit(const struct user_dr_script *script, unsigned int i)
{
	struct dr_hit hit;

	memcpy(&hit, &script->hits[i * USER_DR_HIT_SIZE], sizeof(hit));
	return hit;
}

TEST(dr, breakpoint_attached_to_a_stopped_user_task_fires_in_ring_3)
{
	struct user_dr_script script = { .action = USER_DR_CALL,
					 .target = user_text_address(user_dr_target),
					 .repeat = REPEAT };
	struct task *task = script_task(&script);
	struct dr_breakpoint breakpoint = { script.target, DR_TYPE_EXECUTE, 1 };

	check_eq(0, dr_install_as(task->index, &breakpoint, NULL, NULL, DR_REQUESTER_USER));
	script_run(task, &script);
	check_eq(REPEAT, script.hit_count);
	for (unsigned int i = 0; i < REPEAT && i < script.hit_count; i++) {
		struct dr_hit hit = script_hit(&script, i);

		check(hit.from_user && hit.rip == script.target && hit.slot == 0 &&
			      hit.dr6 == (DR6_RESET | DR6_B0),
		      "hit %u: user %u rip 0x%llx slot %u dr6 0x%llx", i, hit.from_user,
		      (unsigned long long)hit.rip, hit.slot, (unsigned long long)hit.dr6);
	}
}

/* Install an execute breakpoint on user_dr_target by system call, then call it REPEAT times. */
static struct user_dr_script own_execute_breakpoint_script(void)
{
	return (struct user_dr_script){ .install = 1,
					.address = user_text_address(user_dr_target),
					.type = DR_TYPE_EXECUTE,
					.length = 1,
					.action = USER_DR_CALL,
					.target = user_text_address(user_dr_target),
					.repeat = REPEAT };
}

TEST(dr, user_task_installs_its_own_breakpoint_by_system_call)
{
	struct user_dr_script script = own_execute_breakpoint_script();

	script_run(script_task(&script), &script);
	check_eq(0, script.install_result);
	check_eq(REPEAT, script.hit_count);
}

TEST(dr, user_write_watchpoint_fires_on_its_own_data)
{
	struct user_dr_script script = { .install = 1,
					 .address = USER_DATA_BASE + PAGE_SIZE,
					 .type = DR_TYPE_WRITE,
					 .length = 8,
					 .action = USER_DR_WRITE,
					 .target = USER_DATA_BASE + PAGE_SIZE + 7,
					 .repeat = REPEAT };

	script_run(script_task(&script), &script);
	check_eq(0, script.install_result);
	check_eq(REPEAT, script.hit_count);
}

TEST(dr, user_request_to_watch_kernel_memory_is_refused)
{
	static volatile uint64_t kernel_data;
	struct user_dr_script script = {
		.install = 1, .address = (uint64_t)&kernel_data, .type = DR_TYPE_WRITE, .length = 8
	};

	script_run(script_task(&script), &script);
	check_eq(-DR_ERROR_KERNEL_ADDRESS, script.install_result);
	check_eq(0, script.hit_count);
}

TEST(dr, user_breakpoint_does_not_fire_in_another_user_task)
{
	struct user_dr_script owner = own_execute_breakpoint_script();
	struct user_dr_script other = owner;
	struct task *owner_task, *other_task;

	other.install = 0;
	owner_task = script_task(&owner);
	other_task = script_task(&other);
	task_continue(owner_task);
	script_run(other_task, &other);
	script_run(owner_task, &owner);
	check_eq(REPEAT, owner.hit_count);
	check_eq(0, other.hit_count);
}

/* Run user_dr_script with nothing to do under single-step (and maybe branch-step). */
static struct user_dr_script run_stepped(bool branch_step, int *result)
{
	struct user_dr_script script = { .action = USER_DR_NOTHING };
	struct task *task = script_task(&script);

	dr_set_single_step(task->index, true);
	*result = branch_step ? dr_set_branch_step(task->index, true) : 0;
	script_run(task, &script);
	return script;
}

/*
 * Where control goes after the instruction at rip in the user text: the next instruction, or a
 * direct near branch's target (its displacement ends it: rel8 in the one-byte map's short forms,
 * rel32 for E8, E9 and 0F 80-8F). A conditional jump is followed as taken. 0 for an instruction
 * that cannot be followed here (not decoded, indirect, a return or far).
 */
static uint64_t next_rip(uint64_t rip, struct decoded_instruction *insn)
{
	const uint8_t *bytes = (const uint8_t *)__user_text_start + (rip - USER_TEXT_BASE);
	int32_t rel32;

	if (!decode_instruction(bytes, DECODE_MAX_LENGTH, insn))
		return 0;
	if (insn->branch == DECODE_NOT_BRANCH)
		return rip + insn->length;
	if (insn->indirect || (insn->branch != DECODE_JCC && insn->branch != DECODE_JMP &&
			       insn->branch != DECODE_CALL))
		return 0;
	if (!insn->two_byte && insn->opcode != 0xe8 && insn->opcode != 0xe9)
		return rip + insn->length + (uint64_t)(int64_t)(int8_t)bytes[insn->length - 1];
	memcpy(&rel32, &bytes[insn->length - 4], sizeof(rel32));
	return rip + insn->length + (uint64_t)(int64_t)rel32;
}

/*
 * user_dr_script with nothing to do, stepped: a trap after each instruction, with the RIP of the
 * next one and DR6 of BS alone (SDM Vol. 3 §18.2.3, "Single step"). Its path: both conditional
 * jumps taken (je .act, install is 0; jz .read_hits, repeat is 0), then the call to the system
 * call gate that reads the hits, whose trap at the gate is the last the read can see.
 */
TEST(dr, single_step_of_a_user_task_traps_after_each_instruction)
{
	int result;
	struct user_dr_script script = run_stepped(false, &result);
	uint64_t expected[USER_DR_HITS_MAX], rip = user_text_address(user_dr_script);
	struct decoded_instruction insn = { 0 };
	unsigned int count = 0;

	while (count < USER_DR_HITS_MAX && insn.branch != DECODE_CALL) {
		rip = next_rip(rip, &insn);
		if (!rip)
			test_abort("user_dr_script: no next instruction after hit %u", count);
		expected[count++] = rip;
	}
	check(insn.branch == DECODE_CALL, "no call in the first %u instructions", count);
	check_eq(count, script.hit_count);
	for (unsigned int i = 0; i < count && i < script.hit_count; i++) {
		struct dr_hit hit = script_hit(&script, i);

		check(hit.rip == expected[i] && hit.from_user && hit.slot == DR_NO_SLOT &&
			      hit.dr6 == (DR6_RESET | DR6_BS),
		      "hit %u: rip 0x%llx (expected 0x%llx) user %u slot %u dr6 0x%llx (expected "
		      "0x%lx)",
		      i, (unsigned long long)hit.rip, (unsigned long long)expected[i],
		      hit.from_user, hit.slot, (unsigned long long)hit.dr6, DR6_RESET | DR6_BS);
	}
}

/*
 * With BTF a single step traps only after a branch (SDM "Single-Stepping on Branches"): the BTF
 * run's traps are exactly those of the plain run whose previous instruction branched, decoded
 * from the plain run's own trace.
 */
TEST(dr, branch_single_step_traps_only_on_branches)
{
	int result;
	struct user_dr_script stepped, branches;
	uint64_t expected[USER_DR_HITS_MAX], previous;
	unsigned int count = 0;

	if (!dr_branch_step_supported())
		test_skip("IA32_DEBUGCTL does not keep BTF here (it reads back without it)");
	stepped = run_stepped(false, &result);
	branches = run_stepped(true, &result);
	check_eq(0, result);
	previous = user_text_address(user_dr_script);
	for (int64_t i = 0; i < stepped.hit_count && i < USER_DR_HITS_MAX; i++) {
		uint64_t rip = script_hit(&stepped, (unsigned int)i).rip;
		struct decoded_instruction insn;
		const uint8_t *bytes =
			(const uint8_t *)__user_text_start + (previous - USER_TEXT_BASE);
		bool decoded = decode_instruction(bytes, DECODE_MAX_LENGTH, &insn);

		/* Control went elsewhere than the next instruction, or an unconditional branch. */
		if (!decoded || rip != previous + insn.length ||
		    (insn.branch != DECODE_NOT_BRANCH && insn.branch != DECODE_JCC))
			expected[count++] = rip;
		previous = rip;
	}
	check_eq(count, branches.hit_count);
	for (unsigned int i = 0; i < count && i < branches.hit_count; i++)
		check_eq(expected[i], script_hit(&branches, i).rip);
}
