/* SPDX-License-Identifier: MIT */
/* Host tests of dr/layout.c: which breakpoint lands in which debug register, and DR7. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "arch/x86/debugreg.h"
#include "dr/breakpoint.h"
#include "dr/layout.h"
#include "tests/host/host_test.h"

static void add_breakpoint(struct dr_set *set, unsigned int slot, uint64_t address,
			   enum dr_type type, unsigned int length)
{
	set->breakpoints[slot] = (struct dr_breakpoint){ address, type, length };
	set->used |= (uint8_t)(1u << slot);
}

HOST_TEST(dr_layout_of_nothing_is_the_reset_dr7)
{
	struct dr_set none = { 0 };
	struct dr_hardware out;
	uint8_t logical_of[DR_SLOTS];

	memset(&out, 0xa5, sizeof(out));
	dr_layout(&none, &none, &out, logical_of);
	host_check_eq_u64(0x400, out.dr7);
	for (unsigned int slot = 0; slot < DR_SLOTS; slot++) {
		host_check_eq_u64(0, out.address[slot]);
		host_check_eq_u64(DR_NO_SLOT, logical_of[slot]);
	}
}

HOST_TEST(dr_layout_keeps_system_slots_and_fills_the_rest_in_order)
{
	struct dr_set system = { 0 }, task = { 0 };
	struct dr_hardware out;
	uint8_t logical_of[DR_SLOTS];

	add_breakpoint(&system, 1, 0xffffffff80001000ull, DR_TYPE_WRITE, 8);
	add_breakpoint(&system, 3, 0xffffffff80002000ull, DR_TYPE_EXECUTE, 1);
	add_breakpoint(&task, 2, 0x4000, DR_TYPE_READ_WRITE, 4);
	add_breakpoint(&task, 0, 0x5000, DR_TYPE_WRITE, 2);
	dr_layout(&system, &task, &out, logical_of);
	host_check_eq_u64(0x5000, out.address[0]);
	host_check_eq_u64(0xffffffff80001000ull, out.address[1]);
	host_check_eq_u64(0x4000, out.address[2]);
	host_check_eq_u64(0xffffffff80002000ull, out.address[3]);
	host_check_eq_u64(0, logical_of[0]);
	host_check_eq_u64(DR_NO_SLOT, logical_of[1]);
	host_check_eq_u64(2, logical_of[2]);
	host_check_eq_u64(DR_NO_SLOT, logical_of[3]);
	host_check_eq_u64(DR7_RESERVED_ONE | DR7_GE | dr7_encode(0, DR_TYPE_WRITE, 2) |
				  dr7_encode(1, DR_TYPE_WRITE, 8) |
				  dr7_encode(2, DR_TYPE_READ_WRITE, 4) |
				  dr7_encode(3, DR_TYPE_EXECUTE, 1),
			  out.dr7);
}

HOST_TEST(dr_layout_of_a_task_alone_packs_its_slots_down)
{
	struct dr_set system = { 0 }, task = { 0 };
	struct dr_hardware out;
	uint8_t logical_of[DR_SLOTS];

	add_breakpoint(&task, 1, 0x1000, DR_TYPE_EXECUTE, 1);
	add_breakpoint(&task, 3, 0x2008, DR_TYPE_WRITE, 8);
	dr_layout(&system, &task, &out, logical_of);
	host_check_eq_u64(0x1000, out.address[0]);
	host_check_eq_u64(0x2008, out.address[1]);
	host_check_eq_u64(0, out.address[2]);
	host_check_eq_u64(1, logical_of[0]);
	host_check_eq_u64(3, logical_of[1]);
	host_check_eq_u64(DR_NO_SLOT, logical_of[2]);
	host_check_eq_u64(DR_NO_SLOT, logical_of[3]);
	host_check_eq_u64(DR7_RESERVED_ONE | DR7_GE | dr7_encode(0, DR_TYPE_EXECUTE, 1) |
				  dr7_encode(1, DR_TYPE_WRITE, 8),
			  out.dr7);

	/* System-wide alone: the slot it names, nothing else. */
	add_breakpoint(&system, 2, 0xffff800000000000ull, DR_TYPE_READ_WRITE, 1);
	dr_layout(&system, &(struct dr_set){ 0 }, &out, logical_of);
	host_check_eq_u64(DR7_RESERVED_ONE | DR7_GE | dr7_encode(2, DR_TYPE_READ_WRITE, 1),
			  out.dr7);
	host_check_eq_u64(0xffff800000000000ull, out.address[2]);
	for (unsigned int slot = 0; slot < DR_SLOTS; slot++)
		host_check_eq_u64(DR_NO_SLOT, logical_of[slot]);
}

