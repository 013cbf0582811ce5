/* SPDX-License-Identifier: MIT */
/* Per-task counters over the arch perfmon MSRs: delta accounting, switch plans, rotation, PMI. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/apic.h"
#include "arch/x86/cpu.h"
#include "arch/x86/cpuid.h"
#include "arch/x86/msr-index.h"
#include "arch/x86/msr.h"
#include "arch/x86/percpu.h"
#include "kernel/switch_hooks.h"
#include "lib/ktap.h"
#include "lib/string.h"
#include "pmu/pmu.h"
#include "pmu/rotate.h"
#include "pmu/scale.h"
#include "pmu/selfmon.h"
#include "pmu/switch.h"

struct pmu_task {
	bool used;
	struct pmu_set set;
	uint64_t period[PMU_SET_MAX_EVENTS]; /* 0: counting; else sampling, reload with -period */
	/* Sampling: events left to the next overflow when the counter was last read. A switch,
	 * a rotation or a reprogram loads -left, as Linux's x86_perf_event_set_period() does with
	 * period_left: a task whose slices are shorter than its period still reaches it. */
	uint64_t left[PMU_SET_MAX_EVENTS];
	uint64_t overflows[PMU_SET_MAX_EVENTS];
};

struct pmu_cpu {
	struct pmu_caps caps; /* this CPU's counters: a hybrid part's core types differ */
	/* IA32_PERF_GLOBAL_CTRL or PerfCntrGlobalCtl: kept, so that the stop that ends a task's
	 * counting runs no more instructions than a constant MSR number would (ds.partial_pebs_*
	 * counts them). */
	uint32_t global_msr;
	uint64_t status_bits; /* GLOBAL_STATUS bits of those counters */
	struct pmu_msr_state held;
	uint64_t baseline[PMU_MAX_COUNTERS]; /* counter values when the current slice began */
	uint64_t slice_start; /* TSC */
};

static struct pmu_task tasks[SWITCH_TASKS_MAX];
static DEFINE_PER_CPU(struct pmu_cpu, cpus);
static unsigned int fixed_everywhere = PMU_MAX_FIXED; /* fixed counters every CPU has */
static bool full_width_everywhere = true; /* every CPU writes counts through IA32_A_PMCx */
static uint64_t gp_mask, fixed_mask; /* the counters' widths */

bool pmu_usable(void)
{
	return pmu_info()->reason[0] == '\0';
}

static DEFINE_PER_CPU(struct pmu_writes, writes_by_msr);

/*
 * wrmsr(), counted in this CPU's pmu_writes() by register: after the write, so that a write
 * that stops the counters counts none of the counting (tests that count pmu/'s own paths see
 * no more of them than before).
 */
static void pmu_wrmsr(uint32_t msr, uint64_t value)
{
	struct pmu_writes *w;

	wrmsr(msr, value);
	w = this_cpu_ptr(writes_by_msr);
	if (msr == MSR_IA32_PERF_GLOBAL_CTRL || msr == MSR_AMD64_PERF_CNTR_GLOBAL_CTL)
		w->global_ctrl++;
	else if (msr == MSR_IA32_FIXED_CTR_CTRL)
		w->fixed_ctrl++;
	else if ((msr >= MSR_IA32_PERFEVTSEL0 && msr < MSR_IA32_PERFEVTSEL0 + PMU_MAX_GP) ||
		 (msr >= MSR_K7_EVNTSEL0 && msr < MSR_K7_EVNTSEL0 + AMD_K7_COUNTERS) ||
		 (msr >= MSR_F15H_PERF_CTL0 && msr < MSR_F15H_PERF_CTL0 + 2 * PMU_MAX_GP &&
		  !((msr - MSR_F15H_PERF_CTL0) & 1)))
		w->evtsel++;
	else
		w->counts++;
}

struct pmu_writes pmu_writes(void)
{
	return *this_cpu_ptr(writes_by_msr);
}

static struct pmu_cpu *this_pmu_cpu(void)
{
	return this_cpu_ptr(cpus);
}

/* The MSR to read a counter through (GP 0-7, fixed 8-11). */
static uint32_t counter_msr(unsigned int counter)
{
	if (counter >= PMU_MAX_GP)
		return MSR_IA32_FIXED_CTR0 + counter - PMU_MAX_GP;
	return this_pmu_cpu()->caps.amd ? pmu_gp_count_msr(&this_pmu_cpu()->caps, counter)
					: MSR_IA32_PMC0 + counter;
}

