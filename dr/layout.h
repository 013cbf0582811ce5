/* SPDX-License-Identifier: MIT */
/* What the debug registers must hold for a task, and the fewest writes to get there. Pure. */
#ifndef DR_LAYOUT_H
#define DR_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/debugreg.h"
#include "dr/breakpoint.h"

/* A set of breakpoints: system-wide ones indexed by hardware slot, a task's by logical slot. */
struct dr_set {
	struct dr_breakpoint breakpoints[DR_SLOTS];
	uint8_t used; /* bit i: breakpoints[i] is installed */
};

/*
 * DR0-DR3, their AMD address masks (BPEXT, dr/bpext.h: 0 where a slot holds no range, as after
 * reset) and DR7, as a CPU holds them (or must).
 */
struct dr_hardware {
	uint64_t address[DR_SLOTS];
	uint64_t mask[DR_SLOTS];
	unsigned long dr7;
};

#define DR_NO_SLOT 0xff

/*
 * A CPU's fixed set, by hardware slot: system (at its slots) and the CPU's pinned breakpoints
 * (logical slots) in the free hardware slots in ascending order. pinned_of[h] is the pinned
 * logical slot in hardware slot h, or DR_NO_SLOT. The reservation guarantees that they fit.
 */
void dr_layout_fixed(const struct dr_set *system, const struct dr_set *pinned, struct dr_set *fixed,
		     uint8_t pinned_of[DR_SLOTS]);

/*
 * The registers for system (fixed hardware slots) plus task, whose logical slots fill the free
 * hardware slots in ascending order. logical_of[h] is the task's logical slot in hardware slot h,
 * or DR_NO_SLOT. The caller guarantees, through the reservation, that everything fits. A range
 * (dr_is_range()) takes a 1-byte DR7 entry and the mask length - 1 (Linux arch_build_bp_info()).
 */
void dr_layout(const struct dr_set *system, const struct dr_set *task, struct dr_hardware *out,
	       uint8_t logical_of[DR_SLOTS]);

/*
 * How to go from what the CPU holds to what it must hold. Lazy: only what differs, and a slot
 * whose address changes while DR7 enables it is first disabled (one DR7 write), so a stale
 * address never fires; then the differing addresses of enabled slots; then DR7 if it differs.
 * So k differing slots cost at most k address writes and 2 DR7 writes, and an identical
 * configuration costs none. Eager: DR7 to its reset value, all four addresses, then DR7.
 * Masks, eager or not, are written only where they differ (their MSRs exist only with BPEXT, and
 * are 0 elsewhere), between the disabling DR7 write and the addresses: a slot DR7 enables is
 * disabled first, so a mask is set before DR7 enables its slot and cleared after DR7 disabled it
 * (Linux arch_install_hw_breakpoint(), arch_uninstall_hw_breakpoint()).
 */
struct dr_write_plan {
	bool disable_first;
	unsigned long dr7_disabled;
	uint8_t mask_bits; /* bit i: write mask[i] */
	uint64_t mask[DR_SLOTS];
	uint8_t address_mask; /* bit i: write address[i] */
	uint64_t address[DR_SLOTS];
	bool write_dr7;
	unsigned long dr7;
};

void dr_plan(const struct dr_hardware *held, const struct dr_hardware *wanted, bool eager,
	     struct dr_write_plan *plan);
unsigned int dr_plan_writes(const struct dr_write_plan *plan);

#endif
