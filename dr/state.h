/* SPDX-License-Identifier: MIT */
/* dr/'s state: the breakpoint tables, the locks, each CPU's shadow, and the writes through it. */
#ifndef DR_STATE_H
#define DR_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "dr/dr.h"
#include "dr/layout.h"
#include "dr/reserve.h"

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

/*
 * Per CPU: what the registers hold, which logical slot of the current task is where, and the
 * system-wide plus pinned breakpoints laid out for this CPU (valid while fixed_generation
 * matches). While a #DB handler runs here (in_debug), DR7 is held at DR7_RESET and resume_dr7
 * is what it goes back to on return: dr_shadow_write_dr7() changes resume_dr7 instead of DR7
 * meanwhile.
 */
struct dr_cpu {
	struct dr_hardware held;
	uint8_t logical_of[DR_SLOTS];
	struct dr_set fixed;
	uint8_t pinned_of[DR_SLOTS];
	uint64_t fixed_generation;
	bool in_debug;
	unsigned long resume_dr7;
};

/*
 * dr_lock guards every task's set, the system-wide and pinned sets, the reservation and each
 * CPU's shadow. The switch takes it under sched_lock with interrupts off (dr_lock_irqs_off());
 * dr/ never takes sched_lock, and never waits for another CPU while it holds dr_lock.
 */
unsigned long dr_lock_irqsave(void);
void dr_unlock_irqrestore(unsigned long flags);
void dr_lock_irqs_off(void);
void dr_unlock_irqs_off(void);
/* Where dr_lock is, for tests of dr_debug_regions(). */
const void *dr_lock_address(void);

/*
 * The hit rings' lock: readers anywhere (irqsave), and the #DB that records a hit. A #DB that
 * comes while this CPU holds it (inside a reader) cannot wait for itself:
 * dr_hits_lock_in_debug() then takes nothing and returns false.
 */
unsigned long dr_hits_lock_irqsave(void);
void dr_hits_unlock_irqrestore(unsigned long flags);
bool dr_hits_lock_in_debug(void);
void dr_hits_unlock_in_debug(void);

/* The tables, under dr_lock (the hit rings under the hits lock). task < SWITCH_TASKS_MAX,
 * cpu < percpu_count(), slot < DR_SLOTS. */
struct dr_task *dr_task_get(unsigned int task);
struct dr_set *dr_system_set(void);
struct dr_handler_entry *dr_system_handler(unsigned int slot);
struct dr_set *dr_pinned_set(unsigned int cpu);
struct dr_handler_entry *dr_pinned_handler(unsigned int cpu, unsigned int slot);
struct dr_reservation *dr_reservation_get(void);
/* A task exited: give its slots back and forget its state (takes dr_lock). */
void dr_task_release(unsigned int task);

/* Bumped by every change of any breakpoint set: cached layouts with another value are stale.
 * Starts at 1, so that a zeroed dr_task is stale. */
uint64_t dr_generation(void);
void dr_generation_bump(void);

/* This CPU's shadow, under dr_lock; its map from hardware slot to the running task's, or the
 * pinned, logical slot (read in #DB). */
struct dr_cpu *dr_cpu_this(void);
uint8_t dr_logical_of(unsigned int hardware_slot);
uint8_t dr_pinned_of(unsigned int hardware_slot);

/*
 * The only writes to DR0-DR3 and DR7 after boot, each with its shadow: DR7, or inside #DB what
 * DR7 returns to when the handler is done; an address register.
 */
void dr_shadow_write_dr7(unsigned long dr7);
void dr_shadow_write_address(unsigned int slot, uint64_t address);
/* A slot's AMD address mask (BPEXT only: dr/bpext.h), cached in held like DR0-3. */
void dr_shadow_write_mask(unsigned int slot, uint64_t mask);

/*
 * Around every #DB, on the CPU that took it (arch's debug bracket): enter clears DR7 and returns
 * what it held (the slots that were enabled); exit writes it back, or what the apply decided
 * meanwhile. Both go through the shadow: one DR7 write each, none when DR7 enabled nothing.
 * dr_debug_held() is what enter returned, while the #DB runs.
 */
unsigned long dr_debug_enter(void);
void dr_debug_exit(void);
unsigned long dr_debug_held(void);

/* DR_ERROR_DEBUG_MEMORY when breakpoint overlaps one of dr_debug_regions(), else DR_OK. */
enum dr_error dr_validate_debug_memory(const struct dr_breakpoint *breakpoint);

/*
 * Boot: the reservation's per-CPU counts and the #DB regions for percpu_count() CPUs, and
 * whether DEBUGCTL keeps BTF here. Each CPU: DR7, DR6 and DR0-DR3 reset, and its shadow with them.
 */
void dr_state_init(void);
void dr_state_init_cpu(void);

#endif