static uint32_t global_ctrl_msr(void)
{
	return this_pmu_cpu()->global_msr;
}

static uint64_t counter_mask(unsigned int counter)
{
	return counter < PMU_MAX_GP ? gp_mask : fixed_mask;
}

/* A counter's bit in GLOBAL_CTRL and GLOBAL_STATUS (counter: GP 0-7, fixed 8-11). */
static uint64_t global_bit(unsigned int counter)
{
	return counter < PMU_MAX_GP ? pmu_global_gp(counter)
				    : pmu_global_fixed(counter - PMU_MAX_GP);
}

/* The hardware counter of a set event this slice: GP 0-7, fixed 8-11; or PMU_NO_COUNTER. */
static unsigned int event_counter(const struct pmu_set_event *event)
{
	return event->fixed ? PMU_MAX_GP + event->fixed_counter : event->counter;
}

/*
 * Rewrite task's self-monitoring page (pmu/pmu.h) from its set and this CPU's baselines, seq
 * odd meanwhile: wherever the task's events are programmed (a switch-in, a rotation, an add or
 * a release). An accounting alone needs none: it moves count and base by the same delta.
 */
static __attribute__((noinline)) void pmu_selfmon_publish(unsigned int task)
{
	struct pmu_user_page *page = pmu_selfmon_page(task);
	const struct pmu_cpu *cpu = this_pmu_cpu();
	const struct pmu_task *state;
	unsigned int events;

	if (!page || task >= SWITCH_TASKS_MAX)
		return;
	state = &tasks[task];
	events = state->used ? state->set.nr_events : 0;
	__atomic_store_n(&page->seq, page->seq + 1, __ATOMIC_RELEASE);
	for (unsigned int i = 0; i < events; i++) {
		const struct pmu_set_event *event = &state->set.events[i];
		unsigned int counter = event_counter(event);
		struct pmu_user_event *out = &page->event[i];

		if (counter == PMU_NO_COUNTER || state->period[i]) {
			*out = (struct pmu_user_event){ 0, state->period[i] ? 0 : event->count, 0,
							0 };
			continue;
		}
		*out = (struct pmu_user_event){
			.index = (counter < PMU_MAX_GP ? counter
						       : RDPMC_FIXED | (counter - PMU_MAX_GP)) +
				 1,
			.count = event->count,
			.base = cpu->baseline[counter],
			.mask = counter_mask(counter),
		};
	}
	page->events = events;
	__atomic_store_n(&page->seq, page->seq + 1, __ATOMIC_RELEASE);
}

/*
 * What a sampling counter that holds value has left to count to its overflow: it counts up from
 * -left. One that wrapped already has its overflow taken by the PMI or by PEBS, which reload it:
 * a new period.
 */
static uint64_t events_left(uint64_t value, uint64_t period, uint64_t mask)
{
	uint64_t sign = mask ^ (mask >> 1);

	return value & sign ? (0 - value) & mask : period;
}

/* End a slice: add each running counter's delta to its event, and the time to every event. */
static void pmu_account(unsigned int task)
{
	struct pmu_cpu *cpu = this_pmu_cpu();
	struct pmu_task *state = &tasks[task];
	uint64_t now = rdtsc_ordered();

	for (unsigned int i = 0; i < state->set.nr_events; i++) {
		struct pmu_set_event *event = &state->set.events[i];
		unsigned int counter = event_counter(event);
		uint64_t value;

		if (counter == PMU_NO_COUNTER)
			continue;
		if (state->period[i]) {
			/* A sampling counter moved, and PEBS may have reloaded it: unknown now. */
			state->left[i] = events_left(rdmsr(counter_msr(counter)), state->period[i],
						     counter_mask(counter));
			cpu->held.count_known &= ~global_bit(counter);
			continue;
		}
		value = rdmsr(counter_msr(counter));
		event->count += (value - cpu->baseline[counter]) & counter_mask(counter);
		cpu->baseline[counter] = value;
		pmu_shadow_update(&cpu->held, &cpu->caps, counter_msr(counter), value);
	}
	pmu_set_account(&state->set, now - cpu->slice_start);
	cpu->slice_start = now;
}

bool pmu_idle(void)
{
	const struct pmu_msr_state *held = &this_pmu_cpu()->held;

	for (unsigned int i = 0; i < PMU_MAX_GP; i++)
		if (held->evtsel[i])
			return false;
	return held->global_ctrl == 0 && held->fixed_ctrl == 0;
}

