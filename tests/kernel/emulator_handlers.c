/* SPDX-License-Identifier: MIT */
/* emulator suite: handlers in an observed ring 0 are observed, the timer's accounted for (rule 21).
 */
#include <stdint.h>

#include "arch/x86/apic.h"
#include "arch/x86/cpu.h"
#include "arch/x86/debugctl.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/msr.h"
#include "arch/x86/paging.h"
#include "arch/x86/percpu.h"
#include "arch/x86/traps.h"
#include "arch/x86/witness_marker.h"
#include "ds/ds.h"
#include "ds/records.h"
#include "ds/save_area.h"
#include "emulator/emulator.h"
#include "lib/string.h"
#include "runner/test.h"
#include "tests/kernel/lib/ds_util.h"
#include "tests/kernel/lib/emulator_util.h"
#include "tests/kernel/lib/handler_margin.h"
#include "tests/kernel/lib/handler_probe.h"
#include "tests/kernel/lib/nmi_margin.h"

#define BTS_RECORD 24
#define BUFFER_PAGES 4
#define BUFFER_RECORDS (BUFFER_PAGES * PAGE_SIZE / BTS_RECORD)
#define EVENT_INSTRUCTIONS 0xc0 /* SDM Vol. 3B "Pre-defined Architectural Performance Events" */
#define EVENT_BRANCHES 0xc4
#define UD2_LENGTH 2
/* The handler's loop: HANDLER_ITERATIONS - 1 JNZ back and a RET are recorded (SDM DEBUGCTL.TR). */
#define HANDLER_ITERATIONS 8
#define IPI_WAIT_HALTS 50

static struct ds_area area __attribute__((aligned(PAGE_SIZE)));
static uint8_t buffer[BUFFER_PAGES * PAGE_SIZE] __attribute__((aligned(PAGE_SIZE)));
static const struct bts_record *const records = (const struct bts_record *)buffer;
static volatile uint64_t handler_iterations;
static volatile unsigned int test_interrupts;

static void require_emulated_bts(void)
{
	require_emulator();
	if (ds_support()->bts_reason[0])
		test_skip("%s", ds_support()->bts_reason);
}

/* Circular BTS over the whole buffer (SDM "BTS Buffer": threshold beyond the maximum). */
static void bts_on(void)
{
	memset(&area, 0, sizeof(area));
	area.bts_base = area.bts_index = (uint64_t)buffer;
	area.bts_max = area.bts_base + BUFFER_RECORDS * BTS_RECORD;
	area.bts_threshold = area.bts_max + BTS_RECORD;
	wrmsr(MSR_IA32_DS_AREA, (uint64_t)&area);
	debugctl_update(DEBUGCTL_TR | DEBUGCTL_BTS, DEBUGCTL_TR | DEBUGCTL_BTS);
}

static long bts_off(void)
{
	debugctl_update(DEBUGCTL_TR | DEBUGCTL_BTS, 0);
	wrmsr(MSR_IA32_DS_AREA, 0);
	return (long)((area.bts_index - area.bts_base) / BTS_RECORD);
}

/* A fault: the handler resumes after the UD2 (SDM Vol. 2B UD: "raises an invalid opcode"). */
static bool invalid_opcode_runs_probe(struct cpu_regs *regs)
{
	handler_probe_loop(handler_iterations);
	regs->rip += UD2_LENGTH;
	return true;
}

static void test_interrupt_runs_probe(struct cpu_regs *regs)
{
	(void)regs;
	handler_probe_loop(handler_iterations);
	test_interrupts++;
}

/*
 * A UD2 at a known address, not a diverted site (arch/x86/divert.h): its #UD is the kernel's
 * own. Returns that address. (Not INT3: KVM-PVM ends the VM at an INT3 in ring 0.)
 */
static uint64_t ud2_at_known_site(void)
{
	uint64_t site;

	asm volatile("lea 1f(%%rip), %0\n1: ud2" : "=r"(site) : : "memory");
	return site;
}

