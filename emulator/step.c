/* SPDX-License-Identifier: MIT */
/* The emulated CPU's engine: each single-stepped instruction counts, branches, traces and samples.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/apic.h"
#include "arch/x86/debug-registers.h"
#include "arch/x86/msr-index.h"
#include "arch/x86/percpu.h"
#include "arch/x86/processor-flags.h"
#include "emulator/decode.h"
#include "emulator/internal.h"

/* Architectural events the model counts (SDM Vol. 3B "Pre-defined Architectural Performance
 * Events"); every other event counts nothing. */
#define EVENT_UNHALTED_CORE_CYCLES 0x3c /* umask 0 */
#define EVENT_INSTRUCTIONS_RETIRED 0xc0 /* umask 0 */
#define EVENT_BRANCHES_RETIRED 0xc4 /* umask 0 */
#define FIXED_INSTRUCTIONS 0
#define FIXED_CORE_CYCLES 1
#define FIXED_REFERENCE_CYCLES 2

#define PEBS_ENABLE_FIXED_SHIFT 32
#define OPCODE_SYSCALL 0x05 /* 0F 05 */

/* What one retired instruction is, for the counters. */
struct retirement {
	bool user;
	bool branch;
};

static bool gp_enabled(const struct emulator_registers *r, const struct emulator_profile *p,
		       unsigned int i)
{
	return (r->evtsel[i] & PERFEVTSEL_EN) &&
	       (p->perfmon_version < 2 || (r->global_ctrl & (1ull << i)));
}

/* Events the model counts for GP counter i, or 0 for one it does not count. */
static uint64_t gp_increment(const struct emulator_registers *r, unsigned int i,
			     const struct retirement *what)
{
	uint64_t evtsel = r->evtsel[i];
	unsigned int event = (unsigned int)(evtsel & PERFEVTSEL_EVENT_MASK);
	unsigned int umask =
		(unsigned int)((evtsel & PERFEVTSEL_UMASK_MASK) >> PERFEVTSEL_UMASK_SHIFT);

	if (!(evtsel & (what->user ? PERFEVTSEL_USR : PERFEVTSEL_OS)) || umask != 0)
		return 0;
	switch (event) {
	case EVENT_INSTRUCTIONS_RETIRED:
	case EVENT_UNHALTED_CORE_CYCLES: /* an approximation: one cycle per instruction */
		return 1;
	case EVENT_BRANCHES_RETIRED:
		return what->branch;
	default:
		return 0;
	}
}

static uint64_t fixed_field(const struct emulator_registers *r, unsigned int i)
{
	return (r->fixed_ctrl >> (i * FIXED_CTR_CTRL_FIELD_BITS)) &
	       ((1ull << FIXED_CTR_CTRL_FIELD_BITS) - 1);
}

static bool fixed_enabled(const struct emulator_registers *r, unsigned int i)
{
	return (r->global_ctrl & (PERF_GLOBAL_FIXED_CTR0 << i)) &&
	       (fixed_field(r, i) & (FIXED_CTR_CTRL_OS | FIXED_CTR_CTRL_USR));
}

static uint64_t fixed_increment(const struct emulator_registers *r, unsigned int i,
				const struct retirement *what)
{
	if (!(fixed_field(r, i) & (what->user ? FIXED_CTR_CTRL_USR : FIXED_CTR_CTRL_OS)))
		return 0;
	/* Fixed 3 (topdown slots) is not modelled. */
	return i == FIXED_INSTRUCTIONS || i == FIXED_CORE_CYCLES || i == FIXED_REFERENCE_CYCLES;
}

static bool frozen(const struct emulator_cpu *cpu)
{
	return emulator_profile()->perfmon_version >= 4 &&
	       (cpu->registers.global_status & PERF_GLOBAL_STATUS_COUNTERS_FROZEN);
}

static bool counts_modelled_event(const struct emulator_registers *r, unsigned int i, bool user)
{
	struct retirement branch = { user, true };

	return gp_increment(r, i, &branch) != 0;
}

