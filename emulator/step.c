/* SPDX-License-Identifier: MIT */
/* The emulated CPU's engine: each single-stepped instruction counts, branches, traces and samples.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/apic.h"
#include "arch/x86/debug-registers.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/msr-index.h"
#include "arch/x86/msr.h"
#include "arch/x86/percpu.h"
#include "arch/x86/processor-flags.h"
#include "arch/x86/traps.h"
#include "emulator/decode.h"
#include "emulator/internal.h"

/* Architectural events the model counts (SDM Vol. 3B "Pre-defined Architectural Performance
 * Events"); every other event counts nothing. */
#define EVENT_UNHALTED_CORE_CYCLES 0x3c /* umask 0 */
#define EVENT_INSTRUCTIONS_RETIRED 0xc0 /* umask 0 */
#define EVENT_BRANCHES_RETIRED 0xc4 /* umask 0 */
#define UMASK_REFERENCE_CYCLES 0x01 /* event 0x3c: "UnHalted Reference Cycles", one a cycle too */
#define FIXED_INSTRUCTIONS 0
#define FIXED_CORE_CYCLES 1
#define FIXED_REFERENCE_CYCLES 2

#define OPCODE_SYSCALL 0x05 /* 0F 05 */
/* Software interrupts (SDM Vol. 2A INT n/INTO/INT3/INT1): CC is vector 3, CE vector 4, CD ib. */
#define OPCODE_INT3 0xcc
#define OPCODE_INT_N 0xcd
#define OPCODE_INTO 0xce

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

/*
 * Whether the model counts the event of select evtsel: one of the three above with umask 0, or
 * reference cycles (0x3c, umask 1), which CPUID.0AH:EBX enumerates as available and fixed
 * counter 2 counts already.
 */
static bool event_modelled(uint64_t evtsel)
{
	unsigned int event = (unsigned int)(evtsel & PERFEVTSEL_EVENT_MASK);
	uint64_t umask = (evtsel & PERFEVTSEL_UMASK_MASK) >> PERFEVTSEL_UMASK_SHIFT;

	if (event == EVENT_UNHALTED_CORE_CYCLES && umask == UMASK_REFERENCE_CYCLES)
		return true;
	return umask == 0 &&
	       (event == EVENT_INSTRUCTIONS_RETIRED || event == EVENT_UNHALTED_CORE_CYCLES ||
		event == EVENT_BRANCHES_RETIRED);
}

/*
 * What GP counter i adds for one retired instruction, the model's cycle (one cycle per
 * instruction, an approximation). The event's count in the cycle goes through the select's
 * counter mask, invert and edge flags as the SDM defines them ("IA32_PERFEVTSELx"): with a CMask,
 * 1 when the count is at least CMask (less than it with INV; INV is ignored with a CMask of 0);
 * with EDGE, 1 only where that condition (or, without a CMask, a non-zero count) was false in
 * the counter's previous cycle. The edge state is cpu's, cleared when the select is written.
 */
static uint64_t gp_increment(struct emulator_cpu *cpu, unsigned int i,
			     const struct retirement *what)
{
	uint64_t evtsel = cpu->registers.evtsel[i];
	uint64_t cmask = (evtsel & PERFEVTSEL_CMASK_MASK) >> PERFEVTSEL_CMASK_SHIFT;
	uint64_t amount;
	bool asserted, before;

	if (!(evtsel & (what->user ? PERFEVTSEL_USR : PERFEVTSEL_OS)) || !event_modelled(evtsel))
		return 0;
	switch (evtsel & PERFEVTSEL_EVENT_MASK) {
	case EVENT_BRANCHES_RETIRED:
		amount = what->branch;
		break;
	default: /* instructions, and core cycles at one a cycle */
		amount = 1;
	}
	if (!cmask && !(evtsel & PERFEVTSEL_EDGE))
		return amount;
	asserted = cmask ? (amount >= cmask) != !!(evtsel & PERFEVTSEL_INV) : amount != 0;
	if (!(evtsel & PERFEVTSEL_EDGE))
		return asserted;
	before = cpu->edge_asserted & (1u << i);
	cpu->edge_asserted =
		asserted ? cpu->edge_asserted | (1u << i) : cpu->edge_asserted & ~(1u << i);
	return asserted && !before;
}

