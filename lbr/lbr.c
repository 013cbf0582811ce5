/* SPDX-License-Identifier: MIT */
/* LBR per task: requests, entries, and the switch with Linux's restore elision. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/cpu.h"
#include "arch/x86/debugctl.h"
#include "arch/x86/msr-index.h"
#include "arch/x86/msr.h"
#include "arch/x86/percpu.h"
#include "arch/x86/xsave.h"
#include "kernel/switch_hooks.h"
#include "lbr/amd.h"
#include "lbr/detect.h"
#include "lbr/lbr.h"
#include "lbr/state.h"

/*
 * The model is Linux arch/x86/events/intel/lbr.c: intel_pmu_lbr_sched_task(),
 * __intel_pmu_lbr_save() and __intel_pmu_lbr_restore(), intel_pmu_lbr_reset(),
 * __intel_pmu_lbr_enable() and intel_pmu_lbr_read_64(). SDM Vol. 3B "Last Branch, Interrupt,
 * and Exception Recording" for the registers.
 */

#define LBR_DEBUGCTL_BITS (DEBUGCTL_LBR | DEBUGCTL_FREEZE_LBRS_ON_PMI)
#define FROM_SIGNEXT_2MSB ((1ull << 60) | (1ull << 59)) /* Linux LBR_FROM_SIGNEXT_2MSB */
#define FROM_FLAGS_SHIFT_EIP_FLAGS 1 /* bit 63 is a flag: sign-extend from bit 62 */
#define FROM_FLAGS_SHIFT_EIP_FLAGS2 3 /* bits 63:61 are flags: sign-extend from bit 60 */

static const char *const error_names[LBR_ERROR_COUNT] = {
	[LBR_OK] = "ok",
	[LBR_ERROR_UNSUPPORTED] = "unsupported",
	[LBR_ERROR_CONFIG] = "invalid request",
	[LBR_ERROR_BUSY] = "busy",
	[LBR_ERROR_NOT_ATTACHED] = "not attached",
	[LBR_ERROR_NO_TARGET] = "no such task",
};

const char *lbr_error_name(enum lbr_error error)
{
	return (unsigned int)error < LBR_ERROR_COUNT ? error_names[error] : "unknown error";
}

static bool lazy = true;
static bool use_xsaves = true;

void lbr_set_xsaves(bool use)
{
	use_xsaves = use;
}

bool lbr_uses_xsaves(void)
{
	return use_xsaves && lbr_support()->xsaves;
}

void lbr_set_lazy(bool value)
{
	lazy = value;
}

bool lbr_is_lazy(void)
{
	return lazy;
}

/* lbr_support()->architectural and ->amd, kept here: lbr_read() stops recording in as few
 * branches as it can. */
static bool architectural, amd;

void lbr_init(void)
{
	lbr_detect();
	architectural = lbr_support()->architectural;
	amd = lbr_support()->amd;
}

/* Entry i's FROM and TO MSRs: a bank each, or AMD's interleaved pairs. */
static uint32_t from_msr(const struct lbr_support *s, unsigned int i)
{
	return s->amd ? lbr_amd_from_msr(i) : s->from_msr + i;
}

static uint32_t to_msr(const struct lbr_support *s, unsigned int i)
{
	return s->amd ? lbr_amd_to_msr(i) : s->to_msr + i;
}

struct lbr_stats lbr_stats(unsigned int cpu)
{
	return lbr_cpu_state(cpu)->stats;
}

static void stack_write(uint32_t msr, uint64_t value)
{
	wrmsr(msr, value);
	lbr_this_cpu()->stats.stack_writes++;
}

/*
 * FROM as WRMSR takes it: with format EIP_FLAGS2 and no TSX, bits 62:61 are sign extension on
 * a write but read 0 in the CPU's own records, so they are filled from bits 60:59 (Linux
 * lbr_from_signext_quirk_wr(); docs/hardware-facts.md).
 */
static uint64_t from_for_write(uint64_t from)
{
	if (lbr_support()->from_sign_extend)
		from |= (from & FROM_SIGNEXT_2MSB) << 2;
	return from;
}

