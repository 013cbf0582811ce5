/* SPDX-License-Identifier: MIT */
/* Per-task and system-wide breakpoints, their reservation, and the lazy switch of DR0-3/DR7. */
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
#include "arch/x86/switch_hooks.h"
#include "dr/dr.h"
#include "dr/internal.h"
#include "dr/reserve.h"
#include "lib/bitops.h"
#include "lib/cmdline.h"
#include "lib/string.h"

/* Per CPU: what the registers hold, and which logical slot of the current task is where. */
struct dr_cpu {
	struct dr_hardware held;
	uint8_t logical_of[DR_SLOTS];
};

static struct dr_task tasks[SWITCH_TASKS_MAX];
static struct dr_set system_set;
static struct dr_handler_entry system_handlers[DR_SLOTS];
static struct dr_reservation reservation;
static struct dr_cpu cpus[MAX_CPUS];
static bool lazy = true;
/* Bumped by every change of any breakpoint set: a task's cached layout is stale when its
 * generation differs. Starts at 1 so that a zeroed dr_task is stale. */
static uint64_t generation = 1;
static bool btf_supported;

CMDLINE_OPTION(option_lazy, .name = "dr.lazy", .syntax = "0|1", .parse = cmdline_parse_bool,
	       .dest = &lazy);

static struct dr_cpu *this_dr_cpu(void)
{
	return &cpus[this_cpu()->index];
}

struct dr_task *dr_task_get(unsigned int task)
{
	return &tasks[task];
}

const struct dr_set *dr_system_set(void)
{
	return &system_set;
}

const struct dr_handler_entry *dr_system_handler(unsigned int slot)
{
	return &system_handlers[slot];
}

uint8_t dr_logical_of(unsigned int hardware_slot)
{
	return this_dr_cpu()->logical_of[hardware_slot];
}

unsigned long dr_held_dr7(void)
{
	return this_dr_cpu()->held.dr7;
}

static bool dr_hardware_equal(const struct dr_hardware *a, const struct dr_hardware *b)
{
	for (unsigned int slot = 0; slot < DR_SLOTS; slot++)
		if (a->address[slot] != b->address[slot])
			return false;
	return a->dr7 == b->dr7;
}

/*
 * Make the registers what task (the one now running here) needs, with the fewest writes, in
 * the order dr_plan() gives. The switch path: when the cached layout equals what the registers
 * hold, nothing else runs, so a switch between identical configurations costs a compare.
 */
static void dr_apply(unsigned int task)
{
	struct dr_cpu *cpu = this_dr_cpu();
	struct dr_task *state = &tasks[task];
	struct dr_write_plan plan;
	uint64_t debugctl = state->branch_step ? DEBUGCTL_BTF : 0;

	if (state->generation != generation) {
		dr_layout(&system_set, &state->set, &state->wanted, state->logical_of);
		state->generation = generation;
	}
	for (unsigned int slot = 0; slot < DR_SLOTS; slot++)
		cpu->logical_of[slot] = state->logical_of[slot];
	if (!lazy || !dr_hardware_equal(&state->wanted, &cpu->held)) {
		dr_plan(&cpu->held, &state->wanted, !lazy, &plan);
		if (plan.disable_first) {
			write_dr7(plan.dr7_disabled);
			cpu->held.dr7 = plan.dr7_disabled;
		}
		for (unsigned int slot = 0; slot < DR_SLOTS; slot++) {
			if (plan.address_mask & (1u << slot)) {
				write_dr_address(slot, plan.address[slot]);
				cpu->held.address[slot] = plan.address[slot];
			}
		}
		if (plan.write_dr7) {
			write_dr7(plan.dr7);
			cpu->held.dr7 = plan.dr7;
		}
	}
	if (btf_supported)
		debugctl_update(DEBUGCTL_BTF, debugctl);
}

/* After a change to task's breakpoints: apply it now if task is the one running here. */
static void dr_sync(unsigned int task)
{
	if (switch_task_current()->index == task)
		dr_apply(task);
}

