/* SPDX-License-Identifier: MIT */
/* lbr/'s state: each task's request and saved stack, each CPU's registers as held, the lock. */
#ifndef LBR_STATE_H
#define LBR_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/msr-index.h"
#include "arch/x86/xstate.h"
#include "lbr/lbr.h"

/* A stack as read: entries newest first, in the MSRs' own encoding, and the TOS they came from. */
struct lbr_stack {
	unsigned int valid;
	uint64_t tos;
	uint64_t from[LBR_LEGACY_MAX_DEPTH], to[LBR_LEGACY_MAX_DEPTH], info[LBR_LEGACY_MAX_DEPTH];
};

/*
 * A task's request. saved holds a call-stack task's stack from its last switch-out (valid
 * while stack_saved), log_id counts its saves: Linux's task_ctx->log_id. pmi holds the stack
 * the last PMI froze while the task recorded.
 */
struct lbr_task {
	bool attached;
	struct lbr_config config;
	uint64_t select; /* LBR_SELECT for the request */
	bool stack_saved;
	bool saved_by_xsaves; /* the save was an XSAVES: lbr_task_xsave() holds it, and saved */
	uint64_t log_id;
	struct lbr_stack saved;
	bool pmi_valid;
	struct lbr_stack pmi;
};

/*
 * A CPU: which task's request is loaded, LBR_SELECT as written (known once
 * written), and Linux's last_task_ctx / last_log_id: the call-stack task whose stack this CPU
 * saved last, and that save's log_id. While the CPU still holds it unchanged, the restore is
 * skipped.
 */
#define LBR_LOADED_CPU (SWITCH_TASKS_MAX + 1) /* cpu->loaded: the CPU's own request */

struct lbr_cpu {
	/* task index + 1, or LBR_LOADED_CPU; 0: none (zeroed per-CPU data is valid) */
	unsigned int loaded;
	/*
	 * The CPU's request (lbr_attach_cpu()): its config and LBR_SELECT (LBR_CTL's filters).
	 * holds_cpu_stack: the stack holds the request's entries only, none of a task's since its
	 * wipe; a switch-in to the request wipes otherwise.
	 */
	bool request;
	struct lbr_config config;
	uint64_t request_select;
	bool holds_cpu_stack;
	bool select_known;
	uint64_t select;
	bool lbrv2en; /* AMD: DBG_EXTN_CFG.LBRV2EN as written */
	unsigned int last_task; /* task index + 1; 0: none */
	uint64_t last_log_id;
	bool xss_set; /* IA32_XSS bit 15 written on this CPU */
	struct lbr_stats stats;
};

/* A task's XSAVES image of component 15: compacted, nothing before it (arch/x86/xstate.h). */
struct lbr_xsave_area {
	uint8_t bytes[XSAVE_ARCH_LBR_OFFSET + XSAVE_ARCH_LBR_SIZE(LBR_LEGACY_MAX_DEPTH)];
} __attribute__((aligned(XSAVE_ALIGNMENT)));

/* The lock guards every task's request; the switch takes it with interrupts off. */
unsigned long lbr_lock_irqsave(void);
void lbr_unlock_irqrestore(unsigned long flags);
void lbr_lock_irqs_off(void);
void lbr_unlock_irqs_off(void);

struct lbr_task *lbr_task_state(unsigned int task);
struct lbr_xsave_area *lbr_task_xsave(unsigned int task);
struct lbr_cpu *lbr_this_cpu(void);
struct lbr_cpu *lbr_cpu_state(unsigned int cpu);

#endif
