/* SPDX-License-Identifier: MIT */
/* dr suite: every type, length and slot fires, with the right DR6 bit, in a kernel task. */
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/debug-registers.h"
#include "arch/x86/debugreg.h"
#include "dr/breakpoint.h"
#include "runner/test.h"
#include "sched/sched.h"
#include "tests/kernel/lib/dr_targets.h"

static const unsigned int lengths[] = { 1, 2, 4, 8 };

/* Take slots 0..slot-1 with breakpoints that never fire, so the next install gets slot. */
static void occupy_slots_below(unsigned int slot)
{
	for (unsigned int i = 0; i < slot; i++)
		check_eq(i, dr_target_install((uint64_t)&dr_target_unused[i], DR_TYPE_WRITE, 8));
}

/*
 * The B bits DR6 may also carry besides slot's: those of disabled slots whose condition, as DR7's
 * R/W and LEN and DRn describe it, the access met (SDM Vol. 3 §18.2.3: B0-B3 "may or may not be
 * set if the breakpoint is not enabled"). dr/ leaves a removed breakpoint's address in DRn, as
 * Linux does, so an earlier test's address may still be there. Read with this task's registers
 * live, as at the hit.
 */
static unsigned long dr6_may_also_set(unsigned int slot, uint64_t accessed, enum dr_type type)
{
	unsigned long dr7 = read_dr7(), allowed = 0;

	for (unsigned int i = 0; i < DR_SLOTS; i++) {
		uint64_t start = read_dr_address(i);
		enum dr_type rw;
		unsigned int length;
		bool met;

		if (i == slot || dr7_decode(dr7, i, &rw, &length))
			continue; /* its own slot, or an enabled one */
		start &= ~(uint64_t)(length - 1);
		if (type == DR_TYPE_EXECUTE)
			met = rw == DR_TYPE_EXECUTE && read_dr_address(i) == accessed;
		else
			met = (rw == DR_TYPE_READ_WRITE ||
			       (rw == DR_TYPE_WRITE && type == DR_TYPE_WRITE)) &&
			      accessed >= start && accessed < start + length;
		if (met)
			allowed |= DR6_B0 << i;
	}
	return allowed;
}

/*
 * One hit, in hardware slot slot, for address, after an access of type at accessed; DR6 is its
 * reset value with that B bit, and at most the B bits dr6_may_also_set() allows.
 */
static void check_one_hit(unsigned int slot, uint64_t address, uint64_t accessed, enum dr_type type,
			  const char *what)
{
	struct dr_hit hits[16];
	unsigned int count = dr_target_hits(hits);
	unsigned long expected = DR6_RESET | DR6_B0 << slot;
	unsigned long allowed = dr6_may_also_set(slot, accessed, type);

	check(count == 1, "%s, slot %u: %u hits", what, slot, count);
	if (count < 1)
		return;
	check(hits[0].hardware_slot == slot && hits[0].slot == slot, "%s: hit in slot %u/%u", what,
	      hits[0].hardware_slot, hits[0].slot);
	check((hits[0].dr6 & ~allowed) == expected,
	      "%s, slot %u: DR6 0x%llx, expected 0x%lx (B bits 0x%lx of disabled slots allowed)",
	      what, slot, (unsigned long long)hits[0].dr6, expected, allowed);
	if (hits[0].dr6 != expected)
		test_diag("%s, slot %u: DR6 0x%llx: B bits of disabled slots that matched", what,
			  slot, (unsigned long long)hits[0].dr6);
	check(hits[0].address == address, "%s: address 0x%llx", what,
	      (unsigned long long)hits[0].address);
}

TEST(dr, execute_breakpoint_fires_in_every_slot)
{
	for (unsigned int slot = 0; slot < DR_SLOTS; slot++) {
		unsigned int calls = dr_target_calls;

		occupy_slots_below(slot);
		check_eq(slot, dr_target_install((uint64_t)dr_target_function, DR_TYPE_EXECUTE, 1));
		dr_target_function();
		check_eq(calls + 1, dr_target_calls); /* RF: it ran once, no #DB loop */
		check_one_hit(slot, (uint64_t)dr_target_function, (uint64_t)dr_target_function,
			      DR_TYPE_EXECUTE, "execute");
		dr_uninstall_all(sched_current()->index);
	}
}

/* Trigger a data breakpoint of every length at an offset inside its range. */
static void data_breakpoint_fires(enum dr_type type, const char *what)
{
	for (unsigned int slot = 0; slot < DR_SLOTS; slot++) {
		for (unsigned int i = 0; i < sizeof(lengths) / sizeof(lengths[0]); i++) {
			volatile uint8_t *base = (volatile uint8_t *)&dr_target_data[2];

			occupy_slots_below(slot);
			dr_target_install((uint64_t)base, type, lengths[i]);
			if (type == DR_TYPE_WRITE)
				base[lengths[i] - 1] = 1;
			else
				(void)base[lengths[i] - 1];
			check_one_hit(slot, (uint64_t)base, (uint64_t)&base[lengths[i] - 1], type,
				      what);
			dr_uninstall_all(sched_current()->index);
		}
	}
}

TEST(dr, write_watchpoint_fires_for_every_length_and_slot)
{
	data_breakpoint_fires(DR_TYPE_WRITE, "write");
}

TEST(dr, read_write_watchpoint_fires_on_a_read_for_every_length_and_slot)
{
	data_breakpoint_fires(DR_TYPE_READ_WRITE, "read/write");
}

TEST(dr, write_watchpoint_ignores_reads_and_neighbours)
{
	struct dr_hit hits[16];
	volatile uint8_t *base = (volatile uint8_t *)&dr_target_data[4];

	dr_target_install((uint64_t)base, DR_TYPE_WRITE, 4);
	(void)base[0]; /* a read */
	base[4] = 1; /* the byte after the range */
	base[-1] = 1; /* the byte before it */
	check_eq(0, dr_target_hits(hits));
	base[3] = 1; /* the control: the last byte of the range does fire */
	check_eq(1, dr_target_hits(hits));
	dr_uninstall_all(sched_current()->index);
}
