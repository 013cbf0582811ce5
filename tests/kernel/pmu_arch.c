/* SPDX-License-Identifier: MIT */
/* pmu suite: the architectural counters programmed directly, as kvm-unit-tests' x86/pmu.c does. */
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/apic.h"
#include "arch/x86/cpu.h"
#include "arch/x86/cpuid.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/extable.h"
#include "arch/x86/msr.h"
#include "arch/x86/pmc.h"
#include "arch/x86/probe_pmu.h"
#include "arch/x86/traps.h"
#include "arch/x86/tsc.h"
#include "arch/x86/user.h"
#include "emulator/emulator.h"
#include "pmu/pmu.h"
#include "runner/test.h"
#include "sched/sched.h"
#include "tests/kernel/lib/nmi_margin.h"

/*
 * Each check counts ITERATIONS of the known loop (arch/x86/probe_pmu.h): 2 x 50 + 4 = 104
 * instructions and 50 branches, exactly, between the WRMSRs that start and stop the counters.
 * Sized for the emulated CPU, which single-steps what an enabled counter counts (about 1 ms a
 * ring-0 step under KVM-PVM, docs/emulated-cpu.md): each test says its steps.
 */
#define ITERATIONS 50
#define INSTRUCTIONS PROBE_COUNTED_INSTRUCTIONS(ITERATIONS)
#define BRANCHES PROBE_COUNTED_BRANCHES(ITERATIONS)

/* Architectural events (SDM Vol. 3B §20.2.1.2, Table 20-1): EBX bit i says event i is absent. */
enum arch_event {
	CORE_CYCLES,
	INSTRUCTIONS_RETIRED,
	REFERENCE_CYCLES,
	LLC_REFERENCES,
	LLC_MISSES,
	BRANCHES_RETIRED,
	BRANCH_MISSES,
	ARCH_EVENTS,
};

static const struct {
	const char *name;
	uint64_t select; /* event | umask << 8 */
} arch_events[ARCH_EVENTS] = {
	[CORE_CYCLES] = { "core cycles", 0x003c },
	[INSTRUCTIONS_RETIRED] = { "instructions", 0x00c0 },
	[REFERENCE_CYCLES] = { "reference cycles", 0x013c },
	[LLC_REFERENCES] = { "llc references", 0x4f2e },
	[LLC_MISSES] = { "llc misses", 0x412e },
	[BRANCHES_RETIRED] = { "branches", 0x00c4 },
	[BRANCH_MISSES] = { "branch misses", 0x00c5 },
};

/* Fixed counters 0-2 count instructions, core cycles and reference cycles (SDM Table 20-2). */
static const enum arch_event fixed_events[] = { INSTRUCTIONS_RETIRED, CORE_CYCLES,
						REFERENCE_CYCLES };
#define FIXED_JUDGED 3

/*
 * Core cycles: the SDM states no count for a loop. No x86 core retires more than 8 instructions
 * a cycle, so at least INSTRUCTIONS / 8; at most 50 a cycle (kvm-unit-tests' bound) and
 * CYCLES_SLACK for the stop WRMSR's own cycles (under a hypervisor its exit is partly counted).
 */
#define RETIRE_WIDTH_MAX 8
#define CYCLES_PER_INSTRUCTION_MAX 50
#define CYCLES_SLACK 20000

struct perfmon {
	unsigned int version, gp, gp_width, fixed, fixed_width, events_length;
	uint32_t unavailable;
	bool full_width;
};

static struct perfmon perfmon_detect(void)
{
	struct cpuid_result leaf = cpuid(CPUID_LEAF_PERFMON, 0);
	struct perfmon p = {
		.version = CPUID_PERFMON_VERSION(leaf.eax),
		.gp = CPUID_PERFMON_GP_COUNTERS(leaf.eax),
		.gp_width = CPUID_PERFMON_GP_WIDTH(leaf.eax),
		.events_length = leaf.eax >> CPUID_PERFMON_EVENTS_LENGTH_SHIFT,
		.unavailable = leaf.ebx,
	};
	uint64_t capabilities = 0;

	if (p.version >= 2) {
		p.fixed = CPUID_PERFMON_FIXED_COUNTERS(leaf.edx);
		p.fixed_width = CPUID_PERFMON_FIXED_WIDTH(leaf.edx);
	}
	if (p.gp > PMU_MAX_GP)
		p.gp = PMU_MAX_GP;
	if ((cpuid(CPUID_LEAF_FEATURES, 0).ecx & CPUID_1_ECX_PDCM) &&
	    rdmsr_safe(MSR_IA32_PERF_CAPABILITIES, &capabilities) == 0)
		p.full_width = capabilities & PERF_CAP_FULL_WIDTH_WRITE;
	return p;
}

static uint64_t width_mask(unsigned int width)
{
	return width >= 64 ? UINT64_MAX : (1ull << width) - 1;
}

/*
 * Counters usable (pmu/'s detection) on Intel's architectural perfmon (CPUID.0AH, SDM §20.2):
 * these checks program IA32_PMCx, IA32_PERFEVTSELx and the PERF_GLOBAL MSRs themselves, which
 * an AMD part does not have (AMD APM Vol. 2 §13.2: PERF_CTLx/PERF_CTRx instead).
 */
static struct perfmon require_architectural_perfmon(void)
{
	if (!pmu_usable())
		test_skip("%s", pmu_info()->reason);
	if (pmu_info()->amd)
		test_skip("CPUID.0AH:EAX[7:0]=0 on AMD: no Intel architectural perfmon MSRs to "
			  "program");
	return perfmon_detect();
}

