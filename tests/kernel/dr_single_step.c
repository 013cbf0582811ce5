/* SPDX-License-Identifier: MIT */
/* dr suite: TF single-step, the exact RIP and DR6 of every step, in ring 0 and ring 3. */
#include <stdint.h>

#include "arch/x86/apic.h"
#include "arch/x86/cpu.h"
#include "arch/x86/debug-registers.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/processor-flags.h"
#include "arch/x86/syscall.h"
#include "arch/x86/traps.h"
#include "arch/x86/tsc.h"
#include "arch/x86/user-abi.h"
#include "runner/test.h"
#include "sched/sched.h"
#include "tests/kernel/lib/db_trace.h"
#include "tests/kernel/lib/user_programs.h"

#define DB_IF 0x200 /* RFLAGS_IF, as asm text takes it */
_Static_assert(DB_TF == RFLAGS_TF, "DB_TF is RFLAGS_TF");
_Static_assert(DB_IF == RFLAGS_IF, "DB_IF is RFLAGS_IF");

/* The end of every payload: TF off by POPF, which still traps (TF was set when it began). */
#define TF_OFF(p)                                                                                \
	p "_push: pushfq\n" p "_and: andq $~" DB_EXPAND(DB_TF) ", (%rsp)\n" p "_popf: popfq\n" p \
							       "_end:\n"
#define TF_OFF_TRACE "DB@and:BS DB@popf:BS DB@end:BS"

/* SDM Vol. 3 §18.3.1.4: no trap after the POPF that sets TF; one after each later instruction. */
#define BASIC(p) DB_ASM_TF_ON p "_first: nop\n" TF_OFF(p)
DB_PAYLOAD(basic, BASIC);

/* CPUID, IN, RDMSR and POPF exit to a hypervisor, which must inject the step itself. */
#define EXITING(p)                                                \
	"\tpush %rbx\n" DB_ASM_TF_ON p "_cpuid: xor %eax, %eax\n" \
	"\tcpuid\n" p "_in: mov $0x3fd, %edx\n\tinb %dx, %al\n" p \
	"_rdmsr: mov $0x1b, %ecx\n\trdmsr\n" p                    \
	"_popf1: pushfq\n\tpopfq\n" TF_OFF(p) "\tpop %rbx\n"
/* Ring 3 may run neither IN (IOPL 0) nor RDMSR. */
#define USER_EXITING(p)                                                                         \
	"\tpush %rbx\n" DB_ASM_TF_ON p "_cpuid: xor %eax, %eax\n\tcpuid\n" p "_popf1: pushfq\n" \
	"\tpopfq\n" TF_OFF(p) "\tpop %rbx\n"
DB_KERNEL_PAYLOAD(exiting, EXITING);
DB_USER_PAYLOAD(user_exiting, USER_EXITING);

/* STI's interrupt shadow blocks interrupts, not the single-step trap after STI. */
#define STI_SHADOW(p) "\tcli\n" DB_ASM_TF_ON "\tsti\n" p "_after_sti: nop\n" TF_OFF(p)
DB_KERNEL_PAYLOAD(sti_shadow, STI_SHADOW);

/* MOV SS blocks every #DB until the next instruction ends: one step is lost, not two. */
#define MOV_SS_SHADOW(p)                                                                     \
	"\tmov %ss, %eax\n" DB_ASM_TF_ON p "_mov_ss: mov %eax, %ss\n" p "_shadowed: nop\n" p \
	"_after: nop\n" TF_OFF(p)
DB_PAYLOAD(mov_ss_shadow, MOV_SS_SHADOW);

/* ICEBP inside the MOV SS shadow: its trap is not blocked, and it is not a single step. */
#define MOV_SS_ICEBP(p)                                                                           \
	"\tmov %ss, %eax\n" DB_ASM_TF_ON p "_mov_ss: mov %eax, %ss\n" p "_icebp1: .byte 0xf1\n" p \
	"_icebp2: .byte 0xf1\n" p "_after: nop\n" TF_OFF(p)
DB_PAYLOAD(mov_ss_icebp, MOV_SS_ICEBP);

