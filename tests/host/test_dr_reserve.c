/* SPDX-License-Identifier: MIT */
/* Host tests of dr/reserve.c: hand cases, and a random walk checked against a reference model. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "arch/x86/debugreg.h"
#include "dr/reserve.h"
#include "tests/host/host_test.h"

#define MODEL_TASKS 12
#define MODEL_CPUS 3
#define MODEL_STEPS 50000
#define RESERVE_CPUS 8 /* the reservation's; the model's CPUs are the first MODEL_CPUS */

/* A reservation for RESERVE_CPUS CPUs, its pinned counts in storage. */
static void reservation_new(struct dr_reservation *reservation, unsigned int *storage)
{
	memset(storage, 0x5a, RESERVE_CPUS * sizeof(*storage)); /* dr_reservation_init() zeroes */
	dr_reservation_init(reservation, storage, RESERVE_CPUS);
}

/*
 * The rule written out plainly (Linux kernel/events/hw_breakpoint.c): a configuration fits when,
 * on every CPU, the system-wide count plus that CPU's pinned count plus the largest per-task
 * count is at most DR_SLOTS.
 */
struct model {
	unsigned int system;
	unsigned int pinned[MODEL_CPUS];
	unsigned int task[MODEL_TASKS]; /* 0: holds nothing, or has exited */
};

static unsigned int model_max_task(const struct model *model)
{
	unsigned int max = 0;

	for (unsigned int t = 0; t < MODEL_TASKS; t++)
		if (model->task[t] > max)
			max = model->task[t];
	return max;
}

static bool model_fits(const struct model *model)
{
	for (unsigned int cpu = 0; cpu < MODEL_CPUS; cpu++)
		if (model->system + model->pinned[cpu] + model_max_task(model) > DR_SLOTS)
			return false;
	return true;
}

static unsigned int model_max_pinned(const struct model *model)
{
	unsigned int max = 0;

	for (unsigned int cpu = 0; cpu < MODEL_CPUS; cpu++)
		if (model->pinned[cpu] > max)
			max = model->pinned[cpu];
	return max;
}

static uint64_t random_state = 0x9e3779b97f4a7c15ull;

/* xorshift64: the same sequence on every run. */
static unsigned int random_below(unsigned int bound)
{
	random_state ^= random_state << 13;
	random_state ^= random_state >> 7;
	random_state ^= random_state << 17;
	return (unsigned int)(random_state % bound);
}

/* Compare every observable of the reservation with the model; false on the first mismatch. */
static bool matches_model(const struct dr_reservation *reservation, const struct model *model,
			  unsigned int step)
{
	unsigned int holding[DR_SLOTS + 1] = { 0 };

	for (unsigned int t = 0; t < MODEL_TASKS; t++)
		holding[model->task[t]]++;
	if (!host_checkf(reservation->system == model->system, "step %u: system %u, model %u", step,
			 reservation->system, model->system))
		return false;
	for (unsigned int cpu = 0; cpu < RESERVE_CPUS; cpu++) {
		unsigned int pinned = cpu < MODEL_CPUS ? model->pinned[cpu] : 0;

		if (!host_checkf(reservation->pinned[cpu] == pinned,
				 "step %u: CPU %u pinned %u, model %u", step, cpu,
				 reservation->pinned[cpu], pinned))
			return false;
	}
	for (unsigned int n = 1; n <= DR_SLOTS; n++)
		if (!host_checkf(reservation->tasks_holding[n] == holding[n],
				 "step %u: %u tasks hold %u, model %u", step,
				 reservation->tasks_holding[n], n, holding[n]))
			return false;
	if (!host_checkf(dr_reservation_max_task(reservation) == model_max_task(model),
			 "step %u: max task %u, model %u", step,
			 dr_reservation_max_task(reservation), model_max_task(model)))
		return false;
	for (unsigned int t = 0; t < MODEL_TASKS; t++) {
		unsigned int free = dr_reservation_free_for_task(reservation, model->task[t]);
		unsigned int expected =
			DR_SLOTS - model->system - model_max_pinned(model) - model->task[t];

		if (!host_checkf(free == expected, "step %u: task %u holding %u: free %u, model %u",
				 step, t, model->task[t], free, expected))
			return false;
	}
	return true;
}