/*
 * Counters usable (pmu/'s detection), with IA32_PERF_GLOBAL_CTRL (perfmon v2, SDM §20.2.2):
 * the known loop starts and stops the counters with it, which is what makes counts exact.
 */
static struct perfmon require_global_ctrl(void)
{
	struct perfmon p = require_architectural_perfmon();

	if (p.version < 2)
		test_skip("perfmon version %u (CPUID.0AH:EAX[7:0]): no IA32_PERF_GLOBAL_CTRL",
			  p.version);
	return p;
}

static bool event_available(const struct perfmon *p, enum arch_event e)
{
	return (unsigned int)e < p->events_length && !(p->unavailable & (1u << e));
}

/* Every control and counter back to 0, the status acknowledged: what pmu/'s shadow holds. */
static void counters_reset(const struct perfmon *p)
{
	wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 0);
	wrmsr(MSR_IA32_FIXED_CTR_CTRL, 0);
	for (unsigned int i = 0; i < p->gp; i++) {
		wrmsr(MSR_IA32_PERFEVTSEL0 + i, 0);
		wrmsr(MSR_IA32_PMC0 + i, 0);
	}
	for (unsigned int i = 0; i < p->fixed; i++)
		wrmsr(MSR_IA32_FIXED_CTR0 + i, 0);
	wrmsr(MSR_IA32_PERF_GLOBAL_OVF_CTRL, rdmsr(MSR_IA32_PERF_GLOBAL_STATUS));
}

static void gp_program(unsigned int i, uint64_t select, uint64_t flags, uint64_t start)
{
	wrmsr(MSR_IA32_PERFEVTSEL0 + i, 0);
	wrmsr(MSR_IA32_PMC0 + i, start);
	wrmsr(MSR_IA32_PERFEVTSEL0 + i,
	      select | flags | PERFEVTSEL_OS | PERFEVTSEL_USR | PERFEVTSEL_EN);
}

static void fixed_program(unsigned int i, uint64_t field, uint64_t start)
{
	uint64_t shift = FIXED_CTR_CTRL_FIELD_BITS * i;
	uint64_t ctrl = rdmsr(MSR_IA32_FIXED_CTR_CTRL) & ~(0xfull << shift);

	wrmsr(MSR_IA32_FIXED_CTR0 + i, start);
	wrmsr(MSR_IA32_FIXED_CTR_CTRL, ctrl | (field | FIXED_CTR_CTRL_OS | FIXED_CTR_CTRL_USR)
						       << shift);
}

/* The NMIs during the last run_loop() (tests/kernel/lib/nmi_margin.h). */
static unsigned long loop_nmis;

/* The known loop under the counters global_ctrl enables, interrupts off; the TSC it took. */
static uint64_t run_loop(uint64_t global_ctrl)
{
	unsigned long flags = local_irq_save();
	unsigned long ticks = nmi_count();
	uint64_t start = rdtsc_ordered(), tsc;

	probe_counted_loop(global_ctrl, ITERATIONS);
	tsc = rdtsc_ordered() - start;
	loop_nmis = nmi_count() - ticks;
	local_irq_restore(flags);
	return tsc;
}

/*
 * Whether count is what the SDM allows for event e over the known loop; why not in why. An NMI
 * in the loop is counted too (nmi_margin.h): exact without one.
 */
static bool judge(enum arch_event e, uint64_t count, uint64_t tsc, const char **why)
{
	switch (e) {
	case INSTRUCTIONS_RETIRED:
		*why = loop_nmis ? "the loop's instructions and its NMIs'"
				 : "exactly the loop's instructions";
		return count >= INSTRUCTIONS &&
		       count <= INSTRUCTIONS + nmi_extra_instructions(loop_nmis);
	case BRANCHES_RETIRED:
		*why = loop_nmis ? "the loop's branches and its NMIs'"
				 : "exactly the loop's branches";
		return count >= BRANCHES && count <= BRANCHES + nmi_extra_branches(loop_nmis);
	case CORE_CYCLES:
		*why = "instructions/8 to 50 x instructions + 20000";
		return count >= INSTRUCTIONS / RETIRE_WIDTH_MAX &&
		       count <= CYCLES_PER_INSTRUCTION_MAX * INSTRUCTIONS + CYCLES_SLACK;
	case REFERENCE_CYCLES:
		/* At the TSC's rate or a slower fixed clock (SDM §20.2.1.2): 1 to the TSC's cycles.
		 */
		*why = "1 to the TSC cycles the loop took";
		return count >= 1 && count <= tsc;
	case BRANCH_MISSES:
		/* Mispredicted branches retired are branches retired (SDM Table 20-1). */
		*why = "at most the loop's branches";
		return count <= BRANCHES + nmi_extra_branches(loop_nmis);
	default:
		/*
		 * LLC references and misses: the loop reads no data, and the SDM counts prefetches
		 * and code reads in them; bounded by one a cycle at most, so by the cycle bound.
		 */
		*why = "at most 50 x instructions + 20000 (one a cycle)";
		return count <= CYCLES_PER_INSTRUCTION_MAX * INSTRUCTIONS + CYCLES_SLACK;
	}
}

/*
 * Item 1 of kvm-unit-tests' pmu.c: each available architectural event on each GP counter.
 * Steps: the three events the model counts (cycles, instructions, branches; reference cycles
 * too) on each of up to 8 counters, 104 each: about 3,400.
 */
