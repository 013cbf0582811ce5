/* SPDX-License-Identifier: MIT */
/* Attaching and detaching the users of a target's context. */
#ifndef DS_CONTEXT_H
#define DS_CONTEXT_H

#include "ds/ds.h"

/* Detach every user of target (a task that exits), or leave it to a detach under way. */
void ds_release_all(const struct ds_target *target);

#endif
