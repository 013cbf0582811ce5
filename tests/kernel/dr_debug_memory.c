/* SPDX-License-Identifier: MIT */
/* dr suite: #DB runs with DR7 clear, and no breakpoint may sit on the memory #DB itself uses. */
#include <stddef.h>

#include "arch/x86/cpu.h"
#include "arch/x86/debug-registers.h"
#include "arch/x86/divert.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/gdt.h"
#include "arch/x86/percpu.h"
#include "arch/x86/traps.h"
#include "dr/state.h" /* dr_lock and the hit rings, to name their real addresses */
#include "kernel/smp.h"
#include "lib/format.h"
#include "runner/test.h"
#include "sched/sched.h"
#include "tests/kernel/lib/dr_targets.h"

/*
 * The DR writes of one #DB taken while DR7 enables a slot: DR7 cleared, then DR6 reset, before
 * the owner's handler runs; DR7 restored from the shadow after it.
 */
#define DB_WRITES_BEFORE_HANDLER 2
#define DB_WRITES 3

#define WORD 8
#define TSS_IST1_OFFSET 36 /* the 64-bit TSS (SDM Vol. 3 §8.7, Figure 8-11) */

/* What a handler saw, in #DB context: volatile, written behind the compiler's back. */
struct inside {
	volatile unsigned int calls;
	volatile unsigned long dr7;
	volatile unsigned long shadow_dr7;
	volatile uint64_t dr_writes;
	volatile uint64_t stack;
};

static void record_inside(const struct dr_hit *hit, struct cpu_regs *regs, void *context)
{
	struct inside *inside = context;

	(void)hit;
	(void)regs;
	inside->dr7 = read_dr7();
	inside->shadow_dr7 = dr_shadow().dr7;
	inside->dr_writes = this_cpu()->writes.dr;
	inside->stack = (uint64_t)__builtin_frame_address(0);
	inside->calls++;
}

static void fire(enum dr_type type)
{
	if (type == DR_TYPE_EXECUTE)
		dr_target_function();
	else
		dr_target_data[1] = 1;
}

/*
 * One hit of a breakpoint of type on the calling task, with interrupts off so that no switch
 * adds writes: DR7 reads DR7_RESET (no enable bit; bit 10 always reads 1) in the handler, the
 * shadow says so too, and on return DR7 holds exactly what the shadow held before.
 */
static void check_dr7_around_a_hit(enum dr_type type, uint64_t address, const char *what)
{
	struct inside inside = { 0 };
	struct dr_breakpoint breakpoint = { address, type, type == DR_TYPE_EXECUTE ? 1 : WORD };
	unsigned int task = sched_current()->index;
	unsigned long armed, flags;
	uint64_t before, after;
	struct dr_hit hits[16];

	if (dr_install(task, &breakpoint, record_inside, &inside) < 0)
		test_abort("%s: dr_install refused", what);
	armed = dr_shadow().dr7;
	check(armed == read_dr7() && armed != DR7_RESET, "%s: DR7 0x%lx, shadow 0x%lx", what,
	      read_dr7(), armed);
	flags = local_irq_save();
	before = this_cpu()->writes.dr;
	fire(type);
	after = this_cpu()->writes.dr;
	local_irq_restore(flags);
	dr_uninstall_all(task);
	dr_target_hits(hits);

	if (!check(inside.calls == 1, "%s: the handler ran %u times", what, inside.calls))
		return; /* what the handler saw, and the writes of a #DB, need the #DB */
	check(inside.dr7 == DR7_RESET, "%s: DR7 0x%lx in the handler", what, inside.dr7);
	check(inside.shadow_dr7 == DR7_RESET, "%s: shadow DR7 0x%lx in the handler", what,
	      inside.shadow_dr7);
	check(inside.dr_writes - before == DB_WRITES_BEFORE_HANDLER,
	      "%s: %llu DR writes before the handler, expected %u", what,
	      (unsigned long long)(inside.dr_writes - before), DB_WRITES_BEFORE_HANDLER);
	check(after - before == DB_WRITES, "%s: %llu DR writes for the #DB, expected %u", what,
	      (unsigned long long)(after - before), DB_WRITES);
}

