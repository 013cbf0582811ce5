/* SPDX-License-Identifier: MIT */
/* Applying a task's breakpoints to the registers: here, on the CPU that runs it, or everywhere. */
#ifndef DR_SWITCH_H
#define DR_SWITCH_H

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

#endif
