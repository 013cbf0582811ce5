/* SPDX-License-Identifier: MIT */
/* sched suite: ring 3 in compatibility mode, and each instruction there that could enter ring 0. */
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/cpuid.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/paging.h"
#include "arch/x86/traps.h"
#include "lib/string.h"
#include "runner/test.h"
#include "sched/sched.h"
#include "tests/kernel/lib/user_programs.h"

/* tests/kernel/lib/user_compat.asm */
#define USER_COMPAT_RAN 0x320 /* + the bytes a PUSH took: 4 in compatibility mode, 8 in 64-bit */
#define PUSH_BYTES_COMPAT 4
extern const char user_compat_round_trip[], user_compat_syscall[], user_compat_syscall_at[];
extern const char user_compat_gate[], user_compat_int80[], user_compat_int80_at[];
extern const char user_compat_sysenter[], user_compat_sysenter_at[];
extern const char user_compat_cli[], user_compat_cli_at[];
extern const char user_syscall_gate[]; /* arch/x86/user_gate.asm */

#define UNMAPPED_USER_ADDRESS 0x1000ul
/* INT n through a DPL-0 gate from CPL 3: #GP with the IDT entry's selector (SDM Vol. 3 §6.13). */
#define ERROR_CODE_IDT (1u << 1)
#define IDT_ERROR_CODE(vector) (((vector) << 3) | ERROR_CODE_IDT)
#define VECTOR_INT80 0x80
#define CANARY_BYTE 0xa5

/* A kernel page ring 3 names as its stack: nothing may be written to it. */
static uint8_t canary_page[PAGE_SIZE] __attribute__((aligned(PAGE_SIZE)));

static long run_compat(const void *program, uint64_t arg, struct user_fault *fault)
{
	struct task *task = task_create_user("compat", program, arg, TASK_START_RUNNABLE);

	if (!task)
		test_abort("task_create_user failed");
	return task_join(task, fault);
}

/* The task ended by a fault at the instruction at, in ring 3's text. */
static void check_fault_at(const char *what, long code, const struct user_fault *fault,
			   const void *at)
{
	uint64_t rip = user_text_address(at);

	check(code == TASK_EXIT_FAULTED && fault->valid && fault->rip == rip,
	      "%s: exit %ld, fault recorded %d at 0x%llx; expected exit %ld, a fault at 0x%llx",
	      what, code, fault->valid, (unsigned long long)fault->rip, TASK_EXIT_FAULTED,
	      (unsigned long long)rip);
}

/* The DPL-3 32-bit code segment works: ring 3 may run 32-bit code, and come back. */
TEST(sched, user_task_runs_32_bit_code_in_compatibility_mode_and_comes_back)
{
	struct user_fault fault;

	check_eq(USER_COMPAT_RAN + PUSH_BYTES_COMPAT,
		 run_compat(user_compat_round_trip, 0, &fault));
	check(!fault.valid, "fault recorded: %s at 0x%llx", exception_name(fault.vector),
	      (unsigned long long)fault.rip);
}

/*
 * SYSCALL outside 64-bit mode is #UD on Intel (SDM Vol. 2B SYSCALL); AMD enters ring 0 at
 * IA32_CSTAR on ring 3's stack (AMD APM Vol. 3 SYSCALL), and the kernel's CSTAR entry gives the
 * task the same #UD. Whatever stack ring 3 chose, no byte of it is written and the task ends.
 */
TEST(sched, user_compat_syscall_is_ud_on_any_stack_and_writes_nothing)
{
	const struct {
		const char *name;
		uint64_t rsp;
	} stacks[] = {
		{ "own stack", 0 },
		{ "unmapped stack", UNMAPPED_USER_ADDRESS },
		{ "kernel page as stack", (uint64_t)&canary_page[PAGE_SIZE / 2] },
	};

	memset(canary_page, CANARY_BYTE, sizeof(canary_page));
	for (unsigned int i = 0; i < sizeof(stacks) / sizeof(stacks[0]); i++) {
		struct user_fault fault;
		long code = run_compat(user_compat_syscall, stacks[i].rsp, &fault);

		check_fault_at(stacks[i].name, code, &fault, user_compat_syscall_at);
		check(fault.vector == X86_EXC_UD && fault.error_code == 0,
		      "%s: %s error 0x%llx, expected #UD", stacks[i].name,
		      exception_name(fault.vector), (unsigned long long)fault.error_code);
	}
	for (unsigned int i = 0; i < sizeof(canary_page); i++)
		if (canary_page[i] != CANARY_BYTE) {
			check(canary_page[i] == CANARY_BYTE,
			      "kernel page byte %u is 0x%x, was 0x%x", i, canary_page[i],
			      CANARY_BYTE);
			break;
		}
}

/* The ordinary system-call gate, called from compatibility mode, is a #UD at the gate too. */
TEST(sched, user_compat_system_call_gate_is_ud_at_the_gate)
{
	struct user_fault fault;
	long code = run_compat(user_compat_gate, 0, &fault);

	check_fault_at("gate", code, &fault, user_syscall_gate);
	check_eq(X86_EXC_UD, fault.vector);
}

TEST(sched, user_compat_int_0x80_is_gp_through_its_dpl_0_gate)
{
	struct user_fault fault;
	long code = run_compat(user_compat_int80, 0, &fault);

	check_fault_at("INT 0x80", code, &fault, user_compat_int80_at);
	check_eq(X86_EXC_GP, fault.vector);
	check_eq(IDT_ERROR_CODE(VECTOR_INT80), fault.error_code);
}

static bool silicon_is_amd(void)
{
	struct cpuid_result vendor = cpuid_silicon(CPUID_LEAF_VENDOR, 0);

	return !memcmp(&vendor.ebx, "Auth", 4) && !memcmp(&vendor.edx, "enti", 4) &&
	       !memcmp(&vendor.ecx, "cAMD", 4);
}

/*
 * SYSENTER in compatibility mode: #GP(0) on Intel with IA32_SYSENTER_CS null, as the kernel
 * leaves it (SDM Vol. 2B SYSENTER); #UD on AMD, which has no SYSENTER in long mode (AMD APM
 * Vol. 3 SYSENTER).
 */
TEST(sched, user_compat_sysenter_faults_as_the_vendor_says)
{
	struct user_fault fault;
	long code = run_compat(user_compat_sysenter, 0, &fault);
	unsigned int expected = silicon_is_amd() ? X86_EXC_UD : X86_EXC_GP;

	check_fault_at("SYSENTER", code, &fault, user_compat_sysenter_at);
	check_eq(expected, fault.vector);
}

/*
 * A fault handler is 64-bit code: a fault in compatibility mode enters it in 64-bit mode, as
 * Linux delivers a 64-bit signal handler with __USER_CS whatever CS the task had.
 */
TEST(sched, user_fault_handler_of_a_compat_fault_runs_in_64_bit_mode)
{
	struct task *task = task_create_user("compat", user_compat_cli, 0, TASK_START_STOPPED);
	struct user_fault fault;

	if (!task)
		test_abort("task_create_user failed");
	task_set_fault_handler(task, user_exit_with_vector);
	task_continue(task);
	check_eq(USER_FAULT_EXIT_BASE + X86_EXC_GP, task_join(task, &fault));
	check_eq(user_text_address(user_compat_cli_at), fault.rip);
}
