/* SPDX-License-Identifier: MIT */
/* The emulated CPU's installation, its options, and the callbacks arch/x86 diverts to it. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/apic.h"
#include "arch/x86/cpu.h"
#include "arch/x86/cpuid.h"
#include "arch/x86/debug-registers.h"
#include "arch/x86/divert.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/msr-index.h"
#include "arch/x86/percpu.h"
#include "arch/x86/processor-flags.h"
#include "emulator/internal.h"
#include "kernel/smp.h"
#include "lib/cmdline.h"
#include "lib/format.h"
#include "lib/ktap.h"
#include "lib/string.h"

enum ds_mode {
	DS_MODE_AUTO, /* the model where CPUID.1:EDX.DS=0 */
	DS_MODE_HARDWARE, /* never the model */
	DS_MODE_EMULATE, /* always the model */
};

static enum ds_mode mode;
static struct emulator_profile profile;
static bool profile_chosen;
/*
 * hybrid:1 plays a hybrid part: odd-numbered CPUs are its small cores, with fewer counters
 * (Alder Lake's Gracemont cores: 6 GP and 3 fixed counters, the same PEBS format; Linux's
 * intel_pmu_init_grt()), each CPU telling its type in CPUID leaf 1AH.
 */
static bool hybrid;
/* bts_status:0 keeps GLOBAL_STATUS bit 62 out of the BTS threshold PMI: the SDM documents the
 * bit for PEBS only, and a driver must drain BTS without it (Linux does). */
static bool bts_status = true;
static DEFINE_PER_CPU(struct emulator_profile, profiles);
#define ATOM_GP_COUNTERS 6
#define ATOM_FIXED_COUNTERS 3
static bool active;
static char description[64] = "off";
static DEFINE_PER_CPU(struct emulator_cpu, cpus);

struct emulator_cpu *emulator_this_cpu(void)
{
	return this_cpu_ptr(cpus);
}

bool emulator_bts_sets_status(void)
{
	return bts_status;
}

const struct emulator_profile *emulator_profile(void)
{
	return this_cpu_ptr(profiles);
}

bool emulator_active(void)
{
	return active;
}

const char *emulator_describe(void)
{
	return description;
}

unsigned int emulator_pmi_skid(void)
{
	return active ? emulator_profile()->pmi_skid : 0;
}

bool emulator_plays_kvm_guest(void)
{
	return active && emulator_profile()->kvm_debugctl;
}

static bool parse_ds(const struct cmdline_option *opt, const char *value, char *err,
		     size_t err_size)
{
	(void)opt;
	if (value && strcmp(value, "auto") == 0)
		mode = DS_MODE_AUTO;
	else if (value && strcmp(value, "hardware") == 0)
		mode = DS_MODE_HARDWARE;
	else if (value && strcmp(value, "emulate") == 0)
		mode = DS_MODE_EMULATE;
	else {
		format(err, err_size, "'%s' is not auto, hardware or emulate", value ? value : "");
		return false;
	}
	return true;
}

/* "cpu:NAME,KEY:VALUE,...": the profile first, wherever it stands, then each override. */
static bool parse_emulate(const struct cmdline_option *opt, const char *value, char *err,
			  size_t err_size)
{
	const struct emulator_profile *base = emulator_profile_default();
	char pairs[CMDLINE_STRING_MAX];
	char *cursor;

	(void)opt;
	if (!value || !*value || strlen(value) >= sizeof(pairs)) {
		format(err, err_size, "expected cpu:NAME and KEY:VALUE pairs, separated by commas");
		return false;
	}
	strlcpy(pairs, value, sizeof(pairs));
	for (cursor = pairs; cursor;) {
		char *comma = strchr(cursor, ',');

		if (comma)
			*comma = '\0';
		if (strncmp(cursor, "cpu:", 4) == 0) {
			base = emulator_profile_find(cursor + 4);
			if (!base) {
				format(err, err_size, "unknown CPU profile '%s'; known: %s",
				       cursor + 4, emulator_profile_names());
				return false;
			}
		}
		cursor = comma ? comma + 1 : NULL;
	}
	profile = *base;
	strlcpy(pairs, value, sizeof(pairs));
	for (cursor = pairs; cursor;) {
		char *comma = strchr(cursor, ',');
		char *colon;

		if (comma)
			*comma = '\0';
		colon = strchr(cursor, ':');
		if (!colon) {
			format(err, err_size, "'%s' is not KEY:VALUE", cursor);
			return false;
		}
		*colon = '\0';
		if (strcmp(cursor, "hybrid") == 0 || strcmp(cursor, "bts_status") == 0) {
			if (strcmp(colon + 1, "0") != 0 && strcmp(colon + 1, "1") != 0) {
				format(err, err_size, "%s:%s: expected 0 or 1", cursor, colon + 1);
				return false;
			}
			*(strcmp(cursor, "hybrid") == 0 ? &hybrid : &bts_status) = colon[1] == '1';
		} else if (strcmp(cursor, "cpu") != 0 &&
			   !emulator_profile_override(&profile, cursor, colon + 1, err, err_size)) {
			return false;
		}
		cursor = comma ? comma + 1 : NULL;
	}
	profile_chosen = true;
	return true;
}