TEST_OBSERVING(pmu, each_architectural_event_counts_the_known_loop_on_each_gp_counter, 3400)
{
	struct perfmon p = require_global_ctrl();

	counters_reset(&p);
	for (unsigned int e = 0; e < ARCH_EVENTS; e++) {
		if (!event_available(&p, (enum arch_event)e)) {
			test_diag("%s: not available (CPUID.0AH:EBX bit %u, length %u)",
				  arch_events[e].name, e, p.events_length);
			continue;
		}
		for (unsigned int i = 0; i < p.gp; i++) {
			const char *why;
			uint64_t count, tsc;
			bool ok;

			gp_program(i, arch_events[e].select, 0, 0);
			tsc = run_loop(1ull << i);
			count = rdmsr(MSR_IA32_PMC0 + i);
			wrmsr(MSR_IA32_PERFEVTSEL0 + i, 0);
			ok = judge((enum arch_event)e, count, tsc, &why);
			check(ok,
			      "%s on GP counter %u: %llu, expected %s (%llu instructions, %llu "
			      "branches, %llu TSC cycles)",
			      arch_events[e].name, i, (unsigned long long)count, why,
			      (unsigned long long)INSTRUCTIONS, (unsigned long long)BRANCHES,
			      (unsigned long long)tsc);
			if (i == 0)
				test_diag("%s: %llu on GP counter 0", arch_events[e].name,
					  (unsigned long long)count);
		}
	}
	counters_reset(&p);
}

/* Fixed counters 0-2 over the known loop (3 x 104 steps); fixed counter 3 (slots) is not judged. */
TEST_OBSERVING(pmu, each_fixed_counter_counts_the_known_loop, 320)
{
	struct perfmon p = require_global_ctrl();

	if (p.fixed == 0)
		test_skip("CPUID.0AH:EDX[4:0]=0: no fixed counter");
	counters_reset(&p);
	for (unsigned int i = 0; i < p.fixed && i < FIXED_JUDGED; i++) {
		const char *why;
		uint64_t count, tsc;
		bool ok;

		fixed_program(i, 0, 0);
		tsc = run_loop(PERF_GLOBAL_FIXED_CTR0 << i);
		count = rdmsr(MSR_IA32_FIXED_CTR0 + i);
		wrmsr(MSR_IA32_FIXED_CTR_CTRL, 0);
		test_diag("fixed counter %u (%s): %llu", i, arch_events[fixed_events[i]].name,
			  (unsigned long long)count);
		ok = judge(fixed_events[i], count, tsc, &why);
		check(ok, "fixed counter %u: %llu, expected %s (%llu TSC cycles, %lu NMIs)", i,
		      (unsigned long long)count, why, (unsigned long long)tsc, loop_nmis);
	}
	if (p.fixed > FIXED_JUDGED)
		test_diag(
			"fixed counters %u-%u (topdown slots and beyond): no bound the SDM states",
			FIXED_JUDGED, p.fixed - 1);
	counters_reset(&p);
}

/*
 * Item 2: every GP counter (event i % 7 of those available) and every fixed counter at once,
 * each judged as alone. Steps: one loop, 104.
 */
TEST_OBSERVING(pmu, all_counters_enabled_together_count_the_known_loop, 200)
{
	struct perfmon p = require_global_ctrl();
	enum arch_event on[PMU_MAX_GP];
	uint64_t enable = 0, tsc;
	unsigned int e = 0;

	counters_reset(&p);
	for (unsigned int i = 0; i < p.gp; i++) {
		while (!event_available(&p, (enum arch_event)(e % ARCH_EVENTS)))
			e++;
		on[i] = (enum arch_event)(e++ % ARCH_EVENTS);
		gp_program(i, arch_events[on[i]].select, 0, 0);
		enable |= 1ull << i;
	}
	for (unsigned int i = 0; i < p.fixed && i < FIXED_JUDGED; i++) {
		fixed_program(i, 0, 0);
		enable |= PERF_GLOBAL_FIXED_CTR0 << i;
	}
	tsc = run_loop(enable);
	for (unsigned int i = 0; i < p.gp; i++) {
		uint64_t count = rdmsr(MSR_IA32_PMC0 + i);
		const char *why;
		bool ok = judge(on[i], count, tsc, &why);

		check(ok, "GP counter %u (%s): %llu, expected %s", i, arch_events[on[i]].name,
		      (unsigned long long)count, why);
	}
	for (unsigned int i = 0; i < p.fixed && i < FIXED_JUDGED; i++) {
		uint64_t count = rdmsr(MSR_IA32_FIXED_CTR0 + i);
		const char *why;
		bool ok = judge(fixed_events[i], count, tsc, &why);

		check(ok, "fixed counter %u (%s): %llu, expected %s", i,
		      arch_events[fixed_events[i]].name, (unsigned long long)count, why);
	}
	counters_reset(&p);
}

/* PMIs on VECTOR_TEST: counted, and what GLOBAL_STATUS held, acknowledged as a driver does. */
static volatile unsigned int test_pmis;
static volatile uint64_t status_at_pmi;

static void counting_pmi(struct cpu_regs *regs)
{
	uint64_t status = rdmsr(MSR_IA32_PERF_GLOBAL_STATUS);

	(void)regs;
	status_at_pmi = status;
	if (status)
		wrmsr(MSR_IA32_PERF_GLOBAL_OVF_CTRL, status);
	test_pmis++;
}

/*
 * Interrupts on until a PMI comes or wait_ms pass. Sleeping, not spinning: KVM-PVM delivers a
 * pending interrupt only at an exit, and the tick makes them.
 */
static unsigned int pmis_within(unsigned int wait_ms)
{
	uint64_t deadline = rdtsc_ordered() + tsc_cycles_from_ms(wait_ms);

	while (test_pmis == 0 && rdtsc_ordered() < deadline)
		sched_sleep_ms(1);
	return test_pmis;
}