TEST(dr, db_handler_runs_with_dr7_clear_and_restores_it_from_the_shadow)
{
	unsigned long dr7_before;
	unsigned long flags;
	struct dr_hit hits[16];

	check_dr7_around_a_hit(DR_TYPE_WRITE, (uint64_t)&dr_target_data[1], "write");
	check_dr7_around_a_hit(DR_TYPE_EXECUTE, (uint64_t)dr_target_function, "execute");

	/* Restored exactly: DR7 after a hit equals the shadow, enable bits and fields alike. */
	dr_target_install((uint64_t)&dr_target_unused[0], DR_TYPE_READ_WRITE, 4);
	dr_target_install((uint64_t)&dr_target_data[1], DR_TYPE_WRITE, WORD);
	flags = local_irq_save();
	dr7_before = read_dr7();
	fire(DR_TYPE_WRITE);
	check_eq(dr7_before, read_dr7());
	check_eq(dr_shadow().dr7, read_dr7());
	local_irq_restore(flags);
	check_eq(1, dr_target_hits(hits));
	dr_uninstall_all(sched_current()->index);
}

/* A breakpoint whose handler removes it: one hit, then never again. */
struct one_shot {
	unsigned int task;
	volatile int uninstalled;
	volatile unsigned int hardware_slot;
	volatile unsigned long dr7_after;
};

static void uninstall_own_breakpoint(const struct dr_hit *hit, struct cpu_regs *regs, void *context)
{
	struct one_shot *shot = context;

	(void)regs;
	shot->hardware_slot = hit->hardware_slot;
	shot->uninstalled = dr_uninstall(shot->task, hit->slot);
	shot->dr7_after = read_dr7();
}

/* A change made inside #DB is what DR7 returns to: it stays clear until the handler is done. */
TEST(dr, a_handler_that_removes_its_own_breakpoint_returns_to_dr7_without_it)
{
	struct one_shot shot = { .task = sched_current()->index, .uninstalled = -1 };
	struct dr_breakpoint once = { (uint64_t)dr_target_function, DR_TYPE_EXECUTE, 1 };
	struct dr_hit hits[16];

	dr_target_install((uint64_t)&dr_target_unused[0], DR_TYPE_READ_WRITE, 4);
	check(dr_install(shot.task, &once, uninstall_own_breakpoint, &shot) >= 0, "refused");
	fire(DR_TYPE_EXECUTE);
	fire(DR_TYPE_EXECUTE);
	check_eq(0, shot.uninstalled);
	check_eq(DR7_RESET, shot.dr7_after);
	check_eq(1, dr_target_hits(hits));
	check_eq(1, dr_task_count(shot.task));
	check_eq(dr_shadow().dr7, read_dr7());
	check_eq(0, read_dr7() & dr7_slot_enable_mask(shot.hardware_slot));
	check(read_dr7() != DR7_RESET, "the other breakpoint was lost: DR7 0x%lx", read_dr7());
	dr_uninstall_all(shot.task);
}

/* A task that never runs: what it is given is validated but never armed. */
static void never_runs(void *unused)
{
	(void)unused;
}

static void check_refused(unsigned int task, const char *what, uint64_t address, enum dr_type type)
{
	unsigned int length = type == DR_TYPE_EXECUTE ? 1 : WORD;
	struct dr_breakpoint breakpoint = { address & ~(uint64_t)(length - 1), type, length };
	int result = dr_install(task, &breakpoint, NULL, NULL);

	check(result == -DR_ERROR_DEBUG_MEMORY, "%s at 0x%llx: got %d (%s), expected \"%s\"", what,
	      (unsigned long long)breakpoint.address, result,
	      result < 0 ? dr_error_name(-result) : "a slot", dr_error_name(DR_ERROR_DEBUG_MEMORY));
	if (result >= 0)
		dr_uninstall(task, result);
}

/* The stack a #DB handler runs on here: where its frame is when a breakpoint fires. */
static uint64_t db_stack_in_use(void)
{
	struct inside inside = { 0 };
	struct dr_breakpoint breakpoint = { (uint64_t)dr_target_function, DR_TYPE_EXECUTE, 1 };
	unsigned int task = sched_current()->index;
	struct dr_hit hits[16];

	if (dr_install(task, &breakpoint, record_inside, &inside) < 0)
		test_abort("dr_install refused");
	dr_target_function();
	dr_uninstall_all(task);
	dr_target_hits(hits);
	if (inside.calls != 1)
		test_abort("no #DB from the execute breakpoint");
	return inside.stack;
}