static uint64_t ctrl_field(uint64_t fixed_ctrl, unsigned int i)
{
	return (fixed_ctrl >> (i * FIXED_CTR_CTRL_FIELD_BITS)) &
	       ((1ull << FIXED_CTR_CTRL_FIELD_BITS) - 1);
}

static uint64_t fixed_field(const struct emulator_registers *r, unsigned int i)
{
	return ctrl_field(r->fixed_ctrl, i);
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
	return event_modelled(r->evtsel[i]) &&
	       (r->evtsel[i] & (user ? PERFEVTSEL_USR : PERFEVTSEL_OS));
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
	/* Rule 24: a recording LBR stack observes the rings its CPL filter lets through. */
	if (emulator_lbr_may_record(r->debugctl, &r->lbr)) {
		if (emulator_lbr_observes(r, emulator_profile(), false))
			observed |= OBSERVE_KERNEL;
		if (emulator_lbr_observes(r, emulator_profile(), true))
			observed |= OBSERVE_USER;
	}
	/* Rule 27: AMD's LbrExtV2 stack, by LBR_SELECT's CPL bits. */
	if (emulator_amd_lbr_may_record(&r->amd_lbr)) {
		if (emulator_amd_lbr_observes(r, emulator_profile(), false))
			observed |= OBSERVE_KERNEL;
		if (emulator_amd_lbr_observes(r, emulator_profile(), true))
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
	emulator_lbr_pmi(r, emulator_profile());
	emulator_amd_lbr_pmi(r, emulator_profile());
	if (r->debugctl & DEBUGCTL_FREEZE_PERFMON_ON_PMI) {
		cpu->pmi_froze = true;
		if (emulator_profile()->perfmon_version >= 4) {
			emulator_status_change(r, emulator_profile(),
					       PERF_GLOBAL_STATUS_COUNTERS_FROZEN, 0);
		} else {
			r->global_ctrl = 0;
			emulator_counters_changed(cpu, emulator_profile());
		}
	}
	if (lvt & APIC_LVT_MASKED) {
		cpu->stats.pmis_masked++; /* the status bits stay set; no interrupt */
		return;
	}
	/*
	 * Intel's local APIC masks LVTPC when it delivers a PMI (SDM Vol. 3B §20.6.3.5.8); AMD's
	 * does not (rule 26: KVM's Intel-style masking once broke AMD guests).
	 */
	if (!emulator_profile()->amd)
		apic_write_lvtpc(lvt | APIC_LVT_MASKED);
	if ((lvt & APIC_LVT_DELIVERY_MODE_MASK) == APIC_LVT_DELIVERY_NMI)
		apic_send_nmi(apic_id());
	else
		apic_send_self_ipi(lvt & APIC_LVT_VECTOR_MASK);
	cpu->pmi_outstanding = true;
	cpu->stats.pmis++;
}

/*
 * A counter overflowed: its status bit is set, a PEBS-enabled counter arms PEBS (the assist
 * comes with the next event, rule 11), and a counter with EVTSEL.INT (or the fixed counter's PMI
 * bit) requests a PMI, PEBS-enabled or not (rule 15: SDM "Performance Counter Prioritization",
 * the same overflow that arms PEBS raises the PMI when INT is set).
 */
static void overflow(struct emulator_cpu *cpu, unsigned int status_bit, bool interrupt, bool *pmi)
{
	struct emulator_registers *r = &cpu->registers;
	uint64_t bit = 1ull << status_bit;

	emulator_status_change(r, emulator_profile(), bit, 0);
	if (r->pebs_enable & bit)
		cpu->pebs_armed |= bit;
	if (interrupt)
		*pmi = true;
}

/* The counters that are enabled to count (PEBS_ENABLE and GLOBAL_CTRL numbering). */
static uint64_t counters_enabled(const struct emulator_registers *r,
				 const struct emulator_profile *p)
{
	uint64_t bits = 0;

	for (unsigned int i = 0; i < p->gp_counters && i < EMULATOR_MAX_GP; i++)
		if (gp_enabled(r, p, i))
			bits |= 1ull << i;
	for (unsigned int i = 0; i < EMULATOR_MAX_FIXED && p->perfmon_version >= 2; i++)
		if (fixed_enabled(r, i))
			bits |= 1ull << (PEBS_ENABLE_FIXED_SHIFT + i);
	return bits;
}

/* The counters (PEBS_ENABLE numbering) a write of index with value reprograms. */
static uint64_t counters_written(const struct emulator_registers *r, uint32_t index, uint64_t value)
{
	uint64_t bits = 0;

	if (index >= MSR_IA32_PERFEVTSEL0 && index < MSR_IA32_PERFEVTSEL0 + EMULATOR_MAX_GP)
		return 1ull << (index - MSR_IA32_PERFEVTSEL0);
	if (index >= MSR_IA32_PMC0 && index < MSR_IA32_PMC0 + EMULATOR_MAX_GP)
		return 1ull << (index - MSR_IA32_PMC0);
	if (index >= MSR_IA32_A_PMC0 && index < MSR_IA32_A_PMC0 + EMULATOR_MAX_GP)
		return 1ull << (index - MSR_IA32_A_PMC0);
	if (index >= MSR_IA32_FIXED_CTR0 && index < MSR_IA32_FIXED_CTR0 + EMULATOR_MAX_FIXED)
		return 1ull << (PEBS_ENABLE_FIXED_SHIFT + index - MSR_IA32_FIXED_CTR0);
	if (index != MSR_IA32_FIXED_CTR_CTRL)
		return 0;
	for (unsigned int i = 0; i < EMULATOR_MAX_FIXED; i++)
		if (ctrl_field(r->fixed_ctrl ^ value, i) ||
		    ((r->fixed_ctrl ^ value) &
		     (FIXED_CTR_CTRL_ADAPTIVE << (FIXED_CTR_CTRL_FIELD_BITS * i))))
			bits |= 1ull << (PEBS_ENABLE_FIXED_SHIFT + i);
	return bits;
}

/*
 * Rules 17 and 18, for a WRMSR of index with value over the registers r held before it. "PEBS
 * behavior is unpredictable if IA32_PERFEVTSELx or IA32_PMCx is changed for a PEBS-enabled
 * counter while an event is being counted" (SDM PEBS facility; "Counters MUST be stopped before
 * writing"); and Linux turns PEBS_ENABLE bits on before GLOBAL_CTRL (intel_pmu_enable_all()) and
 * off after the counter (intel_pmu_disable_event()): a PEBS_ENABLE change for a counter that
 * counts is reported.
 */
static void check_pebs_reprogramming(const struct emulator_registers *r, uint32_t index,
				     uint64_t value)
{
	uint64_t counting = counters_enabled(r, emulator_profile()), bits;

	if (index == MSR_IA32_PEBS_ENABLE) {
		bits = (value ^ r->pebs_enable) & counting;
		if (bits)
			emulator_violation(18,
					   "PEBS_ENABLE 0x%llx -> 0x%llx changes counters 0x%llx "
					   "that count (GLOBAL_CTRL=0x%llx)",
					   (unsigned long long)r->pebs_enable,
					   (unsigned long long)value, (unsigned long long)bits,
					   (unsigned long long)r->global_ctrl);
		return;
	}
	bits = counters_written(r, index, value) & r->pebs_enable & counting;
	if (bits)
		emulator_violation(17,
				   "MSR 0x%x := 0x%llx reprograms PEBS counters 0x%llx while they "
				   "count (GLOBAL_CTRL=0x%llx PEBS_ENABLE=0x%llx)",
				   index, (unsigned long long)value, (unsigned long long)bits,
				   (unsigned long long)r->global_ctrl,
				   (unsigned long long)r->pebs_enable);
}

/*
 * Rule 16: the counters (PEBS_ENABLE numbering) that are PEBS-enabled and enabled with an event
 * select PEBS does not take: AnyThread, Edge, Invert or a CMask (SDM: "PEBS events are only
 * valid when the following fields of IA32_PERFEVTSELx are all zero: AnyThread, Edge, Invert,
 * CMask"), or a fixed counter's AnyThread bit.
 */
static uint64_t pebs_encoding_invalid(const struct emulator_registers *r)
{
	uint64_t invalid =
		PERFEVTSEL_ANY_THREAD | PERFEVTSEL_EDGE | PERFEVTSEL_INV | PERFEVTSEL_CMASK_MASK;
	uint64_t bits = 0;

	for (unsigned int i = 0; i < EMULATOR_MAX_GP; i++)
		if ((r->evtsel[i] & PERFEVTSEL_EN) && (r->evtsel[i] & invalid))
			bits |= 1ull << i;
	for (unsigned int i = 0; i < EMULATOR_MAX_FIXED; i++)
		if ((fixed_field(r, i) & (FIXED_CTR_CTRL_OS | FIXED_CTR_CTRL_USR)) &&
		    (fixed_field(r, i) & FIXED_CTR_CTRL_ANY_THREAD))
			bits |= 1ull << (PEBS_ENABLE_FIXED_SHIFT + i);
	return bits & r->pebs_enable;
}

/*
 * Rule 15: the counters (PEBS_ENABLE numbering) that are PEBS-enabled, enabled to count and set
 * to interrupt at their overflow (EVTSEL.INT, FIXED_CTR_CTRL PMI).
 */
static uint64_t pebs_interrupting(const struct emulator_registers *r)
{
	uint64_t bits = 0;

	for (unsigned int i = 0; i < EMULATOR_MAX_GP; i++)
		if ((r->evtsel[i] & (PERFEVTSEL_EN | PERFEVTSEL_INT)) ==
		    (PERFEVTSEL_EN | PERFEVTSEL_INT))
			bits |= 1ull << i;
	for (unsigned int i = 0; i < EMULATOR_MAX_FIXED; i++)
		if ((fixed_field(r, i) & (FIXED_CTR_CTRL_OS | FIXED_CTR_CTRL_USR)) &&
		    (fixed_field(r, i) & FIXED_CTR_CTRL_PMI))
			bits |= 1ull << (PEBS_ENABLE_FIXED_SHIFT + i);
	return bits & r->pebs_enable;
}

/* Count one event on a counter of the given mask: true when it wrapped past its width. */
static bool increment(uint64_t *counter, uint64_t amount, uint64_t mask)
{
	uint64_t before = *counter;

	*counter = (before + amount) & mask;
	return *counter < before;
}

void emulator_pmi_skid_flush(struct emulator_cpu *cpu)
{
	if (!cpu->pmi_skid_pending)
		return;
	cpu->pmi_skid_pending = false;
	emulator_pmi_request(cpu);
}

/*
 * Rule 22: a PMI an overflow asked for is requested once the profile's skid of instructions has
 * retired after it (Linux keeps period_left because counting goes on meanwhile), or at once when
 * there is no skid. An overflow while one waits adds its status bit to the same PMI.
 */
static void pmi_after_skid(struct emulator_cpu *cpu, bool overflowed)
{
	unsigned int skid = emulator_profile()->pmi_skid;

	if (cpu->pmi_skid_pending) {
		if (--cpu->pmi_skid_left == 0)
			emulator_pmi_skid_flush(cpu);
		return;
	}
	if (!overflowed)
		return;
	if (skid == 0) {
		emulator_pmi_request(cpu);
		return;
	}
	cpu->pmi_skid_pending = true;
	cpu->pmi_skid_left = skid;
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
	uint64_t gp_amounts[EMULATOR_MAX_GP], fixed_amounts[EMULATOR_MAX_FIXED];
	uint64_t counted = 0, assisted = 0; /* PEBS_ENABLE numbering */

	cpu->stats.instructions++;
	cpu->stats.branches += branch;
	if (frozen(cpu)) {
		pmi_after_skid(cpu, false);
		return;
	}
	for (uint32_t enabled = cpu->counting.gp; enabled; enabled &= enabled - 1) {
		unsigned int i = (unsigned int)__builtin_ctz(enabled);

		gp_amounts[i] = gp_increment(cpu, i, &what);
		counted |= (uint64_t) !!gp_amounts[i] << i;
	}
	for (uint32_t enabled = cpu->counting.fixed; enabled; enabled &= enabled - 1) {
		unsigned int i = (unsigned int)__builtin_ctz(enabled);

		fixed_amounts[i] = fixed_increment(r, i, &what);
		counted |= (uint64_t) !!fixed_amounts[i] << (PEBS_ENABLE_FIXED_SHIFT + i);
	}
	/*
	 * Rule 23: the armed counters whose event came with this instruction take one assist
	 * together, one record whose status names them all (SDM: the status field "may indicate
	 * multiple PEBS-enabled counters have overflowed"). Their event is not counted: the
	 * assist reloads them. A counter whose record could not be stored counts on.
	 */
	if (counted & cpu->pebs_armed) {
		uint64_t assisting = counted & cpu->pebs_armed;

		cpu->pebs_armed &= ~assisting;
		if (emulator_pebs_assist(cpu, assisting, eventing_ip, regs))
			assisted = assisting;
	}
	for (uint64_t bits = counted & ~assisted; bits; bits &= bits - 1) {
		unsigned int bit = (unsigned int)__builtin_ctzll(bits);

		if (bit < PEBS_ENABLE_FIXED_SHIFT) {
			if (increment(&r->counter[bit], gp_amounts[bit], gp_mask))
				overflow(cpu, bit, r->evtsel[bit] & PERFEVTSEL_INT, &pmi);
		} else if (increment(&r->fixed_counter[bit - PEBS_ENABLE_FIXED_SHIFT],
				     fixed_amounts[bit - PEBS_ENABLE_FIXED_SHIFT], fixed_mask)) {
			overflow(cpu, bit,
				 fixed_field(r, bit - PEBS_ENABLE_FIXED_SHIFT) & FIXED_CTR_CTRL_PMI,
				 &pmi);
		}
	}
	pmi_after_skid(cpu, pmi);
}

/*
 * One taken branch or far transfer the model observed: its BTS record (rule 21 for a transfer,
 * stored when either ring is traced) and its LBR entry (rule 24) come from the same event.
 */
static void branch_observed(struct emulator_cpu *cpu, uint64_t from, bool from_user, uint64_t to,
			    bool to_user, enum emulator_lbr_kind kind)
{
	if (kind == EMULATOR_LBR_FAR)
		emulator_bts_store_transfer(cpu, from, from_user, to, to_user);
	else
		emulator_bts_store(cpu, from, to, from_user);
	emulator_lbr_record(&cpu->registers, emulator_profile(), from, to, to_user, kind);
	emulator_amd_lbr_record(&cpu->registers, emulator_profile(), from, to, to_user, kind);
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
	/* A far transfer stepped through (an IRETQ into a new task's ring 3): rule 21. */
	if (insn.branch == DECODE_FAR) {
		branch_observed(cpu, cpu->pending_rip, cpu->pending_user, regs->rip,
				regs_from_user(regs), EMULATOR_LBR_FAR);
		return true;
	}
	if (taken)
		branch_observed(cpu, cpu->pending_rip, cpu->pending_user, regs->rip,
				regs_from_user(regs), emulator_lbr_kind(&insn));
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
	emulator_nmi_flush(cpu, &cpu->nmis_before, cpu->pending_rip, true, regs);
	cpu->pending_valid = false;
	cpu->stats.taken_branches++;
	emulator_retire(cpu, true, true, cpu->pending_rip, regs);
	/* Rule 21: SYSCALL goes to IA32_LSTAR (SDM Vol. 2B SYSCALL). */
	branch_observed(cpu, cpu->pending_rip, true, rdmsr(MSR_LSTAR), false, EMULATOR_LBR_FAR);
}

/* The vector a software interrupt instruction raises, or -1 for any other instruction. */
static int software_vector(const struct decoded_instruction *insn, uint64_t rip)
{
	if (insn->branch != DECODE_FAR || insn->two_byte)
		return -1;
	switch (insn->opcode) {
	case OPCODE_INT3:
		return X86_EXC_BP;
	case OPCODE_INTO:
		return X86_EXC_OF;
	case OPCODE_INT_N:
		return ((const uint8_t *)rip)[insn->length - 1];
	default:
		return -1;
	}
}

/* Whether cpu steps the context regs will resume: its TF there is the model's. */
static bool steps_context(const struct emulator_cpu *cpu, const struct cpu_regs *regs)
{
	if (!(regs->rflags & RFLAGS_TF))
		return false;
	if (regs_from_user(regs))
		return cpu->tf_user[switch_task_current()->index];
	return cpu->handler.active ? cpu->handler.tf : cpu->tf_kernel;
}

/*
 * A stepped handler that was left without its resume: unwound (the runner ends a failed test
 * from inside an exception handler) or left for ring 3. regs is a frame of what runs now: a
 * context inside the handler runs on its stack, below its entry frame. The handler's TF, if
 * the frame has it, is the kernel flow's from here.
 */
static void handler_check_left(struct emulator_cpu *cpu, const struct cpu_regs *regs)
{
	bool tf = cpu->handler.tf;

	if (!cpu->handler.active ||
	    (!regs_from_user(regs) && regs->rsp <= (uint64_t)cpu->handler.frame))
		return;
	emulator_handler_end(cpu);
	if (tf && !regs_from_user(regs) && (regs->rflags & RFLAGS_TF))
		cpu->tf_kernel = true;
}

bool emulator_steps_context(const struct emulator_cpu *cpu, const struct cpu_regs *regs)
{
	return steps_context(cpu, regs);
}

/*
 * Rule 21: the IRETQ at iret_site resumes a context the model steps: it retires in ring 0 as a
 * far branch and records its transfer. Not after the model's own service (its single step, a
 * diverted access): silicon runs neither, so there is no IRETQ to observe.
 */
void emulator_iret(struct cpu_regs *regs, uint64_t iret_site)
{
	struct emulator_cpu *cpu = emulator_this_cpu();

	if (!steps_context(cpu, regs))
		return;
	cpu->flow_in_exception = false;
	cpu->stats.taken_branches++;
	emulator_retire(cpu, false, true, iret_site, regs);
	branch_observed(cpu, iret_site, false, regs->rip, regs_from_user(regs), EMULATOR_LBR_FAR);
}

/*
 * Rule 21: the vectors whose handler is stepped. Not the paranoid ones (arch/x86/entry.asm): a
 * #DB handler stepped would take its #DB on its own IST stack, an NMI is a far transfer of its
 * own (nmi.c), #DF and #MC end the run. Not the timer's: at 1,417 instructions a tick (the
 * witness) and 50,000 to 260,000 steps a second under TCG, a stepped tick handler would last
 * longer than the 4 ms to the next tick; each is counted instead (ticks_unstepped).
 */
static bool handler_stepped(unsigned int vector)
{
	return vector != X86_EXC_DB && vector != X86_EXC_NMI && vector != X86_EXC_DF &&
	       vector != X86_EXC_MC && vector != VECTOR_TIMER;
}

/*
 * Rule 21. A delivery is no instruction: it counts nothing, and its record goes from the
 * instruction that raised it (INT3, INTO, INT n, which retire as far branches) or else from the
 * saved RIP, the instruction that faulted or that the interrupt or debug trap came before, to
 * the IDT gate's target. Only a context the model steps is seen, and never an NMI (traps.c does
 * not call the model for one, nor for its return). While ring 0 is observed the handler is
 * stepped too, as silicon counts and records it (SDM Vol. 3B DEBUGCTL.TR): from the
 * instruction after the model's hook returns (divert.c) to the resume hook, which ends it.
 * Returns whether it is.
 */
bool emulator_delivery(struct cpu_regs *regs)
{
	struct emulator_cpu *cpu = emulator_this_cpu();
	bool user = regs_from_user(regs);
	uint64_t from = regs->rip;
	struct decoded_instruction insn;

	handler_check_left(cpu, regs);
	if (!steps_context(cpu, regs))
		return false;
	emulator_nmi_flush(cpu, &cpu->nmis_before, cpu->pending_valid ? cpu->pending_rip : from,
			   cpu->pending_valid ? cpu->pending_user : user, regs);
	cpu->flow_in_exception = regs->vector < X86_EXC_COUNT;
	if (cpu->pending_valid && cpu->pending_user == user &&
	    read_instruction(cpu->pending_rip, &insn) &&
	    software_vector(&insn, cpu->pending_rip) == (int)regs->vector &&
	    regs->rip == cpu->pending_rip + insn.length) {
		from = cpu->pending_rip;
		cpu->pending_valid = false;
		cpu->stats.taken_branches++;
		emulator_retire(cpu, user, true, from, regs);
	}
	branch_observed(cpu, from, user, idt_gate_target((unsigned int)regs->vector), false,
			EMULATOR_LBR_FAR);
	if (cpu->handler.active || !handler_stepped((unsigned int)regs->vector) ||
	    !(emulator_observed(cpu) & OBSERVE_KERNEL))
		return false;
	cpu->handler.active = cpu->handler.arming = cpu->handler.tf = true;
	cpu->handler.frame = regs;
	cpu->pending_valid = false;
	cpu->stats.handlers_stepped++;
	return true;
}

bool emulator_step(struct cpu_regs *regs, unsigned long dr7)
{
	struct emulator_cpu *cpu = emulator_this_cpu();
	unsigned long dr6 = read_dr6();
	bool user = regs_from_user(regs);
	bool *mine;
	bool btf = cpu->registers.debugctl & DEBUGCTL_BTF;
	bool branched = true;
	unsigned int observed;

	handler_check_left(cpu, regs);
	mine = user ? &cpu->tf_user[switch_task_current()->index] : emulator_kernel_tf(cpu);
	if (!(dr6 & DR6_BS)) {
		/* A #DB the model did not cause: the CPU clears BTF when it delivers one (SDM). */
		cpu->registers.debugctl &= ~DEBUGCTL_BTF;
		return false;
	}
	if (cpu->in_resume) {
		/* The resume hook's own code (internal.h): exempt, and nothing pending after it. */
		cpu->pending_valid = false;
		dr6 &= ~(DR6_BS | dr6_disabled_breakpoints(dr7));
		write_dr6(dr6 | DR6_RESET);
		cpu->serviced = (dr6 & ~DR6_RESET) == 0;
		return cpu->serviced;
	}
	if (cpu->handler.arming && !user) {
		/*
		 * The first #DB of a stepped handler follows divert.c's POPF and the NOP after it
		 * (the witness's point), the model's: the handler's own start here.
		 */
		cpu->handler.arming = false;
		cpu->stats.steps++;
		cpu->pending_valid = true;
		cpu->pending_user = false;
		cpu->pending_rip = regs->rip;
		cpu->exceptions_seen = this_cpu()->stepped_exceptions;
		dr6 &= ~(DR6_BS | dr6_disabled_breakpoints(dr7));
		write_dr6(dr6 | DR6_RESET);
		cpu->serviced = (dr6 & ~DR6_RESET) == 0;
		return cpu->serviced;
	}
	observed = emulator_observed(cpu);
	if (observed || *mine || btf) {
		cpu->stats.steps++;
		cpu->stats.user_steps += user;
	}
	if (observed || btf) {
		/* A step of the flow: no handler of it runs (nmi.c), whatever ended the last. */
		cpu->flow_in_exception = false;
		if (cpu->pending_valid)
			emulator_nmi_flush(cpu, &cpu->nmis_before, cpu->pending_rip,
					   cpu->pending_user, regs);
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
		emulator_nmi_flush(cpu, &cpu->nmis_after, regs->rip, user, regs);
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
			cpu->serviced = true;
			return true;
		}
		cpu->registers.debugctl &= ~DEBUGCTL_BTF;
		return false;
	}
	if (!(observed & (user ? OBSERVE_USER : OBSERVE_KERNEL))) {
		regs->rflags &= ~RFLAGS_TF;
		*mine = false;
	}
	/* Its own trap, and B bits of disabled slots that came with it, are no one's #DB. */
	dr6 &= ~(DR6_BS | dr6_disabled_breakpoints(dr7));
	write_dr6(dr6 | DR6_RESET);
	cpu->serviced = (dr6 & ~DR6_RESET) == 0;
	return cpu->serviced;
}

