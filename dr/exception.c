/* SPDX-License-Identifier: MIT */
/* #DB: which condition fired (DR6, SDM Vol. 3 §18.2.3), who owns it, and RF for execute hits. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/debug-registers.h"
#include "arch/x86/percpu.h"
#include "arch/x86/processor-flags.h"
#include "arch/x86/regs.h"
#include "dr/dr.h"
#include "dr/exception.h"
#include "dr/state.h"
#include "kernel/switch_hooks.h"

static void dr_record(struct dr_task *state, const struct dr_hit *hit)
{
	/* A #DB inside dr_read_hits() on this CPU cannot wait for itself: the hit is lost. */
	if (!dr_hits_lock_in_debug()) {
		state->hits_lost++;
		return;
	}
	if (state->hit_count == DR_HITS_MAX)
		state->hits_lost++;
	else
		state->hits[(state->hit_first + state->hit_count++) % DR_HITS_MAX] = *hit;
	dr_hits_unlock_in_debug();
}

unsigned int dr_read_hits(unsigned int task, struct dr_hit *hits, unsigned int capacity,
			  unsigned int *lost)
{
	struct dr_task *state;
	unsigned long flags;
	unsigned int taken = 0;

	if (lost)
		*lost = 0;
	if (task >= SWITCH_TASKS_MAX) /* before the lock: outside the table */
		return 0;
	state = dr_task_get(task);
	flags = dr_hits_lock_irqsave();

	for (; taken < capacity && state->hit_count; taken++, state->hit_count--) {
		hits[taken] = state->hits[state->hit_first];
		state->hit_first = (state->hit_first + 1) % DR_HITS_MAX;
	}
	state->hits_taken += taken;
	if (lost)
		*lost = state->hits_lost;
	dr_hits_unlock_irqrestore(flags);
	return taken;
}

unsigned int dr_discard_hits(unsigned int task)
{
	struct dr_task *state;
	unsigned long flags;
	unsigned int discarded;

	if (task >= SWITCH_TASKS_MAX)
		return 0;
	state = dr_task_get(task);
	flags = dr_hits_lock_irqsave();
	discarded = state->hit_count;

	state->hits_taken += discarded; /* as if read: a reader's serial stays true */
	state->hit_first = 0;
	state->hit_count = 0;
	state->hits_lost = 0;
	dr_hits_unlock_irqrestore(flags);
	return discarded;
}

unsigned int dr_peek_hits(unsigned int task, struct dr_hit *hits, unsigned int capacity,
			  uint64_t *serial)
{
	struct dr_task *state = dr_task_get(task);
	unsigned long flags = dr_hits_lock_irqsave();
	unsigned int copied = 0;

	for (; copied < capacity && copied < state->hit_count; copied++)
		hits[copied] = state->hits[(state->hit_first + copied) % DR_HITS_MAX];
	*serial = state->hits_taken;
	dr_hits_unlock_irqrestore(flags);
	return copied;
}

void dr_take_hits(unsigned int task, uint64_t serial, unsigned int count)
{
	struct dr_task *state = dr_task_get(task);
	unsigned long flags = dr_hits_lock_irqsave();
	uint64_t end = serial + count;
	unsigned int take;

	/* Those below hits_taken went to another reader already. */
	take = end > state->hits_taken ? (unsigned int)(end - state->hits_taken) : 0;
	if (take > state->hit_count)
		take = state->hit_count;
	state->hit_first = (state->hit_first + take) % DR_HITS_MAX;
	state->hit_count -= take;
	state->hits_taken += take;
	dr_hits_unlock_irqrestore(flags);
}

/* A user task's own handler, if it set one: it gets the slot, DR6 and the RIP of the hit. */
static void dr_enter_user_handler(const struct dr_task *state, const struct dr_hit *hit,
				  struct cpu_regs *regs)
{
	if (!hit->from_user || !state->user_handler)
		return;
	regs->rdi = hit->slot;
	regs->rsi = hit->dr6;
	regs->rdx = hit->rip;
	regs->rip = state->user_handler;
}

