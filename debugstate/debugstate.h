/* SPDX-License-Identifier: MIT */
/* The order of a task switch and of a PMI over dr/, ds/ and pmu/, each step named. */
#ifndef DEBUGSTATE_DEBUGSTATE_H
#define DEBUGSTATE_DEBUGSTATE_H

#include "arch/x86/regs.h"
#include "kernel/switch_hooks.h"

/*
 * A switch, as the scheduler runs it through the switch hooks (interrupts off, before the
 * stacks change): every step of switch_out, then every step of switch_in. task_exit runs when a
 * task ends, before its index is reused.
 */
void debugstate_switch_out(const struct switch_task *prev, const struct switch_task *next);
void debugstate_switch_in(const struct switch_task *prev, const struct switch_task *next);
void debugstate_task_exit(const struct switch_task *task);

/* A PMI (interrupt context): every step but the LVTPC unmask, which arch/x86 does after it. */
void debugstate_pmi(struct cpu_regs *regs);

/* Register the three as the one switch hook, and the PMI as the one PMI handler: after
 * dr_init(), pmu_init() and ds_init(), in any order among them. */
void debugstate_init(void);

#endif