#define PMI_WAIT_MS 2000
#define NO_PMI_WAIT_MS 20

/*
 * Item 3: each GP counter and fixed counter 0, started K = INSTRUCTIONS / 2 instructions below
 * its width's overflow, counts the loop: it wraps to exactly INSTRUCTIONS - K (SDM §20.2.1.1:
 * a counter counts modulo its width), its GLOBAL_STATUS bit is set, IA32_PERF_GLOBAL_OVF_CTRL
 * (STATUS_RESET from v4) clears it, and a PMI comes if and only if INT (the fixed PMI bit) was
 * set: odd counters set it. Interrupts stay off until the status is checked, so the PMI waits.
 * Steps: 104 a counter, up to 9 counters: about 950.
 */
TEST_OBSERVING(pmu, an_overflow_wraps_sets_and_clears_its_status_and_interrupts_only_with_int, 1000)
{
	struct perfmon p = require_global_ctrl();
	uint64_t k = INSTRUCTIONS / 2;
	uint32_t lvtpc = apic_read_lvtpc();

	counters_reset(&p);
	interrupt_register(VECTOR_TEST, counting_pmi);
	for (unsigned int n = 0; n <= p.gp; n++) {
		bool fixed = n == p.gp, interrupt = n % 2;
		unsigned int i = fixed ? 0 : n;
		uint64_t bit = fixed ? PERF_GLOBAL_FIXED_CTR0 : 1ull << i;
		uint64_t mask = width_mask(fixed ? p.fixed_width : p.gp_width);
		uint64_t count, status, cleared;
		unsigned long flags, ticks, nmis;

		if (fixed && p.fixed == 0)
			break;
		test_pmis = 0;
		status_at_pmi = 0;
		apic_write_lvtpc(VECTOR_TEST);
		flags = local_irq_save();
		/* From before the counter is set to after it is read: an NMI between either and the
		 * loop counts its IRETQ too (two KVM-PVM make checks: 1 over with 3 and 5 NMIs). */
		ticks = nmi_count();
		if (fixed)
			fixed_program(0, interrupt ? FIXED_CTR_CTRL_PMI : 0, (0 - k) & mask);
		else /* a legacy PMCx write sign-extends bit 31: the same value at any width */
			gp_program(i, arch_events[INSTRUCTIONS_RETIRED].select,
				   interrupt ? PERFEVTSEL_INT : 0, (0 - k) & 0xffffffffull);
		probe_counted_loop(bit, ITERATIONS);
		count = rdmsr(fixed ? MSR_IA32_FIXED_CTR0 : MSR_IA32_PMC0 + i);
		nmis = nmi_count() - ticks;
		status = rdmsr(MSR_IA32_PERF_GLOBAL_STATUS);
		wrmsr(MSR_IA32_PERF_GLOBAL_OVF_CTRL, status & bit);
		cleared = rdmsr(MSR_IA32_PERF_GLOBAL_STATUS);
		wrmsr(fixed ? MSR_IA32_FIXED_CTR_CTRL : MSR_IA32_PERFEVTSEL0 + i, 0);
		local_irq_restore(flags);
		check(count >= INSTRUCTIONS - k &&
			      count <= INSTRUCTIONS - k + nmi_extra_instructions(nmis),
		      "%s counter %u: %llu after the wrap, expected %llu (%lu NMIs)",
		      fixed ? "fixed" : "GP", i, (unsigned long long)count,
		      (unsigned long long)(INSTRUCTIONS - k), nmis);
		check(status & bit, "%s counter %u: GLOBAL_STATUS 0x%llx lacks 0x%llx",
		      fixed ? "fixed" : "GP", i, (unsigned long long)status,
		      (unsigned long long)bit);
		check(!(cleared & bit), "%s counter %u: GLOBAL_STATUS 0x%llx after OVF_CTRL",
		      fixed ? "fixed" : "GP", i, (unsigned long long)cleared);
		check_eq(interrupt, pmis_within(interrupt ? PMI_WAIT_MS : NO_PMI_WAIT_MS));
	}
	interrupt_register(VECTOR_TEST, NULL);
	apic_write_lvtpc(lvtpc);
	counters_reset(&p);
}

/*
 * CondChgd, IA32_PERF_GLOBAL_STATUS bit 63 ("status bits of this register has changed", SDM Vol. 4
 * Table 2-2; Vol. 3B "Global Counter Control Facilities": "changes to the state of performance
 * monitoring hardware"). It is cleared by bit 63 of IA32_PERF_GLOBAL_OVF_CTRL (STATUS_RESET from
 * v4) and by no other bit: a counter's overflow bit acknowledged alone leaves it set. The SDM
 * does not list what sets it; the emulated CPU reads the table literally (the hardware changed a
 * status bit: GP counter 0 overflowing here) and must show it. Elsewhere (silicon, a KVM vPMU,
 * which never sets it) the clearing is checked where the bit came, and its absence is reported.
 * Steps: 104.
 */
