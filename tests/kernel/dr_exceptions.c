/* SPDX-License-Identifier: MIT */
/* dr suite: #DB and #BP as delivered: DR6 exactly, ICEBP, INT1, INT3, MOV SS, DR4/DR5, bus locks.
 */
#include <stdint.h>

#include "arch/x86/cpu.h"
#include "arch/x86/cpuid.h"
#include "arch/x86/debug-registers.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/gdt.h"
#include "arch/x86/processor-flags.h"
#include "arch/x86/syscall.h"
#include "arch/x86/traps.h"
#include "arch/x86/user-abi.h"
#include "dr/dr.h"
#include "lib/string.h"
#include "runner/test.h"
#include "sched/sched.h"
#include "tests/kernel/lib/db_trace.h"
#include "tests/kernel/lib/user_programs.h"

#define SPLIT_LOCK_MAGIC 0xdeadbeefdeadbeef /* no suffix: asm text takes it too */
#define SPLIT_OFFSET 60 /* an 8-byte operand across a 64-byte cache line */
#define CPUID_7_ECX_BUS_LOCK_DETECT (1u << 24) /* DR6.BLD exists (active low) */
#define IDT_ERROR_CODE(vector) (((vector) << 3) | 2) /* the IDT flag, bit 1 (SDM §6.13) */

/* What the data-breakpoint payloads store to and MOV SS loads from (the asm names them). */
volatile uint64_t db_watched __attribute__((aligned(8)));
volatile uint64_t db_ss_selector __attribute__((aligned(8)));

/* A user task of its own: returns its exit code, and its fault if it ended by one. */
static long run_user(const char *program, uint64_t arg, struct user_fault *fault)
{
	struct task *task = task_create_user("db-payload", program, arg, TASK_START_RUNNABLE);

	if (!task)
		test_abort("task_create_user failed");
	return task_join(task, fault);
}

/* LOCK CMPXCHG across a cache line, rdi: the buffer. exit(1) when it stored the magic. */
#define SPLIT_LOCK(p)                                                                            \
	"\tlea " DB_EXPAND(SPLIT_OFFSET) "(%rdi), %rsi\n\txor %eax, %eax\n\tmovabs $" DB_EXPAND( \
		SPLIT_LOCK_MAGIC) ", %rdx\n\tlock cmpxchg %rdx, (%rsi)\n\txor %edi, %edi\n"      \
				  "\tcmp (%rsi), %rdx\n\tsete %dil\n\tmov $" DB_EXPAND(          \
					  SYSCALL_EXIT) ", %eax\n\tcall user_syscall_gate\n"
DB_USER_PAYLOAD(split_lock, SPLIT_LOCK);
extern const char u_split_lock[];

/* With split-lock #AC and bus-lock #DB off (their reset state), a bus lock is only a lock. */
TEST(dr, split_lock_raises_neither_ac_nor_db)
{
	static uint8_t buffer[128] __attribute__((aligned(64)));
	volatile uint64_t *value = (volatile uint64_t *)&buffer[SPLIT_OFFSET];
	struct db_trace trace = { 0 };
	struct user_fault fault;
	uint64_t expected = 0;

	check_eq(0, read_cr0() & CR0_AM);
	db_trace_start(&trace);
	asm volatile("lock cmpxchgq %[magic], %[value]"
		     : [value] "+m"(*value), "+a"(expected)
		     : [magic] "r"(SPLIT_LOCK_MAGIC)
		     : "memory", "cc");
	check_eq(1, run_user(u_split_lock, USER_DATA_BASE, &fault));
	db_trace_stop();
	check_eq(SPLIT_LOCK_MAGIC, *value);
	db_trace_check(&trace, NULL, 0, "");
}

/* SDM Vol. 3 §18.2.2: with CR4.DE clear, DR4 and DR5 are DR6 and DR7 under other names. */
TEST(dr, dr4_and_dr5_alias_dr6_and_dr7_while_cr4_de_is_clear)
{
	unsigned long flags = local_irq_save();
	unsigned long cr4 = read_cr4();
	unsigned long dr6, dr7, dr4, dr5, dr7_before = read_dr7();
	uint32_t fault;

	write_cr4(cr4 & ~CR4_DE);
	fault = write_dr4_safe(DR6_RESET | DR6_BS | (DR6_B0 << 1));
	dr6 = read_dr6();
	dr4 = read_dr4();
	write_dr5(DR7_RESET | DR7_GE);
	dr7 = read_dr7();
	dr5 = read_dr5();
	write_dr7(dr7_before);
	write_dr6(DR6_RESET);
	write_cr4(cr4);
	local_irq_restore(flags);
	check_eq(0, fault);
	check_eq(DR6_RESET | DR6_BS | (DR6_B0 << 1), dr6);
	check_eq(dr6, dr4);
	check_eq(DR7_RESET | DR7_GE, dr7);
	check_eq(dr7, dr5);
}