void emulator_counters_changed(struct emulator_cpu *cpu, const struct emulator_profile *p)
{
	const struct emulator_registers *r = &cpu->registers;

	cpu->counting.gp = cpu->counting.fixed = 0;
	cpu->counting.observed = 0;
	for (unsigned int i = 0; i < p->gp_counters; i++) {
		if (!gp_enabled(r, p, i))
			continue;
		cpu->counting.gp |= 1u << i;
		if (counts_modelled_event(r, i, false))
			cpu->counting.observed |= OBSERVE_KERNEL;
		if (counts_modelled_event(r, i, true))
			cpu->counting.observed |= OBSERVE_USER;
	}
	for (unsigned int i = 0; i < p->fixed_counters && p->perfmon_version >= 2; i++) {
		if (!fixed_enabled(r, i))
			continue;
		cpu->counting.fixed |= 1u << i;
		if (fixed_field(r, i) & FIXED_CTR_CTRL_OS)
			cpu->counting.observed |= OBSERVE_KERNEL;
		if (fixed_field(r, i) & FIXED_CTR_CTRL_USR)
			cpu->counting.observed |= OBSERVE_USER;
	}
}

unsigned int emulator_observed(const struct emulator_cpu *cpu)
{
	const struct emulator_registers *r = &cpu->registers;
	unsigned int observed = 0;

	if (__atomic_load_n(&this_cpu()->overrun, __ATOMIC_RELAXED))
		return 0; /* past its time limit: let the runner end it (arch/x86/percpu.h) */
	if ((r->debugctl & (DEBUGCTL_TR | DEBUGCTL_BTS)) == (DEBUGCTL_TR | DEBUGCTL_BTS)) {
		bool cpl = emulator_profile()->ds_cpl;

		if (!(cpl && (r->debugctl & DEBUGCTL_BTS_OFF_OS)))
			observed |= OBSERVE_KERNEL;
		if (!(cpl && (r->debugctl & DEBUGCTL_BTS_OFF_USR)))
			observed |= OBSERVE_USER;
	}
	return frozen(cpu) ? observed : observed | cpu->counting.observed;
}

void emulator_pmi_request(struct emulator_cpu *cpu)
{
	struct emulator_registers *r = &cpu->registers;
	uint32_t lvt = apic_read_lvtpc();

	cpu->pmi_global_ctrl = r->global_ctrl;
	cpu->pmi_froze = false;
	if (r->debugctl & DEBUGCTL_FREEZE_PERFMON_ON_PMI) {
		cpu->pmi_froze = true;
		if (emulator_profile()->perfmon_version >= 4) {
			r->global_status |= PERF_GLOBAL_STATUS_COUNTERS_FROZEN;
		} else {
			r->global_ctrl = 0;
			emulator_counters_changed(cpu, emulator_profile());
		}
	}
	if (lvt & APIC_LVT_MASKED) {
		cpu->stats.pmis_masked++; /* the status bits stay set; no interrupt */
		return;
	}
	/* Intel's local APIC masks LVTPC when it delivers a PMI (SDM Vol. 3B §20.6.3.5.8). */
	apic_write_lvtpc(lvt | APIC_LVT_MASKED);
	if ((lvt & APIC_LVT_DELIVERY_MODE_MASK) == APIC_LVT_DELIVERY_NMI)
		apic_send_nmi(apic_id());
	else
		apic_send_self_ipi(lvt & APIC_LVT_VECTOR_MASK);
	cpu->pmi_outstanding = true;
	cpu->stats.pmis++;
}

/* A counter overflowed: arm PEBS, or set its status bit and interrupt as EVTSEL.INT asks. */
static void overflow(struct emulator_cpu *cpu, unsigned int status_bit, bool interrupt, bool *pmi)
{
	struct emulator_registers *r = &cpu->registers;
	uint64_t bit = 1ull << status_bit;

	r->global_status |= bit;
	if (r->pebs_enable & bit) {
		cpu->pebs_armed |= bit; /* the assist comes with the next event (rule 11) */
		return;
	}
	if (interrupt)
		*pmi = true;
}