HOST_TEST(dr_reserve_agrees_with_the_model_over_a_random_walk)
{
	struct dr_reservation reservation;
	unsigned int pinned[RESERVE_CPUS];
	struct model model = { 0 };

	reservation_new(&reservation, pinned);
	for (unsigned int step = 0; step < MODEL_STEPS; step++) {
		struct dr_reservation before = reservation;
		unsigned int pinned_before[RESERVE_CPUS];
		struct model next = model;
		unsigned int t = random_below(MODEL_TASKS);
		unsigned int cpu = random_below(MODEL_CPUS);
		unsigned int operation = random_below(7);
		unsigned int count = 0;
		bool accepted;

		memcpy(pinned_before, pinned, sizeof(pinned));
		if (operation == 0) {
			/* A task grows by 1 or 2, possibly past DR_SLOTS. */
			next.task[t] += 1 + random_below(2);
			if (next.task[t] > DR_SLOTS + 1)
				next.task[t] = DR_SLOTS + 1;
			accepted = dr_reserve_task(&reservation, model.task[t], next.task[t]);
		} else if (operation == 1 && model.task[t] > 1) {
			/* A task shrinks but keeps at least one. */
			next.task[t] = 1 + random_below(model.task[t] - 1);
			accepted = dr_reserve_task(&reservation, model.task[t], next.task[t]);
		} else if (operation <= 2) {
			/* A task exits (or one that holds nothing does nothing). */
			next.task[t] = 0;
			accepted = dr_reserve_task(&reservation, model.task[t], 0);
		} else if (operation == 3) {
			count = 1 + random_below(2);
			next.system += count;
			accepted = dr_reserve_system(&reservation, count);
		} else if (operation == 4) {
			if (model.system == 0)
				continue;
			count = 1 + random_below(model.system);
			next.system -= count;
			dr_release_system(&reservation, count);
			accepted = true;
		} else if (operation == 5) {
			count = 1 + random_below(2);
			next.pinned[cpu] += count;
			accepted = dr_reserve_pinned(&reservation, cpu, count);
		} else {
			if (model.pinned[cpu] == 0)
				continue;
			count = 1 + random_below(model.pinned[cpu]);
			next.pinned[cpu] -= count;
			dr_release_pinned(&reservation, cpu, count);
			accepted = true;
		}
		if (!host_checkf(accepted == model_fits(&next),
				 "step %u: operation %u task %u (%u -> %u) system %u + %u: %s, "
				 "model says %s",
				 step, operation, t, model.task[t], next.task[t], model.system,
				 count, accepted ? "accepted" : "refused",
				 model_fits(&next) ? "fits" : "does not fit"))
			return;
		if (accepted)
			model = next;
		else if (!host_checkf(memcmp(&before, &reservation, sizeof(before)) == 0 &&
					      memcmp(pinned_before, pinned, sizeof(pinned)) == 0,
				      "step %u: a refusal changed the reservation", step))
			return;
		if (!matches_model(&reservation, &model, step))
			return;
	}
}

HOST_TEST(dr_reserve_task_takes_four_slots_and_refuses_a_fifth)
{
	struct dr_reservation reservation;
	unsigned int pinned[RESERVE_CPUS];

	reservation_new(&reservation, pinned);
	for (unsigned int held = 0; held < DR_SLOTS; held++) {
		host_check_eq_u64(DR_SLOTS - held,
				  dr_reservation_free_for_task(&reservation, held));
		host_check(dr_reserve_task(&reservation, held, held + 1));
	}
	host_check_eq_u64(0, dr_reservation_free_for_task(&reservation, DR_SLOTS));
	host_check(!dr_reserve_task(&reservation, DR_SLOTS, DR_SLOTS + 1));
	host_check_eq_u64(DR_SLOTS, dr_reservation_max_task(&reservation));
	host_check_eq_u64(1, reservation.tasks_holding[DR_SLOTS]);
	/* Another task may hold four too: the two are never on the CPU together. */
	host_check(dr_reserve_task(&reservation, 0, DR_SLOTS));
	host_check_eq_u64(2, reservation.tasks_holding[DR_SLOTS]);
}

