/* SPDX-License-Identifier: MIT */
/* sched suite: a GS base that ring 3 set stays with its task and never reaches the kernel. */
#include <stdint.h>

#include "arch/x86/cpu.h"
#include "arch/x86/cpuid.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/percpu.h"
#include "arch/x86/processor-flags.h"
#include "arch/x86/user-abi.h"
#include "arch/x86/user.h"
#include "kernel/smp.h"
#include "runner/test.h"
#include "sched/sched.h"
#include "tests/kernel/lib/db_trace.h"
#include "tests/kernel/lib/user_programs.h"

#define CPUID_7_EBX_FSGSBASE (1u << 0) /* RDGSBASE and friends exist (SDM Vol. 2A CPUID) */
#define GS_ROUNDS 100
/* Upper half: the GS base a paranoid entry used to take for the kernel's by its sign. */
#define KERNEL_GS_BASE_FROM_RING_3 0xffffffff80000000ul

/* wrgsbase rdi; then GS_ROUNDS times: gs:0 and RDGSBASE must show rdi's, yield. exit(0), or
 * exit(1) at the first round that saw another GS base. */
#define GS_KEEPS(p)                                                                                \
	"\tmov %rdi, %r13\n\twrgsbase %rdi\n\tmov $" DB_EXPAND(                                    \
		GS_ROUNDS) ", %r12d\n" p "_round:\n"                                               \
			   "\tmov %gs:0, %rax\n\tcmp (%r13), %rax\n\tjne " p                       \
			   "_moved\n\trdgsbase %rax\n"                                             \
			   "\tcmp %r13, %rax\n\tjne " p "_moved\n\tmov $" DB_EXPAND(               \
				   SYSCALL_YIELD) ", %eax\n"                                       \
						  "\tcall user_syscall_gate\n\tdec "               \
						  "%r12d\n\tjnz " p                                \
						  "_round\n\txor %edi, %edi\n\tjmp " p "_exit\n" p \
						  "_moved:\n\tmov $1, %edi\n" p                    \
						  "_exit:\n\tmov $" DB_EXPAND(                     \
							  SYSCALL_EXIT) ", %eax\n\tcall "          \
									"user_syscall_gate\n"
DB_USER_PAYLOAD(gs_keeps, GS_KEEPS);

/* wrgsbase rdi, exit(0). */
#define GS_SET(p) "\twrgsbase %rdi\n"
DB_USER_PAYLOAD(gs_set, GS_SET);

/* wrgsbase rdi, then set TF: a single-step #DB from ring 3 with that GS base live. */
#define GS_SET_AND_STEP(p) "\twrgsbase %rdi\n" DB_ASM_TF_ON "\tnop\n\tnop\n"
DB_USER_PAYLOAD(gs_set_and_step, GS_SET_AND_STEP);

/* Store RDGSBASE at rdi (its data page), exit(0). */
#define GS_REPORT(p) "\trdgsbase %rax\n\tmov %rax, (%rdi)\n"
DB_USER_PAYLOAD(gs_report, GS_REPORT);

extern const char u_gs_keeps[], u_gs_set[], u_gs_set_and_step[], u_gs_report[];

static void set_fsgsbase(void *on)
{
	unsigned long cr4 = read_cr4();

	write_cr4(*(bool *)on ? cr4 | CR4_FSGSBASE : cr4 & ~CR4_FSGSBASE);
}

/*
 * Let ring 3 write its GS base on every CPU, as KVM-PVM does without asking: CR4.FSGSBASE. Skips
 * where the CPU has no FSGSBASE; gs_base_writes_end() turns it off again.
 */
static void gs_base_writes_begin(void)
{
	bool on = true;

	if (cpuid_silicon(CPUID_LEAF_VENDOR, 0).eax < CPUID_LEAF_EXTENDED_FEATURES ||
	    !(cpuid_silicon(CPUID_LEAF_EXTENDED_FEATURES, 0).ebx & CPUID_7_EBX_FSGSBASE))
		test_skip("CPUID.(EAX=7,ECX=0):EBX.FSGSBASE[bit 0] is 0: ring 3 cannot write its "
			  "GS base here");
	smp_call_all(set_fsgsbase, &on);
}

