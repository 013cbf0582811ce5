/* SPDX-License-Identifier: MIT */
/* Installing and removing breakpoints: per-task and system-wide sets, and their reservation. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/cpu.h"
#include "arch/x86/paging.h"
#include "arch/x86/percpu.h"
#include "arch/x86/processor-flags.h"
#include "dr/dr.h"
#include "dr/internal.h"
#include "dr/reserve.h"
#include "kernel/pfa.h"
#include "kernel/smp.h"
#include "kernel/spinlock.h"
#include "kernel/switch_hooks.h"
#include "lib/bitops.h"
#include "lib/panic.h"
#include "lib/string.h"

static struct dr_task tasks[SWITCH_TASKS_MAX];
static struct dr_set system_set;
static struct dr_handler_entry system_handlers[DR_SLOTS];
static DEFINE_PER_CPU(struct dr_set, pinned_sets);
static DEFINE_PER_CPU(struct dr_handler_entry[DR_SLOTS], pinned_handlers);
/* Per-CPU counts of pinned breakpoints; tasks and system-wide ones count on every CPU. */
static struct dr_reservation reservation;
struct spinlock dr_lock = SPINLOCK_INIT("dr");
/* Bumped by every change of any breakpoint set: a task's cached layout is stale when its
 * generation differs. Starts at 1 so that a zeroed dr_task is stale. */
static uint64_t generation = 1;

uint64_t dr_generation(void)
{
	return generation;
}

void dr_task_release(unsigned int task)
{
	struct dr_task *state = &tasks[task];
	unsigned long flags = spin_lock_irqsave(&dr_lock);

	dr_reserve_task(&reservation, bits_set(state->set.used), 0);
	memset(state, 0, sizeof(*state));
	spin_unlock_irqrestore(&dr_lock, flags);
}

struct dr_task *dr_task_get(unsigned int task)
{
	return &tasks[task];
}

void dr_install_init(void)
{
	unsigned int cpus = percpu_count();
	unsigned int pages =
		(unsigned int)((cpus * sizeof(unsigned int) + PAGE_SIZE - 1) / PAGE_SIZE);
	uint64_t pinned = pfa_alloc_pages(pages);

	if (!pinned)
		panic("dr: no memory for the pinned counts of %u CPUs", cpus);
	dr_reservation_init(&reservation, phys_to_virt(pinned), cpus);
}

void dr_tasks_range(uint64_t *start, uint64_t *end)
{
	*start = (uint64_t)&tasks[0];
	*end = (uint64_t)&tasks[SWITCH_TASKS_MAX];
}

/* Every rule of dr_validate(), then, for breakpoints on memory, the memory #DB uses. */
static enum dr_error dr_check(const struct dr_breakpoint *breakpoint, enum dr_requester requester)
{
	enum dr_error error = dr_validate(breakpoint, requester, read_cr4() & CR4_DE);

	return error ? error : dr_validate_debug_memory(breakpoint);
}

const struct dr_set *dr_system_set(void)
{
	return &system_set;
}

const struct dr_handler_entry *dr_system_handler(unsigned int slot)
{
	return &system_handlers[slot];
}

const struct dr_set *dr_pinned_set(unsigned int cpu)
{
	return per_cpu_ptr(pinned_sets, cpu);
}

const struct dr_handler_entry *dr_pinned_handler(unsigned int cpu, unsigned int slot)
{
	return &(*per_cpu_ptr(pinned_handlers, cpu))[slot];
}

/* With dr_lock held; breakpoint passed dr_check() before the lock (a bad pointer faults there). */
static int dr_install_locked(unsigned int task, const struct dr_breakpoint *breakpoint,
			     dr_handler handler, void *context)
{
	struct dr_task *state = &tasks[task];
	unsigned int held = bits_set(state->set.used);
	unsigned int slot = 0;

	/* Under dr_lock, which the task's exit takes to release its state: no state outlives it. */
	if (!switch_task_live(task))
		return -DR_ERROR_NO_TASK;
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
	flags = spin_lock_irqsave(&dr_lock);
	slot = dr_install_locked(task, &copy, handler, context);

	spin_unlock_irqrestore(&dr_lock, flags);
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
	flags = spin_lock_irqsave(&dr_lock);
	for (done = 0; done < count && !error; done++) {
		slots[done] = dr_install_locked(task, &breakpoints[done], NULL, NULL);
		if (slots[done] < 0)
			error = slots[done];
	}
	if (error) /* undo the ones that went in: all or nothing */
		for (unsigned int i = 0; i + 1 < done; i++)
			dr_uninstall_locked(task, slots[i]);
	spin_unlock_irqrestore(&dr_lock, flags);
	if (!error)
		dr_sync(task);
	return error;
}