/* STI; HLT stepped, woken by the timer tick: a step after STI and one after HLT. */
#define STI_HLT(p) "\tcli\n" DB_ASM_TF_ON "\tsti\n" p "_hlt: hlt\n" p "_after_hlt: nop\n" TF_OFF(p)
DB_KERNEL_PAYLOAD(sti_hlt, STI_HLT);

/* DR7.GD inside the MOV SS shadow: a fault, so the shadow does not block it. rsi: DR6's value. */
#define MOV_SS_GD(p)                                                    \
	"\tmov %ss, %eax\n" DB_ASM_TF_ON p "_mov_ss: mov %eax, %ss\n" p \
	"_mov_dr6: mov %rsi, %dr6\n" p "_after: nop\n" TF_OFF(p)
DB_KERNEL_PAYLOAD(mov_ss_gd, MOV_SS_GD);

extern const char k_basic_first[], k_basic_push[], k_basic_and[], k_basic_popf[], k_basic_end[];
extern const char u_basic_first[], u_basic_push[], u_basic_and[], u_basic_popf[], u_basic_end[];
extern const char u_basic[];
void k_basic(void);

#define TF_OFF_LABELS(scope, name) \
	scope(name, push), scope(name, and), scope(name, popf), scope(name, end)

/* A kernel payload with interrupts off (the STI payloads turn them on themselves). */
static void trace_kernel(void (*payload)(void), struct db_trace *trace)
{
	unsigned long flags = local_irq_save();

	db_trace_start(trace);
	payload();
	db_trace_stop();
	local_irq_restore(flags);
}

/* A user payload in a task of its own: it must exit(0). */
static void trace_user(const char *program, struct db_trace *trace)
{
	struct user_fault fault;
	struct task *task;
	long code;

	db_trace_start(trace);
	task = task_create_user("db-payload", program, 0, TASK_START_RUNNABLE);
	if (!task) {
		db_trace_stop();
		test_abort("task_create_user failed");
	}
	code = task_join(task, &fault);
	db_trace_stop();
	check_eq(0, code);
}

TEST(dr, single_step_traps_after_each_instruction_from_the_one_after_popf)
{
	static const struct db_label labels[] = { DB_KERNEL_LABEL(basic, first),
						  DB_KERNEL_LABEL(basic, push),
						  TF_OFF_LABELS(DB_KERNEL_LABEL, basic) };
	struct db_trace trace = { 0 };

	trace_kernel(k_basic, &trace);
	db_trace_check(&trace, DB_LABELS(labels), "DB@push:BS " TF_OFF_TRACE);
}

TEST(dr, user_single_step_traps_after_each_instruction_from_the_one_after_popf)
{
	const struct db_label labels[] = { DB_USER_LABEL(basic, first),
					   TF_OFF_LABELS(DB_USER_LABEL, basic) };
	struct db_trace trace = { 0 };

	trace_user(u_basic, &trace);
	db_trace_check(&trace, DB_LABELS(labels), "DB3@push:BS DB3@and:BS DB3@popf:BS DB3@end:BS");
}

extern const char k_exiting_cpuid[], k_exiting_in[], k_exiting_rdmsr[], k_exiting_popf1[];
extern const char k_exiting_push[], k_exiting_and[], k_exiting_popf[], k_exiting_end[];
void k_exiting(void);

TEST(dr, single_step_over_instructions_that_exit_to_a_hypervisor)
{
	/* cpuid is 2 bytes, inb %dx 1, rdmsr 2, pushfq 1, popfq 1: steps land on each next one. */
	static const struct db_label labels[] = {
		DB_KERNEL_LABEL(exiting, cpuid),	 DB_KERNEL_LABEL(exiting, in),
		DB_KERNEL_LABEL(exiting, rdmsr),	 DB_KERNEL_LABEL(exiting, popf1),
		TF_OFF_LABELS(DB_KERNEL_LABEL, exiting),
	};
	struct db_trace trace = { 0 };

	trace_kernel(k_exiting, &trace);
	db_trace_check(&trace, DB_LABELS(labels),
		       "DB@cpuid+2:BS DB@in:BS DB@in+5:BS DB@rdmsr:BS DB@rdmsr+5:BS DB@popf1:BS "
		       "DB@popf1+1:BS DB@push:BS " TF_OFF_TRACE);
}

