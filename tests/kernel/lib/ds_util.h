/* SPDX-License-Identifier: MIT */
/* ds suite helpers: targets, skips, and branch loops whose BTS records are known exactly. */
#ifndef TESTS_KERNEL_LIB_DS_UTIL_H
#define TESTS_KERNEL_LIB_DS_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "arch/x86/cpu.h"
#include "arch/x86/msr.h"
#include "arch/x86/probe.h"
#include "arch/x86/traps.h"
#include "arch/x86/tsc.h"
#include "arch/x86/user-abi.h"
#include "ds/ds.h"
#include "pmu/pmu.h"
#include "runner/test.h"
#include "sched/sched.h"
#include "tests/kernel/lib/handler_margin.h"
#include "tests/kernel/lib/nmi_margin.h"

#define INST_RETIRED 0xc0 /* architectural event: instructions retired, umask 0 */
#define PMI_WAIT_MS 100

static inline struct ds_target task_target(const struct task *task)
{
	return (struct ds_target){ false, task->index };
}

static inline struct ds_target self_target(void)
{
	return task_target(sched_current());
}

static inline struct ds_target cpu_target(unsigned int cpu)
{
	return (struct ds_target){ true, cpu };
}

/* BTS needs DS, DTES64, BTS available, and an IA32_DS_AREA that keeps its value. */
/*
 * Whether a BTS record is an interrupt's or exception's: its delivery to a gate in the entry
 * code, or its IRETQ from there (SDM DEBUGCTL.TR: "taken branch, interrupt, or exception").
 */
static inline bool record_of_an_entry(const struct bts_record *record)
{
	uint64_t start, end;

	entry_text_range(&start, &end);
	return (record->to >= start && record->to < end) ||
	       (record->from >= start && record->from < end);
}

static inline void require_bts(void)
{
	if (ds_support()->bts_reason[0])
		test_skip("%s", ds_support()->bts_reason);
}

/* PEBS needs the Debug Store conditions, and a counter to drive it (pmu/). */
static inline void require_pebs(void)
{
	if (ds_support()->pebs_reason[0])
		test_skip("%s", ds_support()->pebs_reason);
	if (!pmu_usable())
		test_skip("%s", pmu_info()->reason);
}

static inline void check_attached(enum ds_error error)
{
	if (error != DS_OK)
		test_abort("attach: %s", ds_error_name(error));
}

/* Wait until count PMIs were taken since boot: some platforms (docs/platforms.md) deliver a
 * pending interrupt only at a later exit. */
static inline void wait_for_pmis(uint64_t count)
{
	uint64_t deadline = rdtsc_ordered() + tsc_cycles_from_ms(PMI_WAIT_MS);

	while (ds_pmi_count() < count && rdtsc_ordered() < deadline)
		cpu_relax();
}

/*
 * PEBS on GP counter 0 in this CPU's record format (the basic group only, for adaptive ones),
 * reloaded with -period after each record.
 */
static inline struct ds_pebs_config pebs_config(size_t records, size_t threshold, uint64_t period)
{
	enum pebs_format format = (enum pebs_format)ds_support()->pebs_format;
	unsigned int width = pmu_info()->gp_width;
	uint64_t mask = width >= 64 || width == 0 ? UINT64_MAX : (1ull << width) - 1;

	return (struct ds_pebs_config){
		.format = format,
		.record_size = pebs_format_is_adaptive(format) ? PEBS_BASIC_GROUP_SIZE
							       : pebs_record_size(format),
		.records = records,
		.threshold_records = threshold,
		.enable = 1,
		.reset_value = (0 - period) & mask,
	};
}

static inline struct pmu_event instructions_retired(void) /* in the kernel, for PEBS */
{
	return (struct pmu_event){ .event = INST_RETIRED, .kernel = true, .pebs = true };
}

/*
 * probe_run(): rounds x { call probe_branches; dec; jnz }, interrupts off. Each round takes
 * five branches: the call, probe_branch_1, probe_branch_2, the return, and the JNZ back (not
 * taken in the last round). The BTS index is read just before the first and just after the
 * last, and the whole (circular) buffer copied by REP MOVSQ, which is no branch: nothing
 * between the loop and the copy can add a record.
 */
#define PROBE_BRANCHES_PER_ROUND 5
#define PROBE_RECORDS_MAX 16