TEST_OBSERVING(pmu, cond_chgd_is_cleared_only_by_its_own_ovf_ctrl_bit, 150)
{
	struct perfmon p = require_global_ctrl();
	uint64_t k = INSTRUCTIONS / 2, status, after_counter, after_cond;
	unsigned long flags;

	counters_reset(&p);
	flags = local_irq_save();
	gp_program(0, arch_events[INSTRUCTIONS_RETIRED].select, 0, (0 - k) & 0xffffffffull);
	probe_counted_loop(1, ITERATIONS);
	wrmsr(MSR_IA32_PERFEVTSEL0, 0);
	status = rdmsr(MSR_IA32_PERF_GLOBAL_STATUS);
	wrmsr(MSR_IA32_PERF_GLOBAL_OVF_CTRL, 1);
	after_counter = rdmsr(MSR_IA32_PERF_GLOBAL_STATUS);
	wrmsr(MSR_IA32_PERF_GLOBAL_OVF_CTRL, PERF_GLOBAL_STATUS_COND_CHANGED);
	after_cond = rdmsr(MSR_IA32_PERF_GLOBAL_STATUS);
	local_irq_restore(flags);
	counters_reset(&p);
	test_diag("GLOBAL_STATUS 0x%llx after the overflow, 0x%llx with bit 0 cleared, 0x%llx with "
		  "bit 63 cleared",
		  (unsigned long long)status, (unsigned long long)after_counter,
		  (unsigned long long)after_cond);
	check(status & 1, "GLOBAL_STATUS 0x%llx: no overflow of PMC0", (unsigned long long)status);
	if (emulator_active())
		check(status & PERF_GLOBAL_STATUS_COND_CHANGED,
		      "GLOBAL_STATUS 0x%llx: the emulated CPU changed bit 0 and left CondChgd "
		      "clear",
		      (unsigned long long)status);
	else if (!(status & PERF_GLOBAL_STATUS_COND_CHANGED))
		test_diag("this platform did not set CondChgd at an overflow");
	check_eq(status & ~1ull, after_counter);
	check_eq(status & ~(1ull | PERF_GLOBAL_STATUS_COND_CHANGED), after_cond);
}

/*
 * Item 4: EVTSEL.CMASK (SDM §20.2.1.1 "IA32_PERFEVTSELx"): with a CMask the counter counts the
 * cycles in which the event occurred at least CMask times. With CMask 2 each counted cycle
 * retired 2 or more of the loop's instructions: at most half of them, and fewer than the plain
 * event; with CMask 1 between 1 and all of them. Steps: 3 x 104.
 */
TEST_OBSERVING(pmu, a_cmask_above_the_per_cycle_increment_counts_less_than_the_event, 350)
{
	struct perfmon p = require_global_ctrl();
	uint64_t select = arch_events[INSTRUCTIONS_RETIRED].select, plain, cmask1, cmask2;
	unsigned long nmis;

	counters_reset(&p);
	gp_program(0, select, 0, 0);
	run_loop(1);
	plain = rdmsr(MSR_IA32_PMC0);
	nmis = loop_nmis;
	gp_program(0, select, 1ull << PERFEVTSEL_CMASK_SHIFT, 0);
	run_loop(1);
	cmask1 = rdmsr(MSR_IA32_PMC0);
	nmis += loop_nmis;
	gp_program(0, select, 2ull << PERFEVTSEL_CMASK_SHIFT, 0);
	run_loop(1);
	cmask2 = rdmsr(MSR_IA32_PMC0);
	counters_reset(&p);
	test_diag("instructions %llu, cycles with >= 1: %llu, with >= 2: %llu",
		  (unsigned long long)plain, (unsigned long long)cmask1,
		  (unsigned long long)cmask2);
	check(plain >= INSTRUCTIONS && plain <= INSTRUCTIONS + nmi_extra_instructions(nmis),
	      "instructions: %llu, expected %llu and at most %llu more for %lu NMIs",
	      (unsigned long long)plain, (unsigned long long)INSTRUCTIONS,
	      (unsigned long long)nmi_extra_instructions(nmis), nmis);
	check(cmask1 >= 1 && cmask1 <= INSTRUCTIONS + nmi_extra_instructions(nmis),
	      "CMask 1: %llu, expected 1 to %llu", (unsigned long long)cmask1,
	      (unsigned long long)(INSTRUCTIONS + nmi_extra_instructions(nmis)));
	check(cmask2 <= INSTRUCTIONS / 2 && cmask2 < plain, "CMask 2: %llu, expected at most %llu",
	      (unsigned long long)cmask2, (unsigned long long)INSTRUCTIONS / 2);
}

/*
 * Item 6: a WRMSR to a running counter takes effect at once (SDM §20.2.1.1: the counter is
 * writable while it counts, and counts on from the value written). Written V while counting
 * and read at once, it holds V + d, where d is the instructions retired between the write and
 * the read: the same code path each time, so the same d for V = 0 and V = WRITE_VALUE, and
 * small (WRITE_READ_MAX). Written the top of its width while counting, the next event wraps
 * it and sets its status bit. Steps: the loop's 104 and about 300 in the accessors.
 */
#define WRITE_VALUE 1000
#define WRITE_READ_MAX 200

static uint64_t written_while_counting(uint32_t counter, uint64_t value)
{
	wrmsr(counter, value);
	return rdmsr(MSR_IA32_PMC0);
}