extern const char u_user_exiting_cpuid[], u_user_exiting_popf1[], u_user_exiting_push[];
extern const char u_user_exiting_and[], u_user_exiting_popf[], u_user_exiting_end[];
extern const char u_user_exiting[];

TEST(dr, user_single_step_over_instructions_that_exit_to_a_hypervisor)
{
	const struct db_label labels[] = {
		DB_USER_LABEL(user_exiting, cpuid),
		DB_USER_LABEL(user_exiting, popf1),
		TF_OFF_LABELS(DB_USER_LABEL, user_exiting),
	};
	struct db_trace trace = { 0 };

	trace_user(u_user_exiting, &trace);
	db_trace_check(&trace, DB_LABELS(labels),
		       "DB3@cpuid+2:BS DB3@popf1:BS DB3@popf1+1:BS DB3@push:BS DB3@and:BS "
		       "DB3@popf:BS DB3@end:BS");
}

extern const char k_sti_shadow_after_sti[], k_sti_shadow_push[], k_sti_shadow_and[];
extern const char k_sti_shadow_popf[], k_sti_shadow_end[];
void k_sti_shadow(void);

/* Ring 3 cannot run STI (IOPL 0): ring 0 only. */
TEST(dr, single_step_is_not_suppressed_by_the_sti_shadow)
{
	static const struct db_label labels[] = { DB_KERNEL_LABEL(sti_shadow, after_sti),
						  TF_OFF_LABELS(DB_KERNEL_LABEL, sti_shadow) };
	struct db_trace trace = { 0 };

	trace_kernel(k_sti_shadow, &trace);
	db_trace_check(&trace, DB_LABELS(labels), "DB@after_sti:BS DB@push:BS " TF_OFF_TRACE);
}

extern const char k_mov_ss_shadow_shadowed[], k_mov_ss_shadow_after[], k_mov_ss_shadow_push[];
extern const char k_mov_ss_shadow_and[], k_mov_ss_shadow_popf[], k_mov_ss_shadow_end[];
extern const char u_mov_ss_shadow_shadowed[], u_mov_ss_shadow_after[], u_mov_ss_shadow_push[];
extern const char u_mov_ss_shadow_and[], u_mov_ss_shadow_popf[], u_mov_ss_shadow_end[];
extern const char u_mov_ss_shadow[];
void k_mov_ss_shadow(void);

TEST(dr, mov_ss_shadow_suppresses_exactly_one_single_step)
{
	static const struct db_label labels[] = { DB_KERNEL_LABEL(mov_ss_shadow, shadowed),
						  DB_KERNEL_LABEL(mov_ss_shadow, after),
						  TF_OFF_LABELS(DB_KERNEL_LABEL, mov_ss_shadow) };
	struct db_trace trace = { 0 };

	trace_kernel(k_mov_ss_shadow, &trace);
	db_trace_check(&trace, DB_LABELS(labels), "DB@after:BS DB@push:BS " TF_OFF_TRACE);
}

TEST(dr, user_mov_ss_shadow_suppresses_exactly_one_single_step)
{
	const struct db_label labels[] = { DB_USER_LABEL(mov_ss_shadow, shadowed),
					   DB_USER_LABEL(mov_ss_shadow, after),
					   TF_OFF_LABELS(DB_USER_LABEL, mov_ss_shadow) };
	struct db_trace trace = { 0 };

	trace_user(u_mov_ss_shadow, &trace);
	db_trace_check(&trace, DB_LABELS(labels),
		       "DB3@after:BS DB3@push:BS DB3@and:BS DB3@popf:BS DB3@end:BS");
}

extern const char k_mov_ss_icebp_icebp1[], k_mov_ss_icebp_icebp2[], k_mov_ss_icebp_after[];
extern const char k_mov_ss_icebp_push[], k_mov_ss_icebp_and[], k_mov_ss_icebp_popf[];
extern const char k_mov_ss_icebp_end[];
extern const char u_mov_ss_icebp_icebp1[], u_mov_ss_icebp_icebp2[], u_mov_ss_icebp_after[];
extern const char u_mov_ss_icebp_push[], u_mov_ss_icebp_and[], u_mov_ss_icebp_popf[];
extern const char u_mov_ss_icebp_end[], u_mov_ss_icebp[];
void k_mov_ss_icebp(void);