struct probe_run {
	uint64_t base, records; /* the buffer, as it was */
	uint64_t index_before, index_after;
	unsigned long nmis; /* NMIs meanwhile (nmi_margin.h) */
	uint64_t call_site, return_site, loop_branch; /* the loop's head is call_site */
	struct bts_record buffer[PROBE_RECORDS_MAX];
};

static inline void probe_run(const struct ds_area *area, unsigned long rounds,
			     struct probe_run *run)
{
	uint64_t qwords = (area->bts_max - area->bts_base) / sizeof(uint64_t);
	const void *source = (const void *)area->bts_base;
	void *copy = run->buffer;
	unsigned long flags;

	if (rounds == 0 || qwords * sizeof(uint64_t) > sizeof(run->buffer))
		test_abort("probe_run: %lu rounds, %llu qwords", rounds,
			   (unsigned long long)qwords);
	run->base = area->bts_base;
	run->records = (area->bts_max - area->bts_base) / BTS_RECORD_SIZE;
	flags = local_irq_save();
	run->nmis = nmi_count();
	asm volatile("lea 1f(%%rip), %[call]\n\t"
		     "lea 2f(%%rip), %[back]\n\t"
		     "lea 3f(%%rip), %[loop]\n\t"
		     "mov %c[index](%[area]), %[before]\n\t"
		     "1: call probe_branches\n\t"
		     "2: dec %[rounds]\n\t"
		     "3: jnz 1b\n\t"
		     "mov %c[index](%[area]), %[after]\n\t"
		     "rep movsq"
		     : [call] "=&r"(run->call_site), [back] "=&r"(run->return_site),
		       [loop] "=&r"(run->loop_branch), [before] "=&r"(run->index_before),
		       [after] "=&r"(run->index_after), [rounds] "+&r"(rounds), "+c"(qwords),
		       "+S"(source), "+D"(copy)
		     : [area] "r"(area), [index] "i"(offsetof(struct ds_area, bts_index))
		     : "cc", "memory");
	run->nmis = nmi_count() - run->nmis;
	local_irq_restore(flags);
}

/* The k-th newest record a probe_run() leaves (k = 0: the newest, its last return). */
static inline struct bts_record probe_expected(const struct probe_run *run, unsigned int k)
{
	switch (k % PROBE_BRANCHES_PER_ROUND) {
	case 0:
		return (struct bts_record){ (uint64_t)probe_branch_2_target, run->return_site, 0 };
	case 1:
		return (struct bts_record){ (uint64_t)probe_branch_2,
					    (uint64_t)probe_branch_2_target, 0 };
	case 2:
		return (struct bts_record){ (uint64_t)probe_branch_1,
					    (uint64_t)probe_branch_1_target, 0 };
	case 3:
		return (struct bts_record){ run->call_site, (uint64_t)probe_branches, 0 };
	default:
		return (struct bts_record){ run->loop_branch, run->call_site, 0 };
	}
}

/*
 * A probe_run() of rounds rounds on a circular buffer: the index moved on by exactly the
 * loop's taken branches, modulo the buffer, and the newest records are those branches.
 */
