/* SPDX-License-Identifier: MIT */
/* ds/'s state: every target's context, ds_lock, each CPU's register shadow, the credits. */
#ifndef DS_STATE_H
#define DS_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/msr-index.h"
#include "ds/ds.h"

/* One user's buffer: the records, then the canary after them. */
struct ds_buffer {
	uint64_t phys; /* 0 when the user is not attached */
	unsigned int pages; /* allocated: the records and the canary after them */
	size_t record_size;
	size_t bytes; /* whole records */
};

/*
 * A target's Debug Store context: its save area (struct ds_area, allocated with the first
 * user) and the buffers of its users. One per task (ds_context_task()) and one per CPU
 * (ds_context_cpu()).
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

/*
 * ds_lock guards every context and each CPU's register shadow. The switch takes it under
 * sched_lock with interrupts off (ds_lock_irqs_off()). Never held while waiting for another CPU.
 */
unsigned long ds_lock_irqsave(void);
void ds_unlock_irqrestore(unsigned long flags);
void ds_lock_irqs_off(void);
void ds_unlock_irqs_off(void);

/* The contexts: task < SWITCH_TASKS_MAX, cpu < percpu_count(). */
struct ds_context *ds_context_task(unsigned int task);
struct ds_context *ds_context_cpu(unsigned int cpu);
struct ds_context *ds_context_of(const struct ds_target *target);
/* The user's buffer is attached and not being detached: its feature is on where the area is. */
bool ds_user_live(const struct ds_context *context, enum ds_user user);

/*
 * This CPU's register shadow, and the only writes to the three MSRs (and PEBS_DATA_CFG), each
 * with its shadow. DEBUGCTL: only its BTS bits (DS_DEBUGCTL_BITS), through arch's DEBUGCTL
 * shadow. PEBS_DATA_CFG changes only with PEBS off and the buffer drained (Linux ds.c: records
 * of one size per buffer).
 */
#define DS_DEBUGCTL_BITS \
	(DEBUGCTL_TR | DEBUGCTL_BTS | DEBUGCTL_BTINT | DEBUGCTL_BTS_OFF_OS | DEBUGCTL_BTS_OFF_USR)
const struct ds_registers *ds_registers_held(void);
void ds_write_ds_area(uint64_t value);
void ds_write_debugctl(uint64_t value);
void ds_write_pebs_data_cfg(uint64_t value);
void ds_write_pebs_enable(uint64_t value);

/*
 * Whether ds/ drives PEBS through the DS area on the CPU ds_detect() found (no pebs_reason):
 * only then does ds_registers_rewrite() touch IA32_PEBS_ENABLE, which an architectural-PEBS
 * part, or one without PEBS, does not have.
 */
void ds_state_pebs_in_ds_area(bool usable);

/* The records credited to a task (task < SWITCH_TASKS_MAX), and a PMI counted. */
struct ds_credit *ds_credit_of(unsigned int task);
void ds_pmi_counted(void);

/*
 * Stop the counters for a change to PEBS_ENABLE or a CFG_C (rule 18): GLOBAL_CTRL cleared, what
 * it held returned (0: nothing ran, or no GLOBAL_CTRL), for ds_counters_resume() to put back.
 */
uint64_t ds_counters_pause(void);
void ds_counters_resume(uint64_t global);

#endif