/*
 * Architectural LBR's IA32_LBR_CTL for a request, without LBREN (load() adds it): a set bit
 * records (OS, USR, each kind), CALL_STACK as LBR_SELECT's.
 */
static uint64_t arch_ctl_for(const struct lbr_config *c)
{
	static const struct {
		uint32_t kind;
		uint64_t bit;
	} kinds[] = {
		{ LBR_BRANCH_JCC, ARCH_LBR_CTL_JCC },
		{ LBR_BRANCH_NEAR_REL_CALL, ARCH_LBR_CTL_NEAR_REL_CALL },
		{ LBR_BRANCH_NEAR_IND_CALL, ARCH_LBR_CTL_NEAR_IND_CALL },
		{ LBR_BRANCH_NEAR_RET, ARCH_LBR_CTL_NEAR_RET },
		{ LBR_BRANCH_NEAR_IND_JMP, ARCH_LBR_CTL_NEAR_IND_JMP },
		{ LBR_BRANCH_NEAR_REL_JMP, ARCH_LBR_CTL_NEAR_REL_JMP },
		{ LBR_BRANCH_FAR, ARCH_LBR_CTL_OTHER_BRANCH },
	};
	uint64_t ctl = (c->kernel ? ARCH_LBR_CTL_OS : 0) | (c->user ? ARCH_LBR_CTL_USR : 0);

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (c->branches & kinds[i].kind)
			ctl |= kinds[i].bit;
	return c->call_stack ? ctl | ARCH_LBR_CTL_CALL_STACK : ctl;
}

/* LBR_SELECT for a request: a set bit suppresses what it leaves out; EN_CALLSTACK is set = on. */
static uint64_t select_for(const struct lbr_config *c)
{
	if (lbr_support()->architectural)
		return arch_ctl_for(c);
	static const struct {
		uint32_t kind;
		uint64_t bit;
	} kinds[] = {
		{ LBR_BRANCH_JCC, LBR_SELECT_JCC },
		{ LBR_BRANCH_NEAR_REL_CALL, LBR_SELECT_NEAR_REL_CALL },
		{ LBR_BRANCH_NEAR_IND_CALL, LBR_SELECT_NEAR_IND_CALL },
		{ LBR_BRANCH_NEAR_RET, LBR_SELECT_NEAR_RET },
		{ LBR_BRANCH_NEAR_IND_JMP, LBR_SELECT_NEAR_IND_JMP },
		{ LBR_BRANCH_NEAR_REL_JMP, LBR_SELECT_NEAR_REL_JMP },
		{ LBR_BRANCH_FAR, LBR_SELECT_FAR_BRANCH },
	};
	uint64_t select = 0;

	if (!c->kernel)
		select |= LBR_SELECT_CPL_EQ_0;
	if (!c->user)
		select |= LBR_SELECT_CPL_NEQ_0;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!(c->branches & kinds[i].kind))
			select |= kinds[i].bit;
	if (c->call_stack)
		select |= LBR_SELECT_EN_CALLSTACK;
	return select;
}

/* The stack, newest first, up to the first FROM of 0 (Linux __intel_pmu_lbr_save()). */
static void stack_read(struct lbr_stack *stack)
{
	const struct lbr_support *s = lbr_support();
	uint64_t mask = s->depth - 1;
	unsigned int i;

	/* Architectural LBR and AMD's have no TOS: entry 0 is the newest. */
	bool newest_first = s->architectural || s->amd;

	stack->tos = newest_first ? 0 : rdmsr(MSR_LBR_TOS) & mask;
	for (i = 0; i < s->depth; i++) {
		unsigned int index = newest_first ? i : (unsigned int)((stack->tos - i) & mask);
		uint64_t from = rdmsr(from_msr(s, index));

		if (!from)
			break;
		stack->from[i] = from;
		stack->to[i] = rdmsr(to_msr(s, index));
		stack->info[i] = s->info_msr ? rdmsr(s->info_msr + index) : 0;
	}
	stack->valid = i;
}

/*
 * Every entry zeroed (Linux intel_pmu_lbr_reset_64(); with architectural LBR one write of
 * IA32_LBR_DEPTH, intel_pmu_arch_lbr_reset()); this CPU then holds nobody's stack.
 */