TEST(dr, dr4_and_dr5_raise_ud_while_cr4_de_is_set)
{
	unsigned long flags = local_irq_save();
	unsigned long cr4 = read_cr4();
	unsigned long value = 0;
	uint32_t faults[4];

	write_cr4(cr4 | CR4_DE);
	faults[0] = read_dr4_safe(&value);
	faults[1] = read_dr5_safe(&value);
	faults[2] = write_dr4_safe(DR6_RESET);
	faults[3] = write_dr5_safe(DR7_RESET);
	write_cr4(cr4);
	local_irq_restore(flags);
	for (unsigned int i = 0; i < 4; i++)
		check(faults[i] == EXINFO(X86_EXC_UD, 0), "access %u: exinfo 0x%x", i, faults[i]);
}

/* A kernel payload with interrupts off. */
static void trace_kernel(void (*payload)(void), struct db_trace *trace)
{
	unsigned long flags = local_irq_save();

	db_trace_start(trace);
	payload();
	db_trace_stop();
	local_irq_restore(flags);
}

#define INT3(p) "\tint3\n" p "_after:\n"
DB_KERNEL_PAYLOAD(int3, INT3);
extern const char k_int3_after[];
void k_int3(void);

/* INT3 is a trap: #BP reports the instruction after it. */
TEST(dr, int3_raises_bp_with_the_rip_after_it)
{
	static const struct db_label labels[] = { DB_KERNEL_LABEL(int3, after) };
	struct db_trace trace = { 0 };

	trace_kernel(k_int3, &trace);
	db_trace_check(&trace, DB_LABELS(labels), "BP@after:-");
}

#define ICEBP(p) p "_icebp: .byte 0xf1\n" p "_after:\n"
DB_PAYLOAD(icebp, ICEBP);
extern const char k_icebp_icebp[], k_icebp_after[], u_icebp_icebp[], u_icebp_after[], u_icebp[];
void k_icebp(void);

/* ICEBP (INT1, 0xF1) is a trap-like #DB that sets no DR6 condition bit (SDM Vol. 3 §18.3). */
TEST(dr, icebp_is_a_trap_like_db_without_a_dr6_condition)
{
	static const struct db_label labels[] = { DB_KERNEL_LABEL(icebp, icebp),
						  DB_KERNEL_LABEL(icebp, after) };
	static const uint64_t icebps[] = { (uint64_t)k_icebp_icebp };
	struct db_trace trace = { .icebps = icebps, .icebp_count = 1 };

	trace_kernel(k_icebp, &trace);
	db_trace_check(&trace, DB_LABELS(labels), "DB@after:-");
}

TEST(dr, user_icebp_is_a_trap_like_db_without_a_dr6_condition)
{
	const struct db_label labels[] = { DB_USER_LABEL(icebp, icebp),
					   DB_USER_LABEL(icebp, after) };
	const uint64_t icebps[] = { user_text_address(u_icebp_icebp) };
	struct db_trace trace = { .icebps = icebps, .icebp_count = 1 };

	db_trace_start(&trace);
	check_eq(0, run_user(u_icebp, 0, NULL));
	db_trace_stop();
	db_trace_check(&trace, DB_LABELS(labels), "DB3@after:-");
}

#define INT1(p) "\tint $1\n" p "_after:\n"
DB_KERNEL_PAYLOAD(int1, INT1);
extern const char k_int1_after[];
void k_int1(void);

/* INT $1 is a software interrupt through gate 1: no DR6 condition either. */
TEST(dr, int_1_enters_the_db_gate_without_a_dr6_condition)
{
	static const struct db_label labels[] = { DB_KERNEL_LABEL(int1, after) };
	struct db_trace trace = { 0 };

	trace_kernel(k_int1, &trace);
	db_trace_check(&trace, DB_LABELS(labels), "DB@after:-");
}

