/* SPDX-License-Identifier: MIT */
/* Host tests of dr/layout.c: write plans applied to a simulated DR0-DR3 and DR7, at random. */
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/debugreg.h"
#include "dr/breakpoint.h"
#include "dr/layout.h"
#include "tests/host/host_test.h"

#define SIMULATION_PAIRS 20000

static uint64_t random_state = 0x2545f4914f6cdd1dull;

/* xorshift64: the same sequence on every run. */
static unsigned int random_below(unsigned int bound)
{
	random_state ^= random_state << 13;
	random_state ^= random_state >> 7;
	random_state ^= random_state << 17;
	return (unsigned int)(random_state % bound);
}

/* A few addresses, so that held and wanted often share one. */
static uint64_t random_address(void)
{
	static const uint64_t pool[] = { 0, 0x1000, 0x1008, 0x2000, 0xffffffff80001000ull };

	return pool[random_below(sizeof(pool) / sizeof(pool[0]))];
}

/* What dr_layout() produces: enabled slots have a control field and GE; others are clean. */
static void random_laid_out(struct dr_hardware *hardware)
{
	static const unsigned int lengths[] = { 1, 2, 4, 8 };

	*hardware = (struct dr_hardware){ .dr7 = DR7_RESET };
	for (unsigned int slot = 0; slot < DR_SLOTS; slot++) {
		if (random_below(3) == 0)
			continue;
		hardware->address[slot] = random_address();
		hardware->dr7 |=
			dr7_encode(slot, (enum dr_type)random_below(4), lengths[random_below(4)]) |
			DR7_GE;
	}
}

/* Anything: local or global enables, and control fields left behind in disabled slots. */
static void random_raw(struct dr_hardware *hardware)
{
	*hardware = (struct dr_hardware){ .dr7 = DR7_RESET };
	for (unsigned int slot = 0; slot < DR_SLOTS; slot++) {
		hardware->address[slot] = random_address();
		hardware->dr7 |= (unsigned long)random_below(4) << (DR7_ENABLE_SIZE * slot);
		hardware->dr7 |= (unsigned long)random_below(16)
				 << (DR7_CONTROL_SHIFT + DR7_CONTROL_SIZE * slot);
	}
	if (random_below(2))
		hardware->dr7 |= DR7_GE;
}

static bool slot_on(const struct dr_hardware *hardware, unsigned int slot)
{
	return (hardware->dr7 & dr7_slot_enable_mask(slot)) != 0;
}

/* The slot holds exactly what `state` has in it: the same address and the same DR7 bits. */
static bool slot_is(const struct dr_hardware *simulated, const struct dr_hardware *state,
		    unsigned int slot)
{
	return simulated->address[slot] == state->address[slot] &&
	       (simulated->dr7 & dr7_slot_mask(slot)) == (state->dr7 & dr7_slot_mask(slot));
}

/* No enabled slot ever pairs an address with an enable that neither held nor wanted paired. */
static bool no_stale_slot_enabled(const struct dr_hardware *simulated,
				  const struct dr_hardware *held, const struct dr_hardware *wanted,
				  unsigned int pair, unsigned int write)
{
	for (unsigned int slot = 0; slot < DR_SLOTS; slot++) {
		if (!slot_on(simulated, slot))
			continue;
		if (!host_checkf(
			    slot_is(simulated, held, slot) || slot_is(simulated, wanted, slot),
			    "pair %u, after write %u: slot %u enabled at 0x%llx with dr7 0x%lx "
			    "(held 0x%llx/0x%lx, wanted 0x%llx/0x%lx)",
			    pair, write, slot, (unsigned long long)simulated->address[slot],
			    simulated->dr7, (unsigned long long)held->address[slot], held->dr7,
			    (unsigned long long)wanted->address[slot], wanted->dr7))
			return false;
	}
	return true;
}