/* Count one event on a counter of the given mask: true when it wrapped past its width. */
static bool increment(uint64_t *counter, uint64_t amount, uint64_t mask)
{
	uint64_t before = *counter;

	*counter = (before + amount) & mask;
	return *counter < before;
}

void emulator_retire(struct emulator_cpu *cpu, bool user, bool branch, uint64_t eventing_ip,
		     struct cpu_regs *regs)
{
	const struct emulator_profile *p = emulator_profile();
	struct emulator_registers *r = &cpu->registers;
	struct retirement what = { user, branch };
	uint64_t gp_mask = emulator_counter_mask(p, false);
	uint64_t fixed_mask = emulator_counter_mask(p, true);
	bool pmi = false;

	cpu->stats.instructions++;
	cpu->stats.branches += branch;
	if (frozen(cpu))
		return;
	for (uint32_t enabled = cpu->counting.gp; enabled; enabled &= enabled - 1) {
		unsigned int i = (unsigned int)__builtin_ctz(enabled);
		uint64_t amount = gp_increment(r, i, &what);

		if (!amount)
			continue;
		if (cpu->pebs_armed & (1ull << i)) {
			cpu->pebs_armed &= ~(1ull << i);
			if (emulator_pebs_assist(cpu, i, eventing_ip, regs))
				continue; /* reloaded from the reset slot */
		}
		if (increment(&r->counter[i], amount, gp_mask))
			overflow(cpu, i, r->evtsel[i] & PERFEVTSEL_INT, &pmi);
	}
	for (uint32_t enabled = cpu->counting.fixed; enabled; enabled &= enabled - 1) {
		unsigned int i = (unsigned int)__builtin_ctz(enabled), bit = 32 + i;
		uint64_t amount = fixed_increment(r, i, &what);

		if (!amount)
			continue;
		if (cpu->pebs_armed & (1ull << bit)) {
			cpu->pebs_armed &= ~(1ull << bit);
			if (emulator_pebs_assist(cpu, bit, eventing_ip, regs))
				continue;
		}
		if (increment(&r->fixed_counter[i], amount, fixed_mask))
			overflow(cpu, bit, fixed_field(r, i) & FIXED_CTR_CTRL_PMI, &pmi);
	}
	if (pmi)
		emulator_pmi_request(cpu);
}

static bool read_instruction(uint64_t rip, struct decoded_instruction *out)
{
	/* The bytes just executed, so mapped; the decoder reads no further than it needs. */
	return decode_instruction((const uint8_t *)rip, DECODE_MAX_LENGTH, out);
}

/*
 * The instruction at pending_rip completed and the CPU is at regs->rip now. Returns whether
 * control went elsewhere than the next instruction: a taken branch, or a transfer the model
 * could not see (what DEBUGCTL.BTF traps on: "branches, interrupts and exceptions", SDM).
 */
static bool complete_pending(struct emulator_cpu *cpu, struct cpu_regs *regs)
{
	struct decoded_instruction insn;
	bool taken;

	if (!read_instruction(cpu->pending_rip, &insn)) {
		cpu->stats.resyncs++;
		emulator_retire(cpu, cpu->pending_user, false, cpu->pending_rip, regs);
		return true;
	}
	/* A REP string instruction traps after each iteration and retires once, at the end. */
	if (insn.rep_string && regs->rip == cpu->pending_rip)
		return false;
	if (insn.branch == DECODE_NOT_BRANCH) {
		if (regs->rip != cpu->pending_rip + insn.length)
			cpu->stats.resyncs++; /* a step was lost (e.g. after STI on TCG) */
		emulator_retire(cpu, cpu->pending_user, false, cpu->pending_rip, regs);
		return regs->rip != cpu->pending_rip + insn.length;
	}
	taken = insn.branch != DECODE_JCC || regs->rip != cpu->pending_rip + insn.length;
	cpu->stats.taken_branches += taken;
	emulator_retire(cpu, cpu->pending_user, true, cpu->pending_rip, regs);
	/* A far transfer's other side ran unobserved: no record for it (docs/emulated-cpu.md). */
	if (insn.branch == DECODE_FAR) {
		cpu->stats.resyncs++;
		return true;
	}
	if (taken)
		emulator_bts_store(cpu, cpu->pending_rip, regs->rip, cpu->pending_user);
	return taken;
}