static void stack_wipe(struct lbr_cpu *cpu)
{
	const struct lbr_support *s = lbr_support();

	if (s->architectural)
		stack_write(MSR_ARCH_LBR_DEPTH, s->depth);
	for (unsigned int i = 0; !s->architectural && i < s->depth; i++) {
		stack_write(from_msr(s, i), 0);
		stack_write(to_msr(s, i), 0);
		if (s->info_msr)
			stack_write(s->info_msr + i, 0);
	}
	cpu->stats.wipes++;
	cpu->last_task = 0;
	cpu->last_log_id = 0;
}

/* Linux __intel_pmu_lbr_restore()'s loop: the saved entries at their places, zeros beyond, TOS. */
static void stack_restore(const struct lbr_stack *stack)
{
	const struct lbr_support *s = lbr_support();
	uint64_t mask = s->depth - 1;

	/*
	 * Architectural LBR (intel_pmu_arch_lbr_restore()): a stack that was not full first zeroes
	 * the rest with one DEPTH write, then only its entries are written; no TOS.
	 */
	if (s->architectural) {
		if (stack->valid < s->depth)
			stack_write(MSR_ARCH_LBR_DEPTH, s->depth);
		for (unsigned int i = 0; i < stack->valid; i++) {
			stack_write(s->from_msr + i, stack->from[i]);
			stack_write(s->to_msr + i, stack->to[i]);
			stack_write(s->info_msr + i, stack->info[i]);
		}
		return;
	}
	for (unsigned int i = 0; i < s->depth; i++) {
		unsigned int index = (unsigned int)((stack->tos - i) & mask);
		bool valid = i < stack->valid;

		stack_write(s->from_msr + index, valid ? from_for_write(stack->from[i]) : 0);
		stack_write(s->to_msr + index, valid ? stack->to[i] : 0);
		if (s->info_msr)
			stack_write(s->info_msr + index, valid ? stack->info[i] : 0);
	}
	stack_write(MSR_LBR_TOS, stack->tos);
}

/* IA32_XSS bit 15 on this CPU, once, before its first XSAVES (detection left it as found). */
static void xss_enable(struct lbr_cpu *cpu)
{
	if (cpu->xss_set)
		return;
	wrmsr(MSR_IA32_XSS, rdmsr(MSR_IA32_XSS) | XSS_ARCH_LBR);
	cpu->xss_set = true;
	cpu->stats.xss_writes++;
}

/*
 * A call-stack task's save (Linux __intel_pmu_lbr_save()): one XSAVES of component 15 into the
 * task's area (intel_pmu_arch_lbr_xsaves()), whose entries then fill saved as the MSR loop
 * would, up to the first FROM of 0; or the MSR loop. An XSAVES that faults falls back to it.
 */
static void stack_save(struct lbr_cpu *cpu, unsigned int task, struct lbr_task *t)
{
	struct lbr_xsave_area *area = lbr_task_xsave(task);
	const struct xsave_arch_lbr *x =
		(const struct xsave_arch_lbr *)(area->bytes + XSAVE_ARCH_LBR_OFFSET);
	unsigned int i;

	t->saved_by_xsaves = false;
	if (lbr_uses_xsaves()) {
		xss_enable(cpu);
		t->saved_by_xsaves = xsaves_safe(area, XSS_ARCH_LBR) == 0;
	}
	if (!t->saved_by_xsaves) {
		stack_read(&t->saved);
		return;
	}
	cpu->stats.xsaves++;
	t->saved.tos = 0;
	for (i = 0; i < x->lbr_depth && i < LBR_LEGACY_MAX_DEPTH && x->entries[i].from; i++) {
		t->saved.from[i] = x->entries[i].from;
		t->saved.to[i] = x->entries[i].to;
		t->saved.info[i] = x->entries[i].info;
	}
	t->saved.valid = i;
}

/*
 * A call-stack task's restore: one XRSTORS of the area its save wrote
 * (intel_pmu_arch_lbr_xrstors()), which loads LBR_CTL (as the save left it: LBREN clear, the
 * task's filters), DEPTH and every entry; or the MSR loop.
 */