/*
 * Program what task needs, with the planner's fewest writes; counts stay (delta accounting).
 * A task without counters on a CPU whose counters are all stopped needs nothing: the plan
 * would be empty, so the common switch skips building it.
 */
static void pmu_apply(unsigned int task)
{
	struct pmu_cpu *cpu = this_pmu_cpu();
	struct pmu_task *state = &tasks[task];
	struct pmu_msr_state wanted;
	struct pmu_write_plan plan;

	if (!state->used && pmu_idle())
		return;
	wanted = cpu->held;
	memset(wanted.evtsel, 0, sizeof(wanted.evtsel));
	wanted.fixed_ctrl = 0;
	wanted.global_ctrl = 0;
	wanted.pebs = 0;
	/* A task that last ran on a CPU with other counters (a hybrid part's other core type):
	 * its events go on this one's, and those that do not fit rotate here. */
	if (state->used && state->set.gp_counters != cpu->caps.gp)
		pmu_set_schedule(&state->set, cpu->caps.gp);
	if (state->used)
		pmu_set_config(&state->set, wanted.evtsel, &wanted.fixed_ctrl, &wanted.global_ctrl);
	for (unsigned int i = 0; state->used && i < state->set.nr_events; i++) {
		unsigned int counter = event_counter(&state->set.events[i]);

		bool pebs = state->set.events[i].event.pebs;

		if (counter != PMU_NO_COUNTER && pebs)
			wanted.pebs |= global_bit(counter);
		if (counter == PMU_NO_COUNTER || !state->period[i])
			continue;
		/* Sampling: interrupt on overflow (a PEBS event: the assist, and the PMI at the
		 * buffer's threshold), start period events below it. */
		if (counter < PMU_MAX_GP) {
			if (!pebs)
				wanted.evtsel[counter] |= EVTSEL_INT;
			wanted.gp_count[counter] = (0 - state->left[i]) & gp_mask;
		} else {
			if (!pebs)
				wanted.fixed_ctrl |= FIXED_CTRL_PMI << (FIXED_CTRL_FIELD_SIZE *
									(counter - PMU_MAX_GP));
			wanted.fixed_count[counter - PMU_MAX_GP] =
				(0 - state->left[i]) & fixed_mask;
		}
		wanted.count_known &= ~global_bit(counter);
	}
	uint64_t ran = cpu->held.global_ctrl;

	pmu_switch_plan(&cpu->held, &wanted, &cpu->caps, &plan);
	cpu->held.count_known &= ~ran; /* they counted on after they were last read */
	/*
	 * A counting event's counter whose count the shadow does not know (another user left it
	 * running, or firmware did): its delta starts from what it holds, read before the writes
	 * start it counting for this task, or the first slice would credit the rest too.
	 */
	for (unsigned int i = 0; state->used && i < state->set.nr_events; i++) {
		unsigned int counter = event_counter(&state->set.events[i]);
		bool gp = counter < PMU_MAX_GP;
		uint64_t bit;

		if (counter == PMU_NO_COUNTER || state->period[i])
			continue;
		bit = gp ? pmu_global_gp(counter) : pmu_global_fixed(counter - PMU_MAX_GP);
		if (cpu->held.count_known & bit)
			continue;
		if (gp)
			cpu->held.gp_count[counter] = rdmsr(counter_msr(counter)) & gp_mask;
		else
			cpu->held.fixed_count[counter - PMU_MAX_GP] =
				rdmsr(counter_msr(counter)) & fixed_mask;
		cpu->held.count_known |= bit;
	}
	for (unsigned int i = 0; i < plan.writes; i++) {
		pmu_wrmsr(plan.write[i].msr, plan.write[i].value);
		pmu_shadow_update(&cpu->held, &cpu->caps, plan.write[i].msr, plan.write[i].value);
	}
	for (unsigned int counter = 0; counter < PMU_MAX_COUNTERS; counter++)
		cpu->baseline[counter] = counter < PMU_MAX_GP
						 ? cpu->held.gp_count[counter]
						 : cpu->held.fixed_count[counter - PMU_MAX_GP];
	cpu->slice_start = rdtsc_ordered();
	if (pmu_selfmon_page(task))
		pmu_selfmon_publish(task);
}

/*
 * Without a global control (AMD before PerfMonV2): stop the counters in running (GLOBAL_CTRL
 * layout) by clearing their selects' EN, as Linux amd_pmu_disable_all() does; in the shadow
 * too when the stop is one (not a PMI's, which restarts them as they were).
 */