/* Re-apply for whatever runs here: after a system-wide change. */
static void dr_sync_current(void)
{
	dr_apply(switch_task_current()->index);
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
	dr_apply_single_step(&tasks[next->index], next->user_regs);
	dr_apply(next->index);
}

static void dr_task_exit(const struct switch_task *task)
{
	struct dr_task *state = &tasks[task->index];

	dr_reserve_task(&reservation, bits_set(state->set.used), 0);
	memset(state, 0, sizeof(*state));
}

static const struct switch_hooks dr_hooks = {
	.switch_in = dr_switch_in,
	.task_exit = dr_task_exit,
};

static int dr_install_locked(unsigned int task, const struct dr_breakpoint *breakpoint,
			     dr_handler handler, void *context, enum dr_requester requester)
{
	struct dr_task *state = &tasks[task];
	unsigned int held = bits_set(state->set.used);
	enum dr_error error = dr_validate(breakpoint, requester, read_cr4() & CR4_DE);
	unsigned int slot = 0;

	if (error)
		return -(int)error;
	if (!dr_reserve_task(&reservation, held, held + 1))
		return -DR_ERROR_NO_SLOT;
	while (state->set.used & (1u << slot))
		slot++;
	state->set.breakpoints[slot] = *breakpoint;
	state->set.used |= (uint8_t)(1u << slot);
	state->handlers[slot] = (struct dr_handler_entry){ handler, context };
	generation++;
	return (int)slot;
}

int dr_install_as(unsigned int task, const struct dr_breakpoint *breakpoint, dr_handler handler,
		  void *context, enum dr_requester requester)
{
	unsigned long flags = local_irq_save();
	int slot = dr_install_locked(task, breakpoint, handler, context, requester);

	if (slot >= 0)
		dr_sync(task);
	local_irq_restore(flags);
	return slot;
}

int dr_install(unsigned int task, const struct dr_breakpoint *breakpoint, dr_handler handler,
	       void *context)
{
	return dr_install_as(task, breakpoint, handler, context, DR_REQUESTER_KERNEL);
}

static void dr_uninstall_locked(unsigned int task, int slot)
{
	struct dr_task *state = &tasks[task];
	unsigned int held = bits_set(state->set.used);

	state->set.used &= (uint8_t) ~(1u << slot);
	state->handlers[slot] = (struct dr_handler_entry){ NULL, NULL };
	dr_reserve_task(&reservation, held, held - 1);
	generation++;
}

int dr_install_many(unsigned int task, const struct dr_breakpoint *breakpoints, unsigned int count,
		    int *slots)
{
	unsigned long flags = local_irq_save();
	int error = 0;
	unsigned int done;

	for (done = 0; done < count && !error; done++) {
		slots[done] = dr_install_locked(task, &breakpoints[done], NULL, NULL,
						DR_REQUESTER_KERNEL);
		if (slots[done] < 0)
			error = slots[done];
	}
	if (error) /* undo the ones that went in: all or nothing */
		for (unsigned int i = 0; i + 1 < done; i++)
			dr_uninstall_locked(task, slots[i]);
	else
		dr_sync(task);
	local_irq_restore(flags);
	return error;
}

int dr_uninstall(unsigned int task, int slot)
{
	unsigned long flags;

	if (slot < 0 || slot >= DR_SLOTS || !(tasks[task].set.used & (1u << slot)))
		return -DR_ERROR_NOT_INSTALLED;
	flags = local_irq_save();
	dr_uninstall_locked(task, slot);
	dr_sync(task);
	local_irq_restore(flags);
	return 0;
}

unsigned int dr_uninstall_all(unsigned int task)
{
	unsigned int count = 0;

	for (int slot = 0; slot < DR_SLOTS; slot++)
		count += dr_uninstall(task, slot) == 0;
	return count;
}

unsigned int dr_uninstall_all_system(void)
{
	unsigned int count = 0;

	for (int slot = 0; slot < DR_SLOTS; slot++)
		count += dr_uninstall_system(slot) == 0;
	return count;
}

