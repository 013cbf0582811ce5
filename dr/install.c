/* SPDX-License-Identifier: MIT */
/* Installing and removing breakpoints: per-task and system-wide sets, and their reservation. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/cpu.h"
#include "arch/x86/cpuid.h"
#include "arch/x86/percpu.h"
#include "arch/x86/processor-flags.h"
#include "dr/bpext.h"
#include "dr/dr.h"
#include "dr/reserve.h"
#include "dr/state.h"
#include "dr/switch.h"
#include "kernel/smp.h"
#include "kernel/switch_hooks.h"
#include "lib/bitops.h"

/* BPEXT: AMD's DR0-3 address masks (CPUID 0x80000001 ECX[26]). */
static bool dr_has_bpext(void)
{
	return cpuid(CPUID_LEAF_EXTENDED, 0).eax >= CPUID_LEAF_AMD_FEATURES &&
	       (cpuid(CPUID_LEAF_AMD_FEATURES, 0).ecx & CPUID_80000001_ECX_BPEXT);
}

/*
 * Every rule of dr_validate() (of dr_validate_range() for a range beyond 8 bytes, which needs
 * BPEXT), then, for breakpoints on memory, the memory #DB uses.
 */
static enum dr_error dr_check(const struct dr_breakpoint *breakpoint, enum dr_requester requester)
{
	enum dr_error error;

	if (dr_is_range(breakpoint)) {
		struct dr_breakpoint as_byte;
		uint64_t mask;

		error = dr_validate_range(breakpoint, requester, dr_has_bpext(), &mask, &as_byte);
	} else {
		error = dr_validate(breakpoint, requester, read_cr4() & CR4_DE);
	}
	return error ? error : dr_validate_debug_memory(breakpoint);
}

/* With dr_lock held; breakpoint passed dr_check() before the lock (a bad pointer faults there). */
static int dr_install_locked(unsigned int task, const struct dr_breakpoint *breakpoint,
			     dr_handler handler, void *context)
{
	struct dr_task *state = dr_task_get(task);
	unsigned int held = bits_set(state->set.used);
	unsigned int slot = 0;

	/* Under dr_lock, which the task's exit takes to release its state: no state outlives it. */
	if (!switch_task_live(task))
		return -DR_ERROR_NO_TASK;
	if (!dr_reserve_task(dr_reservation_get(), held, held + 1))
		return -DR_ERROR_NO_SLOT;
	while (state->set.used & (1u << slot))
		slot++;
	state->set.breakpoints[slot] = *breakpoint;
	state->set.used |= (uint8_t)(1u << slot);
	state->handlers[slot] = (struct dr_handler_entry){ handler, context };
	dr_generation_bump();
	return (int)slot;
}

int dr_install_as(unsigned int task, const struct dr_breakpoint *breakpoint, dr_handler handler,
		  void *context, enum dr_requester requester)
{
	struct dr_breakpoint copy;
	enum dr_error error;
	unsigned long flags;
	int slot;

	/* Before the lock, where a fault fails only the caller's test: tasks[task] outside the
	 * table, or a breakpoint pointer that does not map. */
	if (task >= SWITCH_TASKS_MAX)
		return -DR_ERROR_NO_TASK;
	copy = *breakpoint;
	error = dr_check(&copy, requester);
	if (error)
		return -(int)error;
	flags = dr_lock_irqsave();
	slot = dr_install_locked(task, &copy, handler, context);

	dr_unlock_irqrestore(flags);
	if (slot >= 0)
		dr_sync(task);
	return slot;
}

int dr_install(unsigned int task, const struct dr_breakpoint *breakpoint, dr_handler handler,
	       void *context)
{
	return dr_install_as(task, breakpoint, handler, context, DR_REQUESTER_KERNEL);
}

static void dr_uninstall_locked(unsigned int task, int slot)
{
	struct dr_task *state = dr_task_get(task);
	unsigned int held = bits_set(state->set.used);

	state->set.used &= (uint8_t) ~(1u << slot);
	state->handlers[slot] = (struct dr_handler_entry){ NULL, NULL };
	dr_reserve_task(dr_reservation_get(), held, held - 1);
	dr_generation_bump();
}

int dr_install_many(unsigned int task, const struct dr_breakpoint *breakpoints, unsigned int count,
		    int *slots)
{
	unsigned long flags;
	int error = 0;
	unsigned int done;

	if (task >= SWITCH_TASKS_MAX)
		return -DR_ERROR_NO_TASK;
	for (done = 0; done < count; done++) { /* before the lock, as in dr_install_as() */
		enum dr_error invalid = dr_check(&breakpoints[done], DR_REQUESTER_KERNEL);

		if (invalid)
			return -(int)invalid;
		slots[done] = -1; /* written under the lock: it must map */
	}
	flags = dr_lock_irqsave();
	for (done = 0; done < count && !error; done++) {
		slots[done] = dr_install_locked(task, &breakpoints[done], NULL, NULL);
		if (slots[done] < 0)
			error = slots[done];
	}
	if (error) /* undo the ones that went in: all or nothing */
		for (unsigned int i = 0; i + 1 < done; i++)
			dr_uninstall_locked(task, slots[i]);
	dr_unlock_irqrestore(flags);
	if (!error)
		dr_sync(task);
	return error;
}