static void gs_base_writes_end(void)
{
	bool off = false;

	smp_call_all(set_fsgsbase, &off);
}

/* A stopped user task on the test's CPU, so that the tasks of a test share one CPU. */
static struct task *user_task_here(const char *program, uint64_t arg)
{
	struct task *task = task_create_user("gs-base", program, arg, TASK_START_STOPPED);

	if (!task)
		test_abort("task_create_user failed");
	if (sched_migrate(task, this_cpu_index()) != 0)
		test_abort("sched_migrate to CPU %u failed", this_cpu_index());
	return task;
}

static long run_user_task_here(const char *program, uint64_t arg, struct user_fault *fault)
{
	struct task *task = user_task_here(program, arg);

	task_continue(task);
	return task_join(task, fault);
}

/* The platform defect KVM-PVM has: WRGSBASE in ring 3 with CR4.FSGSBASE clear (SDM: #UD). */
TEST(sched, user_wrgsbase_without_cr4_fsgsbase_raises_ud)
{
	struct user_fault fault = { 0 };

	check_eq(0, read_cr4() & CR4_FSGSBASE);
	check_eq(TASK_EXIT_FAULTED, run_user_task_here(u_gs_set, USER_DATA_BASE, &fault));
	check_eq(X86_EXC_UD, fault.vector);
}

/* Two tasks on one CPU with different GS bases, switching at every round: each keeps its own. */
TEST(sched, a_user_gs_base_stays_with_its_task_across_switches)
{
	static const uint64_t markers[2] = { 0x5157a5e0a, 0x5157a5e0b };
	struct task *tasks[2];

	gs_base_writes_begin();
	for (unsigned int i = 0; i < 2; i++) {
		uint64_t *data;

		/* Task i reads its marker at USER_DATA_BASE + 8 * i; the other offset holds 0. */
		tasks[i] = user_task_here(u_gs_keeps, USER_DATA_BASE + 8 * i);
		data = task_user_data(tasks[i]);
		data[i] = markers[i];
		data[1 - i] = 0;
	}
	for (unsigned int i = 0; i < 2; i++)
		task_continue(tasks[i]);
	for (unsigned int i = 0; i < 2; i++)
		check_eq(0, task_join(tasks[i], NULL));
	gs_base_writes_end();
}

/* One task leaves an upper-half GS base and exits; the next single-steps in ring 3 and sees 0. */
TEST(sched, a_kernel_gs_base_left_by_an_exited_task_does_not_reach_the_next)
{
	struct user_fault fault = { 0 };
	struct task *report;

	gs_base_writes_begin();
	check_eq(0, run_user_task_here(u_gs_set, KERNEL_GS_BASE_FROM_RING_3, NULL));
	check_eq(TASK_EXIT_FAULTED, run_user_task_here(user_set_trap_flag, 0, &fault));
	check_eq(X86_EXC_DB, fault.vector);
	report = user_task_here(u_gs_report, USER_DATA_BASE);
	*(uint64_t *)task_user_data(report) = 1;
	task_continue(report);
	while (report->state != TASK_DEAD) /* its data pages go with task_join() */
		sched_sleep_ms(1);
	check_eq(0, *(uint64_t *)task_user_data(report));
	check_eq(0, task_join(report, NULL));
	gs_base_writes_end();
}

/* A #DB (a paranoid entry) from ring 3 while an upper-half GS base is live: the kernel's is used.
 */
TEST(sched, a_single_step_with_a_kernel_gs_base_in_ring_3_leaves_the_kernel_intact)
{
	struct user_fault fault = { 0 };

	gs_base_writes_begin();
	check_eq(TASK_EXIT_FAULTED,
		 run_user_task_here(u_gs_set_and_step, KERNEL_GS_BASE_FROM_RING_3, &fault));
	check_eq(X86_EXC_DB, fault.vector);
	check_eq(0, run_user_task_here(u_gs_keeps, USER_DATA_BASE, NULL));
	gs_base_writes_end();
}