unsigned int dr_task_count(unsigned int task)
{
	return bits_set(tasks[task].set.used);
}

unsigned int dr_task_free_slots(unsigned int task)
{
	return dr_reservation_free_for_task(&reservation, dr_task_count(task));
}

int dr_install_system(const struct dr_breakpoint *breakpoint, dr_handler handler, void *context)
{
	enum dr_error error = dr_validate(breakpoint, DR_REQUESTER_KERNEL, read_cr4() & CR4_DE);
	unsigned long flags;
	int slot = DR_SLOTS - 1;

	if (error)
		return -(int)error;
	flags = local_irq_save();
	if (!dr_reserve_system(&reservation, 1)) {
		local_irq_restore(flags);
		return -DR_ERROR_NO_SLOT;
	}
	/* From the top down, so that tasks (filled from the bottom) move as little as possible. */
	while (system_set.used & (1u << slot))
		slot--;
	system_set.breakpoints[slot] = *breakpoint;
	system_set.used |= (uint8_t)(1u << slot);
	system_handlers[slot] = (struct dr_handler_entry){ handler, context };
	generation++;
	dr_sync_current();
	local_irq_restore(flags);
	return slot;
}

int dr_uninstall_system(int slot)
{
	unsigned long flags;

	if (slot < 0 || slot >= DR_SLOTS || !(system_set.used & (1u << slot)))
		return -DR_ERROR_NOT_INSTALLED;
	flags = local_irq_save();
	system_set.used &= (uint8_t) ~(1u << slot);
	system_handlers[slot] = (struct dr_handler_entry){ NULL, NULL };
	dr_release_system(&reservation, 1);
	generation++;
	dr_sync_current();
	local_irq_restore(flags);
	return 0;
}

int dr_set_single_step(unsigned int task, bool on)
{
	tasks[task].single_step = on;
	return 0;
}

int dr_set_branch_step(unsigned int task, bool on)
{
	unsigned long flags;

	if (on && !btf_supported)
		return -DR_ERROR_UNSUPPORTED;
	flags = local_irq_save();
	tasks[task].branch_step = on;
	dr_sync(task);
	local_irq_restore(flags);
	return 0;
}

bool dr_branch_step_supported(void)
{
	return btf_supported;
}

void dr_set_user_handler(unsigned int task, uint64_t handler)
{
	tasks[task].user_handler = handler;
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
	struct dr_cpu *cpu = this_dr_cpu();
	unsigned long flags = local_irq_save();

	write_dr7(DR7_RESET);
	for (unsigned int slot = 0; slot < DR_SLOTS; slot++)
		write_dr_address(slot, cpu->held.address[slot]);
	write_dr7(cpu->held.dr7);
	local_irq_restore(flags);
}

/* Whether DEBUGCTL keeps BTF: TCG and KVM here drop it (platforms.md), real CPUs keep it. */
static bool dr_probe_btf(void)
{
	uint64_t value = 0;

	if (wrmsr_safe(MSR_IA32_DEBUGCTL, DEBUGCTL_BTF) || rdmsr_safe(MSR_IA32_DEBUGCTL, &value))
		return false;
	wrmsr_safe(MSR_IA32_DEBUGCTL, 0);
	return value & DEBUGCTL_BTF;
}

void dr_init(void)
{
	struct dr_cpu *cpu = this_dr_cpu();

	write_cr4(read_cr4() | CR4_DE);
	write_dr7(DR7_RESET);
	write_dr6(DR6_RESET);
	for (unsigned int slot = 0; slot < DR_SLOTS; slot++)
		write_dr_address(slot, 0);
	memset(cpu, 0, sizeof(*cpu));
	cpu->held.dr7 = DR7_RESET;
	memset(cpu->logical_of, DR_NO_SLOT, sizeof(cpu->logical_of));
	btf_supported = dr_probe_btf();
	switch_hooks_register(&dr_hooks);
	dr_exception_init();
	dr_syscalls_init();
}