CMDLINE_OPTION(option_ds, .name = "ds", .syntax = "auto|hardware|emulate", .parse = parse_ds);
CMDLINE_OPTION(option_emulate, .name = "emulate", .syntax = "cpu:NAME[,KEY:VALUE...]",
	       .parse = parse_emulate);

void emulator_violation(unsigned int rule, const char *fmt, ...)
{
	struct emulator_cpu *cpu = emulator_this_cpu();
	va_list args;
	int length;

	if (cpu->violations++)
		return;
	length = format(cpu->violation, sizeof(cpu->violation), "rule %u: ", rule);
	va_start(args, fmt);
	vformat(cpu->violation + length, sizeof(cpu->violation) - (size_t)length, fmt, args);
	va_end(args);
}

void emulator_warning(unsigned int rule, const char *fmt, ...)
{
	struct emulator_cpu *cpu = emulator_this_cpu();
	va_list args;
	int length;

	if (cpu->warnings++)
		return;
	length = format(cpu->warning, sizeof(cpu->warning), "rule %u (warning): ", rule);
	va_start(args, fmt);
	vformat(cpu->warning + length, sizeof(cpu->warning) - (size_t)length, fmt, args);
	va_end(args);
}

static unsigned int take(bool warnings, char *text, size_t size)
{
	unsigned int total = 0;

	if (size)
		text[0] = '\0';
	for (unsigned int i = 0; active && i < smp_cpus(); i++) {
		struct emulator_cpu *cpu = per_cpu_ptr(cpus, i);
		unsigned long flags = local_irq_save();
		unsigned int *count = warnings ? &cpu->warnings : &cpu->violations;

		if (*count && total == 0 && size)
			strlcpy(text, warnings ? cpu->warning : cpu->violation, size);
		total += *count;
		*count = 0;
		local_irq_restore(flags);
	}
	return total;
}

unsigned int emulator_take_violations(char *text, size_t size)
{
	return take(false, text, size);
}

unsigned int emulator_take_warnings(char *text, size_t size)
{
	return take(true, text, size);
}

struct emulator_stats emulator_stats(void)
{
	return emulator_this_cpu()->stats;
}

struct emulator_stats emulator_stats_all(void)
{
	struct emulator_stats sum = { 0 };

	for (unsigned int i = 0; i < percpu_count(); i++) {
		const struct emulator_stats *s = &per_cpu_ptr(cpus, i)->stats;

		sum.steps += s->steps;
		sum.user_steps += s->user_steps;
		sum.instructions += s->instructions;
		sum.branches += s->branches;
		sum.taken_branches += s->taken_branches;
		sum.bts_records += s->bts_records;
		sum.pebs_records += s->pebs_records;
		sum.pebs_late += s->pebs_late;
		sum.nmis_recorded += s->nmis_recorded;
		sum.nmis_unobserved += s->nmis_unobserved;
		sum.handlers_stepped += s->handlers_stepped;
		sum.ticks_unstepped += s->ticks_unstepped;
		sum.pmis += s->pmis;
		sum.pmis_masked += s->pmis_masked;
		sum.resyncs += s->resyncs;
		sum.diverted += s->diverted;
	}
	return sum;
}

/*
 * Set or clear the model's TF in the frame that resumes next, as the registers now ask. Not
 * in an interrupt handler's own frames unless the model steps that handler: the CPU cleared TF
 * to enter it, and the interrupted context gets TF back when the handler returns (the model's
 * resume hook runs then too).
 */
