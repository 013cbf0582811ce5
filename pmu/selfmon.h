/* SPDX-License-Identifier: MIT */
/* Self-monitoring pages: each task's read-only page of where its counters are (pmu/pmu.h). */
#ifndef PMU_SELFMON_H
#define PMU_SELFMON_H

#include <stddef.h>

#include "kernel/switch_hooks.h"
#include "pmu/pmu.h"

extern struct pmu_user_page *pmu_selfmon_pages[SWITCH_TASKS_MAX];

/*
 * The task's page in the kernel's view, or NULL when it does not self-monitor. Inline: pmu/'s
 * switch-in asks it with the task's counters already counting, so a task without a page pays a
 * load and a test (ds.partial_pebs_buffer_is_drained_when_its_user_detaches counts those paths
 * to within half a period).
 */
static inline struct pmu_user_page *pmu_selfmon_page(unsigned int task)
{
	return task < SWITCH_TASKS_MAX ? pmu_selfmon_pages[task] : NULL;
}
/* pmu_self_monitor() once pmu/ is usable: the task's page mapped, or 0 if it is already. */
int pmu_selfmon_map(unsigned int task);
/* At its exit: the page unmapped and freed. */
void pmu_selfmon_exit(unsigned int task);
/* At a switch-in: CR4.PCE set for a task that self-monitors, clear for any other. */
void pmu_selfmon_switch_in(unsigned int task);

#endif
