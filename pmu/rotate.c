/* SPDX-License-Identifier: MIT */
/* Round-robin multiplexing of a task's events over the GP counters, and their time accounting. */
#include <stdbool.h>
#include <stdint.h>

#include "pmu/event.h"
#include "pmu/rotate.h"
#include "pmu/scale.h"

void pmu_set_init(struct pmu_set *set)
{
	*set = (struct pmu_set){ 0 };
}

static int set_append(struct pmu_set *set, const struct pmu_event *event)
{
	struct pmu_set_event *entry;

	if (set->nr_events >= PMU_SET_MAX_EVENTS)
		return -1;
	entry = &set->events[set->nr_events];
	*entry = (struct pmu_set_event){ .event = *event, .counter = PMU_NO_COUNTER };
	return (int)set->nr_events++;
}

int pmu_set_add(struct pmu_set *set, const struct pmu_event *event)
{
	int index = set_append(set, event);

	/* A new last ordinal leaves first, and so the window's start, where it was. */
	if (index >= 0)
		set->gp_events++;
	return index;
}

int pmu_set_add_on(struct pmu_set *set, unsigned int gp_counter, const struct pmu_event *event)
{
	int index;

	if (gp_counter >= PMU_MAX_GP)
		return -1;
	index = pmu_set_add(set, event);
	if (index >= 0)
		set->events[index].counter = (uint8_t)gp_counter;
	return index;
}

int pmu_set_add_fixed(struct pmu_set *set, unsigned int fixed_counter,
		      const struct pmu_event *event)
{
	int index;

	if (fixed_counter >= PMU_MAX_FIXED)
		return -1;
	for (unsigned int i = 0; i < set->nr_events; i++) {
		if (set->events[i].fixed && set->events[i].fixed_counter == fixed_counter)
			return -1;
	}
	index = set_append(set, event);
	if (index >= 0) {
		set->events[index].fixed = true;
		set->events[index].fixed_counter = (uint8_t)fixed_counter;
	}
	return index;
}

/* Whether the GP event with this ordinal is in the window of events that get counters. */
static bool in_window(const struct pmu_set *set, unsigned int ordinal)
{
	if (set->gp_events <= set->gp_counters)
		return true;
	return (ordinal + set->gp_events - set->first) % set->gp_events < set->gp_counters;
}

void pmu_set_schedule(struct pmu_set *set, unsigned int gp_counters)
{
	unsigned int used = 0, ordinal = 0;

	set->gp_counters = gp_counters < PMU_MAX_GP ? gp_counters : PMU_MAX_GP;
	/* Keep the counters of events that stay on; free everything else. */
	for (unsigned int i = 0; i < set->nr_events; i++) {
		struct pmu_set_event *entry = &set->events[i];

		if (entry->fixed)
			continue;
		if (in_window(set, ordinal++) && entry->counter < set->gp_counters &&
		    !(used & (1u << entry->counter)))
			used |= 1u << entry->counter;
		else
			entry->counter = PMU_NO_COUNTER;
	}
	/* The arriving events take the lowest free counters; the window never exceeds them. */
	ordinal = 0;
	for (unsigned int i = 0; i < set->nr_events; i++) {
		struct pmu_set_event *entry = &set->events[i];
		unsigned int counter = 0;

		if (entry->fixed)
			continue;
		if (!in_window(set, ordinal++) || entry->counter != PMU_NO_COUNTER)
			continue;
		while (used & (1u << counter))
			counter++;
		used |= 1u << counter;
		entry->counter = (uint8_t)counter;
	}
}

bool pmu_set_rotate(struct pmu_set *set)
{
	if (set->gp_events <= set->gp_counters)
		return false;
	set->first = (set->first + 1) % set->gp_events;
	pmu_set_schedule(set, set->gp_counters);
	return true;
}

static uint64_t add_saturating(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

void pmu_set_account(struct pmu_set *set, uint64_t elapsed)
{
	for (unsigned int i = 0; i < set->nr_events; i++) {
		struct pmu_set_event *entry = &set->events[i];

		entry->time_enabled = add_saturating(entry->time_enabled, elapsed);
		if (pmu_set_running(set, i))
			entry->time_running = add_saturating(entry->time_running, elapsed);
	}
}

bool pmu_set_running(const struct pmu_set *set, unsigned int index)
{
	const struct pmu_set_event *entry = &set->events[index];

	return entry->fixed || entry->counter != PMU_NO_COUNTER;
}

uint64_t pmu_set_scaled(const struct pmu_set *set, unsigned int index)
{
	const struct pmu_set_event *entry = &set->events[index];

	return pmu_scale(entry->count, entry->time_enabled, entry->time_running);
}

void pmu_set_config(const struct pmu_set *set, uint64_t evtsel[PMU_MAX_GP], uint64_t *fixed_ctrl,
		    uint64_t *global_ctrl)
{
	for (unsigned int counter = 0; counter < PMU_MAX_GP; counter++)
		evtsel[counter] = 0;
	*fixed_ctrl = 0;
	*global_ctrl = 0;
	for (unsigned int i = 0; i < set->nr_events; i++) {
		const struct pmu_set_event *entry = &set->events[i];

		if (entry->fixed) {
			*fixed_ctrl |= pmu_fixed_ctrl_encode(entry->fixed_counter, &entry->event);
			*global_ctrl |= pmu_global_fixed(entry->fixed_counter);
		} else if (entry->counter != PMU_NO_COUNTER) {
			evtsel[entry->counter] = pmu_evtsel_encode(&entry->event, true);
			*global_ctrl |= pmu_global_gp(entry->counter);
		}
	}
}
