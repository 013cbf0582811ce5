/* SPDX-License-Identifier: MIT */
/* Per-task performance counters: lazy switching, multiplexing by rotation, overflow sampling. */
#ifndef PMU_PMU_H
#define PMU_PMU_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/switch_hooks.h"
#include "pmu/detect.h"
#include "pmu/event.h"

/* Detect; where counters are usable, register the tick hook (multiplexing). */
void pmu_init(void);
/* On each other CPU as it starts: stop whatever counters firmware left running there. */
void pmu_init_cpu(void);

/* True when this CPU's counters can be used; else pmu_info()->reason says why. */
bool pmu_usable(void);

/*
 * Add an event to a task's set (by task index, any state). GP events beyond the GP counters
 * are multiplexed: they rotate on the timer tick. Returns the event's index, or -1 when the set
 * is full or counters are not usable (or, sampling, the period is 0 or above pmu_max_period()).
 * A sampling event (period != 0) raises a PMI every period
 * events and is reloaded each time; it never rotates off (it is added first). A PEBS sampling
 * event (event->pebs) raises none: ds/'s PEBS assist writes a record and reloads it every
 * period events (IA32_PEBS_ENABLE and the reset value are ds/'s), and its overflows stay 0.
 */
int pmu_add_event(unsigned int task, const struct pmu_event *event);
int pmu_add_fixed_event(unsigned int task, unsigned int fixed_counter,
			const struct pmu_event *event);
int pmu_add_sampling_event(unsigned int task, const struct pmu_event *event, uint64_t period);
/*
 * A sampling event, as pmu_add_sampling_event() adds one, on the counter named in GLOBAL_CTRL
 * numbering (GP counter i at bit i, fixed counter i at bit 32 + i; a fixed counter counts its
 * own event, so only event's user, kernel and pebs apply there): for a PEBS user that asked
 * for that counter (ds_pebs_config.enable). -1 also when this CPU lacks that GP counter or
 * some CPU lacks that fixed counter, or the period does not fit the counter's width.
 */
int pmu_add_sampling_event_on(unsigned int task, unsigned int counter,
			      const struct pmu_event *event, uint64_t period);
/* The longest period a sampling event may have here; a longer one is refused (-1). */
uint64_t pmu_max_period(void);

struct pmu_reading {
	uint64_t count; /* events counted while the event was on a counter */
	uint64_t time_enabled; /* TSC cycles the task ran with the event in its set */
	uint64_t time_running; /* the part of it on a counter */
	uint64_t scaled; /* count * enabled / running: the multiplexed estimate */
	uint64_t overflows; /* sampling events: PMIs taken */
};

/* Read an event; for the calling task, its running counters are read first. */
struct pmu_reading pmu_read(unsigned int task, unsigned int index);

/* Drop every event of a task (also done when it exits); true if it had any. */
bool pmu_release(unsigned int task);
/* Whether a task has events: a read of pmu/'s table alone, for a sweep over many indices. */
bool pmu_task_used(unsigned int task);

/*
 * The perfmon MSR writes pmu/ made on this CPU since boot, by register: each switch plan's
 * and each stop's (the PMI handler's reloads and acknowledgements aside). A switch between
 * tasks whose event sets are identical needs no control write (make bench reports them).
 */
struct pmu_writes {
	uint64_t evtsel; /* IA32_PERFEVTSELx; on AMD PERF_CTLx (K7 or PerfCtrExtCore) */
	uint64_t fixed_ctrl; /* IA32_FIXED_CTR_CTRL */
	uint64_t global_ctrl; /* IA32_PERF_GLOBAL_CTRL; on AMD PerfCntrGlobalCtl */
	uint64_t counts; /* IA32_PMCx, IA32_A_PMCx, IA32_FIXED_CTRx */
};
struct pmu_writes pmu_writes(void);

/*
 * Self-monitoring, as perf's mmap'd perf_event_mmap_page: a ring-3 task reads its own counting
 * events with RDPMC, without a system call. pmu_self_monitor() maps a page at USER_PMU_BASE in
 * the task's address space, read-only to it, and from then on CR4.PCE is set while the task
 * runs (and clear while others do). Event i's value is
 *   event[i].count + ((RDPMC(event[i].index - 1) - event[i].base) & event[i].mask)
 * while event[i].index is not 0 (the event is on a counter; index - 1 is RDPMC's ECX), and
 * event[i].count alone while it is 0 (rotated off; or a sampling event, which is not
 * readable: count stays 0). pmu/ rewrites the page whenever the events are programmed (a
 * switch-in, a rotation, an event added or released) and changes seq as it does: a reader takes
 * seq, reads the page and the counter, and takes seq again; if it changed, a switch came
 * between, and it reads again. pmu/ writes it with the task off the CPU or interrupted, so the
 * task never sees a half-written page (seq is odd meanwhile all the same, as perf's lock).
 */
struct pmu_user_event {
	uint64_t index; /* RDPMC's ECX + 1 while on a counter, else 0 */
	uint64_t count; /* the event's count when the counter held base */
	uint64_t base;
	uint64_t mask; /* the counter's width */
};

struct pmu_user_page {
	uint64_t seq;
	uint64_t events;
	struct pmu_user_event event[16];
};

/* Map the page for task (a user task): 0, or -1 (not a user task, no memory, no counters). */
int pmu_self_monitor(unsigned int task);

/* True when this CPU's counters are all stopped, as pmu/'s shadow has them. */
bool pmu_idle(void);

/*
 * The steps of a switch and of a PMI that are pmu/'s, for debugstate/ to run in their order
 * (debugstate/debugstate.c says why). Each does nothing where counters are not usable.
 * Switch: switch_out stops the counters where either task samples with PEBS, and accounts the
 * outgoing task's slice; switch_in programs the incoming task's counters; task_exit drops an
 * ended task's events.
 */
void pmu_switch_out(const struct switch_task *prev, const struct switch_task *next);
void pmu_switch_in(const struct switch_task *prev, const struct switch_task *next);
void pmu_task_exit(const struct switch_task *task);
/*
 * PMI: stop clears GLOBAL_CTRL and returns what it held; status reads GLOBAL_STATUS;
 * reload_and_acknowledge reloads each sampling counter that overflowed in status and writes
 * its overflow bits to GLOBAL_OVF_CTRL; restart writes GLOBAL_CTRL back as stop found it.
 */
uint64_t pmu_pmi_stop(void);
uint64_t pmu_pmi_status(void);
void pmu_pmi_reload_and_acknowledge(uint64_t status);
void pmu_pmi_restart(uint64_t global_ctrl);

#endif