static void dr_dispatch_slot(unsigned int slot, unsigned long dr6, struct cpu_regs *regs)
{
	const struct switch_task *current = switch_task_current();
	struct dr_task *state = dr_task_get(current->index);
	const struct dr_handler_entry *entry;
	struct dr_hit hit = {
		.rip = regs->rip,
		.dr6 = dr6,
		.hardware_slot = (uint8_t)slot,
		.from_user = regs_from_user(regs),
		.task_id = current->id,
		.cpu = this_cpu_index(),
	};
	const struct dr_breakpoint *breakpoint;
	bool owned_by_task = !(dr_system_set()->used & (1u << slot));

	if (dr_system_set()->used & (1u << slot)) {
		breakpoint = &dr_system_set()->breakpoints[slot];
		hit.slot = (uint8_t)slot;
		entry = dr_system_handler(slot);
	} else if (dr_pinned_of(slot) != DR_NO_SLOT) {
		hit.slot = dr_pinned_of(slot);
		breakpoint = &dr_pinned_set(this_cpu_index())->breakpoints[hit.slot];
		entry = dr_pinned_handler(this_cpu_index(), hit.slot);
		owned_by_task = false;
	} else {
		hit.slot = dr_logical_of(slot);
		breakpoint = &state->set.breakpoints[hit.slot];
		entry = &state->handlers[hit.slot];
	}
	hit.address = breakpoint->address;
	hit.type = (uint8_t)breakpoint->type;
	if (owned_by_task)
		dr_record(state, &hit);
	if (breakpoint->type == DR_TYPE_EXECUTE)
		regs->rflags |=
			RFLAGS_RF; /* fault-class: resume without firing again (§18.3.1.1) */
	if (entry->handler)
		entry->handler(&hit, regs, entry->context);
	if (owned_by_task)
		dr_enter_user_handler(state, &hit, regs);
}

bool dr_debug_exception(struct cpu_regs *regs)
{
	/* DR7 is clear (dr_debug_enter(), arch's bracket): nothing below raises #DB on this stack.
	 */
	unsigned long dr7 = dr_debug_held();
	unsigned long dr6 = read_dr6();
	const struct switch_task *current = switch_task_current();
	bool handled = false;

	/* The CPU never clears DR6 (§18.2.3): reset it, so the next #DB starts clean. */
	write_dr6(DR6_RESET);
	for (unsigned int slot = 0; slot < DR_SLOTS; slot++) {
		/* B0-B3 may also be set for conditions that matched a disabled slot: skip those. */
		if (!(dr6 & (DR6_B0 << slot)) || !(dr7 & dr7_slot_enable_mask(slot)))
			continue;
		dr_dispatch_slot(slot, dr6, regs);
		handled = true;
	}
	if (dr6 & DR6_BS) {
		struct dr_task *state = dr_task_get(current->index);
		struct dr_hit hit = {
			.rip = regs->rip,
			.dr6 = dr6,
			.slot = DR_NO_SLOT,
			.hardware_slot = DR_NO_SLOT,
			.from_user = regs_from_user(regs),
			.task_id = current->id,
			.cpu = this_cpu_index(),
		};

		if (state->single_step) {
			dr_record(state, &hit);
			handled = true;
		} else if (state->single_step_applied && hit.from_user) {
			/* Turned off while the task ran with TF set: its frame still had TF. This
			 * trap ends it, unrecorded, instead of reaching the task as a fault. */
			regs->rflags &= ~RFLAGS_TF;
			state->single_step_applied = false;
			handled = true;
		}
	}
	if (dr6 & DR6_BD) {
		/* General detect: the CPU cleared DR7.GD; the MOV DR runs when we return. */
		struct dr_hit hit = { .rip = regs->rip,
				      .dr6 = dr6,
				      .slot = DR_NO_SLOT,
				      .hardware_slot = DR_NO_SLOT,
				      .task_id = current->id,
				      .cpu = this_cpu_index() };

		dr_record(dr_task_get(current->index), &hit);
		handled = true;
	}
	if (!handled)
		write_dr6(dr6); /* for whoever reports the unexpected #DB */
	return handled;
}