/* ICEBP's #DB is a trap with no DR6 condition bit, stepped or not (kvm-unit-tests' debug.c). */
TEST(dr, icebp_inside_a_mov_ss_shadow_is_a_trap_without_bs)
{
	static const struct db_label labels[] = { DB_KERNEL_LABEL(mov_ss_icebp, icebp1),
						  DB_KERNEL_LABEL(mov_ss_icebp, icebp2),
						  DB_KERNEL_LABEL(mov_ss_icebp, after),
						  TF_OFF_LABELS(DB_KERNEL_LABEL, mov_ss_icebp) };
	static const uint64_t icebps[] = { (uint64_t)k_mov_ss_icebp_icebp1,
					   (uint64_t)k_mov_ss_icebp_icebp2 };
	struct db_trace trace = { .icebps = icebps, .icebp_count = 2 };

	trace_kernel(k_mov_ss_icebp, &trace);
	db_trace_check(&trace, DB_LABELS(labels),
		       "DB@icebp2:- DB@after:- DB@push:BS " TF_OFF_TRACE);
}

TEST(dr, user_icebp_inside_a_mov_ss_shadow_is_a_trap_without_bs)
{
	const struct db_label labels[] = { DB_USER_LABEL(mov_ss_icebp, icebp1),
					   DB_USER_LABEL(mov_ss_icebp, icebp2),
					   DB_USER_LABEL(mov_ss_icebp, after),
					   TF_OFF_LABELS(DB_USER_LABEL, mov_ss_icebp) };
	const uint64_t icebps[] = { user_text_address(u_mov_ss_icebp_icebp1),
				    user_text_address(u_mov_ss_icebp_icebp2) };
	struct db_trace trace = { .icebps = icebps, .icebp_count = 2 };

	trace_user(u_mov_ss_icebp, &trace);
	db_trace_check(&trace, DB_LABELS(labels),
		       "DB3@icebp2:- DB3@after:- DB3@push:BS DB3@and:BS DB3@popf:BS DB3@end:BS");
}

extern const char k_sti_hlt_hlt[], k_sti_hlt_after_hlt[], k_sti_hlt_push[], k_sti_hlt_and[];
extern const char k_sti_hlt_popf[], k_sti_hlt_end[];
void k_sti_hlt(void);

/* HLT at CPL 3 is #GP: ring 0 only. The scheduler's tick ends the HLT. */
TEST(dr, single_step_over_sti_hlt_woken_by_the_timer)
{
	static const struct db_label labels[] = { DB_KERNEL_LABEL(sti_hlt, hlt),
						  DB_KERNEL_LABEL(sti_hlt, after_hlt),
						  TF_OFF_LABELS(DB_KERNEL_LABEL, sti_hlt) };
	struct db_trace trace = { 0 };

	trace_kernel(k_sti_hlt, &trace);
	db_trace_check(&trace, DB_LABELS(labels),
		       "DB@hlt:BS DB@after_hlt:BS DB@push:BS " TF_OFF_TRACE);
}

extern const char k_mov_ss_gd_mov_dr6[], k_mov_ss_gd_after[], k_mov_ss_gd_push[];
extern const char k_mov_ss_gd_and[], k_mov_ss_gd_popf[], k_mov_ss_gd_end[];

/* MOV DR faults at CPL 3: ring 0 only. rsi is the value the payload's MOV writes to DR6. */
static void mov_ss_gd(void)
{
	asm volatile("call k_mov_ss_gd"
		     :
		     : "S"(DR6_RESET)
		     : "rax", "rcx", "rdx", "rdi", "r8", "r9", "r10", "r11", "memory", "cc");
}

TEST(dr, general_detect_fault_is_not_blocked_by_the_mov_ss_shadow)
{
	static const struct db_label labels[] = { DB_KERNEL_LABEL(mov_ss_gd, mov_dr6),
						  DB_KERNEL_LABEL(mov_ss_gd, after),
						  TF_OFF_LABELS(DB_KERNEL_LABEL, mov_ss_gd) };
	struct db_trace trace = { 0 };
	unsigned long flags = local_irq_save();

	db_trace_start(&trace);
	write_dr7(DR7_RESET | DR7_GD);
	mov_ss_gd();
	/* The CPU clears GD as it delivers the #DB (§18.2.4); where it did not, clear it here. */
	if (read_dr7() & DR7_GD)
		write_dr7(DR7_RESET);
	db_trace_stop();
	local_irq_restore(flags);
	/* The fault comes first, at the MOV; the MOV runs again and its step traps after it. */
	db_trace_check(&trace, DB_LABELS(labels),
		       "DB@mov_dr6:BD DB@after:BS DB@push:BS " TF_OFF_TRACE);
}