static inline void check_probe_run(const struct probe_run *run, unsigned long rounds)
{
	uint64_t taken = PROBE_BRANCHES_PER_ROUND * rounds - 1;
	uint64_t next = ((run->index_before - run->base) / BTS_RECORD_SIZE + taken) % run->records;
	unsigned int wrong = 0;

	if (run->nmis) {
		/*
		 * An NMI came (nmi_margin.h): its delivery and IRETQ are records among the loop's,
		 * and on silicon its handler's branches too. The index then moves by an amount the
		 * circular buffer hides: only the loop's records are judged, newest first, those
		 * of an entry (the model's NMI records) skipped; on silicon, nothing more.
		 */
		test_diag("%lu NMIs in the probe: %s", run->nmis,
			  emulator_active() ? "their records skipped" : "not judged");
		if (!emulator_active())
			return;
		/*
		 * An NMI after the index was read writes on before the copy, over the oldest
		 * slots: those are left out.
		 */
		uint64_t reserve = nmi_extra_records(run->nmis);
		uint64_t judged = run->records > reserve ? run->records - reserve : 0;

		next = (run->index_after - run->base) / BTS_RECORD_SIZE;
		for (unsigned int k = 0, at = 0; k < taken && at < judged; at++) {
			const struct bts_record *seen =
				&run->buffer[(next + run->records - 1 - at) % run->records];
			struct bts_record expected = probe_expected(run, k);

			if (record_of_an_entry(seen))
				continue;
			if (seen->from != expected.from || seen->to != expected.to)
				wrong++;
			k++;
		}
		check_eq(0, wrong);
		return;
	}

	if (run->index_after != run->base + next * BTS_RECORD_SIZE)
		test_diag("%lu rounds: index 0x%llx before, 0x%llx after; buffer at 0x%llx", rounds,
			  (unsigned long long)run->index_before,
			  (unsigned long long)run->index_after, (unsigned long long)run->base);
	check_eq(run->base + next * BTS_RECORD_SIZE, run->index_after);
	for (unsigned int k = 0; k < taken && k < run->records; k++) {
		const struct bts_record *seen =
			&run->buffer[(next + run->records - 1 - k) % run->records];
		struct bts_record expected = probe_expected(run, k);

		if (seen->from == expected.from && seen->to == expected.to)
			continue;
		if (!wrong++)
			test_diag("record %u from the newest: 0x%llx -> 0x%llx, expected 0x%llx -> "
				  "0x%llx",
				  k, (unsigned long long)seen->from, (unsigned long long)seen->to,
				  (unsigned long long)expected.from,
				  (unsigned long long)expected.to);
	}
	check_eq(0, wrong);
}

/*
 * Interrupt mode: with interrupts off, take exactly as many branches (a DEC/JNZ loop) as the
 * records still missing to the threshold, read the index, then let interrupts in again: the
 * PMI is then due. The newest record is the loop's JNZ back to its DEC.
 */
struct fill_run {
	uint64_t index_before, index_after, loop_head, loop_branch;
	struct bts_record newest;
	unsigned long nmis; /* NMIs meanwhile (nmi_margin.h) */
};

static inline void bts_fill_to_threshold(const struct ds_area *area, struct fill_run *run)
{
	uint64_t left, scratch, divisor;
	unsigned long flags = local_irq_save();

	run->nmis = nmi_count();

	asm volatile("lea 1f(%%rip), %[head]\n\t"
		     "lea 2f(%%rip), %[loop]\n\t"
		     "mov %c[index](%[area]), %[before]\n\t"
		     "mov %c[threshold](%[area]), %%rax\n\t"
		     "sub %[before], %%rax\n\t"
		     "jb 3f\n\t" /* past it already: no loop */
		     "xor %%edx, %%edx\n\t"
		     "mov %[size], %[divisor]\n\t"
		     "div %[divisor]\n\t"
		     "inc %%rax\n\t" /* n + 1 passes: n taken JNZs */
		     "1: dec %%rax\n\t"
		     "2: jnz 1b\n\t"
		     "3: mov %c[index](%[area]), %[after]"
		     : [head] "=&r"(run->loop_head), [loop] "=&r"(run->loop_branch),
		       [before] "=&r"(run->index_before), [after] "=&r"(run->index_after),
		       "=&a"(left), "=&d"(scratch), [divisor] "=&r"(divisor)
		     : [area] "r"(area), [index] "i"(offsetof(struct ds_area, bts_index)),
		       [threshold] "i"(offsetof(struct ds_area, bts_threshold)),
		       [size] "i"(BTS_RECORD_SIZE)
		     : "cc", "memory");
	if (run->index_after > area->bts_base)
		run->newest = ((const struct bts_record *)run->index_after)[-1];
	run->nmis = nmi_count() - run->nmis;
	local_irq_restore(flags);
}

/* iterations x { dec; jnz }: 2 instructions each, iterations - 1 taken branches. */
struct loop_span {
	uint64_t head, end; /* the DEC, and the instruction after the JNZ */
};

static inline void counted_loop(unsigned long iterations, struct loop_span *span)
{
	asm volatile("lea 1f(%%rip), %[head]\n\t"
		     "lea 2f(%%rip), %[end]\n\t"
		     "1: dec %[n]\n\t"
		     "jnz 1b\n\t"
		     "2:"
		     : [head] "=&r"(span->head), [end] "=&r"(span->end), [n] "+r"(iterations)
		     :
		     : "cc", "memory"); /* the CPU stores records and moves the index */
}

static inline bool in_user_code(uint64_t address)
{
	return address >= USER_TEXT_BASE && address < USER_DATA_BASE;
}