static void emulator_apply_trap_flag(struct emulator_cpu *cpu, struct cpu_regs *regs,
				     unsigned int observed)
{
	bool user = regs_from_user(regs);
	bool want = observed & (user ? OBSERVE_USER : OBSERVE_KERNEL);
	bool *mine = user ? &cpu->tf_user[switch_task_current()->index] : emulator_kernel_tf(cpu);

	if (this_cpu()->interrupt_depth && !cpu->handler.active)
		return;
	if (want && !(regs->rflags & RFLAGS_TF)) {
		regs->rflags |= RFLAGS_TF;
		/* The next step starts a new sequence: nothing is known of what ran before. */
		cpu->pending_valid = false;
	}
	if (want) {
		*mine = true;
	} else if (*mine) {
		regs->rflags &= ~RFLAGS_TF;
		*mine = false;
	}
}

static bool emulator_owns_msr_hook(uint32_t index)
{
	return emulator_owns_msr(index);
}

static bool emulator_owns_cpuid_hook(uint32_t leaf)
{
	return emulator_owns_cpuid(leaf);
}

/*
 * NMIs deferred in the stepped flow (nmi.c) came before the diverted access at regs->rip: they
 * are recorded from it now, before the access can end the observation and leave them to a
 * later window. With the flow no longer stepped they have no place left in it: they are
 * dropped, not left to be recorded (and counted) in whatever window the next access opens
 * (a counted loop's branches came out one over with no NMI in its window, make check).
 */
static void nmis_before_access(struct emulator_cpu *cpu, struct cpu_regs *regs)
{
	if (!cpu->pending_valid) {
		cpu->stats.nmis_unobserved +=
			__atomic_exchange_n(&cpu->nmis_after, 0, __ATOMIC_RELAXED) +
			__atomic_exchange_n(&cpu->nmis_before, 0, __ATOMIC_RELAXED);
		return;
	}
	emulator_nmi_flush(cpu, &cpu->nmis_after, regs->rip, regs_from_user(regs), regs);
	emulator_nmi_flush(cpu, &cpu->nmis_before, regs->rip, regs_from_user(regs), regs);
}

static bool emulator_read_msr_hook(struct cpu_regs *regs, uint32_t index, uint64_t *value)
{
	emulator_pebs_land(emulator_this_cpu());
	nmis_before_access(emulator_this_cpu(), regs);
	emulator_this_cpu()->stats.diverted++;
	return emulator_read_msr(&emulator_this_cpu()->registers, emulator_profile(), index, value);
}

/* What of PEBS_DATA_CFG a record's format field repeats: the four groups and, with LBRs, the
 * entry count (SDM "Adaptive PEBS"; emulator/pebs_record.c writes it so). */
static uint64_t record_groups(uint64_t data_cfg)
{
	uint64_t groups = data_cfg & (PEBS_DATACFG_MEMINFO | PEBS_DATACFG_GP | PEBS_DATACFG_XMMS |
				      PEBS_DATACFG_LBRS);

	return data_cfg & PEBS_DATACFG_LBRS ? groups | (data_cfg & PEBS_DATACFG_LBR_MASK) : groups;
}

/* Rule 4 (IA32_DS_AREA kept while a feature is on) and 5 (DATA_CFG with records of another size
 * in the buffer) are about the order of writes, so they are checked here. */
static void check_write_order(struct emulator_cpu *cpu, uint32_t index, uint64_t value)
{
	const struct emulator_registers *r = &cpu->registers;
	bool bts_on = (r->debugctl & (DEBUGCTL_TR | DEBUGCTL_BTS)) == (DEBUGCTL_TR | DEBUGCTL_BTS);
	bool ds_pebs_on = r->pebs_enable && !emulator_profile()->arch_pebs; /* rule 25 */
	uint64_t groups;

	if (index == MSR_IA32_DS_AREA && value != r->ds_area && (bts_on || ds_pebs_on))
		emulator_violation(4,
				   "IA32_DS_AREA 0x%llx -> 0x%llx while DEBUGCTL=0x%llx "
				   "PEBS_ENABLE=0x%llx",
				   (unsigned long long)r->ds_area, (unsigned long long)value,
				   (unsigned long long)r->debugctl,
				   (unsigned long long)r->pebs_enable);
	if (index == MSR_PEBS_DATA_CFG && value != r->pebs_data_cfg &&
	    emulator_pebs_buffered_groups(cpu, &groups) && groups != record_groups(value))
		emulator_violation(5,
				   "PEBS_DATA_CFG 0x%llx -> 0x%llx while the buffer holds records "
				   "with groups 0x%llx",
				   (unsigned long long)r->pebs_data_cfg, (unsigned long long)value,
				   (unsigned long long)groups);
}

