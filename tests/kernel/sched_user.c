/* SPDX-License-Identifier: MIT */
/* sched suite: ring-3 tasks, their system calls, and what they are not allowed to do. */
#include <stddef.h>

#include "arch/x86/cpu.h"
#include "arch/x86/cpuid.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/paging.h"
#include "arch/x86/processor-flags.h"
#include "arch/x86/tsc.h"
#include "lib/string.h"
#include "runner/test.h"
#include "sched/sched.h"
#include "tests/kernel/lib/user_programs.h"

#define TEST_SEED 0x5eed

static long run_user(const void *program, uint64_t arg, struct user_fault *fault)
{
	struct task *task = task_create_user("user", program, arg, TASK_START_RUNNABLE);

	if (!task) {
		check(task != NULL, "task_create_user failed");
		return 0;
	}
	return task_join(task, fault);
}

TEST(sched, user_task_exits_with_its_code)
{
	struct user_fault fault;

	check_eq(42, run_user(user_exit, 42, &fault));
	check(!fault.valid, "fault recorded: vector %u error 0x%llx rip 0x%llx cr2 0x%llx",
	      fault.vector, (unsigned long long)fault.error_code, (unsigned long long)fault.rip,
	      (unsigned long long)fault.cr2);
}

TEST(sched, user_task_writes_to_the_console_and_gets_its_id)
{
	struct task *task =
		task_create_user("writer", user_write_message, USER_DATA_BASE, TASK_START_STOPPED);
	unsigned int id;

	check(task != NULL, "task_create_user failed");
	if (!task)
		return;
	strlcpy(task_user_data(task), "hello from ring 3", PAGE_SIZE);
	id = task->id;
	task_continue(task);
	check_eq(id, task_join(task, NULL));
}

TEST(sched, user_sleep_blocks_for_its_time)
{
	uint64_t start = rdtsc_ordered(), elapsed_ms;

	check_eq(0, run_user(user_sleep, 10, NULL));
	elapsed_ms = (rdtsc_ordered() - start) * 1000 / tsc_hz();
	check(elapsed_ms >= 10, "slept %llu ms for 10 ms", (unsigned long long)elapsed_ms);
}

static const struct {
	const char *name;
	const char *program, *instruction;
} privileged[] = {
#define PRIVILEGED(insn)                             \
	{                                            \
#insn, user_##insn, user_##insn##_at \
	}
	PRIVILEGED(wrmsr), PRIVILEGED(rdmsr), PRIVILEGED(write_dr7), PRIVILEGED(read_dr0),
	PRIVILEGED(hlt),   PRIVILEGED(cli),   PRIVILEGED(lgdt),
};

TEST(sched, privileged_instructions_raise_gp_in_ring_3)
{
	for (size_t i = 0; i < sizeof(privileged) / sizeof(privileged[0]); i++) {
		struct user_fault fault;
		long code = run_user(privileged[i].program, 0, &fault);

		check(code == TASK_EXIT_FAULTED && fault.valid, "%s: exit %ld, no fault",
		      privileged[i].name, code);
		check(fault.vector == X86_EXC_GP && fault.error_code == 0,
		      "%s: vector %u error 0x%llx, expected #GP(0)", privileged[i].name,
		      fault.vector, (unsigned long long)fault.error_code);
		check(fault.rip == user_text_address(privileged[i].instruction),
		      "%s: rip 0x%llx, the instruction is at 0x%llx", privileged[i].name,
		      (unsigned long long)fault.rip,
		      (unsigned long long)user_text_address(privileged[i].instruction));
	}
}

static const struct {
	const char *name;
	const char *program, *instruction;
} descriptor_reads[] = {
	PRIVILEGED(sgdt), PRIVILEGED(sidt), PRIVILEGED(sldt), PRIVILEGED(str), PRIVILEGED(smsw),
#undef PRIVILEGED
};

/* They show kernel addresses (GDT, IDT, TSS) to ring 3; CR4.UMIP makes them #GP(0) there. */
TEST(sched, descriptor_table_reads_raise_gp_in_ring_3_under_umip)
{
	if (cpuid_silicon(CPUID_LEAF_VENDOR, 0).eax < CPUID_LEAF_EXTENDED_FEATURES ||
	    !(cpuid_silicon(CPUID_LEAF_EXTENDED_FEATURES, 0).ecx & CPUID_7_ECX_UMIP))
		test_skip("CPUID.07H:ECX.UMIP=0");
	check(read_cr4() & CR4_UMIP, "CR4=0x%lx: UMIP clear", read_cr4());
	for (size_t i = 0; i < sizeof(descriptor_reads) / sizeof(descriptor_reads[0]); i++) {
		struct user_fault fault;
		long code = run_user(descriptor_reads[i].program, 0, &fault);

		check(code == TASK_EXIT_FAULTED && fault.valid && fault.vector == X86_EXC_GP &&
			      fault.error_code == 0 &&
			      fault.rip == user_text_address(descriptor_reads[i].instruction),
		      "%s: exit %ld, vector %u error 0x%llx rip 0x%llx; expected #GP(0) at 0x%llx",
		      descriptor_reads[i].name, code, fault.valid ? fault.vector : 0,
		      (unsigned long long)fault.error_code, (unsigned long long)fault.rip,
		      (unsigned long long)user_text_address(descriptor_reads[i].instruction));
	}
}