#define EXECUTE_HIT(p) p "_at: nop\n"
DB_KERNEL_PAYLOAD(execute_hit, EXECUTE_HIT);
extern const char k_execute_hit_at[];
void k_execute_hit(void);

/* An execute hit on slot 2, with DR6 as software left it before: dr6_before. */
static void trace_execute_hit(unsigned long dr6_before, struct db_trace *trace)
{
	unsigned long flags = local_irq_save();

	db_trace_start(trace);
	write_dr2((uint64_t)k_execute_hit_at);
	write_dr6(dr6_before);
	write_dr7(DR7_RESET | DR7_ENABLE_MASK(2) | DR7_CONTROL(2, DR7_RW_EXECUTE, DR7_LEN_1));
	k_execute_hit();
	write_dr7(DR7_RESET);
	db_trace_stop();
	local_irq_restore(flags);
}

/*
 * The CPU writes B0-B3 on each #DB, for the conditions that matched, and sets the other status
 * bits but never clears them (SDM Vol. 3 §18.2.3; kvm-unit-tests' debug.c).
 */
TEST(dr, dr6_of_an_execute_hit_replaces_b0_b3_and_keeps_a_bs_software_set)
{
	static const struct db_label labels[] = { DB_KERNEL_LABEL(execute_hit, at) };
	struct db_trace trace = { 0 };

	trace_execute_hit(DR6_RESET, &trace);
	db_trace_check(&trace, DB_LABELS(labels), "DB@at:B2");
	trace_execute_hit(DR6_RESET | DR6_BS | (DR6_B0 << 1), &trace);
	db_trace_check(&trace, DB_LABELS(labels), "DB@at:B2|BS");
}

#define DATA_HIT(p) "\tmovl $42, db_watched(%rip)\n" p "_after: nop\n"
DB_KERNEL_PAYLOAD(data_hit, DATA_HIT);
extern const char k_data_hit_after[];
void k_data_hit(void);

static void trace_data_hit(unsigned long dr6_before, struct db_trace *trace)
{
	unsigned long flags = local_irq_save();

	db_trace_start(trace);
	write_dr1((uint64_t)&db_watched);
	write_dr6(dr6_before);
	write_dr7(DR7_RESET | DR7_ENABLE_MASK(1) | DR7_CONTROL(1, DR7_RW_WRITE, DR7_LEN_4));
	k_data_hit();
	write_dr7(DR7_RESET);
	db_trace_stop();
	local_irq_restore(flags);
}

/* A data hit is a trap after the store: B1, and no BS of its own. */
TEST(dr, dr6_of_a_data_hit_has_no_bs_and_keeps_a_bs_software_set)
{
	static const struct db_label labels[] = { DB_KERNEL_LABEL(data_hit, after) };
	struct db_trace trace = { 0 };

	trace_data_hit(DR6_RESET, &trace);
	db_trace_check(&trace, DB_LABELS(labels), "DB@after:B1");
	check_eq(42, db_watched);
	trace_data_hit(DR6_RESET | DR6_BS, &trace);
	db_trace_check(&trace, DB_LABELS(labels), "DB@after:B1|BS");
}

#define ONE_STEP(p)                                                                       \
	DB_ASM_TF_ON p "_first: nop\n" p "_push: pushfq\n" p                              \
		       "_and: andq $~" DB_EXPAND(DB_TF) ", (%rsp)\n" p "_popf: popfq\n" p \
							"_end:\n"
DB_KERNEL_PAYLOAD(one_step, ONE_STEP);
extern const char k_one_step_push[], k_one_step_and[], k_one_step_popf[], k_one_step_end[];
void k_one_step(void);

/*
 * DR6.RTM and DR6.BLD are active low. A #DB outside an RTM region sets RTM, even where software
 * cleared it; BLD reads 1 where bus-lock detection does not exist, and the CPU never sets it back
 * where it does (kvm-unit-tests' debug.c, "dr6_base_value"). Only the first #DB sees DR6 as
 * software wrote it: the recorder writes DR6_RESET after each.
 */