static bool emulator_write_msr_hook(struct cpu_regs *regs, uint32_t index, uint64_t value)
{
	struct emulator_cpu *cpu = emulator_this_cpu();
	uint64_t old_debugctl = cpu->registers.debugctl;
	uint64_t old_pebs_enable = cpu->registers.pebs_enable;
	struct emulator_registers before = cpu->registers;
	unsigned int observed;

	emulator_pebs_land(cpu);
	nmis_before_access(cpu, regs);
	cpu->stats.diverted++;
	check_write_order(cpu, index, value);
	if (emulator_write_msr(&cpu->registers, emulator_profile(), index, value))
		return true;
	if (cpu->pmi_outstanding && (index == MSR_IA32_PERF_GLOBAL_OVF_CTRL ||
				     index == MSR_AMD64_PERF_CNTR_GLOBAL_STATUS_CLR))
		cpu->pmi_acknowledged |= value;
	emulator_pebs_write_check(cpu, &before, index, value);
	if (emulator_profile()->arch_pebs)
		emulator_arch_pebs_write_check(cpu, &before);
	if (index == MSR_IA32_PEBS_ENABLE)
		emulator_pebs_in_flight(cpu, old_pebs_enable & ~value & cpu->pebs_armed, regs);
	if (index >= MSR_IA32_PERFEVTSEL0 && index < MSR_IA32_PERFEVTSEL0 + EMULATOR_MAX_GP)
		cpu->edge_asserted &= ~(1u << (index - MSR_IA32_PERFEVTSEL0));
	if (emulator_msr_enables_counters(index))
		emulator_counters_changed(cpu, emulator_profile());
	emulator_ds_features_changed(cpu, old_debugctl, old_pebs_enable);
	observed = emulator_observed(cpu);
	/* Nothing observed from here: a PMI still in its skid comes now, not never. */
	if (!observed)
		emulator_pmi_skid_flush(cpu);
	emulator_apply_trap_flag(cpu, regs, observed);
	return false;
}

static struct cpuid_result emulator_cpuid_hook(uint32_t leaf, uint32_t subleaf,
					       struct cpuid_result real)
{
	emulator_pebs_land(emulator_this_cpu());
	emulator_this_cpu()->stats.diverted++;
	return emulator_cpuid(emulator_profile(), leaf, subleaf, real);
}

/* A single-step #DB: a PEBS record in flight may land first (store.c). */
static bool emulator_debug_trap_hook(struct cpu_regs *regs, unsigned long dr7)
{
	emulator_pebs_land(emulator_this_cpu());
	return emulator_step(regs, dr7);
}

/*
 * A diverted instruction retired. In the context being stepped it is the pending instruction:
 * it counts, and stepping goes on after it. Elsewhere (an interrupt handler, which runs with TF
 * clear) it is not observed and leaves the stepped context's state alone.
 */
static void retired_after(struct cpu_regs *regs, unsigned int length)
{
	struct emulator_cpu *cpu = emulator_this_cpu();
	bool user = regs_from_user(regs);

	cpu->serviced = true;
	if (!cpu->pending_valid || cpu->pending_rip != regs->rip - length)
		return;
	emulator_retire(cpu, user, false, cpu->pending_rip, regs);
	cpu->pending_valid = emulator_observed(cpu) & (user ? OBSERVE_USER : OBSERVE_KERNEL);
	cpu->pending_user = user;
	cpu->pending_rip = regs->rip;
	cpu->exceptions_seen = this_cpu()->stepped_exceptions;
}

static void emulator_retired_hook(struct cpu_regs *regs)
{
	retired_after(regs, DIVERTED_SITE_LENGTH);
}

/*
 * RDPMC, diverted or executed as itself (arch/x86/divert.h), read from the model's counters
 * (emulator_rdpmc()); CR4.PCE is the CPU's own. It retires as a diverted RDMSR does.
 */