static volatile uint8_t kernel_byte = 7;

TEST(sched, user_write_to_kernel_memory_raises_pf)
{
	struct user_fault fault;

	check_eq(TASK_EXIT_FAULTED, run_user(user_write_byte, (uint64_t)&kernel_byte, &fault));
	check_eq(X86_EXC_PF, fault.vector);
	check_eq(PF_ERROR_PRESENT | PF_ERROR_WRITE | PF_ERROR_USER, fault.error_code);
	check_eq((uint64_t)&kernel_byte, fault.cr2);
	check_eq(7, kernel_byte);
}

TEST(sched, user_task_cannot_read_another_tasks_pages)
{
	/* Stopped: its pages exist until it ends, and it need not run meanwhile. */
	struct task *owner = task_create_user("owner", user_exit, 0, TASK_START_STOPPED);
	uint8_t *secret;
	struct user_fault fault;

	check(owner != NULL, "task_create_user failed");
	if (!owner)
		return;
	secret = task_user_data(owner);
	secret[0] = 0xa5;
	/* The same user address in another address space is that task's own page. */
	check_eq(0, run_user(user_read_byte, USER_DATA_BASE, &fault));
	/* And the owner's page through the kernel's direct map faults, in ring 3, on a read. */
	check_eq(TASK_EXIT_FAULTED, run_user(user_read_byte, (uint64_t)secret, &fault));
	check_eq(X86_EXC_PF, fault.vector);
	check_eq(PF_ERROR_USER, fault.error_code & (PF_ERROR_USER | PF_ERROR_WRITE));
	check_eq((uint64_t)secret, fault.cr2);
	task_continue(owner);
	check_eq(0, task_join(owner, NULL));
}

TEST(sched, user_read_of_a_supervisor_page_is_a_protection_fault)
{
	static volatile uint8_t supervisor_byte;
	struct user_fault fault;

	/* SDM Vol. 3 §4.7: the page is present, so the error code has P set (0x5, not 0x4). */
	check_eq(TASK_EXIT_FAULTED,
		 run_user(user_read_byte,
			  (uint64_t)phys_to_virt(virt_to_phys((const void *)&supervisor_byte)),
			  &fault));
	check_eq(X86_EXC_PF, fault.vector);
	check_eq(PF_ERROR_PRESENT | PF_ERROR_USER, fault.error_code);
}

TEST(sched, user_fault_handler_receives_the_fault)
{
	struct task *task = task_create_user("handled", user_cli, 0, TASK_START_STOPPED);
	struct user_fault fault;

	check(task != NULL, "task_create_user failed");
	if (!task)
		return;
	task_set_fault_handler(task, user_exit_with_vector);
	task_continue(task);
	check_eq(USER_FAULT_EXIT_BASE + X86_EXC_GP, task_join(task, &fault));
	check(fault.vector == X86_EXC_GP, "last fault: vector %u error 0x%llx rip 0x%llx",
	      fault.vector, (unsigned long long)fault.error_code, (unsigned long long)fault.rip);
}

TEST(sched, registers_flags_and_sse_survive_hundreds_of_switches)
{
	struct task *tasks[3];
	uint64_t switches = sched_stats().switches;

	for (unsigned int i = 0; i < 3; i++)
		tasks[i] = task_create_user("pattern", user_register_pattern, TEST_SEED + i,
					    TASK_START_RUNNABLE);
	for (unsigned int i = 0; i < 3; i++) {
		long code = tasks[i] ? task_join(tasks[i], NULL) : -1;

		/* 1-13: a general register, 14-29: xmm0-15, 30: CF (lib/user_programs.asm). */
		check(code == 0, "task %u: register %ld corrupted", i, code);
	}
	check(sched_stats().switches - switches >= 3 * REGISTER_PATTERN_ROUNDS, "%llu switches",
	      (unsigned long long)(sched_stats().switches - switches));
}