int dr_uninstall(unsigned int task, int slot)
{
	unsigned long flags;

	if (task >= SWITCH_TASKS_MAX) /* an exited task's index is let through: it holds nothing */
		return -DR_ERROR_NO_TASK;
	flags = spin_lock_irqsave(&dr_lock);
	if (slot < 0 || slot >= DR_SLOTS || !(tasks[task].set.used & (1u << slot))) {
		spin_unlock_irqrestore(&dr_lock, flags);
		return -DR_ERROR_NOT_INSTALLED;
	}
	dr_uninstall_locked(task, slot);
	spin_unlock_irqrestore(&dr_lock, flags);
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
	return task < SWITCH_TASKS_MAX ? bits_set(tasks[task].set.used) : 0;
}

unsigned int dr_task_free_slots(unsigned int task)
{
	return dr_reservation_free_for_task(&reservation, dr_task_count(task));
}

int dr_install_system(const struct dr_breakpoint *breakpoint, dr_handler handler, void *context)
{
	enum dr_error error = dr_check(breakpoint, DR_REQUESTER_KERNEL);
	unsigned long flags;
	int slot = DR_SLOTS - 1;

	if (error)
		return -(int)error;
	flags = spin_lock_irqsave(&dr_lock);
	if (!dr_reserve_system(&reservation, 1)) {
		spin_unlock_irqrestore(&dr_lock, flags);
		return -DR_ERROR_NO_SLOT;
	}
	/* From the top down, so that tasks (filled from the bottom) move as little as possible. */
	while (system_set.used & (1u << slot))
		slot--;
	system_set.breakpoints[slot] = *breakpoint;
	system_set.used |= (uint8_t)(1u << slot);
	system_handlers[slot] = (struct dr_handler_entry){ handler, context };
	generation++;
	spin_unlock_irqrestore(&dr_lock, flags);
	dr_sync_all();
	return slot;
}

int dr_uninstall_system(int slot)
{
	unsigned long flags = spin_lock_irqsave(&dr_lock);

	if (slot < 0 || slot >= DR_SLOTS || !(system_set.used & (1u << slot))) {
		spin_unlock_irqrestore(&dr_lock, flags);
		return -DR_ERROR_NOT_INSTALLED;
	}
	system_set.used &= (uint8_t) ~(1u << slot);
	system_handlers[slot] = (struct dr_handler_entry){ NULL, NULL };
	dr_release_system(&reservation, 1);
	generation++;
	spin_unlock_irqrestore(&dr_lock, flags);
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
	flags = spin_lock_irqsave(&dr_lock);
	if (!dr_reserve_pinned(&reservation, cpu, 1)) {
		spin_unlock_irqrestore(&dr_lock, flags);
		return -DR_ERROR_NO_SLOT;
	}
	while (per_cpu_ptr(pinned_sets, cpu)->used & (1u << slot))
		slot++;
	per_cpu_ptr(pinned_sets, cpu)->breakpoints[slot] = *breakpoint;
	per_cpu_ptr(pinned_sets, cpu)->used |= (uint8_t)(1u << slot);
	(*per_cpu_ptr(pinned_handlers, cpu))[slot] = (struct dr_handler_entry){ handler, context };
	generation++;
	spin_unlock_irqrestore(&dr_lock, flags);
	dr_sync_cpu(cpu);
	return slot;
}

int dr_uninstall_pinned(unsigned int cpu, int slot)
{
	unsigned long flags;

	if (cpu >= percpu_count() || slot < 0 || slot >= DR_SLOTS)
		return -DR_ERROR_NOT_INSTALLED;
	flags = spin_lock_irqsave(&dr_lock);
	if (!(per_cpu_ptr(pinned_sets, cpu)->used & (1u << slot))) {
		spin_unlock_irqrestore(&dr_lock, flags);
		return -DR_ERROR_NOT_INSTALLED;
	}
	per_cpu_ptr(pinned_sets, cpu)->used &= (uint8_t) ~(1u << slot);
	(*per_cpu_ptr(pinned_handlers, cpu))[slot] = (struct dr_handler_entry){ NULL, NULL };
	dr_release_pinned(&reservation, cpu, 1);
	generation++;
	spin_unlock_irqrestore(&dr_lock, flags);
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
	tasks[task].single_step = on;
	return 0;
}

int dr_set_branch_step(unsigned int task, bool on)
{
	unsigned long flags;

	if (on && !dr_branch_step_supported())
		return -DR_ERROR_UNSUPPORTED;
	if (task >= SWITCH_TASKS_MAX)
		return -DR_ERROR_NO_TASK;
	flags = spin_lock_irqsave(&dr_lock);
	if (!switch_task_live(task)) {
		spin_unlock_irqrestore(&dr_lock, flags);
		return -DR_ERROR_NO_TASK;
	}
	tasks[task].branch_step = on;
	spin_unlock_irqrestore(&dr_lock, flags);
	dr_sync(task);
	return 0;
}

void dr_set_user_handler(unsigned int task, uint64_t handler)
{
	if (switch_task_live(task))
		tasks[task].user_handler = handler;
}
