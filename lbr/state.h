/* SPDX-License-Identifier: MIT */
/* lbr/'s state: each task's request and saved stack, each CPU's registers as held, the lock. */
#ifndef LBR_STATE_H
#define LBR_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/msr-index.h"
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
struct lbr_cpu {
	unsigned int loaded; /* task index + 1; 0: none (zeroed per-CPU data is valid) */
	bool select_known;
	uint64_t select;
	bool lbrv2en; /* AMD: DBG_EXTN_CFG.LBRV2EN as written */
	unsigned int last_task; /* task index + 1; 0: none */
	uint64_t last_log_id;
	struct lbr_stats stats;
};

/* The lock guards every task's request; the switch takes it with interrupts off. */
unsigned long lbr_lock_irqsave(void);
void lbr_unlock_irqrestore(unsigned long flags);
void lbr_lock_irqs_off(void);
void lbr_unlock_irqs_off(void);

struct lbr_task *lbr_task_state(unsigned int task);
struct lbr_cpu *lbr_this_cpu(void);
struct lbr_cpu *lbr_cpu_state(unsigned int cpu);

#endif