/* Every pair of a system mask and a task mask that fits, with distinct addresses. */
HOST_TEST(dr_layout_is_right_for_every_system_and_task_mask_that_fits)
{
	for (unsigned int system_mask = 0; system_mask < 16; system_mask++) {
		for (unsigned int task_mask = 0; task_mask < 16; task_mask++) {
			struct dr_set system = { 0 }, task = { 0 };
			struct dr_hardware out;
			uint8_t logical_of[DR_SLOTS];
			unsigned int logical = 0;

			if (__builtin_popcount(system_mask) + __builtin_popcount(task_mask) >
			    DR_SLOTS)
				continue;
			for (unsigned int i = 0; i < DR_SLOTS; i++) {
				if (system_mask & (1u << i))
					add_breakpoint(&system, i, 0xffffffff80000000ull + 8 * i,
						       DR_TYPE_WRITE, 8);
				if (task_mask & (1u << i))
					add_breakpoint(&task, i, 0x1000 + 4 * i, DR_TYPE_READ_WRITE,
						       4);
			}
			dr_layout(&system, &task, &out, logical_of);
			for (unsigned int slot = 0; slot < DR_SLOTS; slot++) {
				unsigned long expected_bits = 0;
				uint64_t expected_address = 0;
				uint8_t expected_logical = DR_NO_SLOT;

				while (logical < DR_SLOTS && !(task_mask & (1u << logical)))
					logical++;
				if (system_mask & (1u << slot)) {
					expected_address = 0xffffffff80000000ull + 8 * slot;
					expected_bits = dr7_encode(slot, DR_TYPE_WRITE, 8);
				} else if (logical < DR_SLOTS) {
					expected_logical = (uint8_t)logical;
					expected_address = 0x1000 + 4 * logical++;
					expected_bits = dr7_encode(slot, DR_TYPE_READ_WRITE, 4);
				}
				host_checkf(out.address[slot] == expected_address &&
						    logical_of[slot] == expected_logical &&
						    (out.dr7 & dr7_slot_mask(slot)) ==
							    expected_bits,
					    "system 0x%x task 0x%x slot %u: address 0x%llx "
					    "logical %u dr7 0x%lx",
					    system_mask, task_mask, slot,
					    (unsigned long long)out.address[slot], logical_of[slot],
					    out.dr7);
			}
			host_check_eq_u64(system_mask | task_mask ? 0x600 : 0x400,
					  out.dr7 & ~0xffff00fful);
		}
	}
}

HOST_TEST(dr_layout_fixed_puts_pinned_in_the_free_slots_and_tasks_after_them)
{
	struct dr_set system = { 0 }, pinned = { 0 }, fixed, task = { 0 };
	struct dr_hardware out;
	uint8_t pinned_of[DR_SLOTS], logical_of[DR_SLOTS];

	add_breakpoint(&system, 3, 0x3000, DR_TYPE_EXECUTE, 1);
	add_breakpoint(&system, 1, 0x1000, DR_TYPE_EXECUTE, 1);
	add_breakpoint(&pinned, 2, 0x2200, DR_TYPE_WRITE, 4); /* logical 2: the first pinned */
	dr_layout_fixed(&system, &pinned, &fixed, pinned_of);
	host_check_eq_u64(0xb, fixed.used); /* system 1 and 3, pinned in 0 */
	host_check_eq_u64(0x2200, fixed.breakpoints[0].address);
	host_check_eq_u64(0x1000, fixed.breakpoints[1].address);
	host_check_eq_u64(0x3000, fixed.breakpoints[3].address);
	host_check_eq_u64(2, pinned_of[0]);
	for (unsigned int slot = 1; slot < DR_SLOTS; slot++)
		host_check_eq_u64(DR_NO_SLOT, pinned_of[slot]);
	/* A task's breakpoint takes what is left: hardware slot 2. */
	add_breakpoint(&task, 0, 0x4000, DR_TYPE_EXECUTE, 1);
	dr_layout(&fixed, &task, &out, logical_of);
	host_check_eq_u64(0x4000, out.address[2]);
	host_check_eq_u64(0, logical_of[2]);
	host_check_eq_u64(DR_NO_SLOT, logical_of[0]);
	for (unsigned int slot = 0; slot < DR_SLOTS; slot++)
		host_check(out.dr7 & (3u << (2 * slot))); /* all four enabled (L and G) */
}

HOST_TEST(dr_layout_fixed_without_pinned_is_the_system_set)
{
	struct dr_set system = { 0 }, none = { 0 }, fixed;
	uint8_t pinned_of[DR_SLOTS];

	add_breakpoint(&system, 2, 0x2000, DR_TYPE_READ_WRITE, 8);
	dr_layout_fixed(&system, &none, &fixed, pinned_of);
	host_check_eq_u64(system.used, fixed.used);
	host_check_eq_u64(0x2000, fixed.breakpoints[2].address);
	host_check_eq_u64(DR_TYPE_READ_WRITE, fixed.breakpoints[2].type);
	host_check_eq_u64(8, fixed.breakpoints[2].length);
	for (unsigned int slot = 0; slot < DR_SLOTS; slot++)
		host_check_eq_u64(DR_NO_SLOT, pinned_of[slot]);
}
