/* SPDX-License-Identifier: MIT */
/* What the files of dr/ share and nothing else sees. */
#ifndef DR_INTERNAL_H
#define DR_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "dr/dr.h"
#include "kernel/spinlock.h"

#define DR_HITS_MAX 16

struct dr_handler_entry {
	dr_handler handler;
	void *context;
};

/* One task's breakpoints and events, indexed by its switch_task.index. */
struct dr_task {
	struct dr_set set; /* by logical slot */
	/* dr_layout() of set with the system-wide set, valid while generation matches. */
	struct dr_hardware wanted;
	uint8_t logical_of[DR_SLOTS];
	uint64_t generation;
	unsigned int layout_cpu; /* wanted is for this CPU's pinned breakpoints */
	struct dr_handler_entry handlers[DR_SLOTS];
	uint64_t user_handler;
	bool single_step, single_step_applied;
	bool branch_step;
	struct dr_hit hits[DR_HITS_MAX]; /* a ring: hit_first is the oldest */
	unsigned int hit_first, hit_count, hits_lost;
	uint64_t hits_taken; /* hits ever taken from the ring: the serial of hits[hit_first] */
};

struct dr_task *dr_task_get(unsigned int task);
const struct dr_set *dr_system_set(void);
const struct dr_handler_entry *dr_system_handler(unsigned int slot);
const struct dr_set *dr_pinned_set(unsigned int cpu);
const struct dr_handler_entry *dr_pinned_handler(unsigned int cpu, unsigned int slot);
/* This CPU's map from hardware slot to the running task's, or the pinned, logical slot. */
uint8_t dr_logical_of(unsigned int hardware_slot);
uint8_t dr_pinned_of(unsigned int hardware_slot);

/*
 * Around every #DB, on the CPU that took it (arch's debug bracket): enter clears DR7 and returns
 * what it held (the slots that were enabled); exit writes it back, or what dr_apply() decided
 * meanwhile. Both go through the per-CPU shadow: one DR7 write each, none when DR7 enabled
 * nothing. dr_debug_held() is what enter returned, while the #DB runs.
 */
unsigned long dr_debug_enter(void);
void dr_debug_exit(void);
unsigned long dr_debug_held(void);

/* dr/'s own memory that the #DB handler touches, as [*start, *end), for dr_debug_regions():
 * CPU cpu's shadow (switch.c, cpu < percpu_count()) and every task's state with its hit ring
 * (install.c). */
void dr_cpus_range(unsigned int cpu, uint64_t *start, uint64_t *end);
void dr_tasks_range(uint64_t *start, uint64_t *end);
/* DR_ERROR_DEBUG_MEMORY when breakpoint overlaps one of dr_debug_regions(), else DR_OK. */
enum dr_error dr_validate_debug_memory(const struct dr_breakpoint *breakpoint);

/* Bumped by every change of any breakpoint set: cached layouts with another value are stale. */
uint64_t dr_generation(void);
/* A task exited: give its slots back and forget its state. */
void dr_task_release(unsigned int task);
/*
 * Guards every task's set, the system-wide set, the reservation and each CPU's shadow. Taken
 * under sched_lock by the switch hook; dr/ never takes sched_lock, and never waits for another
 * CPU while it holds dr_lock.
 */
extern struct spinlock dr_lock;

/*
 * Re-apply the registers after a change, without dr_lock held: for task on the CPU that runs it
 * (by a call IPI when that is another CPU), for whatever runs here, on CPU cpu (after a change
 * to its pinned set) or on every CPU (after a system-wide change). A CPU that does not take the
 * call in time is counted, not waited for: its registers catch up at its next switch.
 */
void dr_sync(unsigned int task);
void dr_sync_current(void);
void dr_sync_cpu(unsigned int cpu);
void dr_sync_all(void);

/* The reservation's per-CPU counts, for percpu_count() CPUs: before any breakpoint. */
void dr_install_init(void);
void dr_exception_init(void);
void dr_syscalls_init(void);

#endif