static bool probe_back_edge(const struct bts_record *record)
{
	return record->from == (uint64_t)handler_probe_loop_branch &&
	       record->to == (uint64_t)handler_probe_loop_head;
}

/*
 * The handler's probe among records (delivery, back): the call into it, then its
 * HANDLER_ITERATIONS - 1 back edges and its RET, each exactly once and in a row (the SDM records
 * every taken branch), and no back edge outside it (nothing else runs the probe). An NMI's
 * delivery and IRETQ may come between any two of them (rule 21; the watchdog's, often under
 * KVM-PVM): records of an entry are passed over.
 */
static void check_probe_between(long used, long delivery, long back)
{
	long calls = 0, edges = 0, returns = 0, outside = 0, call = -1, next;
	unsigned int in_order = 0;

	for (long i = 0; i < used; i++) {
		bool inside = i > delivery && i < back;

		if (record_of_an_entry(&records[i]))
			continue;
		if (probe_back_edge(&records[i])) {
			edges += inside;
			outside += !inside;
		}
		if (inside && records[i].to == (uint64_t)handler_probe_loop && call < 0)
			call = i;
		calls += inside && records[i].to == (uint64_t)handler_probe_loop;
		returns += inside && records[i].from == (uint64_t)handler_probe_loop_ret;
	}
	check_eq(1, calls);
	check_eq(HANDLER_ITERATIONS - 1, edges);
	check_eq(1, returns);
	check_eq(0, outside);
	/* From the call: the back edges, then the RET, with nothing but entries between. */
	for (next = call + 1; call >= 0 && next < back && in_order < HANDLER_ITERATIONS; next++) {
		if (record_of_an_entry(&records[next]))
			continue;
		if (in_order < HANDLER_ITERATIONS - 1
			    ? !probe_back_edge(&records[next])
			    : records[next].from != (uint64_t)handler_probe_loop_ret)
			break;
		in_order++;
	}
	check(in_order == HANDLER_ITERATIONS,
	      "after the call (record %ld): %u of the %u back edges and the RET in a row", call,
	      in_order, HANDLER_ITERATIONS);
}

static void print_records(long used)
{
	for (long i = 0; i < used; i++)
		test_diag("bts record %ld: 0x%llx -> 0x%llx", i,
			  (unsigned long long)records[i].from, (unsigned long long)records[i].to);
}

/*
 * Rule 21: the handler of an exception raised in a traced window is traced too. SDM Vol. 3B
 * DEBUGCTL.TR: the CPU sends a record "when the processor detects a taken branch, interrupt, or
 * exception", in the rings DS-CPL lets through, and a #UD handler runs in ring 0 like the code
 * that faulted. So between the fault's record, from the UD2 to the #UD gate, and the IRETQ's
 * record back (past the UD2, where the handler resumes) come the handler's own branches: here a
 * known loop's, exactly. The model steps the handler from its
 * hook on (docs/emulated-cpu.md); before it did, it recorded none of them. About 200 steps.
 */
TEST(emulator, rule_21_an_exception_handlers_branches_lie_between_its_delivery_and_its_iretq)
{
	exception_handler saved = exception_handler_of(X86_EXC_UD);
	uint64_t gate = idt_gate_target(X86_EXC_UD), iret = entry_iret_site(X86_EXC_UD), site;
	long used, delivery = -1, back = -1;

	require_emulated_bts();
	handler_iterations = HANDLER_ITERATIONS;
	exception_register(X86_EXC_UD, invalid_opcode_runs_probe);
	witness_begin(WITNESS_BTS_HANDLER);
	bts_on();
	site = ud2_at_known_site();
	used = bts_off();
	witness_end(WITNESS_BTS_HANDLER);
	if (saved)
		exception_register(X86_EXC_UD, saved);
	else
		exception_unregister(X86_EXC_UD);
	print_records(used);
	for (long i = 0; i < used; i++) {
		if (delivery < 0 && records[i].from == site && records[i].to == gate)
			delivery = i;
		if (delivery >= 0 && back < 0 && records[i].from == iret &&
		    records[i].to == site + UD2_LENGTH)
			back = i;
	}
	check(delivery >= 0 && back > delivery,
	      "records %ld (UD2 -> #UD gate) and %ld (IRETQ back) of %ld", delivery, back, used);
	if (delivery >= 0 && back > delivery)
		check_probe_between(used, delivery, back);
	check_eq(0, emulator_take_violations(NULL, 0));
}