static void stack_load(struct lbr_cpu *cpu, unsigned int task, const struct lbr_task *t)
{
	const struct lbr_xsave_area *area = lbr_task_xsave(task);
	const struct xsave_arch_lbr *x =
		(const struct xsave_arch_lbr *)(area->bytes + XSAVE_ARCH_LBR_OFFSET);

	if (t->saved_by_xsaves && lbr_support()->xsaves) {
		xss_enable(cpu);
		if (xrstors_safe(area, XSS_ARCH_LBR) == 0) {
			cpu->select = x->lbr_ctl;
			cpu->select_known = true;
			cpu->stats.xrstors++;
			return;
		}
	}
	stack_restore(&t->saved);
	cpu->stats.restored_entries += t->saved.valid;
}

static inline __attribute__((always_inline)) void debugctl_set(struct lbr_cpu *cpu, uint64_t bits)
{
	if ((debugctl_shadow() & LBR_DEBUGCTL_BITS) == bits)
		return;
	debugctl_update(LBR_DEBUGCTL_BITS, bits);
	cpu->stats.debugctl_writes++;
}

/*
 * Recording on for task t: LBR_SELECT when it differs from what this CPU holds, then
 * DEBUGCTL.LBR, with FREEZE_LBRS_ON_PMI except in call-stack mode ("LBR callstack does not
 * work well with FREEZE_LBRS_ON_PMI", Linux __intel_pmu_lbr_enable()).
 */
static void load_request(struct lbr_cpu *cpu, unsigned int loaded, uint64_t select, bool call_stack)
{
	const struct lbr_support *s = lbr_support();
	uint64_t freeze = s->freeze && !call_stack ? DEBUGCTL_FREEZE_LBRS_ON_PMI : 0;

	/*
	 * Architectural LBR: LBR_CTL holds the filters and LBREN. A write that only turns LBREN on
	 * counts as turning recording on (debugctl_writes), one that changes the filters as a
	 * select write. DEBUGCTL keeps the freeze bit only.
	 */
	if (s->architectural) {
		uint64_t ctl = select | ARCH_LBR_CTL_LBREN;

		debugctl_set(cpu, freeze);
		if (!cpu->select_known || cpu->select != ctl) {
			wrmsr(MSR_ARCH_LBR_CTL, ctl);
			if (cpu->select_known && (cpu->select & ~ARCH_LBR_CTL_LBREN) == select)
				cpu->stats.debugctl_writes++;
			else
				cpu->stats.select_writes++;
			cpu->select = ctl;
			cpu->select_known = true;
		}
		cpu->loaded = loaded;
		return;
	}
	/*
	 * AMD LbrExtV2 (Linux amd_pmu_lbr_enable_all()): LBR_SELECT, DEBUGCTL's freeze bit with
	 * LbrAndPmcFreeze, then DBG_EXTN_CFG.LBRV2EN, which turns recording on.
	 */
	if (s->amd) {
		if (!cpu->select_known || cpu->select != select) {
			wrmsr(MSR_AMD64_LBR_SELECT, select);
			cpu->select = select;
			cpu->select_known = true;
			cpu->stats.select_writes++;
		}
		debugctl_set(cpu, freeze);
		if (!cpu->lbrv2en) {
			wrmsr(MSR_AMD_DBG_EXTN_CFG, DBG_EXTN_CFG_LBRV2EN);
			cpu->lbrv2en = true;
			cpu->stats.debugctl_writes++;
		}
		cpu->loaded = loaded;
		return;
	}
	if (s->select && (!cpu->select_known || cpu->select != select)) {
		wrmsr(MSR_LBR_SELECT, select);
		cpu->select = select;
		cpu->select_known = true;
		cpu->stats.select_writes++;
	}
	debugctl_set(cpu, DEBUGCTL_LBR | freeze);
	cpu->loaded = loaded;
}

/* Recording on for task t's own request; the stack is then the task's, not the CPU's. */
static void load(struct lbr_cpu *cpu, unsigned int task, const struct lbr_task *t)
{
	cpu->holds_cpu_stack = false;
	load_request(cpu, task + 1, t->select, t->config.call_stack);
}