int dr_uninstall(unsigned int task, int slot)
{
	unsigned long flags;

	if (task >= SWITCH_TASKS_MAX) /* an exited task's index is let through: it holds nothing */
		return -DR_ERROR_NO_TASK;
	flags = dr_lock_irqsave();
	if (slot < 0 || slot >= DR_SLOTS || !(dr_task_get(task)->set.used & (1u << slot))) {
		dr_unlock_irqrestore(flags);
		return -DR_ERROR_NOT_INSTALLED;
	}
	dr_uninstall_locked(task, slot);
	dr_unlock_irqrestore(flags);
	dr_sync(task);
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
	return task < SWITCH_TASKS_MAX ? bits_set(dr_task_get(task)->set.used) : 0;
}

unsigned int dr_task_free_slots(unsigned int task)
{
	return dr_reservation_free_for_task(dr_reservation_get(), dr_task_count(task));
}

int dr_install_system(const struct dr_breakpoint *breakpoint, dr_handler handler, void *context)
{
	enum dr_error error = dr_check(breakpoint, DR_REQUESTER_KERNEL);
	unsigned long flags;
	int slot = DR_SLOTS - 1;

	if (error)
		return -(int)error;
	flags = dr_lock_irqsave();
	if (!dr_reserve_system(dr_reservation_get(), 1)) {
		dr_unlock_irqrestore(flags);
		return -DR_ERROR_NO_SLOT;
	}
	/* From the top down, so that tasks (filled from the bottom) move as little as possible. */
	while (dr_system_set()->used & (1u << slot))
		slot--;
	dr_system_set()->breakpoints[slot] = *breakpoint;
	dr_system_set()->used |= (uint8_t)(1u << slot);
	*dr_system_handler((unsigned int)slot) = (struct dr_handler_entry){ handler, context };
	dr_generation_bump();
	dr_unlock_irqrestore(flags);
	dr_sync_all();
	return slot;
}

int dr_uninstall_system(int slot)
{
	unsigned long flags = dr_lock_irqsave();

	if (slot < 0 || slot >= DR_SLOTS || !(dr_system_set()->used & (1u << slot))) {
		dr_unlock_irqrestore(flags);
		return -DR_ERROR_NOT_INSTALLED;
	}
	dr_system_set()->used &= (uint8_t) ~(1u << slot);
	*dr_system_handler((unsigned int)slot) = (struct dr_handler_entry){ NULL, NULL };
	dr_release_system(dr_reservation_get(), 1);
	dr_generation_bump();
	dr_unlock_irqrestore(flags);
	dr_sync_all();
	return 0;
}

int dr_install_pinned(unsigned int cpu, const struct dr_breakpoint *breakpoint, dr_handler handler,
		      void *context)
{
	enum dr_error error = dr_check(breakpoint, DR_REQUESTER_KERNEL);
	unsigned long flags;
	int slot = 0;

	if (error)
		return -(int)error;
	if (cpu >= smp_cpus())
		return -DR_ERROR_NO_CPU;
	flags = dr_lock_irqsave();
	if (!dr_reserve_pinned(dr_reservation_get(), cpu, 1)) {
		dr_unlock_irqrestore(flags);
		return -DR_ERROR_NO_SLOT;
	}
	while (dr_pinned_set(cpu)->used & (1u << slot))
		slot++;
	dr_pinned_set(cpu)->breakpoints[slot] = *breakpoint;
	dr_pinned_set(cpu)->used |= (uint8_t)(1u << slot);
	*dr_pinned_handler(cpu, (unsigned int)slot) = (struct dr_handler_entry){ handler, context };
	dr_generation_bump();
	dr_unlock_irqrestore(flags);
	dr_sync_cpu(cpu);
	return slot;
}

int dr_uninstall_pinned(unsigned int cpu, int slot)
{
	unsigned long flags;

	if (cpu >= percpu_count() || slot < 0 || slot >= DR_SLOTS)
		return -DR_ERROR_NOT_INSTALLED;
	flags = dr_lock_irqsave();
	if (!(dr_pinned_set(cpu)->used & (1u << slot))) {
		dr_unlock_irqrestore(flags);
		return -DR_ERROR_NOT_INSTALLED;
	}
	dr_pinned_set(cpu)->used &= (uint8_t) ~(1u << slot);
	*dr_pinned_handler(cpu, (unsigned int)slot) = (struct dr_handler_entry){ NULL, NULL };
	dr_release_pinned(dr_reservation_get(), cpu, 1);
	dr_generation_bump();
	dr_unlock_irqrestore(flags);
	dr_sync_cpu(cpu);
	return 0;
}

unsigned int dr_uninstall_all_pinned(void)
{
	unsigned int count = 0;

	for (unsigned int cpu = 0; cpu < percpu_count(); cpu++)
		for (int slot = 0; slot < DR_SLOTS; slot++)
			count += dr_uninstall_pinned(cpu, slot) == 0;
	return count;
}

int dr_set_single_step(unsigned int task, bool on)
{
	if (!switch_task_live(task))
		return -DR_ERROR_NO_TASK;
	dr_task_get(task)->single_step = on;
	return 0;
}

int dr_set_branch_step(unsigned int task, bool on)
{
	unsigned long flags;

	if (on && !dr_branch_step_supported())
		return -DR_ERROR_UNSUPPORTED;
	if (task >= SWITCH_TASKS_MAX)
		return -DR_ERROR_NO_TASK;
	flags = dr_lock_irqsave();
	if (!switch_task_live(task)) {
		dr_unlock_irqrestore(flags);
		return -DR_ERROR_NO_TASK;
	}
	dr_task_get(task)->branch_step = on;
	dr_unlock_irqrestore(flags);
	dr_sync(task);
	return 0;
}

void dr_set_user_handler(unsigned int task, uint64_t handler)
{
	if (switch_task_live(task))
		dr_task_get(task)->user_handler = handler;
}