/*
 * The same for an interrupt that is not the timer's: a self-IPI whose handler runs the known
 * loop. Its delivery is a record from the instruction it came before to its gate, its IRETQ one
 * back there (SDM: "interrupt"), and the handler's branches lie between. About 200 steps.
 */
TEST(emulator, rule_21_an_ipi_handlers_branches_lie_between_its_delivery_and_its_iretq)
{
	interrupt_handler saved = interrupt_handler_of(VECTOR_TEST);
	uint64_t gate = idt_gate_target(VECTOR_TEST), iret = entry_iret_site(VECTOR_TEST);
	unsigned int seen = test_interrupts, rounds = 0;
	long used, delivery = -1, back = -1;

	require_emulated_bts();
	handler_iterations = HANDLER_ITERATIONS;
	interrupt_register(VECTOR_TEST, test_interrupt_runs_probe);
	bts_on();
	apic_send_self_ipi(VECTOR_TEST);
	/*
	 * HLT until it came: a self-IPI may come after the next instruction (SDM), and KVM-PVM
	 * delivers one only at a later exit (docs/platforms.md); a spin would be stepped meanwhile.
	 * A tick wakes the HLT too.
	 */
	while (test_interrupts == seen && rounds++ < IPI_WAIT_HALTS)
		halt();
	used = bts_off();
	interrupt_register(VECTOR_TEST, saved);
	print_records(used);
	check(test_interrupts != seen, "the self-IPI did not come in %u HLTs", rounds);
	for (long i = 0; i < used; i++) {
		if (delivery < 0 && records[i].to == gate)
			delivery = i;
		if (delivery >= 0 && back < 0 && records[i].from == iret &&
		    records[i].to == records[delivery].from)
			back = i;
	}
	check(delivery >= 0 && back > delivery,
	      "records %ld (-> vector 0x%x's gate) and %ld (IRETQ back) of %ld", delivery,
	      VECTOR_TEST, back, used);
	if (delivery >= 0 && back > delivery)
		check_probe_between(used, delivery, back);
	check_eq(0, emulator_take_violations(NULL, 0));
}

/*
 * What the test counter counts, event in ring 0, from one RDMSR to the next over a UD2 whose
 * handler runs the known loop `iterations` times; interrupts off, so no tick comes. nmis: the
 * NMIs this CPU took meanwhile.
 */
static uint64_t count_over_ud2(uint64_t event, uint64_t iterations, unsigned long *nmis)
{
	unsigned int counter = emulator_test_counter();
	unsigned long flags = local_irq_save();
	uint64_t before, after;

	*nmis = nmi_count();
	handler_iterations = iterations;
	wrmsr(MSR_IA32_PMC0 + counter, 0);
	wrmsr(MSR_IA32_PERFEVTSEL0 + counter, event | PERFEVTSEL_OS | PERFEVTSEL_EN);
	wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 1ull << counter);
	before = rdmsr(MSR_IA32_PMC0 + counter);
	ud2_at_known_site();
	after = rdmsr(MSR_IA32_PMC0 + counter);
	wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 0);
	wrmsr(MSR_IA32_PERFEVTSEL0 + counter, 0);
	*nmis = nmi_count() - *nmis;
	local_irq_restore(flags);
	return (after - before) & emulator_counter_width_mask();
}

#define FEW_ITERATIONS 4
#define MORE_ITERATIONS 54

