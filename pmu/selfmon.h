/* SPDX-License-Identifier: MIT */
/* Self-monitoring pages: each task's read-only page of where its counters are (pmu/pmu.h). */
#ifndef PMU_SELFMON_H
#define PMU_SELFMON_H

#include "pmu/pmu.h"

/* The task's page in the kernel's view, or NULL when it does not self-monitor. */
struct pmu_user_page *pmu_selfmon_page(unsigned int task);
/* At its exit: the page unmapped and freed. */
void pmu_selfmon_exit(unsigned int task);
/* At a switch-in: CR4.PCE set for a task that self-monitors, clear for any other. */
void pmu_selfmon_switch_in(unsigned int task);

#endif
