/* SPDX-License-Identifier: MIT */
/* Host tests of dr/layout.c: the lazy and eager write plans on hand-written cases. */
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/debugreg.h"
#include "dr/breakpoint.h"
#include "dr/layout.h"
#include "tests/host/host_test.h"

static struct dr_hardware hardware_reset(void)
{
	return (struct dr_hardware){ .dr7 = DR7_RESET };
}

static void hardware_set(struct dr_hardware *hardware, unsigned int slot, uint64_t address,
			 enum dr_type type, unsigned int length)
{
	hardware->address[slot] = address;
	hardware->dr7 &= ~dr7_slot_mask(slot);
	hardware->dr7 |= dr7_encode(slot, type, length) | DR7_GE;
}

HOST_TEST(dr_plan_of_an_identical_configuration_writes_nothing)
{
	struct dr_hardware held = hardware_reset(), wanted;
	struct dr_write_plan plan;

	dr_plan(&held, &held, false, &plan);
	host_check_eq_u64(0, dr_plan_writes(&plan));
	hardware_set(&held, 0, 0x1000, DR_TYPE_WRITE, 4);
	hardware_set(&held, 2, 0x2000, DR_TYPE_EXECUTE, 1);
	held.address[3] = 0x3000; /* disabled: its address does not matter */
	wanted = held;
	wanted.address[1] = 0x4000;
	wanted.address[3] = 0x5000;
	dr_plan(&held, &wanted, false, &plan);
	host_check(!plan.disable_first);
	host_check_eq_u64(0, plan.address_mask);
	host_check(!plan.write_dr7);
	host_check_eq_u64(0, dr_plan_writes(&plan));
}

HOST_TEST(dr_plan_disables_a_moving_slot_before_writing_its_address)
{
	struct dr_hardware held = hardware_reset(), wanted;
	struct dr_write_plan plan;

	hardware_set(&held, 0, 0x1000, DR_TYPE_WRITE, 4);
	hardware_set(&held, 1, 0x2000, DR_TYPE_READ_WRITE, 8);
	wanted = held;
	wanted.address[1] = 0x3000;
	dr_plan(&held, &wanted, false, &plan);
	host_check(plan.disable_first);
	host_check_eq_u64(held.dr7 & ~dr7_slot_mask(1), plan.dr7_disabled);
	host_check_eq_u64(DR7_RESERVED_ONE | DR7_GE | dr7_encode(0, DR_TYPE_WRITE, 4),
			  plan.dr7_disabled);
	host_check_eq_u64(1u << 1, plan.address_mask);
	host_check_eq_u64(0x3000, plan.address[1]);
	host_check(plan.write_dr7);
	host_check_eq_u64(wanted.dr7, plan.dr7);
	host_check_eq_u64(3, dr_plan_writes(&plan));
}

HOST_TEST(dr_plan_gives_a_slot_disabled_in_the_wanted_state_no_address_write)
{
	struct dr_hardware held = hardware_reset(), wanted = hardware_reset();
	struct dr_write_plan plan;

	hardware_set(&held, 0, 0x1000, DR_TYPE_WRITE, 4);
	hardware_set(&held, 3, 0x2000, DR_TYPE_WRITE, 4);
	hardware_set(&wanted, 3, 0x2000, DR_TYPE_WRITE, 4);
	wanted.address[0] = 0x9000;
	dr_plan(&held, &wanted, false, &plan);
	host_check(!plan.disable_first);
	host_check_eq_u64(0, plan.address_mask);
	host_check(plan.write_dr7);
	host_check_eq_u64(wanted.dr7, plan.dr7);
	host_check_eq_u64(1, dr_plan_writes(&plan));
}

HOST_TEST(dr_plan_of_a_type_change_writes_only_dr7)
{
	struct dr_hardware held = hardware_reset(), wanted;
	struct dr_write_plan plan;

	hardware_set(&held, 2, 0x1000, DR_TYPE_WRITE, 4);
	wanted = held;
	hardware_set(&wanted, 2, 0x1000, DR_TYPE_READ_WRITE, 8);
	dr_plan(&held, &wanted, false, &plan);
	host_check(!plan.disable_first);
	host_check_eq_u64(0, plan.address_mask);
	host_check(plan.write_dr7);
	host_check_eq_u64(wanted.dr7, plan.dr7);
	host_check_eq_u64(1, dr_plan_writes(&plan));
}

HOST_TEST(dr_plan_of_a_newly_enabled_slot_needs_no_disable)
{
	struct dr_hardware held = hardware_reset(), wanted;
	struct dr_write_plan plan;

	hardware_set(&held, 0, 0x1000, DR_TYPE_WRITE, 4);
	held.address[3] = 0x7000; /* stale, and disabled */
	wanted = held;
	hardware_set(&wanted, 3, 0x8000, DR_TYPE_WRITE, 8);
	dr_plan(&held, &wanted, false, &plan);
	host_check(!plan.disable_first);
	host_check_eq_u64(1u << 3, plan.address_mask);
	host_check_eq_u64(0x8000, plan.address[3]);
	host_check(plan.write_dr7);
	host_check_eq_u64(2, dr_plan_writes(&plan));
}

HOST_TEST(dr_plan_of_four_moving_slots_is_four_addresses_and_two_dr7_writes)
{
	struct dr_hardware held = hardware_reset(), wanted = hardware_reset();
	struct dr_write_plan plan;

	for (unsigned int slot = 0; slot < DR_SLOTS; slot++) {
		hardware_set(&held, slot, 0x1000 + 8 * slot, DR_TYPE_WRITE, 8);
		hardware_set(&wanted, slot, 0x2000 + 8 * slot, DR_TYPE_WRITE, 8);
	}
	dr_plan(&held, &wanted, false, &plan);
	host_check(plan.disable_first);
	host_check_eq_u64(DR7_RESERVED_ONE | DR7_GE, plan.dr7_disabled);
	host_check_eq_u64(0xf, plan.address_mask);
	host_check_eq_u64(6, dr_plan_writes(&plan));
}

HOST_TEST(dr_plan_eager_always_writes_six)
{
	struct dr_hardware held = hardware_reset(), wanted;
	struct dr_write_plan plan;

	hardware_set(&held, 1, 0x1000, DR_TYPE_WRITE, 4);
	wanted = held;
	for (unsigned int i = 0; i < 2; i++) {
		dr_plan(&held, &wanted, true, &plan);
		host_check(plan.disable_first);
		host_check_eq_u64(DR7_RESET, plan.dr7_disabled);
		host_check_eq_u64(0xf, plan.address_mask);
		for (unsigned int slot = 0; slot < DR_SLOTS; slot++)
			host_check_eq_u64(wanted.address[slot], plan.address[slot]);
		host_check(plan.write_dr7);
		host_check_eq_u64(wanted.dr7, plan.dr7);
		host_check_eq_u64(6, dr_plan_writes(&plan));
		wanted = hardware_reset();
	}
}