TEST(dr, db_sets_the_active_low_rtm_bit_that_software_cleared)
{
	static const struct db_label labels[] = { DB_KERNEL_LABEL(one_step, push),
						  DB_KERNEL_LABEL(one_step, and),
						  DB_KERNEL_LABEL(one_step, popf),
						  DB_KERNEL_LABEL(one_step, end) };
	bool bus_lock_detect =
		cpuid(CPUID_LEAF_EXTENDED_FEATURES, 0).ecx & CPUID_7_ECX_BUS_LOCK_DETECT;
	struct db_trace trace = { 0 };
	unsigned long flags = local_irq_save();

	db_trace_start(&trace);
	write_dr6(0);
	k_one_step();
	db_trace_stop();
	local_irq_restore(flags);
	db_trace_check(&trace, DB_LABELS(labels),
		       bus_lock_detect ? "DB@push:BS|!BLD DB@and:BS DB@popf:BS DB@end:BS"
				       : "DB@push:BS DB@and:BS DB@popf:BS DB@end:BS");
}

/* MOV SS from the watched selector, then one instruction: its pending data #DB merges with it. */
#define MOV_SS_ICEBP(p) "\tmov db_ss_selector(%rip), %ss\n" p "_icebp: .byte 0xf1\n" p "_after:\n"
#define MOV_SS_INT3(p) "\tmov db_ss_selector(%rip), %ss\n" p "_int3: int3\n" p "_after:\n"
DB_KERNEL_PAYLOAD(mov_ss_hit_icebp, MOV_SS_ICEBP);
DB_KERNEL_PAYLOAD(mov_ss_hit_int3, MOV_SS_INT3);
extern const char k_mov_ss_hit_icebp_icebp[], k_mov_ss_hit_icebp_after[];
extern const char k_mov_ss_hit_int3_int3[], k_mov_ss_hit_int3_after[];
void k_mov_ss_hit_icebp(void);
void k_mov_ss_hit_int3(void);

static void trace_mov_ss_hit(void (*payload)(void), struct db_trace *trace)
{
	unsigned long flags = local_irq_save();
	uint64_t selector;

	asm volatile("mov %%ss, %0" : "=r"(selector));
	db_ss_selector = selector;
	db_trace_start(trace);
	write_dr1((uint64_t)&db_ss_selector);
	write_dr7(DR7_RESET | DR7_ENABLE_MASK(1) | DR7_CONTROL(1, DR7_RW_READ_WRITE, DR7_LEN_2));
	payload();
	write_dr7(DR7_RESET);
	db_trace_stop();
	local_irq_restore(flags);
}

/* ICEBP's trap and the data hit that MOV SS held back are one #DB (kvm-unit-tests' debug.c). */
TEST(dr, mov_ss_with_a_pending_data_hit_then_icebp_delivers_one_db)
{
	static const struct db_label labels[] = { DB_KERNEL_LABEL(mov_ss_hit_icebp, icebp),
						  DB_KERNEL_LABEL(mov_ss_hit_icebp, after) };
	static const uint64_t icebps[] = { (uint64_t)k_mov_ss_hit_icebp_icebp };
	struct db_trace trace = { .icebps = icebps, .icebp_count = 1 };

	trace_mov_ss_hit(k_mov_ss_hit_icebp, &trace);
	db_trace_check(&trace, DB_LABELS(labels), "DB@after:B1");
}

/*
 * INT3 is delivered first; the held-back data hit then fires at the first instruction of the #BP
 * handler (the entry stub), before the handler can record the #BP (CVE-2018-8897's mechanism).
 */
TEST(dr, mov_ss_with_a_pending_data_hit_then_int3_delivers_bp_then_db)
{
	const struct db_label labels[] = { DB_KERNEL_LABEL(mov_ss_hit_int3, int3),
					   DB_KERNEL_LABEL(mov_ss_hit_int3, after),
					   { "bp_entry", idt_gate_target(X86_EXC_BP) } };
	struct db_trace trace = { 0 };

	trace_mov_ss_hit(k_mov_ss_hit_int3, &trace);
	db_trace_check(&trace, DB_LABELS(labels), "DB@bp_entry:B1 BP@after:-");
}

/*
 * Run a user payload that loads SS from the start of its data page (rdi), which holds the user
 * selector and a 2-byte read/write watchpoint: the hit MOV SS holds back goes with the payload's
 * next instruction. Returns the task's exit code.
 */
static long trace_user_mov_ss_hit(const char *program, struct db_trace *trace,
				  struct user_fault *fault)
{
	struct dr_breakpoint watch = { USER_DATA_BASE, DR_TYPE_READ_WRITE, 2 };
	struct task *task;
	long code;

