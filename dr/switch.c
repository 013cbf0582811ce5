/* SPDX-License-Identifier: MIT */
/* Switching DR0-3/DR7: the per-CPU shadow, the lazy (or eager) apply, and dr_init(). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/cpu.h"
#include "arch/x86/debug-registers.h"
#include "arch/x86/debugctl.h"
#include "arch/x86/msr-index.h"
#include "arch/x86/msr.h"
#include "arch/x86/percpu.h"
#include "arch/x86/processor-flags.h"
#include "arch/x86/traps.h"
#include "dr/dr.h"
#include "dr/internal.h"
#include "kernel/smp.h"
#include "kernel/spinlock.h"
#include "kernel/switch_hooks.h"
#include "lib/cmdline.h"
#include "lib/report.h"
#include "lib/string.h"

/*
 * Per CPU: what the registers hold, which logical slot of the current task is where, and the
 * system-wide plus pinned breakpoints laid out for this CPU (valid while generation matches).
 * While a #DB handler runs here (in_debug), DR7 is held at DR7_RESET and resume_dr7 is what it
 * goes back to on return: dr_apply() changes resume_dr7 instead of DR7 meanwhile.
 */
struct dr_cpu {
	struct dr_hardware held;
	uint8_t logical_of[DR_SLOTS];
	struct dr_set fixed;
	uint8_t pinned_of[DR_SLOTS];
	uint64_t fixed_generation;
	bool in_debug;
	unsigned long resume_dr7;
};

static DEFINE_PER_CPU(struct dr_cpu, cpus);
static uint64_t dr_lost_syncs; /* changes another CPU did not take within SMP_CALL_TIMEOUT_MS */
static bool lazy = true;
static bool btf_supported;

CMDLINE_OPTION(option_lazy, .name = "dr.lazy", .syntax = "0|1", .parse = cmdline_parse_bool,
	       .dest = &lazy);

/* Inlined: dr_debug_enter() runs it before DR7 is clear (__noinstr). */
static inline __attribute__((always_inline)) struct dr_cpu *this_dr_cpu(void)
{
	return this_cpu_ptr(cpus);
}

uint8_t dr_logical_of(unsigned int hardware_slot)
{
	return this_dr_cpu()->logical_of[hardware_slot];
}

uint8_t dr_pinned_of(unsigned int hardware_slot)
{
	return this_dr_cpu()->pinned_of[hardware_slot];
}

void dr_cpus_range(unsigned int cpu, uint64_t *start, uint64_t *end)
{
	*start = (uint64_t)per_cpu_ptr(cpus, cpu);
	*end = *start + sizeof(struct dr_cpu);
}

/*
 * Linux's local_db_save(): nothing may fire while #DB runs on its IST stack, so DR7 is cleared
 * first (one write, and none when no slot is enabled). Only this CPU's shadow and per-CPU
 * struct are touched before, and only __noinstr code runs: dr_debug_regions() keeps breakpoints
 * off all three.
 */
unsigned long __noinstr dr_debug_enter(void)
{
	struct dr_cpu *cpu = this_dr_cpu();
	unsigned long dr7 = cpu->held.dr7;

	if (dr7 != DR7_RESET) {
		write_dr7(DR7_RESET);
		cpu->held.dr7 = DR7_RESET;
	}
	cpu->resume_dr7 = dr7;
	cpu->in_debug = true;
	/* "The processor clears the BTF flag when it generates a debug exception" (SDM, as quoted
	 * in Linux's exc_debug_user()). */
	if (btf_supported)
		debugctl_cleared(DEBUGCTL_BTF);
	return dr7;
}

unsigned long dr_debug_held(void)
{
	return this_dr_cpu()->resume_dr7;
}

/*
 * Linux's local_db_restore(): DR7 back to resume_dr7, through the shadow, last of all. BTF
 * again first if the running task steps on branches: the #DB cleared it.
 */
void dr_debug_exit(void)
{
	struct dr_cpu *cpu = this_dr_cpu();
	unsigned long dr7 = cpu->resume_dr7;

	if (btf_supported && dr_task_get(switch_task_current()->index)->branch_step)
		debugctl_update(DEBUGCTL_BTF, DEBUGCTL_BTF);
	cpu->in_debug = false;
	if (dr7 != cpu->held.dr7) {
		cpu->held.dr7 = dr7; /* before the write: nothing of dr/'s is written once armed */
		write_dr7(dr7);
	}
}

