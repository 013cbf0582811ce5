/* SPDX-License-Identifier: MIT */
/* What the files of ds/ share and nothing else sees. */
#ifndef DS_INTERNAL_H
#define DS_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/percpu.h"
#include "ds/ds.h"
#include "kernel/spinlock.h"
#include "kernel/switch_hooks.h"

struct ds_buffer {
	uint64_t phys; /* 0 when the user is not attached */
	unsigned int pages; /* allocated: the records and the canary after them */
	size_t record_size;
	size_t bytes; /* whole records */
};

/* One DS area and its users: one per task (ds_context_task()) and one per CPU (ds_context_cpu()).
 */
struct ds_context {
	struct ds_area *area; /* NULL when unused */
	struct ds_buffer buffers[DS_USERS];
	struct ds_bts_config bts;
	struct ds_pebs_config pebs;
	uint64_t address_space; /* the owner's root when its view was mapped, else 0 */
	bool detaching; /* between the two steps of ds_detach(): attach and detach refused */
	bool stopping[DS_USERS]; /* that user is being detached: its feature stays off */
	uint64_t bts_credited, pebs_credited; /* records below these were credited; 0: none */
	bool release_all; /* the owner exited during a detach: that detach frees everything */
};

struct ds_context *ds_context_of(const struct ds_target *target);
/* The user's buffer is attached and not being detached: its feature is on where the area is. */
bool ds_user_live(const struct ds_context *context, enum ds_user user);
struct ds_context *ds_context_task(unsigned int task);
struct ds_context *ds_context_cpu(unsigned int cpu);

const struct ds_registers *ds_registers_held(void);

/* The context active on this CPU now (the running task's, else the CPU's), or NULL. */
struct ds_context *ds_context_active(void);

/*
 * Guards every context and each CPU's register shadow; taken under sched_lock by the switch
 * hooks. Never held while waiting for another CPU.
 */
extern struct spinlock ds_lock;

/*
 * After an attach or a detach, without ds_lock: make the registers of the CPU where target's
 * area is active what it needs now (a call IPI when that is another CPU). Attaching another
 * CPU's area leaves it for ds_activate_cpu() there; detaching always waits for that CPU, which
 * also flushes its TLB if it runs the user task whose view was unmapped.
 */
void ds_sync_target(const struct ds_target *target, bool detaching);

/* Detach every user of target (a task that exits), or leave it to a detach under way. */
void ds_release_all(const struct ds_target *target);

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
/* Tracing off, and the counters too while PEBS is on (counters_pause()); ds_resume() puts
 * both back. */
/* The PEBS_ENABLE bits the calling CPU has (ds_init_cpu()): a context's others stay off here. */
uint64_t ds_pebs_enable_valid_here(void);
void ds_quiesce(void);
void ds_resume(void);
void ds_switch_init(void);
void ds_pmi_init(void);

#endif