static bool emulator_rdpmc_hook(struct cpu_regs *regs, unsigned int length)
{
	bool allowed = !regs_from_user(regs) || (read_cr4() & CR4_PCE);
	uint64_t value;

	emulator_this_cpu()->stats.diverted++;
	if (emulator_rdpmc(&emulator_this_cpu()->registers, emulator_profile(), (uint32_t)regs->rcx,
			   allowed, &value))
		return true;
	regs->rax = (uint32_t)value;
	regs->rdx = value >> 32;
	regs->rip += length;
	retired_after(regs, length);
	return false;
}

/* XSAVES and XRSTORS of component 15 alone, on a profile with architectural LBR (rule 24). */
static bool emulator_owns_xstate_hook(uint64_t components)
{
	return components == XSS_ARCH_LBR && emulator_arch_lbr(emulator_profile());
}

static bool emulator_xsaves_hook(struct cpu_regs *regs, bool restore)
{
	uint64_t mask = ((regs->rdx & 0xffffffffu) << 32) | (uint32_t)regs->rax;

	emulator_this_cpu()->stats.diverted++;
	if (emulator_lbr_xsaves(&emulator_this_cpu()->registers, emulator_profile(),
				(void *)regs->rsi, mask, restore))
		return true;
	regs->rip += DIVERTED_XSAVE_SITE_LENGTH;
	retired_after(regs, DIVERTED_XSAVE_SITE_LENGTH);
	return false;
}

/* Rule 14: the PMI handler acknowledged what it was called for and left GLOBAL_CTRL as it was. */
static void check_pmi_return(struct emulator_cpu *cpu, struct cpu_regs *regs)
{
	const struct emulator_registers *r = &cpu->registers;
	uint64_t left;

	if (!cpu->pmi_outstanding || regs->vector != (apic_read_lvtpc() & APIC_LVT_VECTOR_MASK))
		return;
	cpu->pmi_outstanding = false;
	left = r->global_status & cpu->pmi_status & ~cpu->pmi_acknowledged;
	if (left)
		emulator_violation(14,
				   "the PMI handler returned with GLOBAL_STATUS bits 0x%llx "
				   "still set (called for 0x%llx)",
				   (unsigned long long)left, (unsigned long long)cpu->pmi_status);
	if (r->global_ctrl != cpu->pmi_global_ctrl)
		emulator_violation(14,
				   "the PMI handler returned with GLOBAL_CTRL 0x%llx, found 0x%llx",
				   (unsigned long long)r->global_ctrl,
				   (unsigned long long)cpu->pmi_global_ctrl);
}

/*
 * The kernel frame an interrupt saves carries the live flow's TF, and so its owner. A timer
 * interrupt while ring 0 is observed is counted: its handler is never stepped (step.c).
 */
static bool emulator_interrupted_hook(struct cpu_regs *regs)
{
	struct emulator_cpu *cpu = emulator_this_cpu();
	const struct emulator_registers *r = &cpu->registers;
	bool stepped;

	emulator_pebs_land(cpu);
	if (regs->vector == VECTOR_TIMER && (emulator_observed(cpu) & OBSERVE_KERNEL))
		cpu->stats.ticks_unstepped++;
	stepped = emulator_delivery(regs);
	if (!regs_from_user(regs))
		cpu->tf_interrupted[switch_task_current()->index] = cpu->tf_kernel;
	/* The PMI handler starts: what it must acknowledge, and restore (rule 14). */
	if (cpu->pmi_outstanding && regs->vector == (apic_read_lvtpc() & APIC_LVT_VECTOR_MASK)) {
		cpu->pmi_status = r->global_status & ~PERF_GLOBAL_STATUS_COUNTERS_FROZEN;
		cpu->pmi_acknowledged = 0;
		if (!cpu->pmi_froze)
			cpu->pmi_global_ctrl = r->global_ctrl;
	}
	return stepped;
}

static bool emulator_exception_hook(struct cpu_regs *regs)
{
	return emulator_delivery(regs);
}

/*
 * A frame resumes. The stepped handler's own entry frame ends it (its IRETQ is the flow's, as
 * before); a frame inside it (a step, a diverted access, a nested exception) resumes the
 * handler, stepped as a flow. Returns whether a stepped handler ended here.
 */