/* Recording on for the CPU's request: wiped first unless the stack holds its entries only. */
static void load_cpu_request(struct lbr_cpu *cpu)
{
	if (!cpu->holds_cpu_stack)
		stack_wipe(cpu);
	cpu->holds_cpu_stack = true;
	load_request(cpu, LBR_LOADED_CPU, cpu->request_select, false);
}

/*
 * Recording off: DEBUGCTL.LBR, or LBR_CTL.LBREN (its filters kept), or AMD's
 * DBG_EXTN_CFG.LBRV2EN (Linux __amd_pmu_lbr_disable()), and the freeze bit.
 */
static inline __attribute__((always_inline)) void recording_off(struct lbr_cpu *cpu)
{
	if (__builtin_expect(amd, 0) && cpu->lbrv2en) {
		wrmsr(MSR_AMD_DBG_EXTN_CFG, 0);
		cpu->lbrv2en = false;
		cpu->stats.debugctl_writes++;
	}
	/* Laid out for the legacy case: no taken branch before DEBUGCTL's write (lbr_read()). */
	if (__builtin_expect(architectural, 0) && cpu->select_known &&
	    (cpu->select & ARCH_LBR_CTL_LBREN)) {
		cpu->select &= ~ARCH_LBR_CTL_LBREN;
		wrmsr(MSR_ARCH_LBR_CTL, cpu->select);
		cpu->stats.debugctl_writes++;
	}
	debugctl_set(cpu, 0);
}

static void unload(struct lbr_cpu *cpu)
{
	recording_off(cpu);
	cpu->loaded = 0;
}

/*
 * Whether this CPU still holds task's stack as its switch-out left it, and the restore may be
 * skipped (never when eager, lbr_set_lazy()) (Linux
 * __intel_pmu_lbr_restore(): last_task_ctx and log_id unchanged, and the FROM at the saved TOS
 * not zeroed by a deep C-state, lbr_is_reset_in_cstate()).
 */
static bool still_held(const struct lbr_cpu *cpu, unsigned int task, const struct lbr_task *t)
{
	if (!lazy || cpu->last_task != task + 1 || cpu->last_log_id != t->log_id)
		return false;
	/* Architectural: entry 0 (only where CPUID.1CH:EAX[30] says deep C-states reset it). */
	if (lbr_support()->architectural && !lbr_support()->deep_c_reset)
		return true;
	return t->saved.valid == 0 || rdmsr(lbr_support()->from_msr + t->saved.tos) != 0;
}

/*
 * Switch-out: recording stops before the rest of the switch is recorded; a call-stack task's
 * stack is saved (reads only) and this CPU remembers whose it holds.
 */
void lbr_switch_out(const struct switch_task *prev, const struct switch_task *next)
{
	struct lbr_cpu *cpu = lbr_this_cpu();
	struct lbr_task *t = lbr_task_state(prev->index);

	(void)next;
	if (!lbr_support()->present)
		return;
	if (cpu->loaded == LBR_LOADED_CPU) { /* the CPU's request: recording off, nothing saved */
		lbr_lock_irqs_off();
		unload(cpu);
		lbr_unlock_irqs_off();
		return;
	}
	if (cpu->loaded != prev->index + 1)
		return;
	lbr_lock_irqs_off();
	unload(cpu);
	if (t->attached && t->config.call_stack) {
		stack_save(cpu, prev->index, t);
		t->stack_saved = true;
		cpu->last_task = prev->index + 1;
		cpu->last_log_id = ++t->log_id;
		cpu->stats.saves++;
	}
	lbr_unlock_irqs_off();
}

/*
 * Switch-in (Linux intel_pmu_lbr_sched_task()): a task without a request of its own records
 * with the CPU's request if it has one (wiped first only if a task's request used the stack
 * since), else gets nothing (no wipe: recording is off, and the next recorder wipes or
 * restores); a call-stack task gets its stack back unless this CPU still holds it; any other
 * recorder gets a wiped stack.
 */