static void selects_stop(uint64_t running, bool in_shadow)
{
	struct pmu_cpu *cpu = this_pmu_cpu();

	for (unsigned int i = 0; i < cpu->caps.gp; i++) {
		uint64_t select = cpu->held.evtsel[i] & ~EVTSEL_EN;

		if (!(running & pmu_global_gp(i)))
			continue;
		if (!in_shadow) { /* the PMI's bracket: not a write a switch made */
			wrmsr(pmu_evtsel_msr(&cpu->caps, i), select);
			continue;
		}
		pmu_wrmsr(pmu_evtsel_msr(&cpu->caps, i), select);
		pmu_shadow_update(&cpu->held, &cpu->caps, pmu_evtsel_msr(&cpu->caps, i), select);
	}
}

/*
 * Stop this CPU's counters with one GLOBAL_CTRL write (none if none run), in the shadow too:
 * what runs after it is not counted, and the counts read next are final.
 */
static void pmu_stop(void)
{
	struct pmu_cpu *cpu = this_pmu_cpu();

	if (!cpu->held.global_ctrl)
		return;
	if (cpu->caps.no_global_ctrl) {
		selects_stop(cpu->held.global_ctrl, true);
		return;
	}
	pmu_wrmsr(cpu->global_msr, 0);
	pmu_shadow_update(&cpu->held, &cpu->caps, cpu->global_msr, 0);
}

/*
 * Before a switch to a task that samples with PEBS, with the counters stopped: no select keeps
 * the outgoing task's PMI bit, since ds/'s switch-in enables PEBS on the incoming task's
 * counters (PEBS_ENABLE, or CFG_C.EN) before pmu_switch_in() rewrites their selects, and a
 * PEBS counter must not have INT set ("Do NOT set local counter PMI/INT bit", SDM "Requirements
 * to Program PEBS"; the model's rule 15). Linux disables each outgoing event at sched-out
 * (intel_pmu_disable_event()); here only a select with INT loses INT and EN, and
 * pmu_switch_in() writes it again as its plan says.
 */
static void selects_quiet_for_pebs(void)
{
	struct pmu_cpu *cpu = this_pmu_cpu();
	uint64_t fixed_pmi = 0;

	for (unsigned int i = 0; i < cpu->caps.gp; i++) {
		uint64_t select = cpu->held.evtsel[i] & ~(EVTSEL_INT | EVTSEL_EN);

		if (!(cpu->held.evtsel[i] & EVTSEL_INT))
			continue;
		pmu_wrmsr(pmu_evtsel_msr(&cpu->caps, i), select);
		pmu_shadow_update(&cpu->held, &cpu->caps, pmu_evtsel_msr(&cpu->caps, i), select);
	}
	/* A fixed counter's PMI bit likewise (Linux intel_pmu_enable_fixed(): none with PEBS). */
	for (unsigned int i = 0; i < cpu->caps.fixed; i++)
		fixed_pmi |= FIXED_CTRL_PMI << (FIXED_CTRL_FIELD_SIZE * i);
	if (cpu->held.fixed_ctrl & fixed_pmi) {
		pmu_wrmsr(MSR_IA32_FIXED_CTR_CTRL, cpu->held.fixed_ctrl & ~fixed_pmi);
		pmu_shadow_update(&cpu->held, &cpu->caps, MSR_IA32_FIXED_CTR_CTRL,
				  cpu->held.fixed_ctrl & ~fixed_pmi);
	}
}

/* Whether task's set holds a PEBS event (one ds/ has a PEBS_ENABLE bit for). */
static bool pmu_task_pebs(unsigned int task)
{
	const struct pmu_task *state = &tasks[task];

	for (unsigned int i = 0; state->used && i < state->set.nr_events; i++)
		if (state->set.events[i].event.pebs)
			return true;
	return false;
}

/*
 * Where the outgoing or the incoming task samples with PEBS, ds/'s switch-in changes
 * PEBS_ENABLE: the counters stop here first, and the next task's start after it
 * (debugstate_switch_out(), _in()), as Linux sets PEBS_ENABLE only with the counter off
 * (intel_pmu_enable_all(), intel_pmu_disable_event()). Other switches write nothing here.
 */