/*
 * Rule 21 for the counters: a counter of ring-0 instructions (or branches) over a UD2 counts
 * its handler's, as it counts any instruction retired in ring 0 (SDM Vol. 3B "Pre-defined
 * Architectural Performance Events"). The handler runs a known loop FEW_ITERATIONS and then
 * MORE_ITERATIONS times; nothing else differs, so the counts differ by exactly the loop's
 * difference: 2 instructions and 1 branch an iteration. Each NMI meanwhile may add its own
 * (tests/kernel/lib/nmi_margin.h). Before the model stepped handlers the two counts were equal.
 * About 1,400 steps.
 */
TEST_OBSERVING(emulator, rule_21_a_ring_0_counter_over_a_ud2_counts_its_handler, 1400)
{
	exception_handler saved = exception_handler_of(X86_EXC_UD);
	static const uint64_t events[] = { EVENT_INSTRUCTIONS, EVENT_BRANCHES };
	static const char *const names[] = { "instructions", "branches" };

	require_emulated_intel_pmu();
	exception_register(X86_EXC_UD, invalid_opcode_runs_probe);
	for (unsigned int e = 0; e < 2; e++) {
		unsigned long few_nmis, more_nmis;
		uint64_t few = count_over_ud2(events[e], FEW_ITERATIONS, &few_nmis);
		uint64_t more = count_over_ud2(events[e], MORE_ITERATIONS, &more_nmis);
		uint64_t expected = e ? MORE_ITERATIONS - FEW_ITERATIONS
				      : 2 * (MORE_ITERATIONS - FEW_ITERATIONS);
		uint64_t slack = e ? nmi_extra_branches(few_nmis + more_nmis)
				   : nmi_extra_instructions(few_nmis + more_nmis);

		test_diag("%s: %llu over the UD2 with %u iterations in its handler, %llu with %u "
			  "(%lu and %lu NMIs)",
			  names[e], (unsigned long long)few, FEW_ITERATIONS,
			  (unsigned long long)more, MORE_ITERATIONS, few_nmis, more_nmis);
		check(more >= few + expected - slack && more <= few + expected + slack,
		      "%s: %llu more with %u more iterations, expected %llu (NMI margin %llu)",
		      names[e], (unsigned long long)(more - few), MORE_ITERATIONS - FEW_ITERATIONS,
		      (unsigned long long)expected, (unsigned long long)slack);
	}
	if (saved)
		exception_register(X86_EXC_UD, saved);
	else
		exception_unregister(X86_EXC_UD);
	check_eq(0, emulator_take_violations(NULL, 0));
}

#define TICK_LOOP 400 /* iterations: 802 instructions, 400 records, 4 to 16 ms stepped here */
#define TICK_WINDOWS_MAX 10

/* One window over the known loop, traced by BTS or counted (ring-0 instructions). */
struct tick_window {
	uint64_t observed; /* BTS records, or instructions counted */
	uint64_t ticks; /* ticks the model left unstepped meanwhile */
	uint64_t nmis; /* NMIs it recorded meanwhile (each: 1 instruction, 2 records) */
	uint64_t kernel_ticks; /* the kernel's own count around the window: at least ticks */
	long deliveries, returns; /* BTS: records to the timer's gate, and its IRETQs back */
};

