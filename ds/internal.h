/* SPDX-License-Identifier: MIT */
/* What the files of ds/ share and nothing else sees. */
#ifndef DS_INTERNAL_H
#define DS_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/percpu.h"
#include "arch/x86/switch_hooks.h"
#include "ds/ds.h"

#define DS_CONTEXTS (SWITCH_TASKS_MAX + MAX_CPUS)

struct ds_buffer {
	uint64_t phys; /* 0 when the user is not attached */
	unsigned int pages; /* allocated: the records and the canary after them */
	size_t record_size;
	size_t bytes; /* whole records */
};

/* One DS area and its users. contexts[task] for tasks, contexts[SWITCH_TASKS_MAX + cpu]. */
struct ds_context {
	struct ds_area *area; /* NULL when unused */
	struct ds_buffer buffers[DS_USERS];
	struct ds_bts_config bts;
	struct ds_pebs_config pebs;
	uint64_t address_space;
};

struct ds_context *ds_context_of(const struct ds_target *target);
struct ds_context *ds_context_task(unsigned int task);
struct ds_context *ds_context_cpu(unsigned int cpu);

const struct ds_registers *ds_registers_held(void);

/* The context active on this CPU now (the running task's, else the CPU's), or NULL. */
struct ds_context *ds_context_active(void);

/* Make the registers what the running task needs (after an attach or a detach). */
void ds_sync(void);

void ds_drain_context(struct ds_context *context, unsigned int credit_task);
void ds_switch_init(void);
void ds_pmi_init(void);

#endif