	task = task_create_user("db-payload", program, USER_DATA_BASE, TASK_START_STOPPED);
	if (!task)
		test_abort("task_create_user failed");
	*(uint64_t *)task_user_data(task) = GDT_USER_DATA | SELECTOR_RPL_USER;
	check_eq(0, dr_install(task->index, &watch, NULL, NULL));
	db_trace_start(trace);
	task_continue(task);
	code = task_join(task, fault);
	db_trace_stop();
	return code;
}

#define USER_MOV_SS_ICEBP(p) "\tmov (%rdi), %ss\n" p "_icebp: .byte 0xf1\n" p "_after:\n"
DB_USER_PAYLOAD(mov_ss_hit_icebp, USER_MOV_SS_ICEBP);
extern const char u_mov_ss_hit_icebp[], u_mov_ss_hit_icebp_icebp[], u_mov_ss_hit_icebp_after[];

/* ICEBP ignores the gate's DPL: from ring 3 too, its trap and the held-back hit are one #DB. */
TEST(dr, user_mov_ss_with_a_pending_data_hit_then_icebp_delivers_one_db)
{
	const struct db_label labels[] = { DB_USER_LABEL(mov_ss_hit_icebp, icebp),
					   DB_USER_LABEL(mov_ss_hit_icebp, after) };
	const uint64_t icebps[] = { user_text_address(u_mov_ss_hit_icebp_icebp) };
	struct db_trace trace = { .icebps = icebps, .icebp_count = 1 };

	check_eq(0, trace_user_mov_ss_hit(u_mov_ss_hit_icebp, &trace, NULL));
	db_trace_check(&trace, DB_LABELS(labels), "DB3@after:B0");
}

#define USER_MOV_SS_INT1(p) "\tmov (%rdi), %ss\n" p "_int: int $1\n" p "_after:\n"
#define USER_MOV_SS_INT3(p) "\tmov (%rdi), %ss\n" p "_int: int3\n" p "_after:\n"
DB_USER_PAYLOAD(mov_ss_hit_int1, USER_MOV_SS_INT1);
DB_USER_PAYLOAD(mov_ss_hit_int3, USER_MOV_SS_INT3);
extern const char u_mov_ss_hit_int1[], u_mov_ss_hit_int1_int[], u_mov_ss_hit_int1_after[];
extern const char u_mov_ss_hit_int3[], u_mov_ss_hit_int3_int[], u_mov_ss_hit_int3_after[];

/*
 * From ring 3, INT $1 meets gate 1's DPL 0: #GP(IDT vector 1). The data hit that MOV SS held back
 * fires at the first instruction of the #GP handler, in ring 0 on the user's GS (the case of
 * CVE-2018-8897). (In ring 0, INT $1 would enter #DB's IST stack and the held-back #DB would enter
 * it again, over the first frame: a kernel with #DB on an IST stack, as Linux, cannot run that.)
 */
TEST(dr, user_mov_ss_with_a_pending_data_hit_then_int_1_takes_the_db_at_the_gp_entry)
{
	const struct db_label labels[] = { DB_USER_LABEL(mov_ss_hit_int1, int),
					   DB_USER_LABEL(mov_ss_hit_int1, after),
					   { "gp_entry", idt_gate_target(X86_EXC_GP) } };
	struct db_trace trace = { 0 };
	struct user_fault fault = { 0 };

	check_eq(TASK_EXIT_FAULTED, trace_user_mov_ss_hit(u_mov_ss_hit_int1, &trace, &fault));
	if (!check_eq(X86_EXC_GP, fault.vector))
		return; /* no #GP: no entry for the held-back #DB to fire at */
	check_eq(IDT_ERROR_CODE(X86_EXC_DB), fault.error_code);
	check_eq(user_text_address(u_mov_ss_hit_int1_int), fault.rip);
	db_trace_check(&trace, DB_LABELS(labels), "DB@gp_entry:B0");
}