/*
 * Rules 15 and 16 are reported when a write makes a counter break them, 17 and 18 for the write
 * itself. Rule 15: "Do NOT set local counter PMI/INT bit" on a PEBS counter (SDM "Requirements
 * to Program PEBS"; Linux intel_pmu_pebs_enable() clears it); silicon then raises an ordinary
 * PMI at each overflow as well as arming PEBS, and so does overflow() above.
 */
void emulator_pebs_write_check(struct emulator_cpu *cpu, const struct emulator_registers *before,
			       uint32_t index, uint64_t value)
{
	const struct emulator_registers *r = &cpu->registers;
	uint64_t interrupting = pebs_interrupting(r) & ~pebs_interrupting(before);
	uint64_t invalid = pebs_encoding_invalid(r) & ~pebs_encoding_invalid(before);

	if (interrupting)
		emulator_violation(15,
				   "PEBS counters 0x%llx (PEBS_ENABLE numbering) interrupt at "
				   "overflow: PEBS_ENABLE=0x%llx FIXED_CTR_CTRL=0x%llx",
				   (unsigned long long)interrupting,
				   (unsigned long long)r->pebs_enable,
				   (unsigned long long)r->fixed_ctrl);
	if (invalid)
		emulator_violation(16,
				   "PEBS counters 0x%llx (PEBS_ENABLE numbering) count with "
				   "AnyThread, Edge, Invert or CMask set: PEBS_ENABLE=0x%llx "
				   "FIXED_CTR_CTRL=0x%llx",
				   (unsigned long long)invalid, (unsigned long long)r->pebs_enable,
				   (unsigned long long)r->fixed_ctrl);
	check_pebs_reprogramming(before, index, value);
}
