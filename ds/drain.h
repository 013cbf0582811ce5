/* SPDX-License-Identifier: MIT */
/* Draining a context: its records credited to a task, its buffers given back to the CPU. */
#ifndef DS_DRAIN_H
#define DS_DRAIN_H

#include "ds/ds.h"
#include "ds/state.h"

/* Credit the records written since the last credit to a task; no write to the area. */
void ds_credit_context(struct ds_context *context, unsigned int credit_task);
/* Credit them, then reset the indexes (tracing off meanwhile where the area is active). */
void ds_drain_context(struct ds_context *context, unsigned int credit_task);
/*
 * The same for some users only (DS_DRAIN_USER(user) bits): a detach resets the buffer it takes
 * and leaves the other user's fields alone, which a CPU elsewhere may still be tracing into
 * (both are credited: reading is no write to the area).
 */
#define DS_DRAIN_USER(user) (1u << (user))
#define DS_DRAIN_ALL (DS_DRAIN_USER(DS_USER_BTS) | DS_DRAIN_USER(DS_USER_PEBS))
void ds_drain_users(struct ds_context *context, unsigned int credit_task, unsigned int users);

#endif