/* INT3 (0xCC) checks the gate's DPL as INT n does: the same #GP, the same #DB at its entry. */
TEST(dr, user_mov_ss_with_a_pending_data_hit_then_int3_takes_the_db_at_the_gp_entry)
{
	const struct db_label labels[] = { DB_USER_LABEL(mov_ss_hit_int3, int),
					   DB_USER_LABEL(mov_ss_hit_int3, after),
					   { "gp_entry", idt_gate_target(X86_EXC_GP) } };
	struct db_trace trace = { 0 };
	struct user_fault fault = { 0 };

	check_eq(TASK_EXIT_FAULTED, trace_user_mov_ss_hit(u_mov_ss_hit_int3, &trace, &fault));
	if (!check_eq(X86_EXC_GP, fault.vector))
		return; /* no #GP: no entry for the held-back #DB to fire at */
	check_eq(IDT_ERROR_CODE(X86_EXC_BP), fault.error_code);
	check_eq(user_text_address(u_mov_ss_hit_int3_int), fault.rip);
	db_trace_check(&trace, DB_LABELS(labels), "DB@gp_entry:B0");
}

#define USER_INT3(p) p "_int3: int3\n" p "_after:\n"
DB_USER_PAYLOAD(int3, USER_INT3);
extern const char u_int3[], u_int3_int3[], u_int3_after[];

/*
 * Every gate is DPL 0 (arch/x86/traps.c; Linux makes #BP's DPL 3): INT3 from ring 3 is a fault,
 * #GP(IDT vector 3) at the INT3 itself, and no #BP.
 */
TEST(dr, user_int3_through_a_dpl_0_gate_is_a_gp_fault_at_it)
{
	const struct db_label labels[] = { DB_USER_LABEL(int3, int3), DB_USER_LABEL(int3, after) };
	struct db_trace trace = { 0 };
	struct user_fault fault = { 0 };
	long exit_code;

	db_trace_start(&trace);
	exit_code = run_user(u_int3, 0, &fault);
	db_trace_stop();
	db_trace_check(&trace, DB_LABELS(labels), ""); /* no #BP, no #DB */
	if (!check_eq(TASK_EXIT_FAULTED, exit_code))
		return;
	check_eq(X86_EXC_GP, fault.vector);
	check_eq(IDT_ERROR_CODE(X86_EXC_BP), fault.error_code);
	check_eq(user_text_address(u_int3_int3), fault.rip);
}

/* rdi: the user selector. MOV SS, then SYSCALL: exit(0) if the system call still returns. */
#define USER_MOV_SS_SYSCALL(p)                                                                \
	"\tmov $" DB_EXPAND(SYSCALL_GET_TASK_ID) ", %eax\n\tmov (%rdi), %ss\n" p "_syscall: " \
						 "syscall\n" p "_after:\n"
DB_USER_PAYLOAD(mov_ss_hit_syscall, USER_MOV_SS_SYSCALL);
extern const char u_mov_ss_hit_syscall[], u_mov_ss_hit_syscall_syscall[];
extern const char u_mov_ss_hit_syscall_after[];

/*
 * CVE-2018-8897 itself: the data hit that MOV SS held back fires at SYSCALL's entry point, in
 * ring 0 but on the user's stack and GS base. #DB's IST stack and paranoid entry
 * (arch/x86/entry.asm) must take it there, and the system call must go on.
 */
TEST(dr, user_mov_ss_with_a_pending_data_hit_then_syscall_takes_the_db_at_the_entry)
{
	extern const char syscall_entry[];
	const struct db_label labels[] = { DB_USER_LABEL(mov_ss_hit_syscall, syscall),
					   DB_USER_LABEL(mov_ss_hit_syscall, after),
					   { "syscall_entry", (uint64_t)syscall_entry } };
	struct db_trace trace = { 0 };

	if (syscall_uses_trap())
		test_skip("system calls use the UD2 trap here, not SYSCALL");
	check_eq(0, trace_user_mov_ss_hit(u_mov_ss_hit_syscall, &trace, NULL));
	db_trace_check(&trace, DB_LABELS(labels), "DB@syscall_entry:B0");
}

/* TF on, then SYSCALL: FMASK clears TF for the kernel; IRET gives it back to ring 3. */
#define SYSCALL_STEP(p)                                                                            \
	"\tmov $" DB_EXPAND(SYSCALL_GET_TASK_ID) ", %eax\n" DB_ASM_TF_ON p "_syscall: syscall\n" p \
						 "_after: nop\n" p "_push: pushfq\n" p             \
						 "_and: andq $~" DB_EXPAND(                        \
							 DB_TF) ", (%rsp)\n" p "_popf: popfq\n" p  \
								"_end:\n"