TEST_OBSERVING(pmu, a_write_to_a_running_counter_takes_effect_at_once, 600)
{
	struct perfmon p = require_global_ctrl();
	uint64_t select = arch_events[INSTRUCTIONS_RETIRED].select, first, from_0, from_v;
	uint64_t top = p.full_width ? width_mask(p.gp_width) : 0xffffffffull, wrapped, status;
	uint32_t counter = p.full_width ? MSR_IA32_A_PMC0 : MSR_IA32_PMC0;
	unsigned long flags, ticks, nmis;

	counters_reset(&p);
	flags = local_irq_save();
	ticks = nmi_count();
	gp_program(0, select, 0, 0);
	probe_counted_loop(1, ITERATIONS);
	first = rdmsr(MSR_IA32_PMC0);
	wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 1); /* counting from here to the end */
	from_0 = written_while_counting(counter, 0);
	from_v = written_while_counting(counter, WRITE_VALUE);
	wrapped = written_while_counting(counter, top); /* a legacy write sign-extends all ones */
	wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 0);
	status = rdmsr(MSR_IA32_PERF_GLOBAL_STATUS);
	nmis = nmi_count() - ticks;
	local_irq_restore(flags);
	counters_reset(&p);
	test_diag("after the loop %llu; written 0: %llu, %u: %llu, 0x%llx: %llu",
		  (unsigned long long)first, (unsigned long long)from_0, WRITE_VALUE,
		  (unsigned long long)from_v, (unsigned long long)top, (unsigned long long)wrapped);
	if (nmis) {
		/* An NMI in one of the spans counts there too (nmi_margin.h): d differs by it. */
		uint64_t extra = nmi_extra_instructions(nmis);

		test_diag("%lu NMIs: each span's d may be up to %llu more", nmis,
			  (unsigned long long)extra);
		check(first >= INSTRUCTIONS && first <= INSTRUCTIONS + extra,
		      "after the loop %llu, expected %llu", (unsigned long long)first,
		      (unsigned long long)INSTRUCTIONS);
		check(from_0 <= WRITE_READ_MAX + extra, "written 0 while counting, it read %llu",
		      (unsigned long long)from_0);
		check(from_v - WRITE_VALUE + extra >= from_0 &&
			      from_v - WRITE_VALUE <= from_0 + extra,
		      "d %llu written 0, %llu written %u", (unsigned long long)from_0,
		      (unsigned long long)(from_v - WRITE_VALUE), WRITE_VALUE);
		check(status & 1, "GLOBAL_STATUS 0x%llx: no overflow after a write of 0x%llx",
		      (unsigned long long)status, (unsigned long long)top);
		return;
	}
	check_eq(INSTRUCTIONS, first);
	check(from_0 <= WRITE_READ_MAX, "written 0 while counting, it read %llu",
	      (unsigned long long)from_0);
	check_eq(from_0, from_v - WRITE_VALUE);
	check(status & 1, "GLOBAL_STATUS 0x%llx: no overflow after a write of 0x%llx",
	      (unsigned long long)status, (unsigned long long)top);
	check_eq(from_0 - 1, wrapped); /* top + d wraps to d - 1 */
}

/*
 * Item 5, in ring 0: RDPMC (SDM Vol. 2B RDPMC) returns the counter as RDMSR reads it; ECX[30]
 * selects the fixed counters; ECX[31] (fast) returns the low 32 bits where it does not raise
 * #GP (KVM and the model return them; the SDM describes it for older parts); a counter that does
 * not exist raises #GP(0), also kvm-unit-tests' RDPMC(64). The value written is
 * kvm-unit-tests': 0xff0123456789, through the legacy PMCx (bits 31:0, sign-extended) and
 * A_PMCx (to the width) where full-width writes exist.
 */
#define RDPMC_VALUE 0xff0123456789ull

static void check_fast_read(uint32_t ecx, uint64_t expected, const char *what, unsigned int i)
{
	uint64_t value;
	uint32_t fault = rdpmc_safe(ecx | RDPMC_FAST, &value);

	if (fault == EXINFO(X86_EXC_GP, 0)) {
		test_diag("%s %u: the fast read (ECX[31]) raises #GP here", what, i);
		return;
	}
	check(fault == 0 && value == (uint32_t)expected,
	      "%s %u: fast read 0x%llx (fault 0x%x), expected 0x%llx", what, i,
	      (unsigned long long)value, fault, (unsigned long long)(uint32_t)expected);
}

TEST(pmu, rdpmc_reads_what_rdmsr_reads_and_raises_gp_beyond_the_counters)
{
	struct perfmon p;
	uint64_t value;

	require_architectural_perfmon();
	p = perfmon_detect();
	check_eq(EXINFO(X86_EXC_GP, 0), rdpmc_safe(64, &value));
	check_eq(EXINFO(X86_EXC_GP, 0), rdpmc_safe(p.gp, &value));
	check_eq(EXINFO(X86_EXC_GP, 0), rdpmc_safe(RDPMC_FIXED | p.fixed, &value));
	for (unsigned int i = 0; i < p.gp; i++) {
		uint64_t legacy = (uint64_t)(int64_t)(int32_t)(uint32_t)RDPMC_VALUE;
		uint64_t mask = width_mask(p.gp_width), read;

		wrmsr(MSR_IA32_PMC0 + i, RDPMC_VALUE);
		read = rdpmc(i);
		check(read == (legacy & mask) && read == rdmsr(MSR_IA32_PMC0 + i),
		      "GP counter %u: RDPMC 0x%llx, RDMSR 0x%llx, expected 0x%llx", i,
		      (unsigned long long)read, (unsigned long long)rdmsr(MSR_IA32_PMC0 + i),
		      (unsigned long long)(legacy & mask));
		check_fast_read(i, legacy & mask, "GP counter", i);
		if (p.full_width) {
			wrmsr(MSR_IA32_A_PMC0 + i, RDPMC_VALUE & mask);
			check_eq(RDPMC_VALUE & mask, rdpmc(i));
			check_fast_read(i, RDPMC_VALUE & mask, "GP counter", i);
		}
		wrmsr(MSR_IA32_PMC0 + i, 0);
	}
	for (unsigned int i = 0; i < p.fixed; i++) {
		uint64_t expected = RDPMC_VALUE & width_mask(p.fixed_width);

		wrmsr(MSR_IA32_FIXED_CTR0 + i, expected);
		check(rdpmc(RDPMC_FIXED | i) == expected,
		      "fixed counter %u: RDPMC 0x%llx, expected 0x%llx", i,
		      (unsigned long long)rdpmc(RDPMC_FIXED | i), (unsigned long long)expected);
		check_fast_read(RDPMC_FIXED | i, expected, "fixed counter", i);
		wrmsr(MSR_IA32_FIXED_CTR0 + i, 0);
	}
}

