/* SPDX-License-Identifier: MIT */
/* Hardware breakpoints: per-task and system-wide, hard reservation, lazy switching, #DB dispatch.
 */
#ifndef DR_DR_H
#define DR_DR_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/regs.h"
#include "dr/breakpoint.h"
#include "dr/layout.h"
#include "kernel/switch_hooks.h"

/* One #DB, as recorded for the breakpoint's owner. */
struct dr_hit {
	uint64_t rip; /* at the instruction (execute), or after the access (data, I/O, step); a
		       * kernel RIP reaches ring 3 as 0 (SYSCALL_DR_READ_HITS) */
	uint64_t address; /* the breakpoint's address; 0 for a single step */
	uint64_t dr6;
	uint8_t slot; /* the owner's slot: logical for a task or pinned, hardware for system-wide */
	uint8_t hardware_slot; /* DR_NO_SLOT for a single step */
	uint8_t type; /* enum dr_type */
	uint8_t from_user; /* the #DB came from ring 3 */
	uint32_t task_id; /* the task that was running */
	uint32_t cpu; /* the CPU it ran on */
};

/* Called in #DB context, interrupts off, after the hit is recorded; may edit regs. */
typedef void (*dr_handler)(const struct dr_hit *hit, struct cpu_regs *regs, void *context);

/* Set CR4.DE, reset DR7 and DR6, register the #DB handler and the syscalls. */
void dr_init(void);
/* On each other CPU as it comes up: CR4.DE, reset registers, its shadow. */
void dr_init_cpu(void);

/*
 * Task breakpoints, by task index (struct switch_task.index; sched's task->index). The target
 * may be running, runnable, blocked or stopped, on any CPU: its registers change when it next
 * switches in (at once, when it is the caller). Returns the logical slot (0-3), or -enum
 * dr_error; a failure changes nothing.
 */
int dr_install(unsigned int task, const struct dr_breakpoint *breakpoint, dr_handler handler,
	       void *context);
int dr_install_as(unsigned int task, const struct dr_breakpoint *breakpoint, dr_handler handler,
		  void *context, enum dr_requester requester);
/* All of them or none: slots[i] gets each one's slot. Returns 0 or -enum dr_error. */
int dr_install_many(unsigned int task, const struct dr_breakpoint *breakpoints, unsigned int count,
		    int *slots);
int dr_uninstall(unsigned int task, int slot);
/* Breakpoints the task holds, and how many more it may take now. */
unsigned int dr_task_count(unsigned int task);
unsigned int dr_task_free_slots(unsigned int task);

/* System-wide breakpoints: every task on every CPU. Returns the hardware slot or -enum dr_error;
 * fails, stealing nothing, when a task already needs the slots. */
int dr_install_system(const struct dr_breakpoint *breakpoint, dr_handler handler, void *context);
int dr_uninstall_system(int slot);

/*
 * Pinned breakpoints: live on CPU cpu for every task that runs there (Linux's CPU-bound
 * breakpoints). They count against that CPU's slots only; returns the pinned slot (0-3), or
 * -enum dr_error (DR_ERROR_NO_CPU when cpu is not online). Applied on that CPU by a call IPI
 * before these return.
 */
int dr_install_pinned(unsigned int cpu, const struct dr_breakpoint *breakpoint, dr_handler handler,
		      void *context);
int dr_uninstall_pinned(unsigned int cpu, int slot);

/* Remove every breakpoint of a task, every system-wide one, or every pinned one; returns how
 * many there were. */
unsigned int dr_uninstall_all(unsigned int task);
unsigned int dr_uninstall_all_system(void);
unsigned int dr_uninstall_all_pinned(void);

/* Take up to capacity recorded hits of a task, oldest first; *lost (if not NULL) gets how many
 * were dropped because its record buffer was full. */
unsigned int dr_read_hits(unsigned int task, struct dr_hit *hits, unsigned int capacity,
			  unsigned int *lost);
/*
 * Copy up to capacity of a task's hits, oldest first, and leave them recorded; *serial gets the
 * serial of the first (hits taken before it). dr_take_hits(task, serial, count) then takes the
 * count of them the caller delivered, and none that another reader took meanwhile: a copy that
 * fails part-way loses nothing.
 */
unsigned int dr_peek_hits(unsigned int task, struct dr_hit *hits, unsigned int capacity,
			  uint64_t *serial);
void dr_take_hits(unsigned int task, uint64_t serial, unsigned int count);

/* Drop a task's recorded hits and its lost count, so that the next reader (the next test
 * of the same task) reads only its own; returns how many hits were dropped. */
unsigned int dr_discard_hits(unsigned int task);

/*
 * On the calling CPU: end a #DB handling that never reached dr_debug_exit() (an exception in a
 * breakpoint's handler unwound past it), as dr_debug_exit() would, so that DR7 is written again
 * here. Returns whether there was one. For the runner, between tests.
 */
bool dr_debug_recover(void);

/* Per-task single-step (EFLAGS.TF, user tasks only) and branch single-step (DEBUGCTL.BTF, with
 * TF). Branch single-step returns -DR_ERROR_UNSUPPORTED when DEBUGCTL does not keep BTF here. */
int dr_set_single_step(unsigned int task, bool on);
int dr_set_branch_step(unsigned int task, bool on);
bool dr_branch_step_supported(void);

/* Let a user task's breakpoint hits run handler (a user address) with rdi = slot, rsi = dr6,
 * rdx = rip; 0 for none (hits are only recorded). */
void dr_set_user_handler(unsigned int task, uint64_t handler);

/* Lazy (default) or eager switching: dr.lazy=0 on the command line, or for benchmarks. */
void dr_set_lazy(bool lazy);
bool dr_is_lazy(void);

/* Changes that some CPU did not apply within SMP_CALL_TIMEOUT_MS (it caught up at its next
 * switch): a test checks that none happened. */
uint64_t dr_sync_failures(void);

/* A piece of the memory that #DB uses, named for diagnostics. */
struct dr_region {
	const char *name;
	struct dr_range range;
};

/*
 * The memory that #DB delivery and dr/'s handler read or write before DR7 is cleared or after
 * it is restored: every CPU's IST stacks, GDT, TSS and per-CPU structs, the IDT, the entry
 * code, and dr/'s shadows, hit rings and locks. Kernel requests overlapping any of it fail with
 * DR_ERROR_DEBUG_MEMORY. Sets *regions; returns how many there are (valid after dr_init()).
 */
unsigned int dr_debug_regions(const struct dr_region **regions);

/*
 * dr/'s steps of a switch, for debugstate/ to run in their order (debugstate/debugstate.c):
 * switch_in makes DR0-DR3, DR7 and DEBUGCTL.BTF what the incoming task needs (and its TF, for
 * single-step); task_exit gives an ended task's slots back.
 */
void dr_switch_in(const struct switch_task *prev, const struct switch_task *next);
void dr_task_exit(const struct switch_task *task);

/* What this CPU's debug registers hold according to dr/ (its shadow), for tests. */
struct dr_hardware dr_shadow(void);
/* Write the shadow back to the hardware: after a test wrote the registers behind dr/'s back. */
void dr_restore_hardware(void);

#endif