void pmu_switch_out(const struct switch_task *prev, const struct switch_task *next)
{
	if (!pmu_usable())
		return;
	/*
	 * To a task without counters, pmu_switch_in() stops every counter anyway: stopped first,
	 * they are read where they stopped, all at one instruction. Read running, one after
	 * another, each counter's share ended that much later than the one before it, and the
	 * instructions it counted past its read were lost when the next start reloaded it: with
	 * a fixed and eight GP counters of one event, GP counter k gained k times the read loop's
	 * ~100 instructions a switch. Same writes: the one GLOBAL_CTRL write moves here (without
	 * a global control, AMD before PerfMonV2, stopping costs a select write each: not so).
	 */
	if (pmu_task_pebs(prev->index) || pmu_task_pebs(next->index) ||
	    (tasks[prev->index].used && !tasks[next->index].used &&
	     !this_pmu_cpu()->caps.no_global_ctrl))
		pmu_stop();
	if (pmu_task_pebs(next->index) && !this_pmu_cpu()->caps.amd)
		selects_quiet_for_pebs();
	if (tasks[prev->index].used)
		pmu_account(prev->index);
	/*
	 * A task without counters may still have ds/'s PEBS_ENABLE bits (attached, its event
	 * not yet added or already released): its empty programming goes first, so that ds/'s
	 * switch-in never sets them beside the previous task's PMI bits (rule 15). The same
	 * writes pmu_switch_in() would make: it programs only a task with counters.
	 */
	if (!tasks[next->index].used)
		pmu_apply(next->index);
}

void pmu_switch_in(const struct switch_task *prev, const struct switch_task *next)
{
	(void)prev;
	if (!pmu_usable())
		return;
	if (tasks[next->index].used) /* else pmu_switch_out() programmed it */
		pmu_apply(next->index);
	pmu_selfmon_switch_in(next->index);
}

void pmu_task_exit(const struct switch_task *task)
{
	if (!pmu_usable())
		return;
	pmu_release(task->index);
	pmu_selfmon_exit(task->index);
}

/* Timer hook: multiplexing. Rotate the running task's events when they do not all fit. */
static void pmu_tick(struct cpu_regs *regs)
{
	unsigned int task = switch_task_current()->index;

	(void)regs;
	if (!tasks[task].used)
		return;
	pmu_account(task);
	if (pmu_set_rotate(&tasks[task].set))
		pmu_apply(task);
}

/*
 * The PMI's counter steps, which debugstate_pmi() runs around ds/'s drain as Linux's
 * intel_pmu_handle_irq() does (SDM Vol. 3B 21.8), and on AMD as amd_pmu_v2_handle_irq() does
 * through PerfMonV2's GlobalCtl, GlobalStatus and GlobalStatusClr (no LVTPC to unmask there:
 * AMD does not mask it, docs/hardware-facts.md §6). Each does nothing where counters are not
 * usable (GLOBAL_STATUS may not exist there).
 */
uint64_t pmu_pmi_stop(void)
{
	struct pmu_cpu *cpu = this_pmu_cpu();
	uint64_t global_ctrl = cpu->held.global_ctrl;

	if (pmu_usable() && global_ctrl && cpu->caps.no_global_ctrl)
		selects_stop(global_ctrl, false);
	else if (pmu_usable() && global_ctrl)
		wrmsr(global_ctrl_msr(), 0);
	return pmu_usable() ? global_ctrl : 0;
}

/*
 * Without PerfMonV2 nothing records an overflow but the counter: one that interrupts and whose
 * top bit is clear has wrapped (Linux amd_pmu_test_overflow_topbit(); a sampling counter is
 * loaded with -left, top bit set, until it wraps). The reload acknowledges it.
 */
static uint64_t overflowed_by_sign(void)
{
	const struct pmu_cpu *cpu = this_pmu_cpu();
	uint64_t sign = gp_mask ^ (gp_mask >> 1), status = 0;

	for (unsigned int i = 0; i < cpu->caps.gp; i++)
		if ((cpu->held.global_ctrl & pmu_global_gp(i)) &&
		    (cpu->held.evtsel[i] & EVTSEL_INT) &&
		    !(rdmsr(pmu_gp_count_msr(&cpu->caps, i)) & sign))
			status |= pmu_global_gp(i);
	return status;
}

uint64_t pmu_pmi_status(void)
{
	if (!pmu_usable())
		return 0;
	if (this_pmu_cpu()->caps.no_global_ctrl)
		return overflowed_by_sign();
	return rdmsr(this_pmu_cpu()->caps.amd ? MSR_AMD64_PERF_CNTR_GLOBAL_STATUS
					      : MSR_IA32_PERF_GLOBAL_STATUS);
}

