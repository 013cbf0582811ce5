/* SPDX-License-Identifier: MIT */
/* Architectural PEBS users: their buffers, PEBS_BASE, PEBS_INDEX and each counter's CFG_C. */
#ifndef DS_ARCH_PEBS_CONTEXT_H
#define DS_ARCH_PEBS_CONTEXT_H

#include <stdbool.h>

#include "ds/ds.h"
#include "kernel/switch_hooks.h"

/*
 * ds/'s PEBS on a part with architectural PEBS (ds_support()->arch_pebs.usable), apart from the
 * DS area, which keeps BTS. Each entry point below has one call site in the DS-area path's file
 * that owns the same step (context.c, switch.c, drain.c, ds.c); ds_lock guards everything here.
 * Task targets only: a CPU target is refused (DS_ERROR_UNSUPPORTED).
 */
/* ds_pebs_check() on an arch-PEBS part. */
enum ds_error ds_arch_pebs_check(const struct ds_pebs_config *config, char *reason, size_t size);
enum ds_error ds_arch_pebs_attach(const struct ds_target *target,
				  const struct ds_pebs_config *config);
enum ds_error ds_arch_pebs_detach(const struct ds_target *target);
/* Drain target's buffer now, where it is active (a call IPI to that CPU if another). */
void ds_arch_pebs_drain(const struct ds_target *target);
/* A switch-in: the incoming task's buffer and counters, after pmu/ stopped the counters. */
void ds_arch_pebs_switch_in(const struct switch_task *next);
/* A task's exit, and the runner's sweep: detach; the sweep returns 1 if a user was left. */
unsigned int ds_arch_pebs_release(unsigned int task);
/* The threshold PMI (GLOBAL_STATUS bit 54): drain what is active here, then acknowledge it. */
void ds_arch_pebs_pmi_drain(void);
/* On each CPU as it comes up: CFG_C of every PEBS counter, PEBS_BASE and INDEX to 0. */
void ds_arch_pebs_init_cpu(void);

#endif