DB_USER_PAYLOAD(syscall_step, SYSCALL_STEP);
extern const char u_syscall_step[], u_syscall_step_syscall[], u_syscall_step_after[];
extern const char u_syscall_step_push[], u_syscall_step_and[], u_syscall_step_popf[];
extern const char u_syscall_step_end[];

/*
 * A #DB follows SYSCALL only if TF is set when it ends, and FMASK clears it: no #DB in ring 0
 * (kvm-unit-tests' syscall.c). switchyard returns by IRET, which sets TF again, so the first step
 * traps after the instruction that follows (SDM Vol. 3 §18.3.1.4; Linux's entry_64.S returns by
 * IRET for the same reason when TF is set); after a SYSRET it would trap at once.
 */
TEST(dr, user_single_step_across_syscall_traps_only_in_ring_3)
{
	extern const char syscall_entry[];
	const struct db_label labels[] = {
		DB_USER_LABEL(syscall_step, syscall),
		DB_USER_LABEL(syscall_step, after),
		DB_USER_LABEL(syscall_step, push),
		DB_USER_LABEL(syscall_step, and),
		DB_USER_LABEL(syscall_step, popf),
		DB_USER_LABEL(syscall_step, end),
		{ "syscall_entry", (uint64_t)syscall_entry },
	};
	struct db_trace trace = { 0 };

	if (syscall_uses_trap())
		test_skip("system calls use the UD2 trap here, not SYSCALL");
	db_trace_start(&trace);
	check_eq(0, run_user(u_syscall_step, 0, NULL));
	db_trace_stop();
	db_trace_check(&trace, DB_LABELS(labels), "DB3@push:BS DB3@and:BS DB3@popf:BS DB3@end:BS");
}

/*
 * Two yields, then sleep until woken (the test reads the task's hits while it lives), then
 * exit(0). The instruction after each system call (through the gate, SYSCALL or UD2) is labelled.
 */
#define YIELDS(p)                                                                              \
	"\tmov $" DB_EXPAND(                                                                   \
		SYSCALL_YIELD) ", %eax\n\tcall user_syscall_gate\n" p "_after_1: nop\n"        \
			       "\tmov $" DB_EXPAND(                                            \
				       SYSCALL_YIELD) ", %eax\n\tcall user_syscall_gate\n" p   \
						      "_after_2: nop\n"                        \
						      "\tmov $-1, %rdi\n\tmov $" DB_EXPAND(    \
							      SYSCALL_SLEEP) ", %eax\n\tcall " \
									     "user_syscall_gate\n"
DB_USER_PAYLOAD(yields, YIELDS);
extern const char u_yields[], u_yields_after_1[], u_yields_after_2[];

/*
 * Two tasks run the same code, yielding to each other; one has an execute breakpoint on the
 * instruction after its second system call returns. Its hit is its own, and the other task has
 * none.
 */
TEST(dr, execute_hit_after_a_system_call_return_is_credited_to_its_task)
{
	struct dr_breakpoint breakpoint = { user_text_address(u_yields_after_2), DR_TYPE_EXECUTE,
					    1 };
	struct task *tasks[2];
	struct dr_hit hits[2][4];
	unsigned int counts[2];
	uint32_t ids[2];

	for (unsigned int i = 0; i < 2; i++) {
		tasks[i] = task_create_user("yields", u_yields, 0, TASK_START_STOPPED);
		if (!tasks[i])
			test_abort("task_create_user failed");
		ids[i] = tasks[i]->id;
	}
	check_eq(0, dr_install(tasks[0]->index, &breakpoint, NULL, NULL));
	task_continue(tasks[0]);
	task_continue(tasks[1]);
	for (unsigned int i = 0; i < 2; i++)
		while (tasks[i]->state != TASK_BLOCKED && tasks[i]->state != TASK_DEAD)
			sched_sleep_ms(1);
	for (unsigned int i = 0; i < 2; i++) {
		counts[i] = dr_read_hits(tasks[i]->index, hits[i], 4, NULL);
		sched_wake(tasks[i]);
		check_eq(0, task_join(tasks[i], NULL));
	}
	check_eq(1, counts[0]);
	check_eq(0, counts[1]);
	if (counts[0] != 1)
		return;
	check_eq(user_text_address(u_yields_after_2), hits[0][0].rip);
	check_eq(ids[0], hits[0][0].task_id);
	check_eq(1, hits[0][0].from_user);
	check_eq(DR6_RESET | DR6_B0, hits[0][0].dr6);
}