void lbr_switch_in(const struct switch_task *prev, const struct switch_task *next)
{
	struct lbr_cpu *cpu = lbr_this_cpu();
	struct lbr_task *t = lbr_task_state(next->index);

	(void)prev;
	if (!lbr_support()->present)
		return;
	lbr_lock_irqs_off();
	if (!t->attached && cpu->request) {
		load_cpu_request(cpu);
	} else if (!t->attached) {
		cpu->stats.wipes_skipped++;
	} else if (t->config.call_stack && t->stack_saved) {
		if (still_held(cpu, next->index, t)) {
			cpu->stats.restores_elided++;
		} else {
			stack_load(cpu, next->index, t);
			cpu->stats.restores++;
		}
		load(cpu, next->index, t);
	} else {
		stack_wipe(cpu);
		load(cpu, next->index, t);
	}
	lbr_unlock_irqs_off();
}

void lbr_task_exit(const struct switch_task *task)
{
	unsigned long flags = lbr_lock_irqsave();

	*lbr_task_state(task->index) = (struct lbr_task){ 0 };
	lbr_unlock_irqrestore(flags);
}

/* The caller is task, on this CPU. */
static bool is_current(unsigned int task)
{
	return switch_task_current()->index == task;
}

/* The config a request may take. */
static enum lbr_error check_config(const struct lbr_config *config)
{
	const struct lbr_support *s = lbr_support();

	if (!s->present)
		return LBR_ERROR_UNSUPPORTED;
	if (!config || (!config->kernel && !config->user) || !config->branches ||
	    (config->branches & ~LBR_BRANCH_ALL) ||
	    (config->call_stack &&
	     (config->branches != LBR_BRANCH_CALLS_AND_RETURNS || config->kernel)))
		return LBR_ERROR_CONFIG;
	if (!s->select && (config->branches != LBR_BRANCH_ALL || !config->kernel || !config->user))
		return LBR_ERROR_UNSUPPORTED; /* filters need LBR_SELECT (Nehalem and later) */
	if (config->call_stack && !s->call_stack)
		return LBR_ERROR_UNSUPPORTED;
	return LBR_OK;
}

enum lbr_error lbr_attach(unsigned int task, const struct lbr_config *config)
{
	enum lbr_error error = check_config(config);
	struct lbr_task *t;
	unsigned long flags;

	if (error != LBR_OK)
		return error;
	if (task >= SWITCH_TASKS_MAX)
		return LBR_ERROR_NO_TARGET;
	flags = lbr_lock_irqsave();
	t = lbr_task_state(task);
	if (!switch_task_live(task)) {
		error = LBR_ERROR_NO_TARGET;
	} else if (t->attached) {
		error = LBR_ERROR_BUSY;
	} else if (!is_current(task) && switch_task_running_cpu(task) >= 0) {
		error = LBR_ERROR_BUSY; /* running on another CPU: its switch-in is past */
	} else {
		*t = (struct lbr_task){ .attached = true, .config = *config };
		t->select = select_for(config);
		if (is_current(task)) {
			stack_wipe(lbr_this_cpu());
			load(lbr_this_cpu(), task, t);
		}
	}
	lbr_unlock_irqrestore(flags);
	return error;
}

enum lbr_error lbr_detach(unsigned int task)
{
	struct lbr_task *t;
	unsigned long flags;
	enum lbr_error error = LBR_OK;

	if (task >= SWITCH_TASKS_MAX)
		return LBR_ERROR_NO_TARGET;
	flags = lbr_lock_irqsave();
	t = lbr_task_state(task);
	if (!t->attached) {
		error = LBR_ERROR_NOT_ATTACHED;
	} else if (!is_current(task) && switch_task_running_cpu(task) >= 0) {
		error = LBR_ERROR_BUSY;
	} else {
		if (lbr_this_cpu()->loaded == task + 1) {
			unload(lbr_this_cpu());
			if (lbr_this_cpu()->request)
				load_cpu_request(lbr_this_cpu());
		}
		for (unsigned int cpu = 0; cpu < percpu_count(); cpu++)
			if (lbr_cpu_state(cpu)->last_task == task + 1)
				lbr_cpu_state(cpu)->last_task = 0;
		*t = (struct lbr_task){ 0 };
	}
	lbr_unlock_irqrestore(flags);
	return error;
}

/* Linux intel_pmu_lbr_read_64(): the address sign-extended past the format's flag bits. */
static struct lbr_entry decode(uint64_t from, uint64_t to, uint64_t info)
{
	struct lbr_entry entry = { .from = from, .to = to };

