/* SPDX-License-Identifier: MIT */
/* Switching DR0-3/DR7: the lazy (or eager) apply of a task's layout, and its sync to other CPUs. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/debugctl.h"
#include "arch/x86/msr-index.h"
#include "arch/x86/percpu.h"
#include "arch/x86/processor-flags.h"
#include "arch/x86/traps.h"
#include "dr/dr.h"
#include "dr/state.h"
#include "dr/switch.h"
#include "kernel/smp.h"
#include "kernel/spinlock.h"
#include "kernel/switch_hooks.h"
#include "lib/cmdline.h"

static uint64_t dr_lost_syncs; /* changes another CPU did not take within SMP_CALL_TIMEOUT_MS */
static bool lazy = true;

CMDLINE_OPTION(option_lazy, .name = "dr.lazy", .syntax = "0|1", .parse = cmdline_parse_bool,
	       .dest = &lazy);

static bool dr_hardware_equal(const struct dr_hardware *a, const struct dr_hardware *b)
{
	for (unsigned int slot = 0; slot < DR_SLOTS; slot++)
		if (a->address[slot] != b->address[slot] || a->mask[slot] != b->mask[slot])
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
	struct dr_cpu *cpu = dr_cpu_this();
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
			dr_shadow_write_dr7(plan.dr7_disabled);
		for (unsigned int slot = 0; slot < DR_SLOTS; slot++)
			if (plan.mask_bits & (1u << slot))
				dr_shadow_write_mask(slot, plan.mask[slot]);
		for (unsigned int slot = 0; slot < DR_SLOTS; slot++)
			if (plan.address_mask & (1u << slot))
				dr_shadow_write_address(slot, plan.address[slot]);
		if (plan.write_dr7)
			dr_shadow_write_dr7(plan.dr7);
	}
	if (dr_branch_step_supported())
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
	unsigned long flags = dr_lock_irqsave();

	if (switch_task_current()->index == index)
		dr_apply(index);
	dr_unlock_irqrestore(flags);
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
	unsigned long flags = dr_lock_irqsave();

	dr_apply(switch_task_current()->index);
	dr_unlock_irqrestore(flags);
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

void dr_switch_in(const struct switch_task *prev, const struct switch_task *next)
{
	(void)prev;
	dr_lock_irqs_off();
	dr_apply_single_step(dr_task_get(next->index), next->user_regs);
	dr_apply(next->index);
	dr_unlock_irqs_off();
}

void dr_task_exit(const struct switch_task *task)
{
	dr_task_release(task->index);
}

void dr_set_lazy(bool on)
{
	lazy = on;
}

bool dr_is_lazy(void)
{
	return lazy;
}
