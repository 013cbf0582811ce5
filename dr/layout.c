/* SPDX-License-Identifier: MIT */
/* Laying breakpoints out over the four debug registers, and planning the writes. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dr/bpext.h"
#include "dr/layout.h"
#include "lib/bitops.h"

void dr_layout_fixed(const struct dr_set *system, const struct dr_set *pinned, struct dr_set *fixed,
		     uint8_t pinned_of[DR_SLOTS])
{
	unsigned int logical = 0;

	*fixed = *system;
	for (unsigned int slot = 0; slot < DR_SLOTS; slot++) {
		pinned_of[slot] = DR_NO_SLOT;
		if (system->used & (1u << slot))
			continue;
		while (logical < DR_SLOTS && !(pinned->used & (1u << logical)))
			logical++;
		if (logical == DR_SLOTS)
			continue;
		fixed->breakpoints[slot] = pinned->breakpoints[logical];
		fixed->used |= (uint8_t)(1u << slot);
		pinned_of[slot] = (uint8_t)logical++;
	}
}

void dr_layout(const struct dr_set *system, const struct dr_set *task, struct dr_hardware *out,
	       uint8_t logical_of[DR_SLOTS])
{
	unsigned int logical = 0;

	out->dr7 = DR7_RESET;
	for (unsigned int slot = 0; slot < DR_SLOTS; slot++) {
		const struct dr_breakpoint *breakpoint = NULL;

		logical_of[slot] = DR_NO_SLOT;
		out->address[slot] = 0;
		if (system->used & (1u << slot)) {
			breakpoint = &system->breakpoints[slot];
		} else {
			while (logical < DR_SLOTS && !(task->used & (1u << logical)))
				logical++;
			if (logical < DR_SLOTS) {
				logical_of[slot] = (uint8_t)logical;
				breakpoint = &task->breakpoints[logical++];
			}
		}
		out->mask[slot] = 0;
		if (!breakpoint)
			continue;
		out->address[slot] = breakpoint->address;
		if (dr_is_range(breakpoint)) {
			out->mask[slot] = breakpoint->length - 1u;
			out->dr7 |= dr7_encode(slot, breakpoint->type, 1) | DR7_GE;
		} else {
			out->dr7 |= dr7_encode(slot, breakpoint->type, breakpoint->length) | DR7_GE;
		}
	}
}

void dr_plan(const struct dr_hardware *held, const struct dr_hardware *wanted, bool eager,
	     struct dr_write_plan *plan)
{
	unsigned long dr7 = held->dr7;

	*plan = (struct dr_write_plan){ 0 };
	for (unsigned int slot = 0; slot < DR_SLOTS; slot++) {
		bool wanted_on = (wanted->dr7 & dr7_slot_enable_mask(slot)) != 0;
		bool held_on = (held->dr7 & dr7_slot_enable_mask(slot)) != 0;

		plan->mask[slot] = wanted->mask[slot];
		if (wanted->mask[slot] != held->mask[slot]) {
			plan->mask_bits |= (uint8_t)(1u << slot);
			if (held_on)
				dr7 &= ~dr7_slot_mask(slot);
		}
		plan->address[slot] = wanted->address[slot];
		if (eager || (wanted_on && wanted->address[slot] != held->address[slot])) {
			plan->address_mask |= (uint8_t)(1u << slot);
			dr7 &= ~dr7_slot_mask(slot);
		}
	}
	if (eager)
		dr7 = DR7_RESET;
	if (eager || dr7 != held->dr7) {
		plan->disable_first = true;
		plan->dr7_disabled = dr7;
	}
	plan->dr7 = wanted->dr7;
	plan->write_dr7 = eager || wanted->dr7 != dr7;
}

unsigned int dr_plan_writes(const struct dr_write_plan *plan)
{
	return plan->disable_first + bits_set(plan->mask_bits) + bits_set(plan->address_mask) +
	       plan->write_dr7;
}