/*
 * Count and reload each sampling counter that overflowed, then acknowledge every counter
 * overflow in status (a sampling event's or not: a bit left set is found again by every later
 * PMI; a counting event's wrap is already in its delta). A PEBS event's status bit is
 * acknowledged and otherwise ignored, as handle_pmi_common() ignores the PEBS-enabled bits: its
 * overflow only armed PEBS, and the assist reloads the counter from its reset slot. CondChgd
 * (bit 63: "status bits of this register has changed", SDM Vol. 4 Table 2-2) comes with the
 * overflows the hardware records; it is acknowledged with them and is no overflow itself, as
 * intel_pmu_handle_irq() acknowledges every bit it read (intel_pmu_ack_status()) and
 * handle_pmi_common() then drops GLOBAL_STATUS_COND_CHG. Left set, the handler would return
 * with a bit it was called for (docs/emulated-cpu.md rule 14). AMD's GlobalStatus has no such
 * bit.
 */
void pmu_pmi_reload_and_acknowledge(uint64_t status)
{
	struct pmu_task *state = &tasks[switch_task_current()->index];
	uint64_t overflowed = status & this_pmu_cpu()->status_bits;

	if (!pmu_usable())
		return;
	for (unsigned int i = 0; state->used && i < state->set.nr_events; i++) {
		unsigned int counter = event_counter(&state->set.events[i]);
		uint32_t msr;

		if (counter == PMU_NO_COUNTER || !state->period[i] ||
		    state->set.events[i].event.pebs || !(status & global_bit(counter)))
			continue;
		state->overflows[i]++;
		state->left[i] = state->period[i];
		/* Legacy IA32_PMCx writes sign-extend bit 31: fine for a period below 2^31. Fixed
		 * counter writes take the counter's width (Linux x86_perf_event_set_period()). */
		msr = counter < PMU_MAX_GP ? pmu_gp_count_msr(&this_pmu_cpu()->caps, counter)
					   : counter_msr(counter);
		wrmsr(msr, (0 - state->period[i]) & counter_mask(counter));
		pmu_shadow_update(&this_pmu_cpu()->held, &this_pmu_cpu()->caps, msr,
				  (0 - state->period[i]) & counter_mask(counter));
	}
	if (!this_pmu_cpu()->caps.amd)
		overflowed |= status & PERF_GLOBAL_STATUS_COND_CHANGED;
	if (overflowed && !this_pmu_cpu()->caps.no_global_ctrl)
		wrmsr(this_pmu_cpu()->caps.amd ? MSR_AMD64_PERF_CNTR_GLOBAL_STATUS_CLR
					       : MSR_IA32_PERF_GLOBAL_OVF_CTRL,
		      overflowed);
}

void pmu_pmi_restart(uint64_t global_ctrl)
{
	struct pmu_cpu *cpu = this_pmu_cpu();

	if (!pmu_usable() || !global_ctrl)
		return;
	if (!cpu->caps.no_global_ctrl) {
		wrmsr(global_ctrl_msr(), global_ctrl);
		return;
	}
	for (unsigned int i = 0; i < cpu->caps.gp; i++)
		if (global_ctrl & pmu_global_gp(i))
			wrmsr(pmu_evtsel_msr(&cpu->caps, i), cpu->held.evtsel[i]);
}

static int pmu_add(unsigned int task, int index, uint64_t period)
{
	struct pmu_task *state = &tasks[task];

	if (index < 0)
		return -1;
	state->used = true;
	state->period[index] = state->left[index] = period;
	pmu_set_schedule(&state->set, this_pmu_cpu()->caps.gp);
	if (switch_task_current()->index == task)
		pmu_apply(task);
	return index;
}

static bool pmu_prepare(unsigned int task)
{
	/* An exited task's state was released by its task_exit hook: any added now would pass
	 * to the next task given its index. */
	if (!pmu_usable() || !switch_task_live(task))
		return false;
	if (!tasks[task].used) {
		memset(&tasks[task], 0, sizeof(tasks[task]));
		pmu_set_init(&tasks[task].set);
	}
	if (switch_task_current()->index == task)
		pmu_account(task);
	return true;
}

int pmu_self_monitor(unsigned int task)
{
	/* RDPMC indices on the page are Intel's (fixed counters at bit 30): not built for AMD. */
	return pmu_usable() && !this_pmu_cpu()->caps.amd ? pmu_selfmon_map(task) : -1;
}

