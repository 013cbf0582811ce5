/* SPDX-License-Identifier: MIT */
/* Architectural PEBS detection: PERF_CAPABILITIES PEBS_FMT 0xF and CPUID leaf 23H. */
#ifndef DS_ARCH_PEBS_H
#define DS_ARCH_PEBS_H

#include <stdbool.h>

#include "ds/ds.h"

/*
 * Fill out from CPUID leaf 23H, given what ds_detect() read: CPUID.1:ECX.PDCM and, with it,
 * PERF_CAPABILITIES.PEBS_FMT. usable, or the first failing condition in reason, in the order
 * Linux checks them (intel_pmu_init() and update_pmu_cap() of the arch-PEBS series).
 */
void ds_arch_pebs_detect(bool pdcm, unsigned int pebs_format, struct ds_arch_pebs_support *out);

#endif