/* TF and IF on by one POPF: a pending interrupt is taken right after it, before the next one. */
#define POPF_SWITCH(p)                                                                      \
	"\tpushfq\n\torq $" DB_EXPAND(DB_TF) " | " DB_EXPAND(DB_IF) ", (%rsp)\n\tpopfq\n" p \
								    "_first: nop\n" TF_OFF(p)
DB_KERNEL_PAYLOAD(popf_switch, POPF_SWITCH);
extern const char k_popf_switch_first[], k_popf_switch_push[], k_popf_switch_and[];
extern const char k_popf_switch_popf[], k_popf_switch_end[];
void k_popf_switch(void);

static volatile bool other_stop;
static volatile unsigned long other_rounds;

/* The interrupt taken after the POPF: it switches to the other task. */
static volatile uint64_t yield_interrupt_rip; /* where the interrupt came */

static void yield_interrupt(struct cpu_regs *regs)
{
	yield_interrupt_rip = regs->rip;
	sched_yield();
}

static void run_other(void *arg)
{
	(void)arg;
	while (!other_stop) {
		other_rounds++;
		sched_yield();
	}
}

/*
 * Wait, interrupts off, for vector's IRR bit: a sent IPI need not be pending at once (in x2APIC
 * mode the ICR write is not serialising; some platforms deliver self-IPIs late in either mode,
 * docs/platforms.md).
 */
#define PENDING_WAIT_MS 100
static bool wait_until_pending(unsigned int vector)
{
	uint64_t deadline = rdtsc_ordered() + tsc_cycles_from_ms(PENDING_WAIT_MS);

	while (!apic_pending(vector))
		if (rdtsc_ordered() > deadline)
			return false;
	return true;
}

/*
 * A task switched out right after the POPF that set its TF (a self-IPI, pending since before, is
 * taken there and yields) resumes by IRET with TF set: its next instruction runs, then traps,
 * exactly as without the switch. The task that ran meanwhile is not stepped.
 */
TEST(dr, task_switched_out_right_after_popf_set_tf_steps_on_as_before)
{
	static const struct db_label labels[] = { DB_KERNEL_LABEL(popf_switch, first),
						  TF_OFF_LABELS(DB_KERNEL_LABEL, popf_switch) };
	struct db_trace trace = { 0 };
	struct task *other;
	unsigned long flags, rounds;

	other_stop = false;
	other = task_create("other", run_other, NULL, TASK_START_RUNNABLE);
	if (!other)
		test_abort("task_create failed");
	sched_yield(); /* let it start */
	interrupt_register(VECTOR_TEST, yield_interrupt);
	flags = local_irq_save();
	rounds = other_rounds;
	yield_interrupt_rip = 0;
	apic_send_self_ipi(VECTOR_TEST);
	if (!wait_until_pending(VECTOR_TEST)) {
		local_irq_restore(flags);
		interrupt_register(VECTOR_TEST, NULL);
		other_stop = true;
		task_join(other, NULL);
		test_abort("the self-IPI never became pending (IRR) in %u ms", PENDING_WAIT_MS);
	}
	db_trace_start(&trace);
	k_popf_switch();
	db_trace_stop();
	local_irq_restore(flags);
	interrupt_register(VECTOR_TEST, NULL);
	rounds = other_rounds - rounds;
	other_stop = true;
	check_eq(0, task_join(other, NULL));
	check(yield_interrupt_rip == (uint64_t)k_popf_switch_first,
	      "the interrupt came at 0x%llx, not at the instruction after the POPF (0x%llx)",
	      (unsigned long long)yield_interrupt_rip, (unsigned long long)k_popf_switch_first);
	check(rounds > 0, "the other task never ran between the POPF and the next instruction");
	db_trace_check(&trace, DB_LABELS(labels), "DB@push:BS " TF_OFF_TRACE);
}