int pmu_add_event(unsigned int task, const struct pmu_event *event)
{
	unsigned long flags = local_irq_save();
	int index = pmu_prepare(task) ? pmu_add(task, pmu_set_add(&tasks[task].set, event), 0) : -1;

	local_irq_restore(flags);
	return index;
}

int pmu_add_fixed_event(unsigned int task, unsigned int fixed_counter,
			const struct pmu_event *event)
{
	unsigned long flags = local_irq_save();
	int index = pmu_prepare(task) && fixed_counter < fixed_everywhere
			    ? pmu_add(task,
				      pmu_set_add_fixed(&tasks[task].set, fixed_counter, event), 0)
			    : -1;

	local_irq_restore(flags);
	return index;
}

/*
 * Linux's x86_pmu.max_period: a legacy IA32_PMCx write takes 32 bits and sign-extends bit 31
 * (SDM Vol. 3B "Full-Width Writes to Performance Counters"), so -period fits only below 2^31
 * (intel_pmu's (1 << 31) - 1); with full-width writes, cntval_mask >> 1: -period must have the
 * counter's top bit set, which events_left() reads as "not yet wrapped".
 */
uint64_t pmu_max_period(void)
{
	return full_width_everywhere ? gp_mask >> 1 : (1ull << 31) - 1;
}

int pmu_add_sampling_event_on(unsigned int task, unsigned int counter,
			      const struct pmu_event *event, uint64_t period)
{
	bool fixed = counter >= GLOBAL_CTRL_FIXED_SHIFT;
	unsigned int n = fixed ? counter - GLOBAL_CTRL_FIXED_SHIFT : counter;
	unsigned long flags = local_irq_save();
	int index = -1;

	/* Alone in the set, as pmu_add_sampling_event() has it: it never rotates off. */
	if (period && pmu_prepare(task) && tasks[task].set.nr_events == 0 &&
	    (fixed ? n < fixed_everywhere && period <= fixed_mask >> 1
		   : n < this_pmu_cpu()->caps.gp && period <= pmu_max_period()))
		index = pmu_add(task,
				fixed ? pmu_set_add_fixed(&tasks[task].set, n, event)
				      : pmu_set_add_on(&tasks[task].set, n, event),
				period);
	local_irq_restore(flags);
	return index;
}

int pmu_add_sampling_event(unsigned int task, const struct pmu_event *event, uint64_t period)
{
	unsigned long flags = local_irq_save();
	int index = -1;

	/* First in the set and no more events than counters, so it never rotates off. */
	if (period && period <= pmu_max_period() && pmu_prepare(task) &&
	    tasks[task].set.nr_events == 0)
		index = pmu_add(task, pmu_set_add(&tasks[task].set, event), period);
	local_irq_restore(flags);
	return index;
}

struct pmu_reading pmu_read(unsigned int task, unsigned int index)
{
	unsigned long flags;
	struct pmu_task *state;
	struct pmu_reading reading = { 0 };

	if (task >= SWITCH_TASKS_MAX)
		return reading;
	flags = local_irq_save();
	state = &tasks[task];
	if (state->used && index < state->set.nr_events) {
		if (switch_task_current()->index == task)
			pmu_account(task);
		reading.count = state->set.events[index].count;
		reading.time_enabled = state->set.events[index].time_enabled;
		reading.time_running = state->set.events[index].time_running;
		reading.scaled = pmu_set_scaled(&state->set, index);
		reading.overflows = state->overflows[index];
	}
	local_irq_restore(flags);
	return reading;
}

/*
 * The task's own counters stop first, as Linux's perf_pmu_disable() comes before the last read:
 * the release's own instructions count for nobody.
 */
bool pmu_task_used(unsigned int task)
{
	return task < SWITCH_TASKS_MAX && __atomic_load_n(&tasks[task].used, __ATOMIC_RELAXED);
}

bool pmu_release(unsigned int task)
{
	unsigned long flags;
	bool used;

	if (task >= SWITCH_TASKS_MAX)
		return false;
	flags = local_irq_save();
	used = tasks[task].used;

	if (used && pmu_usable() && switch_task_current()->index == task) {
		pmu_stop();
		pmu_account(task); /* the last slice: counts, and what the shadow may still know */
	}
	tasks[task].used = false;
	if (pmu_usable() && switch_task_current()->index == task)
		pmu_apply(task);
	local_irq_restore(flags);
	return used;
}