static void tick_window(bool bts, bool interrupts, struct tick_window *w)
{
	unsigned int counter = emulator_test_counter();
	uint64_t gate = idt_gate_target(VECTOR_TIMER), iret = entry_iret_site(VECTOR_TIMER);
	unsigned long flags = local_irq_save();
	struct emulator_stats before, after;
	long used;

	if (interrupts)
		local_irq_enable();
	w->kernel_ticks = this_cpu()->ticks;
	before = emulator_stats();
	witness_begin(WITNESS_TICKS);
	if (bts) {
		bts_on();
		handler_probe_loop(TICK_LOOP);
		used = bts_off();
		w->observed = (uint64_t)used;
	} else {
		wrmsr(MSR_IA32_PMC0 + counter, 0);
		wrmsr(MSR_IA32_PERFEVTSEL0 + counter,
		      EVENT_INSTRUCTIONS | PERFEVTSEL_OS | PERFEVTSEL_EN);
		wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 1ull << counter);
		handler_probe_loop(TICK_LOOP);
		wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 0);
		w->observed = rdmsr(MSR_IA32_PMC0 + counter);
		wrmsr(MSR_IA32_PERFEVTSEL0 + counter, 0);
		used = 0;
	}
	witness_end(WITNESS_TICKS);
	after = emulator_stats();
	local_irq_restore(flags);
	w->kernel_ticks = this_cpu()->ticks - w->kernel_ticks;
	w->ticks = after.ticks_unstepped - before.ticks_unstepped;
	w->nmis = after.nmis_recorded - before.nmis_recorded;
	test_diag("tick window: %s, interrupts %s: %llu unstepped ticks", bts ? "bts" : "counter",
		  interrupts ? "on" : "off", (unsigned long long)w->ticks);
	w->deliveries = w->returns = 0;
	for (long i = 0; i < used; i++) {
		if (records[i].to == gate)
			w->deliveries++;
		else if (records[i].from == iret && i > 0 && records[i - 1].to == gate)
			w->returns++;
	}
}

/*
 * Part of rule 21 the model does not play: the timer's handler (1,417 instructions a tick, the
 * witness measured; stepping them takes longer than the 4 ms to the next tick). Each tick that
 * comes while ring 0 is observed is counted instead (emulator_stats().ticks_unstepped), and is
 * exactly 1 instruction (its IRETQ) and 2 BTS records (its delivery and its IRETQ) of the
 * interrupted flow's (tests/kernel/lib/handler_margin.h). So the same known loop, traced or
 * counted with interrupts on, differs from itself with interrupts off by exactly that much a
 * tick (and a recorded NMI's 1 and 2); a lost record, a lost count or a tick counted that did
 * not come fails it. A window is taken again until a tick came in it. 4 to 20 windows of about
 * 850 steps.
 */
TEST_OBSERVING(emulator, rule_21_each_unstepped_tick_is_its_iretq_and_two_records, 8000)
{
	struct tick_window quiet, ticked;

	require_emulated_bts();
	require_emulated_intel_pmu();
	for (unsigned int bts = 0; bts < 2; bts++) {
		unsigned int windows = 0;
		uint64_t per_tick = bts ? 2 : 1, expected;

		tick_window(bts, false, &quiet);
		do
			tick_window(bts, true, &ticked);
		while (ticked.ticks == 0 && ++windows < TICK_WINDOWS_MAX);
		test_diag("%s: %llu with interrupts off (%llu NMIs), %llu with %llu ticks (%llu "
			  "NMIs, "
			  "%llu ticks by the kernel's count) after %u windows",
			  bts ? "records" : "instructions", (unsigned long long)quiet.observed,
			  (unsigned long long)quiet.nmis, (unsigned long long)ticked.observed,
			  (unsigned long long)ticked.ticks, (unsigned long long)ticked.nmis,
			  (unsigned long long)ticked.kernel_ticks, windows + 1);
		check_eq(0, quiet.ticks);
		check(ticked.ticks >= 1, "no tick came in %u windows of %u iterations",
		      TICK_WINDOWS_MAX, TICK_LOOP);
		check(ticked.ticks <= ticked.kernel_ticks,
		      "%llu unstepped ticks counted, the kernel took %llu",
		      (unsigned long long)ticked.ticks, (unsigned long long)ticked.kernel_ticks);
		expected = quiet.observed + per_tick * (ticked.ticks + ticked.nmis) -
			   per_tick * quiet.nmis;
		check(ticked.observed == expected, "%s: %llu, expected %llu (%llu ticks)",
		      bts ? "records" : "instructions", (unsigned long long)ticked.observed,
		      (unsigned long long)expected, (unsigned long long)ticked.ticks);
		if (bts) {
			check_eq((long)ticked.ticks, ticked.deliveries);
			check_eq((long)ticked.ticks, ticked.returns);
		}
	}
	check_eq(0, emulator_take_violations(NULL, 0));
}