/* A CPU's structures, as that CPU itself finds them. */
struct cpu_places {
	uint64_t ist_top[IST_STACKS + 1]; /* by IST slot, 1 to IST_STACKS */
	uint64_t gdt, tss, percpu;
};

static void find_places(void *arg)
{
	struct cpu_places *places = arg;

	for (unsigned int slot = 1; slot <= IST_STACKS; slot++)
		places->ist_top[slot] = tss_ist_stack_top(slot);
	places->gdt = gdt_loaded_base();
	places->tss = tss_loaded_base();
	places->percpu = (uint64_t)this_cpu();
}

static void check_cpu_refused(unsigned int task, unsigned int cpu)
{
	struct cpu_places places;
	char what[48];

	if (!smp_call(cpu, find_places, &places))
		test_abort("CPU %u took no call", cpu);
	for (unsigned int slot = 1; slot <= IST_STACKS; slot++) {
		format(what, sizeof(what), "CPU %u IST%u stack top", cpu, slot);
		check_refused(task, what, places.ist_top[slot] - WORD, DR_TYPE_WRITE);
		format(what, sizeof(what), "CPU %u IST%u stack bottom", cpu, slot);
		check_refused(task, what, places.ist_top[slot] - IST_STACK_SIZE, DR_TYPE_WRITE);
	}
	format(what, sizeof(what), "CPU %u GDT (SGDT)", cpu);
	check_refused(task, what, places.gdt, DR_TYPE_WRITE);
	format(what, sizeof(what), "CPU %u TSS (STR)", cpu);
	check_refused(task, what, places.tss, DR_TYPE_WRITE);
	format(what, sizeof(what), "CPU %u TSS.IST%u", cpu, IST_DEBUG);
	check_refused(task, what, places.tss + TSS_IST1_OFFSET + (IST_DEBUG - 1) * WORD,
		      DR_TYPE_WRITE);
	format(what, sizeof(what), "CPU %u per-CPU struct", cpu);
	check_refused(task, what, places.percpu, DR_TYPE_WRITE);
}

TEST(dr, kernel_breakpoints_on_memory_db_uses_are_refused)
{
	struct task *target = task_create("never-runs", never_runs, NULL, TASK_START_STOPPED);
	uint64_t stack = db_stack_in_use();

	check(stack < tss_ist_stack_top(IST_DEBUG) &&
		      stack >= tss_ist_stack_top(IST_DEBUG) - IST_STACK_SIZE,
	      "the handler ran at 0x%llx, not on the #DB IST stack", (unsigned long long)stack);
	check_refused(target->index, "#DB stack where the handler ran", stack, DR_TYPE_WRITE);
	check_refused(target->index, "per-CPU write counter", (uint64_t)&this_cpu()->writes.dr,
		      DR_TYPE_WRITE);
	check_refused(target->index, "dr_lock", (uint64_t)dr_lock_address(), DR_TYPE_WRITE);
	check_refused(target->index, "the running task's hit ring",
		      (uint64_t)&dr_task_get(sched_current()->index)->hits[0], DR_TYPE_WRITE);
	check_refused(target->index, "the target's own hit ring",
		      (uint64_t)&dr_task_get(target->index)->hit_count, DR_TYPE_READ_WRITE);
	check_refused(target->index, "the #DB entry stub", idt_gate_target(X86_EXC_DB),
		      DR_TYPE_EXECUTE);
	check_refused(target->index, "the #DB entry stub", idt_gate_target(X86_EXC_DB),
		      DR_TYPE_READ_WRITE);
	check_refused(target->index, "handle_exception(), before DR7 is clear",
		      (uint64_t)handle_exception, DR_TYPE_EXECUTE);
	check_refused(target->index, "dr_debug_enter(), which clears DR7", (uint64_t)dr_debug_enter,
		      DR_TYPE_EXECUTE);
	for (unsigned int cpu = 0; cpu < smp_cpus(); cpu++)
		check_cpu_refused(target->index, cpu);
	check_eq(0, dr_task_count(target->index));
	task_continue(target);
	task_join(target, NULL);
}

