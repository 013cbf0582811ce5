/* SPDX-License-Identifier: MIT */
/* Host tests of pmu/rotate.c: assignment invariants, fairness of rotation, time accounting. */
#include <stdbool.h>
#include <stdint.h>

#include "pmu/event.h"
#include "pmu/rotate.h"
#include "tests/host/host_test.h"

#define SLICE 1000 /* ticks per slice */

/* A set of gp GP events (event numbers 1..gp) and, when with_fixed, fixed counters 0 and 1. */
static void make_set(struct pmu_set *set, unsigned int gp, bool with_fixed)
{
	pmu_set_init(set);
	for (unsigned int i = 0; i < gp; i++) {
		struct pmu_event event = { .event = (uint8_t)(i + 1), .user = true };

		host_check_eq_i64(i + (with_fixed && i >= 2 ? 2 : 0), pmu_set_add(set, &event));
		if (with_fixed && i == 1) {
			struct pmu_event fixed = { .user = true, .kernel = true };

			host_check_eq_i64(2, pmu_set_add_fixed(set, 0, &fixed));
			host_check_eq_i64(3, pmu_set_add_fixed(set, 1, &fixed));
		}
	}
}

/* The documented invariants; returns the number of GP events on counters. */
static unsigned int check_invariants(const struct pmu_set *set)
{
	unsigned int used = 0, running = 0, ordinal = 0;

	for (unsigned int i = 0; i < set->nr_events; i++) {
		const struct pmu_set_event *entry = &set->events[i];
		bool window;

		host_checkf(entry->time_running <= entry->time_enabled, "event %u times", i);
		if (entry->fixed) {
			host_check(pmu_set_running(set, i));
			continue;
		}
		window =
			set->gp_events <= set->gp_counters ||
			(ordinal + set->gp_events - set->first) % set->gp_events < set->gp_counters;
		ordinal++;
		host_checkf(window == (entry->counter != PMU_NO_COUNTER), "event %u window", i);
		if (entry->counter == PMU_NO_COUNTER)
			continue;
		host_checkf(entry->counter < set->gp_counters, "event %u on counter %u", i,
			    entry->counter);
		host_checkf(!(used & (1u << entry->counter)), "counter %u shared", entry->counter);
		used |= 1u << entry->counter;
		running++;
	}
	host_check_eq_u64(set->gp_events < set->gp_counters ? set->gp_events : set->gp_counters,
			  running);
	return running;
}

HOST_TEST(pmu_set_events_that_fit_never_rotate)
{
	struct pmu_set set, before;

	make_set(&set, 4, true);
	pmu_set_schedule(&set, 4);
	check_invariants(&set);
	before = set;
	for (unsigned int tick = 0; tick < 50; tick++) {
		pmu_set_account(&set, SLICE);
		host_check(!pmu_set_rotate(&set));
		for (unsigned int i = 0; i < set.nr_events; i++)
			host_check_eq_u64(before.events[i].counter, set.events[i].counter);
	}
	for (unsigned int i = 0; i < set.nr_events; i++) {
		host_check_eq_u64(50 * SLICE, set.events[i].time_enabled);
		host_check_eq_u64(50 * SLICE, set.events[i].time_running);
		set.events[i].count = 777;
		host_check_eq_u64(777, pmu_set_scaled(&set, i));
	}
}

HOST_TEST(pmu_set_rotation_gives_each_event_its_exact_share)
{
	/* Every GP counter count against every event count up to the maximum. */
	for (unsigned int counters = 1; counters <= PMU_MAX_GP; counters++) {
		for (unsigned int events = counters + 1; events <= PMU_SET_MAX_EVENTS - 2;
		     events++) {
			struct pmu_set set;

			make_set(&set, events, true);
			pmu_set_schedule(&set, counters);
			/*
			 * After s slices, |running/enabled - N/E| <= N/s; after every multiple of
			 * E slices it is exact. Fixed events always run.
			 */
			for (unsigned int slice = 1; slice <= 3 * events; slice++) {
				check_invariants(&set);
				pmu_set_account(&set, SLICE);
				host_check(pmu_set_rotate(&set));
				for (unsigned int i = 0; i < set.nr_events; i++) {
					const struct pmu_set_event *entry = &set.events[i];
					uint64_t share = entry->fixed ? events : counters;
					int64_t error = (int64_t)(entry->time_running * events) -
							(int64_t)(entry->time_enabled * share);
					int64_t bound = slice % events ? SLICE * events * share : 0;

					host_checkf(error <= bound && -error <= bound,
						    "N=%u E=%u slice %u event %u: %llu of %llu",
						    counters, events, slice, i,
						    (unsigned long long)entry->time_running,
						    (unsigned long long)entry->time_enabled);
				}
			}
		}
	}
}

HOST_TEST(pmu_set_shares_converge_with_uneven_slices)
{
	/*
	 * Slices of 500..1499 ticks (seeded): after K = 7000 slices each share is within 1/50 of
	 * N/E. Uneven slices make the error a random walk, about 0.002 here, not a hard N/K.
	 */
	uint64_t random_state = 0x853c49e6748fea9bull;
	const unsigned int counters = 3, events = 7, slices = 7000;
	struct pmu_set set;

	make_set(&set, events, false);
	pmu_set_schedule(&set, counters);
	for (unsigned int slice = 0; slice < slices; slice++) {
		random_state ^= random_state << 13;
		random_state ^= random_state >> 7;
		random_state ^= random_state << 17;
		pmu_set_account(&set, SLICE / 2 + random_state % SLICE);
		pmu_set_rotate(&set);
	}
	for (unsigned int i = 0; i < set.nr_events; i++) {
		const struct pmu_set_event *entry = &set.events[i];
		/* |running/enabled - N/E| <= 1/50, in integers: */
		int64_t error = (int64_t)(entry->time_running * events * 50) -
				(int64_t)(entry->time_enabled * counters * 50);
		int64_t bound = (int64_t)(entry->time_enabled * events);

		host_checkf(error <= bound && -error <= bound, "event %u: %llu of %llu", i,
			    (unsigned long long)entry->time_running,
			    (unsigned long long)entry->time_enabled);
		host_check(entry->time_running > 0);
	}
}