HOST_TEST(dr_reserve_system_takes_a_slot_from_every_task)
{
	struct dr_reservation reservation;
	unsigned int pinned[RESERVE_CPUS];

	reservation_new(&reservation, pinned);
	host_check(dr_reserve_task(&reservation, 0, 2));
	host_check(dr_reserve_task(&reservation, 0, 1));
	host_check(dr_reserve_system(&reservation, 1));
	host_check_eq_u64(1, dr_reservation_free_for_task(&reservation, 2));
	host_check_eq_u64(2, dr_reservation_free_for_task(&reservation, 1));
	host_check_eq_u64(3, dr_reservation_free_for_task(&reservation, 0));
	/* Neither task, nor a new one, may now reach four. */
	host_check(!dr_reserve_task(&reservation, 2, 4));
	host_check(!dr_reserve_task(&reservation, 0, 4));
	host_check(dr_reserve_task(&reservation, 1, 3));
	host_check_eq_u64(3, dr_reservation_max_task(&reservation));
	host_check(!dr_reserve_system(&reservation, 1));
}

HOST_TEST(dr_reserve_system_is_refused_while_a_task_holds_the_slots)
{
	struct dr_reservation reservation;
	unsigned int pinned[RESERVE_CPUS];
	struct dr_reservation before;

	reservation_new(&reservation, pinned);
	host_check(dr_reserve_task(&reservation, 0, DR_SLOTS));
	before = reservation;
	host_check(!dr_reserve_system(&reservation, 1));
	host_check(memcmp(&before, &reservation, sizeof(before)) == 0);
	host_check(dr_reserve_task(&reservation, DR_SLOTS, 3));
	host_check(dr_reserve_system(&reservation, 1));
	host_check(!dr_reserve_system(&reservation, 1));
	host_check_eq_u64(1, reservation.system);
	/* The task exits: the other three slots become free for system-wide use. */
	host_check(dr_reserve_task(&reservation, 3, 0));
	host_check_eq_u64(0, dr_reservation_max_task(&reservation));
	host_check(dr_reserve_system(&reservation, 3));
	host_check(!dr_reserve_system(&reservation, 1));
	host_check(!dr_reserve_task(&reservation, 0, 1));
}

HOST_TEST(dr_release_system_gives_the_slots_back_to_tasks)
{
	struct dr_reservation reservation;
	unsigned int pinned[RESERVE_CPUS];

	reservation_new(&reservation, pinned);
	host_check(dr_reserve_system(&reservation, 3));
	host_check_eq_u64(1, dr_reservation_free_for_task(&reservation, 0));
	host_check(!dr_reserve_task(&reservation, 0, 2));
	host_check(dr_reserve_task(&reservation, 0, 1));
	dr_release_system(&reservation, 2);
	host_check_eq_u64(1, reservation.system);
	host_check_eq_u64(2, dr_reservation_free_for_task(&reservation, 1));
	host_check(dr_reserve_task(&reservation, 1, 3));
	dr_release_system(&reservation, 1);
	host_check_eq_u64(1, dr_reservation_free_for_task(&reservation, 3));
	host_check(dr_reserve_task(&reservation, 3, DR_SLOTS));
	host_check(!dr_reserve_system(&reservation, 1));
}

HOST_TEST(dr_reserve_pinned_counts_on_its_own_cpu_and_bounds_every_task)
{
	struct dr_reservation reservation;
	unsigned int pinned[RESERVE_CPUS];
	struct dr_reservation before;

	reservation_new(&reservation, pinned);
	/* Three pinned on CPU 1: CPU 1 has one slot left, CPU 0 all four. */
	host_check(dr_reserve_pinned(&reservation, 1, 3));
	host_check(dr_reserve_pinned(&reservation, 0, 3));
	host_check(!dr_reserve_pinned(&reservation, 1, 2));
	host_check_eq_u64(3, dr_reservation_max_pinned(&reservation));
	/* A task may run on CPU 1: it gets one slot, wherever it is now. */
	host_check_eq_u64(1, dr_reservation_free_for_task(&reservation, 0));
	host_check(dr_reserve_task(&reservation, 0, 1));
	host_check(!dr_reserve_task(&reservation, 1, 2));
	/* A system-wide one needs a slot on every CPU: none is left on CPU 1 (nor on CPU 0). */
	before = reservation;
	host_check(!dr_reserve_system(&reservation, 1));
	host_check(memcmp(&before, &reservation, sizeof(before)) == 0);
	/* The task exits and CPU 0's pinned go: still none on CPU 1 for a second one. */
	host_check(dr_reserve_task(&reservation, 1, 0));
	dr_release_pinned(&reservation, 0, 3);
	host_check(dr_reserve_system(&reservation, 1));
	host_check(!dr_reserve_system(&reservation, 1));
	host_check(!dr_reserve_pinned(&reservation, RESERVE_CPUS, 1));
}