	if (lbr_support()->amd)
		return lbr_amd_decode(from, to);
	switch (lbr_support()->format) {
	case PERF_CAP_LBR_FORMAT_EIP_FLAGS:
		entry.mispredicted = from & LBR_FROM_MISPREDICT;
		entry.from = (uint64_t)((int64_t)(from << FROM_FLAGS_SHIFT_EIP_FLAGS) >>
					FROM_FLAGS_SHIFT_EIP_FLAGS);
		break;
	case PERF_CAP_LBR_FORMAT_EIP_FLAGS2:
		entry.mispredicted = from & LBR_FROM_MISPREDICT;
		entry.from = (uint64_t)((int64_t)(from << FROM_FLAGS_SHIFT_EIP_FLAGS2) >>
					FROM_FLAGS_SHIFT_EIP_FLAGS2);
		break;
	case PERF_CAP_LBR_FORMAT_INFO:
	case PERF_CAP_LBR_FORMAT_ARCH: /* LBR_INFO_x: the same mispredict bit and cycle count */
		entry.mispredicted = info & LBR_INFO_MISPREDICT;
		entry.cycles = (uint16_t)(info & LBR_INFO_CYCLES);
		break;
	default:
		break;
	}
	return entry;
}

static void decode_stack(const struct lbr_stack *stack, struct lbr_entry *entries, unsigned int max,
			 unsigned int *count)
{
	unsigned int n = stack->valid < max ? stack->valid : max;

	for (unsigned int i = 0; i < n; i++)
		entries[i] = decode(stack->from[i], stack->to[i], stack->info[i]);
	*count = n;
}

/*
 * Recording stops first thing, before the lock and the checks, so that the read's own branches
 * take as few entries as they can (a call, this CPU's state, DEBUGCTL's update): Linux reads
 * in the PMI with LBR frozen or off.
 */
enum lbr_error lbr_read(unsigned int task, struct lbr_entry *entries, unsigned int max,
			unsigned int *count)
{
	unsigned long flags = local_irq_save();
	struct lbr_cpu *cpu = lbr_this_cpu();
	bool live = task < SWITCH_TASKS_MAX && cpu->loaded == task + 1;
	enum lbr_error error = LBR_OK;
	struct lbr_stack stack;
	struct lbr_task *t;

	if (live)
		recording_off(cpu);
	*count = 0;
	if (task >= SWITCH_TASKS_MAX) {
		local_irq_restore(flags);
		return LBR_ERROR_NO_TARGET;
	}
	lbr_lock_irqs_off();
	t = lbr_task_state(task);
	if (!t->attached) {
		error = LBR_ERROR_NOT_ATTACHED;
	} else if (live) {
		stack_read(&stack);
		decode_stack(&stack, entries, max, count);
	} else if (t->stack_saved) {
		decode_stack(&t->saved, entries, max, count);
	}
	if (live)
		load(cpu, task, t);
	lbr_unlock_irqs_off();
	local_irq_restore(flags);
	return error;
}

enum lbr_error lbr_read_pmi(unsigned int task, struct lbr_entry *entries, unsigned int max,
			    unsigned int *count)
{
	struct lbr_task *t;
	unsigned long flags;

	*count = 0;
	if (task >= SWITCH_TASKS_MAX)
		return LBR_ERROR_NO_TARGET;
	flags = lbr_lock_irqsave();
	t = lbr_task_state(task);
	if (!t->attached) {
		lbr_unlock_irqrestore(flags);
		return LBR_ERROR_NOT_ATTACHED;
	}
	if (t->pmi_valid)
		decode_stack(&t->pmi, entries, max, count);
	lbr_unlock_irqrestore(flags);
	return LBR_OK;
}

/*
 * In the PMI: the stack FREEZE_LBRS_ON_PMI froze is the loaded task's sample (Linux reads it in
 * handle_pmi_common() before the acknowledgement), then it thaws: from perfmon v4 by
 * acknowledging GLOBAL_STATUS.LBR_FRZ, before by setting DEBUGCTL.LBR again, which the CPU
 * cleared (__intel_pmu_lbr_enable(pmi)).
 */