/*
 * Whether a record stored under BTS_OFF_OS belongs there: a ring-3 branch in user code, or a
 * transfer across the ring boundary (rule 21; Linux intel_pmu_drain_bts_buffer() says BTS
 * stores those "such as traps or system calls"): from user code into the entry code (a delivery
 * to a gate, SYSCALL) or from an entry's IRETQ back into user code.
 */
static inline bool bts_record_of_ring_3(uint64_t from, uint64_t to)
{
	uint64_t entry_start, entry_end;

	entry_text_range(&entry_start, &entry_end);
	if (in_user_code(from) && in_user_code(to))
		return true;
	if (in_user_code(from))
		return (to >= entry_start && to < entry_end) || to == rdmsr(MSR_LSTAR);
	return in_user_code(to) &&
	       ((from >= entry_start && from < entry_end) || from == (uint64_t)syscall_entry_iret);
}

/* What one PEBS user on GP counter 0 saw over a counted loop (pebs_sample_loop()). */
struct pebs_sampled {
	uint64_t pmis; /* during the loop */
	uint64_t credited; /* by those PMIs */
	uint64_t total; /* credited once detached: the rest was drained at the detach */
	unsigned long nmis; /* while the counter counted (nmi_margin.h) */
	uint64_t ticks; /* counted in an observed ring 0 meanwhile (handler_margin.h) */
	uint64_t base_attached, base_detached; /* base_msr, where one was named */
	struct ds_credit credit; /* once detached: the last record's IP, groups, fragments */
	struct loop_span loop;
};

/*
 * PEBS on GP counter 0 (config) over a counted loop of iterations, sampling every period; the
 * counter stops at once after it (pmu_release()), and the detach, with nothing more counted,
 * drains what the PMIs left. base_msr, unless 0, is read attached and detached (architectural
 * PEBS's PEBS_BASE).
 */
static inline void pebs_sample_loop(const struct ds_pebs_config *config, unsigned long iterations,
				    uint64_t period, uint32_t base_msr, struct pebs_sampled *out)
{
	struct ds_target target = self_target();
	struct pmu_event event = instructions_retired();
	uint64_t pmis;

	ds_credit_reset(target.index);
	check_attached(ds_attach_pebs(&target, config));
	out->base_attached = base_msr ? rdmsr(base_msr) : 0;
	pmis = ds_pmi_count();
	out->nmis = nmi_count();
	out->ticks = tick_count();
	if (pmu_add_sampling_event(target.index, &event, period) != 0)
		test_abort("pmu_add_sampling_event did not get counter 0");
	counted_loop(iterations, &out->loop);
	pmu_release(target.index);
	out->nmis = nmi_count() - out->nmis;
	out->ticks = tick_count() - out->ticks;
	out->pmis = ds_pmi_count() - pmis;
	out->credited = ds_credit(target.index).pebs_records;
	check_eq(DS_OK, ds_detach(&target, DS_USER_PEBS));
	out->base_detached = base_msr ? rdmsr(base_msr) : 0;
	out->credit = ds_credit(target.index);
	out->total = out->credit.pebs_records;
}

/*
 * A PEBS record's IP after a counted loop: in the loop (the DEC, the JNZ or the next one). With a
 * tick in the window, also an entry's IRETQ: the model counts each tick it leaves unstepped as
 * that one instruction of the flow (rule 21, handler_margin.h). With an NMI not judged: its
 * handler's instructions (silicon) count too, and one of them may be the eventing instruction.
 */
static inline void check_last_pebs_ip(uint64_t ip, const struct loop_span *loop, unsigned long nmis,
				      uint64_t ticks, const char *what)
{
	uint64_t entry_start, entry_end;

	if (nmis) {
		test_diag("%s: %lu NMIs while counting, the last record at 0x%llx is not judged",
			  what, nmis, (unsigned long long)ip);
		return;
	}
	entry_text_range(&entry_start, &entry_end);
	check((ip >= loop->head && ip <= loop->end) ||
		      (ticks && ip >= entry_start && ip < entry_end),
	      "%s: last record at 0x%llx, the loop is 0x%llx-0x%llx (%llu ticks came)", what,
	      (unsigned long long)ip, (unsigned long long)loop->head, (unsigned long long)loop->end,
	      (unsigned long long)ticks);
}

#endif