/* What user_rdpmc (tests/kernel/lib/pmu_user.asm) reads: ECX in, EDX:EAX out. */
struct user_rdpmc {
	uint64_t ecx, value;
};

extern const char user_rdpmc[], user_rdpmc_at[];

static long rdpmc_in_ring_3(uint32_t ecx, uint64_t *value, struct user_fault *fault)
{
	struct task *task =
		task_create_user("rdpmc", user_rdpmc, USER_DATA_BASE, TASK_START_STOPPED);
	struct user_rdpmc *data;
	long code;

	if (!task)
		test_abort("task_create_user failed");
	/* On this CPU: its counters and its CR4 are the ones the test set. */
	if (sched_migrate(task, this_cpu_index()) != 0)
		test_abort("sched_migrate to CPU %u failed", this_cpu_index());
	data = task_user_data(task);
	*data = (struct user_rdpmc){ .ecx = ecx, .value = ~0ull };
	task_continue(task);
	code = task_join(task, fault);
	*value = data->value;
	return code;
}

/*
 * Item 5 in ring 3: RDPMC raises #GP(0) at CPL 3 unless CR4.PCE is set (SDM Vol. 2B RDPMC), and
 * with it reads the counter as ring 0 does; a counter beyond them still raises #GP(0).
 */
TEST(pmu, rdpmc_in_ring_3_raises_gp_unless_cr4_pce_is_set)
{
	unsigned long cr4 = read_cr4();
	struct user_fault fault;
	uint64_t value;
	long code;

	require_architectural_perfmon();
	wrmsr(MSR_IA32_PMC0, RDPMC_VALUE & 0x7fffffffull);
	write_cr4(cr4 & ~CR4_PCE);
	code = rdpmc_in_ring_3(0, &value, &fault);
	check(code == TASK_EXIT_FAULTED && fault.valid && fault.vector == X86_EXC_GP &&
		      fault.error_code == 0 && fault.rip == user_text_address(user_rdpmc_at),
	      "CR4.PCE clear: exit %ld, vector %u error 0x%llx at 0x%llx; expected #GP(0) at "
	      "0x%llx",
	      code, fault.vector, (unsigned long long)fault.error_code,
	      (unsigned long long)fault.rip, (unsigned long long)user_text_address(user_rdpmc_at));
	write_cr4(cr4 | CR4_PCE);
	code = rdpmc_in_ring_3(0, &value, &fault);
	check(code == 0 && value == (RDPMC_VALUE & 0x7fffffffull),
	      "CR4.PCE set: exit %ld (vector %u), read 0x%llx, expected 0x%llx", code,
	      fault.valid ? fault.vector : 0, (unsigned long long)value,
	      (unsigned long long)(RDPMC_VALUE & 0x7fffffffull));
	code = rdpmc_in_ring_3(64, &value, &fault);
	check(code == TASK_EXIT_FAULTED && fault.valid && fault.vector == X86_EXC_GP,
	      "RDPMC(64) with CR4.PCE set: exit %ld, vector %u; expected #GP(0)", code,
	      fault.valid ? fault.vector : 0);
	write_cr4(cr4);
	wrmsr(MSR_IA32_PMC0, 0);
}

/*
 * Item 7, full-width writes (SDM §20.2.6 "Full-Width Writes to Performance Counter
 * Registers"), with kvm-unit-tests' value 0xffffff0123456789: a legacy PMCx write keeps bits
 * 31:0 and sign-extends bit 31 to the width (bits 63:32 of the value are ignored); with
 * PERF_CAPABILITIES.FW_WRITE, A_PMCx takes the value to the width, both MSRs read it back, and
 * a bit beyond the width raises #GP(0); without it A_PMCx does not exist (#GP(0)).
 */
#define WIDTH_VALUE 0xffffff0123456789ull

TEST(pmu, legacy_counter_writes_sign_extend_and_full_width_writes_take_the_width)
{
	struct perfmon p;

	require_architectural_perfmon();
	p = perfmon_detect();
	for (unsigned int i = 0; i < p.gp; i++) {
		uint64_t mask = width_mask(p.gp_width), low = WIDTH_VALUE & 0xffffffffull;

		wrmsr(MSR_IA32_PMC0 + i, low);
		check_eq(low, rdmsr(MSR_IA32_PMC0 + i));
		wrmsr(MSR_IA32_PMC0 + i, WIDTH_VALUE);
		check_eq(low, rdmsr(MSR_IA32_PMC0 + i));
		wrmsr(MSR_IA32_PMC0 + i, 0x80000000ull);
		check_eq(0xffffffff80000000ull & mask, rdmsr(MSR_IA32_PMC0 + i));
		if (!p.full_width) {
			check_eq(EXINFO(X86_EXC_GP, 0), wrmsr_safe(MSR_IA32_A_PMC0 + i, low));
			wrmsr(MSR_IA32_PMC0 + i, 0);
			continue;
		}
		wrmsr(MSR_IA32_A_PMC0 + i, low);
		check_eq(low, rdmsr(MSR_IA32_A_PMC0 + i));
		check_eq(low, rdmsr(MSR_IA32_PMC0 + i));
		wrmsr(MSR_IA32_A_PMC0 + i, WIDTH_VALUE & mask);
		check_eq(WIDTH_VALUE & mask, rdmsr(MSR_IA32_A_PMC0 + i));
		check_eq(WIDTH_VALUE & mask, rdmsr(MSR_IA32_PMC0 + i));
		if (mask != UINT64_MAX)
			check_eq(EXINFO(X86_EXC_GP, 0),
				 wrmsr_safe(MSR_IA32_A_PMC0 + i, WIDTH_VALUE));
		check_eq(WIDTH_VALUE & mask,
			 rdmsr(MSR_IA32_PMC0 + i)); /* the #GP changed nothing */
		wrmsr(MSR_IA32_PMC0 + i, 0);
	}
	test_diag("%u GP counters of %u bits, full-width writes %s", p.gp, p.gp_width,
		  p.full_width ? "enumerated" : "not enumerated");
}

