/* SPDX-License-Identifier: MIT */
/* What Debug Store support the CPUs have (ds_support() in ds/ds.h gives the boot CPU's). */
#ifndef DS_DETECT_H
#define DS_DETECT_H

#include <stdint.h>

/* Once, on the boot CPU: CPUID, IA32_MISC_ENABLE, PERF_CAPABILITIES, the DS_AREA read-back. */
void ds_detect(void);
/*
 * The calling CPU's PEBS_ENABLE bits. On a hybrid part each core type has its own counters
 * (SDM CPUID leaf 1AH), so a bit the boot CPU has may #GP on a small core; Linux keeps
 * pebs_events_mask per hybrid PMU for the same reason. ds_pebs_enable_valid_here() gives them:
 * a context's other bits stay off here.
 */
void ds_detect_cpu(void);
uint64_t ds_pebs_enable_valid_here(void);

#endif
