/* SPDX-License-Identifier: MIT */
/* A task's event set multiplexed over the GP counters, with perf's time accounting. Pure. */
#ifndef PMU_ROTATE_H
#define PMU_ROTATE_H

#include <stdbool.h>
#include <stdint.h>

#include "pmu/event.h"

#define PMU_SET_MAX_EVENTS 16
#define PMU_NO_COUNTER 0xff

/* One event of a set, in the order it was added. */
struct pmu_set_event {
	struct pmu_event event;
	bool fixed; /* owns fixed counter fixed_counter, so always runs and never rotates */
	uint8_t fixed_counter;
	uint8_t counter; /* GP events: the GP counter it has this slice, or PMU_NO_COUNTER */
	uint64_t count; /* the caller adds the counter's delta at the end of each slice it ran */
	uint64_t time_enabled; /* time the task ran with this event in its set */
	uint64_t time_running; /* the part of that when the event was on a counter */
};

/*
 * Invariants, after pmu_set_schedule() and while no event is added:
 * - gp_events GP events, numbered by ordinal 0..gp_events-1 in set order, ignoring fixed ones.
 * - If gp_events <= gp_counters, every GP event is on a counter and rotation does nothing.
 *   Otherwise the events on counters are the gp_counters consecutive ordinals (mod gp_events)
 *   starting at first, and first < gp_events.
 * - No two events share a GP counter, and every counter number is below gp_counters.
 * - time_running <= time_enabled for every event (both saturate at UINT64_MAX).
 * Each rotation moves the window by one event, so over gp_events slices every GP event runs
 * in exactly gp_counters of them. Events that stay in the window keep their counter, so one
 * rotation reprograms one counter: the leaving event's counter goes to the arriving event.
 */
struct pmu_set {
	struct pmu_set_event events[PMU_SET_MAX_EVENTS];
	unsigned int nr_events;
	unsigned int gp_events;
	unsigned int gp_counters; /* as last scheduled, at most PMU_MAX_GP */
	unsigned int first;
};

/* An empty set: no events, no counters, no time. */
void pmu_set_init(struct pmu_set *set);

/*
 * Add a GP event; returns its index, or -1 when the set is full. It is on no counter until the
 * next pmu_set_schedule(). Its times start at zero.
 */
int pmu_set_add(struct pmu_set *set, const struct pmu_event *event);

/*
 * Add a GP event that asks for GP counter gp_counter: pmu_set_schedule() leaves it there while
 * that counter exists and no earlier event of the window holds it (as it leaves every event's
 * counter), else gives it the lowest free one. -1 when the set is full or gp_counter is not
 * below PMU_MAX_GP.
 */
int pmu_set_add_on(struct pmu_set *set, unsigned int gp_counter, const struct pmu_event *event);

/*
 * Add an event that fixed counter fixed_counter counts (the hardware chooses what: SDM
 * §20.2.2); event supplies user, kernel and interrupt. -1 when the set is full, the counter
 * does not exist in PMU_MAX_FIXED, or another event of the set owns it.
 */
int pmu_set_add_fixed(struct pmu_set *set, unsigned int fixed_counter,
		      const struct pmu_event *event);

/*
 * Give counters to the window's events (gp_counters from CPUID.0AH:EAX[15:8], clamped to
 * PMU_MAX_GP), keeping the counter of every event that already has a valid one.
 */
void pmu_set_schedule(struct pmu_set *set, unsigned int gp_counters);

/* At a tick: move the window by one event and reschedule. False when all events fit. */
bool pmu_set_rotate(struct pmu_set *set);

/*
 * The task ran elapsed (TSC ticks, or any unit, used consistently) with the current
 * assignment: every event gains enabled time, events on a counter gain running time too.
 * Account the slice that ended before rotating.
 */
void pmu_set_account(struct pmu_set *set, uint64_t elapsed);

/* Whether event index is on a counter this slice. */
bool pmu_set_running(const struct pmu_set *set, unsigned int index);

/* Event index's count scaled to its enabled time (pmu_scale()). */
uint64_t pmu_set_scaled(const struct pmu_set *set, unsigned int index);

/*
 * The counter configuration that makes this slice's assignment count: EN event selects for
 * the GP counters in use (zero for the others), the fixed fields, and the GLOBAL_CTRL bits.
 */
void pmu_set_config(const struct pmu_set *set, uint64_t evtsel[PMU_MAX_GP], uint64_t *fixed_ctrl,
		    uint64_t *global_ctrl);

#endif