HOST_TEST(pmu_set_rotation_moves_one_event_and_one_counter)
{
	struct pmu_set set;

	make_set(&set, 5, false);
	pmu_set_schedule(&set, 3);
	for (unsigned int tick = 0; tick < 20; tick++) {
		struct pmu_set before = set;
		unsigned int moved = 0;

		pmu_set_rotate(&set);
		check_invariants(&set);
		for (unsigned int i = 0; i < set.nr_events; i++) {
			if (before.events[i].counter == set.events[i].counter)
				continue;
			/* Only an event leaving (to no counter) or arriving (from none). */
			host_check(before.events[i].counter == PMU_NO_COUNTER ||
				   set.events[i].counter == PMU_NO_COUNTER);
			moved++;
		}
		host_check_eq_u64(2, moved);
	}
}

HOST_TEST(pmu_set_config_encodes_the_assignment)
{
	struct pmu_set set;
	uint64_t evtsel[PMU_MAX_GP], fixed_ctrl, global_ctrl;

	make_set(&set, 3, true);
	pmu_set_schedule(&set, 2);
	pmu_set_config(&set, evtsel, &fixed_ctrl, &global_ctrl);
	/* Events 1 and 2 (user, enabled) on counters 0 and 1; fixed 0 and 1 everywhere. */
	host_check_eq_u64(0x410001, evtsel[0]);
	host_check_eq_u64(0x410002, evtsel[1]);
	for (unsigned int counter = 2; counter < PMU_MAX_GP; counter++)
		host_check_eq_u64(0, evtsel[counter]);
	host_check_eq_u64(0x33, fixed_ctrl);
	host_check_eq_u64(0x300000003ull, global_ctrl);
	pmu_set_rotate(&set);
	pmu_set_config(&set, evtsel, &fixed_ctrl, &global_ctrl);
	/* Event 1 left counter 0 to event 3; event 2 stayed on counter 1. */
	host_check_eq_u64(0x410003, evtsel[0]);
	host_check_eq_u64(0x410002, evtsel[1]);
}

/*
 * An event that asks for a GP counter keeps it; later events take the lowest free ones around
 * it. On a CPU without that counter (a hybrid part's smaller core) it takes a free one there.
 */
HOST_TEST(pmu_set_event_on_a_named_gp_counter_keeps_it)
{
	struct pmu_set set;
	struct pmu_event event = { .event = 0xc0, .kernel = true };

	pmu_set_init(&set);
	host_check_eq_i64(-1, pmu_set_add_on(&set, PMU_MAX_GP, &event));
	host_check_eq_i64(0, pmu_set_add_on(&set, 5, &event));
	host_check_eq_i64(1, pmu_set_add(&set, &event));
	pmu_set_schedule(&set, 8);
	check_invariants(&set);
	host_check_eq_u64(5, set.events[0].counter);
	host_check_eq_u64(0, set.events[1].counter);
	pmu_set_schedule(&set, 4);
	check_invariants(&set);
	host_check_eq_u64(1, set.events[0].counter);
	host_check_eq_u64(0, set.events[1].counter);
}

HOST_TEST(pmu_set_rejects_overflow_and_duplicate_fixed_counters)
{
	struct pmu_set set;
	struct pmu_event event = { .event = 0x3c, .kernel = true };

	pmu_set_init(&set);
	host_check_eq_i64(0, pmu_set_add_fixed(&set, 1, &event));
	host_check_eq_i64(-1, pmu_set_add_fixed(&set, 1, &event));
	host_check_eq_i64(-1, pmu_set_add_fixed(&set, PMU_MAX_FIXED, &event));
	for (unsigned int i = 1; i < PMU_SET_MAX_EVENTS; i++)
		host_check_eq_i64(i, pmu_set_add(&set, &event));
	host_check_eq_i64(-1, pmu_set_add(&set, &event));
	host_check_eq_u64(PMU_SET_MAX_EVENTS - 1, set.gp_events);
	/* No GP counters at all: only the fixed event runs, and rotation still cycles. */
	pmu_set_schedule(&set, 0);
	check_invariants(&set);
	pmu_set_account(&set, SLICE);
	host_check_eq_u64(SLICE, set.events[0].time_running);
	host_check_eq_u64(0, set.events[1].time_running);
	host_check_eq_u64(0, pmu_set_scaled(&set, 1));
	/* More counters than the code handles are clamped. */
	pmu_set_schedule(&set, 64);
	host_check_eq_u64(PMU_MAX_GP, check_invariants(&set));
}

HOST_TEST(pmu_set_time_saturates_instead_of_wrapping)
{
	struct pmu_set set;

	make_set(&set, 3, false);
	pmu_set_schedule(&set, 2);
	pmu_set_account(&set, UINT64_MAX - 5);
	pmu_set_rotate(&set);
	pmu_set_account(&set, 10);
	check_invariants(&set);
	host_check_eq_u64(UINT64_MAX, set.events[0].time_enabled);
	host_check_eq_u64(UINT64_MAX - 5, set.events[0].time_running);
	host_check_eq_u64(UINT64_MAX, set.events[1].time_running);
}