/* Write watchpoints on the GDT and the IDT never fire after boot: harmless if accepted. */
TEST(dr, system_wide_and_pinned_breakpoints_on_memory_db_uses_are_refused)
{
	struct dr_breakpoint gdt = { gdt_loaded_base(), DR_TYPE_WRITE, WORD };
	struct dr_breakpoint stub = { idt_gate_target(X86_EXC_DB), DR_TYPE_WRITE, WORD };
	int result;

	result = dr_install_system(&gdt, NULL, NULL);
	check_eq(-DR_ERROR_DEBUG_MEMORY, result);
	if (result >= 0)
		dr_uninstall_system(result);
	result = dr_install_pinned(0, &stub, NULL, NULL);
	check_eq(-DR_ERROR_DEBUG_MEMORY, result);
	if (result >= 0)
		dr_uninstall_pinned(0, result);
}

TEST(dr, every_db_region_is_refused_from_its_first_to_its_last_byte)
{
	struct task *target = task_create("never-runs", never_runs, NULL, TASK_START_STOPPED);
	const struct dr_region *regions;
	unsigned int count = dr_debug_regions(&regions);

	check(count > 0, "no region listed");
	for (unsigned int i = 0; i < count; i++) {
		test_diag("#DB memory: %s 0x%llx-0x%llx", regions[i].name,
			  (unsigned long long)regions[i].range.first,
			  (unsigned long long)regions[i].range.last);
		check_refused(target->index, regions[i].name, regions[i].range.first,
			      DR_TYPE_READ_WRITE);
		check_refused(target->index, regions[i].name, regions[i].range.last, DR_TYPE_WRITE);
		check_refused(target->index, regions[i].name, regions[i].range.first,
			      DR_TYPE_EXECUTE);
	}
	task_continue(target);
	task_join(target, NULL);
}

/* A user request on the same memory still fails first as a kernel address. */
TEST(dr, user_requests_on_memory_db_uses_still_fail_as_kernel_addresses)
{
	struct task *target = task_create("never-runs", never_runs, NULL, TASK_START_STOPPED);
	struct dr_breakpoint breakpoints[] = {
		{ gdt_loaded_base(), DR_TYPE_WRITE, WORD },
		{ tss_ist_stack_top(IST_DEBUG) - WORD, DR_TYPE_WRITE, WORD },
		{ idt_gate_target(X86_EXC_DB), DR_TYPE_EXECUTE, 1 },
	};

	for (size_t i = 0; i < sizeof(breakpoints) / sizeof(breakpoints[0]); i++)
		check_eq(-DR_ERROR_KERNEL_ADDRESS, dr_install_as(target->index, &breakpoints[i],
								 NULL, NULL, DR_REQUESTER_USER));
	task_continue(target);
	task_join(target, NULL);
}

/*
 * Whatever #DB runs after dr_debug_enter() (arch's debug bracket) runs with DR7 clear: an
 * execute breakpoint on the CPU model's first look at every #DB is accepted, and never fires
 * inside a #DB, which would raise #DB on the #DB's own IST stack and overwrite its frame.
 */
TEST(dr, an_execute_breakpoint_on_code_the_db_handler_runs_never_fires_inside_it)
{
	unsigned int task = sched_current()->index;
	struct dr_breakpoint inside = { (uint64_t)divert_debug_trap, DR_TYPE_EXECUTE, 1 };
	struct dr_hit hits[16];
	unsigned int count;

	check(dr_install(task, &inside, NULL, NULL) >= 0,
	      "a breakpoint on divert_debug_trap() refused");
	check(dr_target_install((uint64_t)dr_target_function, DR_TYPE_EXECUTE, 1) >= 0,
	      "dr_target_install refused");
	dr_target_function();
	dr_uninstall_all(task);
	count = dr_target_hits(hits);
	check(count == 1 && hits[0].address == (uint64_t)dr_target_function,
	      "%u hits, the first at 0x%llx: expected one, at dr_target_function (0x%llx)", count,
	      count ? (unsigned long long)hits[0].address : 0ull,
	      (unsigned long long)dr_target_function);
}