/*
 * Start this CPU's counters from a known state. Out of reset GLOBAL_CTRL enables the GP
 * counters (SDM since 2023), and firmware may leave counters running (Linux's
 * check_hw_exists() meets it): stop every control, say what was found, and make the shadow
 * match, so the switch plans never skip a write on a wrong belief.
 */
void pmu_init_cpu(void)
{
	struct pmu_cpu *cpu = this_pmu_cpu();
	uint64_t global_ctrl, fixed_ctrl, evtsel, capabilities = 0;
	struct pmu_info here;

	if (!pmu_usable())
		return;
	pmu_detect_cpu(&here);
	cpu->caps.gp = here.gp_counters < PMU_MAX_GP ? here.gp_counters : PMU_MAX_GP;
	cpu->caps.fixed = here.fixed_counters < PMU_MAX_FIXED ? here.fixed_counters : PMU_MAX_FIXED;
	cpu->caps.amd = here.amd;
	cpu->caps.no_global_ctrl = here.amd && !here.amd_perfmon_v2;
	cpu->global_msr = pmu_global_ctrl_msr(&cpu->caps);
	/* AMD's counters take every bit of a write (no sign extension): full width. */
	cpu->caps.full_width =
		here.amd || (rdmsr_safe(MSR_IA32_PERF_CAPABILITIES, &capabilities) == 0 &&
			     (capabilities & PERF_CAP_FULL_WIDTH_WRITE));
	cpu->status_bits = 0;
	for (unsigned int counter = 0; counter < cpu->caps.gp; counter++)
		cpu->status_bits |= pmu_global_gp(counter);
	for (unsigned int counter = 0; counter < cpu->caps.fixed; counter++)
		cpu->status_bits |= 1ull << (GLOBAL_CTRL_FIXED_SHIFT + counter);
	if (cpu->caps.fixed < fixed_everywhere)
		fixed_everywhere = cpu->caps.fixed;
	full_width_everywhere &= cpu->caps.full_width;
	if (here.core_type)
		ktap_diag(0, "pmu: CPU %u: core type %s (0x%x), %u GP and %u fixed counters",
			  this_cpu_index(),
			  here.core_type == CPUID_HYBRID_ATOM	? "Atom"
			  : here.core_type == CPUID_HYBRID_CORE ? "Core"
								: "unknown",
			  here.core_type, cpu->caps.gp, cpu->caps.fixed);
	global_ctrl = cpu->caps.no_global_ctrl ? 0 : rdmsr(global_ctrl_msr());
	fixed_ctrl = cpu->caps.fixed ? rdmsr(MSR_IA32_FIXED_CTR_CTRL) : 0;
	if (global_ctrl || fixed_ctrl)
		ktap_diag(0, "pmu: CPU %u started with GLOBAL_CTRL=0x%llx FIXED_CTR_CTRL=0x%llx",
			  this_cpu_index(), (unsigned long long)global_ctrl,
			  (unsigned long long)fixed_ctrl);
	if (!cpu->caps.no_global_ctrl)
		wrmsr(global_ctrl_msr(), 0);
	if (cpu->caps.fixed)
		wrmsr(MSR_IA32_FIXED_CTR_CTRL, 0);
	for (unsigned int i = 0; i < cpu->caps.gp; i++) {
		evtsel = rdmsr(pmu_evtsel_msr(&cpu->caps, i));
		if (evtsel)
			ktap_diag(0, "pmu: CPU %u started with PERFEVTSEL%u=0x%llx",
				  this_cpu_index(), i, (unsigned long long)evtsel);
		wrmsr(pmu_evtsel_msr(&cpu->caps, i), 0);
	}
	cpu->held = (struct pmu_msr_state){ 0 }; /* controls 0, no count known */
}

void pmu_init(void)
{
	const struct pmu_info *info;

	pmu_detect();
	info = pmu_info();
	ktap_diag(0, "pmu: %s",
		  !pmu_usable()		 ? info->reason
		  : info->amd_perfmon_v2 ? "AMD PerfMonV2"
		  : info->amd		 ? "AMD PerfCtrExtCore, no PerfMonV2"
					 : "architectural perfmon");
	if (!pmu_usable())
		return;
	gp_mask = info->gp_width >= 64 ? UINT64_MAX : (1ull << info->gp_width) - 1;
	fixed_mask = info->fixed_width >= 64 ? UINT64_MAX : (1ull << info->fixed_width) - 1;
	pmu_init_cpu();
	timer_register_hook(pmu_tick);
}
