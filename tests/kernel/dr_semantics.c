/* SPDX-License-Identifier: MIT */
/* dr suite: RF after an execute hit, DR7.GD, I/O breakpoints, and what the handler sees. */
#include <stddef.h>

#include "arch/x86/cpu.h"
#include "arch/x86/debug-registers.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/io.h"
#include "arch/x86/probe.h"
#include "arch/x86/processor-flags.h"
#include "runner/test.h"
#include "sched/sched.h"
#include "tests/kernel/lib/dr_targets.h"

#define CALLS 3
#define UNUSED_PORT 0x80 /* the POST diagnostic port: writes are harmless */

/* Written from #DB context, behind the compiler's back: volatile. */
struct handler_record {
	volatile unsigned int calls;
	volatile uint64_t rflags;
	volatile uint64_t rip;
};

static void record_handler(const struct dr_hit *hit, struct cpu_regs *regs, void *context)
{
	struct handler_record *record = context;

	(void)hit;
	record->calls++;
	record->rflags = regs->rflags;
	record->rip = regs->rip;
}

TEST(dr, execute_hit_sets_rf_and_the_instruction_runs_once)
{
	struct handler_record record = { 0 };
	struct dr_breakpoint breakpoint = { (uint64_t)dr_target_function, DR_TYPE_EXECUTE, 1 };
	unsigned int calls = dr_target_calls;
	struct dr_hit hits[16];

	check(dr_install(sched_current()->index, &breakpoint, record_handler, &record) >= 0,
	      "install failed");
	for (int i = 0; i < CALLS; i++)
		dr_target_function();
	check_eq(calls + CALLS, dr_target_calls);
	check_eq(CALLS, record.calls);
	check_eq(RFLAGS_RF, record.rflags & RFLAGS_RF);
	/* Fault-class: reported at the instruction, before it runs (SDM Vol. 3 §18.2.4). */
	check_eq((uint64_t)dr_target_function, record.rip);
	check_eq(CALLS, dr_target_hits(hits));
	dr_uninstall_all(sched_current()->index);
}

TEST(dr, data_hit_is_reported_after_the_access)
{
	struct handler_record record = { 0 };
	struct dr_breakpoint breakpoint = { (uint64_t)&dr_target_data[1], DR_TYPE_WRITE, 8 };
	struct dr_hit hits[16];

	check(dr_install(sched_current()->index, &breakpoint, record_handler, &record) >= 0,
	      "install failed");
	dr_target_data[1] = 42;
	check_eq(1, record.calls);
	check_eq(42, dr_target_data[1]); /* trap-class: the store completed */
	check_eq(0, record.rflags & RFLAGS_RF);
	check_eq(1, dr_target_hits(hits));
	dr_uninstall_all(sched_current()->index);
}

TEST(dr, general_detect_raises_db_on_the_next_dr_access)
{
	struct dr_hit hits[16];
	unsigned int count;

	/* DR7.GD: the next MOV DR raises #DB with DR6.BD, and the CPU clears GD (§18.2.4). */
	write_dr7(read_dr7() | DR7_GD);
	(void)read_dr7();
	count = dr_target_hits(hits);
	check_eq(1, count);
	if (count)
		check_eq(DR6_RESET | DR6_BD, hits[0].dr6);
	check_eq(0, read_dr7() & DR7_GD);
	dr_restore_hardware();
}

TEST(dr, io_breakpoint_fires_on_its_port)
{
	struct dr_breakpoint breakpoint = { UNUSED_PORT, DR_TYPE_IO, 1 };
	struct dr_hit hits[16];
	unsigned int count;
	int slot;

	if (!(read_cr4() & CR4_DE))
		test_skip("CR4.DE is clear");
	slot = dr_install(sched_current()->index, &breakpoint, NULL, NULL);
	check_eq(0, slot);
	outb(UNUSED_PORT + 1, 0); /* another port: no hit */
	outb(UNUSED_PORT, 0);
	count = dr_target_hits(hits);
	check_eq(1, count);
	if (count)
		check_eq(DR6_RESET | DR6_B0, hits[0].dr6);
	dr_uninstall_all(sched_current()->index);
}

static void raise_unowned_single_step(void *arg)
{
	(void)arg;
	probe_single_step();
}

TEST(dr, a_stray_db_fails_the_test_instead_of_being_ignored)
{
	struct isolation_outcome outcome;

	/* Nothing installed: a #DB that no one owns is an unexpected exception. */
	runner_isolate(raise_unowned_single_step, NULL, 100, &outcome);
	check_eq(ISOLATION_EXCEPTION, outcome.end);
	check_eq(X86_EXC_DB, outcome.vector);
	check_eq(DR6_RESET | DR6_BS, outcome.dr6);
}