/*
 * Item 9, perfmon v4 (SDM §20.2.4.2-3), and their absence before it: IA32_PERF_GLOBAL_STATUS_SET
 * sets the status bits it is written (no PMI), STATUS_RESET clears them, CondChgd cannot be set
 * (#GP(0)), and IA32_PERF_GLOBAL_INUSE, read-only, has bit i while EVTSELi[7:0] is not 0, bit 32+i
 * while fixed counter i's enable field is not 0, and bit 63 while a counter interrupts.
 */
TEST(pmu, global_status_set_and_inuse_exist_from_perfmon_v4_and_track_the_counters)
{
	struct perfmon p;
	uint64_t counters = 0, inuse, value;

	require_architectural_perfmon();
	p = perfmon_detect();
	if (p.version < 4) {
		/* Before version 4 neither MSR exists: #GP(0) (SDM Vol. 4 Table 2-2). */
		test_diag("perfmon version %u: GLOBAL_STATUS_SET and INUSE must not exist",
			  p.version);
		check_eq(EXINFO(X86_EXC_GP, 0),
			 rdmsr_safe(MSR_IA32_PERF_GLOBAL_STATUS_SET, &value));
		check_eq(EXINFO(X86_EXC_GP, 0), wrmsr_safe(MSR_IA32_PERF_GLOBAL_STATUS_SET, 1));
		check_eq(EXINFO(X86_EXC_GP, 0), rdmsr_safe(MSR_IA32_PERF_GLOBAL_INUSE, &value));
		check_eq(0, rdmsr(MSR_IA32_PERF_GLOBAL_STATUS));
		return;
	}
	counters_reset(&p);
	for (unsigned int i = 0; i < p.gp; i++)
		counters |= 1ull << i;
	for (unsigned int i = 0; i < p.fixed; i++)
		counters |= PERF_GLOBAL_FIXED_CTR0 << i;
	check_eq(0, rdmsr(MSR_IA32_PERF_GLOBAL_STATUS));
	for (uint64_t bits = counters; bits; bits &= bits - 1) {
		uint64_t bit = bits & -bits;

		wrmsr(MSR_IA32_PERF_GLOBAL_STATUS_SET, bit);
		check_eq(bit, rdmsr(MSR_IA32_PERF_GLOBAL_STATUS));
		wrmsr(MSR_IA32_PERF_GLOBAL_OVF_CTRL, bit);
		check_eq(0, rdmsr(MSR_IA32_PERF_GLOBAL_STATUS));
	}
	wrmsr(MSR_IA32_PERF_GLOBAL_STATUS_SET, counters);
	check_eq(counters, rdmsr(MSR_IA32_PERF_GLOBAL_STATUS));
	wrmsr(MSR_IA32_PERF_GLOBAL_OVF_CTRL, counters);
	check_eq(0, rdmsr(MSR_IA32_PERF_GLOBAL_STATUS));
	check_eq(EXINFO(X86_EXC_GP, 0),
		 wrmsr_safe(MSR_IA32_PERF_GLOBAL_STATUS_SET, PERF_GLOBAL_STATUS_COND_CHANGED));
	check_eq(0, rdmsr(MSR_IA32_PERF_GLOBAL_INUSE));
	/* Selected, not enabled: in use all the same. */
	wrmsr(MSR_IA32_PERFEVTSEL0, arch_events[INSTRUCTIONS_RETIRED].select);
	check_eq(1, rdmsr(MSR_IA32_PERF_GLOBAL_INUSE));
	if (p.fixed) {
		wrmsr(MSR_IA32_FIXED_CTR_CTRL, FIXED_CTR_CTRL_OS);
		check_eq(1 | PERF_GLOBAL_FIXED_CTR0, rdmsr(MSR_IA32_PERF_GLOBAL_INUSE));
		wrmsr(MSR_IA32_FIXED_CTR_CTRL, 0);
	}
	wrmsr(MSR_IA32_PERFEVTSEL0, arch_events[INSTRUCTIONS_RETIRED].select | PERFEVTSEL_INT);
	inuse = rdmsr(MSR_IA32_PERF_GLOBAL_INUSE);
	check_eq(1 | PERF_GLOBAL_INUSE_PMI, inuse);
	check_eq(EXINFO(X86_EXC_GP, 0), wrmsr_safe(MSR_IA32_PERF_GLOBAL_INUSE, 0));
	wrmsr(MSR_IA32_PERFEVTSEL0, 0);
	check_eq(0, rdmsr(MSR_IA32_PERF_GLOBAL_INUSE));
	counters_reset(&p);
}