bool dr_debug_recover(void)
{
	unsigned long flags = spin_lock_irqsave(&dr_lock);
	bool abandoned = this_dr_cpu()->in_debug;

	if (abandoned)
		dr_debug_exit();
	spin_unlock_irqrestore(&dr_lock, flags);
	return abandoned;
}

/* DR7 as the plan says, or, inside #DB, what DR7 returns to when the handler is done. */
static void dr_set_dr7(struct dr_cpu *cpu, unsigned long dr7)
{
	if (cpu->in_debug) {
		cpu->resume_dr7 = dr7;
		return;
	}
	write_dr7(dr7);
	cpu->held.dr7 = dr7;
}

static bool dr_hardware_equal(const struct dr_hardware *a, const struct dr_hardware *b)
{
	for (unsigned int slot = 0; slot < DR_SLOTS; slot++)
		if (a->address[slot] != b->address[slot])
			return false;
	return a->dr7 == b->dr7;
}

/*
 * With dr_lock held: make the registers what task (the one now running here) needs, with the fewest
 * writes, in the order dr_plan() gives. The switch path: when the cached layout equals what the
 * registers hold, nothing else runs, so a switch between identical configurations costs a compare.
 */
static void dr_apply(unsigned int task)
{
	struct dr_cpu *cpu = this_dr_cpu();
	struct dr_task *state = dr_task_get(task);
	struct dr_hardware now = cpu->held; /* inside #DB: with the DR7 it returns to */
	struct dr_write_plan plan;
	uint64_t debugctl = state->branch_step ? DEBUGCTL_BTF : 0;

	if (cpu->fixed_generation != dr_generation()) {
		dr_layout_fixed(dr_system_set(), dr_pinned_set(this_cpu_index()), &cpu->fixed,
				cpu->pinned_of);
		cpu->fixed_generation = dr_generation();
	}
	if (state->generation != dr_generation() || state->layout_cpu != this_cpu_index()) {
		dr_layout(&cpu->fixed, &state->set, &state->wanted, state->logical_of);
		state->generation = dr_generation();
		state->layout_cpu = this_cpu_index();
	}
	for (unsigned int slot = 0; slot < DR_SLOTS; slot++)
		cpu->logical_of[slot] = state->logical_of[slot];
	if (cpu->in_debug)
		now.dr7 = cpu->resume_dr7;
	if (!lazy || !dr_hardware_equal(&state->wanted, &now)) {
		dr_plan(&now, &state->wanted, !lazy, &plan);
		if (plan.disable_first)
			dr_set_dr7(cpu, plan.dr7_disabled);
		for (unsigned int slot = 0; slot < DR_SLOTS; slot++) {
			if (plan.address_mask & (1u << slot)) {
				write_dr_address(slot, plan.address[slot]);
				cpu->held.address[slot] = plan.address[slot];
			}
		}
		if (plan.write_dr7)
			dr_set_dr7(cpu, plan.dr7);
	}
	if (btf_supported)
		debugctl_update(DEBUGCTL_BTF, debugctl);
}

static void dr_count_lost_sync(void)
{
	__atomic_add_fetch(&dr_lost_syncs, 1, __ATOMIC_RELAXED);
}

/* Apply task's set here if it is still the one running here (an IPI may come late). */
static void dr_sync_here(void *task)
{
	unsigned int index = (unsigned int)(uintptr_t)task;
	unsigned long flags = spin_lock_irqsave(&dr_lock);

	if (switch_task_current()->index == index)
		dr_apply(index);
	spin_unlock_irqrestore(&dr_lock, flags);
}

void dr_sync(unsigned int task)
{
	int cpu = switch_task_running_cpu(task);

	if (cpu >= 0 && !smp_call((unsigned int)cpu, dr_sync_here, (void *)(uintptr_t)task))
		dr_count_lost_sync();
}

static void dr_sync_current_here(void *unused)
{
	(void)unused;
	dr_sync_current();
}

void dr_sync_current(void)
{
	unsigned long flags = spin_lock_irqsave(&dr_lock);

	dr_apply(switch_task_current()->index);
	spin_unlock_irqrestore(&dr_lock, flags);
}

void dr_sync_cpu(unsigned int cpu)
{
	if (!smp_call(cpu, dr_sync_current_here, NULL))
		dr_count_lost_sync();
}

void dr_sync_all(void)
{
	if (smp_call_all(dr_sync_current_here, NULL) != smp_cpus())
		dr_count_lost_sync();
}