void lbr_pmi(uint64_t status)
{
	const struct lbr_support *s = lbr_support();
	struct lbr_cpu *cpu = lbr_this_cpu();
	struct lbr_task *t;
	bool frozen;

	if (!s->present || !s->freeze)
		return;
	frozen = s->freeze_by_status ? (status & PERF_GLOBAL_STATUS_LBRS_FROZEN) != 0
				     : cpu->loaded && !(rdmsr(MSR_IA32_DEBUGCTL) & DEBUGCTL_LBR);
	if (!frozen)
		return;
	lbr_lock_irqs_off();
	t = cpu->loaded && cpu->loaded != LBR_LOADED_CPU ? lbr_task_state(cpu->loaded - 1) : NULL;
	if (t && t->attached && !t->config.call_stack) {
		stack_read(&t->pmi);
		t->pmi_valid = true;
		cpu->stats.pmis++;
	}
	if (s->amd) /* amd_pmu_v2_handle_irq(): acknowledged in GlobalStatusClr */
		wrmsr(MSR_AMD64_PERF_CNTR_GLOBAL_STATUS_CLR, PERF_GLOBAL_STATUS_LBRS_FROZEN);
	else if (s->freeze_by_status)
		wrmsr(MSR_IA32_PERF_GLOBAL_OVF_CTRL, PERF_GLOBAL_STATUS_LBRS_FROZEN);
	else
		debugctl_rewrite();
	lbr_unlock_irqs_off();
}

/* The caller's task has no request of its own (it runs on this CPU). */
static bool current_uses_cpu_request(void)
{
	return !lbr_task_state(switch_task_current()->index)->attached;
}

enum lbr_error lbr_attach_cpu(unsigned int cpu, const struct lbr_config *config)
{
	enum lbr_error error = check_config(config);
	struct lbr_cpu *c;
	unsigned long flags;

	if (error != LBR_OK)
		return error;
	if (config->call_stack)
		return LBR_ERROR_CONFIG;
	if (cpu >= percpu_count())
		return LBR_ERROR_NO_TARGET;
	flags = lbr_lock_irqsave();
	c = lbr_cpu_state(cpu);
	if (c->request) {
		error = LBR_ERROR_BUSY;
	} else {
		c->config = *config;
		c->request_select = select_for(config);
		c->request = true;
		if (cpu == this_cpu_index() && current_uses_cpu_request())
			load_cpu_request(c);
	}
	lbr_unlock_irqrestore(flags);
	return error;
}

enum lbr_error lbr_detach_cpu(unsigned int cpu)
{
	enum lbr_error error = LBR_OK;
	struct lbr_cpu *c;
	unsigned long flags;

	if (cpu >= percpu_count())
		return LBR_ERROR_NO_TARGET;
	flags = lbr_lock_irqsave();
	c = lbr_cpu_state(cpu);
	if (!c->request) {
		error = LBR_ERROR_NOT_ATTACHED;
	} else {
		c->request = false;
		if (cpu == this_cpu_index() && c->loaded == LBR_LOADED_CPU)
			unload(c);
	}
	lbr_unlock_irqrestore(flags);
	return error;
}

/* Recording stops first thing, as in lbr_read(). */
enum lbr_error lbr_read_cpu(unsigned int cpu, struct lbr_entry *entries, unsigned int max,
			    unsigned int *count)
{
	unsigned long flags = local_irq_save();
	struct lbr_cpu *c = lbr_this_cpu();
	bool live = cpu == this_cpu_index() && c->loaded == LBR_LOADED_CPU;
	enum lbr_error error = LBR_OK;
	struct lbr_stack stack;

	if (live)
		recording_off(c);
	*count = 0;
	if (cpu >= percpu_count()) {
		local_irq_restore(flags);
		return LBR_ERROR_NO_TARGET;
	}
	lbr_lock_irqs_off();
	if (cpu != this_cpu_index()) {
		error = LBR_ERROR_BUSY;
	} else if (!c->request) {
		error = LBR_ERROR_NOT_ATTACHED;
	} else if (live) {
		stack_read(&stack);
		decode_stack(&stack, entries, max, count);
		load_request(c, LBR_LOADED_CPU, c->request_select, false);
	}
	lbr_unlock_irqs_off();
	local_irq_restore(flags);
	return error;
}