static bool resume(struct emulator_cpu *cpu, struct cpu_regs *regs, uint64_t iret_site,
		   bool serviced)
{
	bool ended = cpu->handler.active && regs == cpu->handler.frame;
	unsigned int observed;

	check_pmi_return(cpu, regs);
	if (ended)
		emulator_handler_end(cpu);
	/* An interrupt handler's own frames run with TF clear and are not stepped, but one. */
	else if (this_cpu()->interrupt_depth && !cpu->handler.active)
		return false;
	if (regs->vector >= X86_EXC_COUNT && !regs_from_user(regs) && !cpu->handler.active)
		cpu->tf_kernel = cpu->tf_interrupted[switch_task_current()->index];
	observed = emulator_observed(cpu);
	emulator_apply_trap_flag(cpu, regs, observed);
	if (!serviced)
		emulator_iret(regs, iret_site);
	/*
	 * Whatever ran before (an exception's handler, a system call, an interrupt), the frame
	 * resumes at regs->rip: that is the next instruction a step completes, for the model's own
	 * stepping and for BTF on someone else's.
	 */
	if ((regs->rflags & RFLAGS_TF) && (observed || (cpu->registers.debugctl & DEBUGCTL_BTF))) {
		cpu->pending_valid = true;
		cpu->pending_user = regs_from_user(regs);
		cpu->pending_rip = regs->rip;
		cpu->exceptions_seen = this_cpu()->stepped_exceptions;
	}
	return ended;
}

static void emulator_resume_hook(struct cpu_regs *regs, uint64_t iret_site)
{
	struct emulator_cpu *cpu = emulator_this_cpu();
	bool serviced = cpu->serviced;
	bool stepped, ended;

	cpu->serviced = false;
	if (cpu->in_resume)
		return; /* a step of the hook's own code: emulator_step() served it */
	cpu->in_resume = true;
	/*
	 * Not stepped through: silicon runs no such code, and each step costs milliseconds under
	 * KVM-PVM, where stepping this hook's BTS store kept interrupts off past the NMI
	 * watchdog's limit. The POPF that clears TF still traps once (the guard above serves it);
	 * the one that sets it again traps after the next instruction. A stepped handler that
	 * ends here returns unstepped, as it entered: the IRETQ is retired by resume().
	 */
	stepped = read_rflags() & RFLAGS_TF;
	if (stepped)
		clear_trap_flag();
	ended = resume(cpu, regs, iret_site, serviced);
	if (stepped && !ended)
		set_trap_flag();
	cpu->in_resume = false;
}

/*
 * At a switch the live flow goes on in the next task, with whatever TF it has: the model's, or
 * none (a switch made inside an interrupt handler, whose TF the CPU cleared). A next task that
 * will not come back through an exit of its own (it starts, or it left by switching) is
 * observed from here on if the CPU observes the kernel. One preempted inside an interrupt goes
 * on inside its handler, which runs with TF clear: the model's TF, live if the previous task
 * was stepped (it yielded, or exited), is cleared here, and the task gets TF back when that
 * interrupt returns (the resume hook). The POPF that clears it still traps: that step is the
 * model's while tf_kernel says so.
 */
static void emulator_switch_in(const struct switch_task *prev, const struct switch_task *next)
{
	struct emulator_cpu *cpu = emulator_this_cpu();

	(void)prev;
	(void)next;
	if (cpu->handler.active) {
		/*
		 * A stepped handler switched away (a reschedule IPI, a faulting task's end): the
		 * next task does not run in it. Its live TF is the flow's from here, which the
		 * code below keeps or clears as for any switch.
		 */
		if (cpu->handler.tf && (read_rflags() & RFLAGS_TF))
			cpu->tf_kernel = true;
		/* Each step between here and there finds its owner in one or the other. */
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		emulator_handler_end(cpu);
		cpu->pending_valid = false;
	}
	if (!(read_rflags() & RFLAGS_TF))
		cpu->tf_kernel = false;
	if (this_cpu()->interrupt_depth && cpu->tf_kernel) {
		clear_trap_flag();
		cpu->tf_kernel = false;
		cpu->pending_valid = false;
		return;
	}
	if (!this_cpu()->interrupt_depth && !cpu->tf_kernel &&
	    (emulator_observed(cpu) & OBSERVE_KERNEL)) {
		cpu->pending_valid = false;
		cpu->tf_kernel = true;
		set_trap_flag();
	}
}