/*
 * A SYSCALL in an observed ring completes with TF clear (IA32_FMASK clears it, SDM Vol. 2B
 * SYSCALL), so no single step follows it and the return to ring 3 starts a new one: it retires
 * here, in ring 3 where it ran, before the system call can switch tasks (and counters). Not the
 * #UD gate of arch/x86/syscall.c: a UD2 faults, it does not retire.
 */
void emulator_system_call(struct cpu_regs *regs)
{
	struct emulator_cpu *cpu = emulator_this_cpu();
	struct decoded_instruction insn;

	if (!cpu->pending_valid || !cpu->pending_user ||
	    cpu->exceptions_seen != this_cpu()->stepped_exceptions ||
	    !read_instruction(cpu->pending_rip, &insn) || insn.branch != DECODE_FAR ||
	    !insn.two_byte || insn.opcode != OPCODE_SYSCALL ||
	    regs->rip != cpu->pending_rip + insn.length)
		return;
	cpu->pending_valid = false;
	emulator_retire(cpu, true, true, cpu->pending_rip, regs);
}

bool emulator_step(struct cpu_regs *regs)
{
	struct emulator_cpu *cpu = emulator_this_cpu();
	unsigned long dr6 = read_dr6();
	bool user = regs_from_user(regs);
	bool *mine = user ? &cpu->tf_user[switch_task_current()->index] : &cpu->tf_kernel;
	bool btf = cpu->registers.debugctl & DEBUGCTL_BTF;
	bool branched = true;
	unsigned int observed;

	if (!(dr6 & DR6_BS)) {
		/* A #DB the model did not cause: the CPU clears BTF when it delivers one (SDM). */
		cpu->registers.debugctl &= ~DEBUGCTL_BTF;
		return false;
	}
	observed = emulator_observed(cpu);
	if (observed || *mine || btf) {
		cpu->stats.steps++;
		cpu->stats.user_steps += user;
	}
	if (observed || btf) {
		if (cpu->pending_valid &&
		    cpu->exceptions_seen + 1 == this_cpu()->stepped_exceptions)
			branched = complete_pending(cpu, regs);
		else if (cpu->pending_valid) {
			/* An exception came between: one instruction ran after it, unseen. */
			cpu->stats.resyncs++;
			emulator_retire(cpu, cpu->pending_user, false, regs->rip, regs);
		}
		if (observed)
			emulator_ds_check_fields(cpu);
	}
	cpu->pending_valid = observed != 0 || btf;
	cpu->pending_user = user;
	cpu->pending_rip = regs->rip;
	cpu->exceptions_seen = this_cpu()->stepped_exceptions;
	if (!*mine) {
		/* Someone else's single step. With BTF it traps only after a branch, once. */
		if (!btf)
			return false;
		if (!branched) {
			write_dr6(dr6 & ~DR6_BS);
			return true;
		}
		cpu->registers.debugctl &= ~DEBUGCTL_BTF;
		return false;
	}
	if (!(observed & (user ? OBSERVE_USER : OBSERVE_KERNEL))) {
		regs->rflags &= ~RFLAGS_TF;
		*mine = false;
	}
	dr6 &= ~DR6_BS;
	write_dr6(dr6 | DR6_RESET);
	return (dr6 & ~DR6_RESET) == 0;
}
