/* SPDX-License-Identifier: MIT */
/* Activating a context on a CPU: which one is active, and the registers it needs. */
#ifndef DS_ACTIVATE_H
#define DS_ACTIVATE_H

#include <stdbool.h>

#include "ds/ds.h"
#include "ds/state.h"

/* The context active for task here: its own when a user is live, else this CPU's, else NULL.
 * ds_context_active() is the running task's. ds_lock held. */
struct ds_context *ds_context_for(unsigned int task);
struct ds_context *ds_context_active(void);

/*
 * Make this CPU's registers what context needs (NULL: none), with the fewest writes, tracing off
 * while IA32_DS_AREA changes (the order of Linux's old ds_switch_to()). ds_lock held.
 */
void ds_apply(struct ds_context *context);

/* Tracing off, and the counters too while PEBS is on (counters_pause()); ds_resume() puts
 * both back. ds_lock held. */
void ds_quiesce(void);
void ds_resume(void);

/*
 * After an attach or a detach, without ds_lock: make the registers of the CPU where target's
 * context is active what it needs now (a call IPI when that is another CPU). Attaching another
 * CPU's context leaves it for ds_activate_cpu() there; detaching always waits for that CPU,
 * which also flushes its TLB if it runs the user task whose view was unmapped.
 */
void ds_sync_target(const struct ds_target *target, bool detaching);

#endif