/* Apply the plan in its order (DR7, addresses by slot, DR7), checking after every write. */
static bool simulate(const struct dr_hardware *held, const struct dr_hardware *wanted,
		     const struct dr_write_plan *plan, unsigned int pair)
{
	struct dr_hardware simulated = *held;
	unsigned int writes = 0;

	if (plan->disable_first) {
		simulated.dr7 = plan->dr7_disabled;
		if (!no_stale_slot_enabled(&simulated, held, wanted, pair, ++writes))
			return false;
	}
	for (unsigned int slot = 0; slot < DR_SLOTS; slot++) {
		if (!(plan->address_mask & (1u << slot)))
			continue;
		simulated.address[slot] = plan->address[slot];
		if (!no_stale_slot_enabled(&simulated, held, wanted, pair, ++writes))
			return false;
	}
	if (plan->write_dr7) {
		simulated.dr7 = plan->dr7;
		if (!no_stale_slot_enabled(&simulated, held, wanted, pair, ++writes))
			return false;
	}
	if (!host_checkf(writes == dr_plan_writes(plan), "pair %u: %u writes, plan says %u", pair,
			 writes, dr_plan_writes(plan)))
		return false;
	if (!host_checkf(simulated.dr7 == wanted->dr7, "pair %u: dr7 0x%lx, wanted 0x%lx", pair,
			 simulated.dr7, wanted->dr7))
		return false;
	for (unsigned int slot = 0; slot < DR_SLOTS; slot++)
		if (slot_on(wanted, slot) &&
		    !host_checkf(simulated.address[slot] == wanted->address[slot],
				 "pair %u: slot %u holds 0x%llx, wanted 0x%llx", pair, slot,
				 (unsigned long long)simulated.address[slot],
				 (unsigned long long)wanted->address[slot]))
			return false;
	return true;
}

/* The lazy plan's shape: which addresses, which DR7 writes, and the k + 2 bound. */
static bool lazy_plan_is_minimal(const struct dr_hardware *held, const struct dr_hardware *wanted,
				 const struct dr_write_plan *plan, bool laid_out, unsigned int pair)
{
	unsigned int moving = 0, moving_count = 0;
	unsigned long disabled = held->dr7;
	bool moving_enabled = false;

	for (unsigned int slot = 0; slot < DR_SLOTS; slot++) {
		if (!slot_on(wanted, slot) || wanted->address[slot] == held->address[slot])
			continue;
		moving |= 1u << slot;
		moving_count++;
		moving_enabled |= slot_on(held, slot);
		disabled &= ~dr7_slot_mask(slot);
	}
	if (!host_checkf(plan->address_mask == moving, "pair %u: address mask 0x%x, expected 0x%x",
			 pair, plan->address_mask, moving))
		return false;
	if (!host_checkf(dr_plan_writes(plan) <= moving_count + 2,
			 "pair %u: %u writes for %u slots", pair, dr_plan_writes(plan),
			 moving_count))
		return false;
	if (plan->disable_first &&
	    !host_checkf(plan->dr7_disabled == disabled, "pair %u: disable 0x%lx, expected 0x%lx",
			 pair, plan->dr7_disabled, disabled))
		return false;
	/* A held DR7 from dr_layout() has no control bits in disabled slots to clear. */
	if (laid_out && !host_checkf(plan->disable_first == moving_enabled,
				     "pair %u: disable_first %d, a moving slot enabled %d", pair,
				     plan->disable_first, moving_enabled))
		return false;
	if (!host_checkf(plan->write_dr7 == (wanted->dr7 != disabled), "pair %u: write_dr7 %d",
			 pair, plan->write_dr7))
		return false;
	if (moving == 0 && held->dr7 == wanted->dr7)
		return host_checkf(dr_plan_writes(plan) == 0, "pair %u: identical, %u writes", pair,
				   dr_plan_writes(plan));
	return true;
}

HOST_TEST(dr_plan_never_enables_a_stale_address_and_reaches_the_wanted_state)
{
	for (unsigned int pair = 0; pair < SIMULATION_PAIRS; pair++) {
		struct dr_hardware held, wanted;
		struct dr_write_plan plan;
		bool laid_out = random_below(2);

		if (laid_out)
			random_laid_out(&held);
		else
			random_raw(&held);
		if (random_below(4) == 0) {
			/* Near-identical: one slot's address, or nothing, differs. */
			wanted = held;
			if (random_below(2))
				wanted.address[random_below(DR_SLOTS)] = random_address();
		} else if (random_below(2)) {
			random_laid_out(&wanted);
		} else {
			random_raw(&wanted);
		}
		dr_plan(&held, &wanted, false, &plan);
		if (!lazy_plan_is_minimal(&held, &wanted, &plan, laid_out, pair) ||
		    !simulate(&held, &wanted, &plan, pair))
			return;
		dr_plan(&held, &wanted, true, &plan);
		if (!host_checkf(dr_plan_writes(&plan) == 6, "pair %u: eager plan of %u writes",
				 pair, dr_plan_writes(&plan)) ||
		    !simulate(&held, &wanted, &plan, pair))
			return;
	}
}