/* A task's index is reused: what the model set in its frames ended with it. */
static void emulator_task_exit(const struct switch_task *task)
{
	for (unsigned int i = 0; i < percpu_count(); i++) {
		per_cpu_ptr(cpus, i)->tf_user[task->index] = false;
		per_cpu_ptr(cpus, i)->tf_interrupted[task->index] = false;
	}
}

static const struct switch_hooks emulator_switch_hooks = {
	.switch_in = emulator_switch_in,
	.task_exit = emulator_task_exit,
};

static const struct cpu_model_ops emulator_ops = {
	.owns_msr = emulator_owns_msr_hook,
	.owns_cpuid = emulator_owns_cpuid_hook,
	.read_msr = emulator_read_msr_hook,
	.write_msr = emulator_write_msr_hook,
	.cpuid = emulator_cpuid_hook,
	.retired = emulator_retired_hook,
	.debug_trap = emulator_debug_trap_hook,
	.interrupted = emulator_interrupted_hook,
	.system_call = emulator_system_call,
	.exception = emulator_exception_hook,
	.resume = emulator_resume_hook,
	.rdpmc = emulator_rdpmc_hook,
	.nmi = emulator_nmi,
	.owns_xstate = emulator_owns_xstate_hook,
	.xsaves = emulator_xsaves_hook,
};

/* The small core of a hybrid part: fewer counters, the same PEBS format. */
static void make_atom(struct emulator_profile *atom)
{
	atom->core_type = CPUID_HYBRID_ATOM;
	if (atom->gp_counters > ATOM_GP_COUNTERS)
		atom->gp_counters = ATOM_GP_COUNTERS;
	if (atom->fixed_counters > ATOM_FIXED_COUNTERS) {
		atom->fixed_counters = ATOM_FIXED_COUNTERS;
		atom->fixed_bitmap &= (1u << ATOM_FIXED_COUNTERS) - 1;
	}
	atom->pebs_enable_mask = emulator_profile_pebs_enable_mask(atom);
}

void emulator_init(void)
{
	bool silicon_has_ds = cpuid(1, 0).edx & CPUID_1_EDX_DS;

	if (mode == DS_MODE_HARDWARE || (mode == DS_MODE_AUTO && silicon_has_ds)) {
		format(description, sizeof(description), "off (ds=%s%s)",
		       mode == DS_MODE_HARDWARE ? "hardware" : "auto",
		       silicon_has_ds ? ", CPUID.1:EDX.DS=1" : "");
		ktap_diag(0, "emulated cpu: %s", description);
		return;
	}
	if (!profile_chosen)
		profile = *emulator_profile_default();
	if (hybrid)
		profile.core_type = CPUID_HYBRID_CORE;
	for (unsigned int i = 0; i < percpu_count(); i++) {
		*per_cpu_ptr(profiles, i) = profile;
		if (hybrid && i % 2)
			make_atom(per_cpu_ptr(profiles, i));
		emulator_registers_reset(&per_cpu_ptr(cpus, i)->registers,
					 per_cpu_ptr(profiles, i));
		emulator_counters_changed(per_cpu_ptr(cpus, i), per_cpu_ptr(profiles, i));
	}
	format(description, sizeof(description), "emulated (%s)", profile.name);
	active = true;
	cpu_model_register(&emulator_ops);
	switch_hooks_register(&emulator_switch_hooks);
	ktap_diag(0,
		  "emulated cpu: on (ds=%s) profile=%s perfmon=v%u gp=%ux%u fixed=%ux%u "
		  "pebs_format=%u baseline=%u full_width=%u bts=%u ds_cpl=%u leftovers=%u "
		  "skid=%u%s%s",
		  mode == DS_MODE_EMULATE ? "emulate" : "auto, CPUID.1:EDX.DS=0", profile.name,
		  profile.perfmon_version, profile.gp_counters, profile.gp_width,
		  profile.fixed_counters, profile.fixed_width, profile.pebs_format,
		  profile.pebs_baseline, profile.full_width, profile.bts, profile.ds_cpl,
		  profile.firmware_leftovers, profile.pmi_skid,
		  hybrid ? " hybrid=1 (odd CPUs: 6 GP and 3 fixed counters)" : "",
		  bts_status ? "" : " bts_status=0");
}