uint64_t dr_sync_failures(void)
{
	return dr_lost_syncs;
}

/* Single-step lives in the user frame's TF; set or clear it once, as the flag says. */
static void dr_apply_single_step(struct dr_task *state, struct cpu_regs *user_regs)
{
	if (!user_regs || state->single_step == state->single_step_applied)
		return;
	if (state->single_step)
		user_regs->rflags |= RFLAGS_TF;
	else
		user_regs->rflags &= ~RFLAGS_TF;
	state->single_step_applied = state->single_step;
}

static void dr_switch_in(const struct switch_task *prev, const struct switch_task *next)
{
	(void)prev;
	spin_lock(&dr_lock);
	dr_apply_single_step(dr_task_get(next->index), next->user_regs);
	dr_apply(next->index);
	spin_unlock(&dr_lock);
}

static void dr_task_exit(const struct switch_task *task)
{
	dr_task_release(task->index);
}

/* arch runs it around every #DB (arch/x86/traps.h): first and last. */
static const struct debug_bracket dr_bracket = {
	.enter = dr_debug_enter,
	.exit = dr_debug_exit,
};

static const struct switch_hooks dr_hooks = {
	.switch_in = dr_switch_in,
	.task_exit = dr_task_exit,
};

bool dr_branch_step_supported(void)
{
	return btf_supported;
}

void dr_set_lazy(bool on)
{
	lazy = on;
}

bool dr_is_lazy(void)
{
	return lazy;
}

struct dr_hardware dr_shadow(void)
{
	return this_dr_cpu()->held;
}

void dr_restore_hardware(void)
{
	unsigned long flags = spin_lock_irqsave(&dr_lock);
	struct dr_cpu *cpu = this_dr_cpu();

	write_dr7(DR7_RESET);
	for (unsigned int slot = 0; slot < DR_SLOTS; slot++)
		write_dr_address(slot, cpu->held.address[slot]);
	write_dr7(cpu->held.dr7);
	spin_unlock_irqrestore(&dr_lock, flags);
}

/*
 * Whether DEBUGCTL keeps BTF: TCG and KVM here drop it (docs/platforms.md); real CPUs, and the
 * emulated one where it owns DEBUGCTL, keep it. The other bits keep what the shadow says.
 */
static bool dr_probe_btf(void)
{
	uint64_t held = debugctl_shadow();
	uint64_t value = 0;

	if (wrmsr_safe(MSR_IA32_DEBUGCTL, held | DEBUGCTL_BTF) ||
	    rdmsr_safe(MSR_IA32_DEBUGCTL, &value))
		return false;
	wrmsr_safe(MSR_IA32_DEBUGCTL, held);
	return value & DEBUGCTL_BTF;
}

/* Firmware may leave DEBUGCTL bits set (SDM Vol. 4 gives 0 only at reset): keep them. */
static void dr_init_debugctl(void)
{
	uint64_t value = 0;

	if (debugctl_init_cpu(&value))
		report_diag("CPU %u: IA32_DEBUGCTL faults on RDMSR; its shadow starts at 0",
			    this_cpu_index());
	else if (value)
		report_diag("CPU %u: IA32_DEBUGCTL=0x%llx at start; its shadow starts there",
			    this_cpu_index(), (unsigned long long)value);
}

void dr_init_cpu(void)
{
	struct dr_cpu *cpu = this_dr_cpu();

	dr_init_debugctl();
	write_cr4(read_cr4() | CR4_DE);
	write_dr7(DR7_RESET);
	write_dr6(DR6_RESET);
	for (unsigned int slot = 0; slot < DR_SLOTS; slot++)
		write_dr_address(slot, 0);
	memset(cpu, 0, sizeof(*cpu));
	cpu->held.dr7 = DR7_RESET;
	memset(cpu->logical_of, DR_NO_SLOT, sizeof(cpu->logical_of));
	memset(cpu->pinned_of, DR_NO_SLOT, sizeof(cpu->pinned_of));
	/* System-wide breakpoints installed before this CPU came up. */
	dr_sync_current();
}

void dr_init(void)
{
	dr_init_cpu();
	dr_install_init();
	btf_supported = dr_probe_btf();
	switch_hooks_register(&dr_hooks);
	exception_set_debug_bracket(&dr_bracket);
	dr_exception_init();
	dr_syscalls_init();
}
