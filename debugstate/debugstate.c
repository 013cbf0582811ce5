/* SPDX-License-Identifier: MIT */
/* The order of a switch and of a PMI: above dr/, ds/ and pmu/, which never include each other. */
#include <stdint.h>

#include "arch/x86/apic.h"
#include "arch/x86/regs.h"
#include "debugstate/debugstate.h"
#include "dr/dr.h"
#include "ds/ds.h"
#include "kernel/switch_hooks.h"
#include "lbr/lbr.h"
#include "pmu/pmu.h"

/*
 * Switch-out, as Linux's perf_event_task_sched_out() ends the outgoing task's events before
 * the next task's are set up:
 * 0. lbr/: recording off (DEBUGCTL.LBR), then a call-stack task's stack saved. First, so that
 *    no branch of the steps after it lands in the outgoing task's stack (Linux disables the PMU,
 *    LBR with it, before the PMU's sched_task() saves the stack).
 * 1. ds/: credit what a CPU-mode area recorded to the task leaving. It only reads the area
 *    (the CPU owns the indexes while tracing is on); the area stays active for the next task.
 * 2. pmu/: stop the counters where either task samples with PEBS, since ds/'s switch-in may
 *    change PEBS_ENABLE next, and a PEBS counter must not count while its bit changes (SDM
 *    "Requirements to Program PEBS": "Counters MUST be stopped before writing"; Linux
 *    intel_pmu_disable_event() clears the counter before its PEBS bit); then account the
 *    outgoing task's slice.
 * Linux stops the counters before it drains PEBS at a switch-out (perf_pmu_disable() before
 * the PMU's sched_task() in perf_event_context_sched_out()). Here the credit comes first: a
 * PEBS record the outgoing task's counter writes between the two steps is credited to the
 * task that runs next.
 */
void debugstate_switch_out(const struct switch_task *prev, const struct switch_task *next)
{
	lbr_switch_out(prev, next);
	ds_switch_out(prev, next);
	pmu_switch_out(prev, next);
}

/*
 * Switch-in, as Linux's perf_event_task_sched_in() ends with the PMU enabled last:
 * 1. dr/: DR0-DR3, DR7 and DEBUGCTL.BTF for the incoming task. No other step reads or writes
 *    these registers (ds/ writes only DEBUGCTL's BTS bits), so its place is free; it is first.
 * 2. ds/: IA32_DS_AREA, then DEBUGCTL's BTS bits and PEBS_ENABLE (and PEBS_DATA_CFG), tracing
 *    off while the area changes (SDM "Setting Up the DS Save Area": the area is written before
 *    BTS or PEBS is enabled; Linux's ds_switch_to() turned tracing off around the area write).
 * 3. pmu/: the counters, GLOBAL_CTRL last, so that a PEBS counter starts only with its
 *    PEBS_ENABLE bit and area in place (Linux __intel_pmu_enable_all(): PEBS_ENABLE is written
 *    by intel_pmu_pebs_enable_all() before GLOBAL_CTRL). The other way round, ds/ still pauses
 *    GLOBAL_CTRL around its PEBS_ENABLE write (rule 18 holds), but the counter would have
 *    counted meanwhile with PEBS off, where an overflow arms nothing and is never reloaded,
 *    and the switch would cost two more GLOBAL_CTRL writes.
 * 4. lbr/: the incoming task's stack restored (unless this CPU still holds it) or wiped, then
 *    LBR_SELECT and DEBUGCTL.LBR. Last, so that as little of the switch path as can be lands in
 *    the incoming task's stack (Linux restores in the PMU's sched_task() and enables LBR in
 *    __intel_pmu_enable_all() just before GLOBAL_CTRL; here it comes just after pmu/'s).
 */
void debugstate_switch_in(const struct switch_task *prev, const struct switch_task *next)
{
	dr_switch_in(prev, next);
	ds_switch_in(prev, next);
	pmu_switch_in(prev, next);
	lbr_switch_in(prev, next);
}

/*
 * An ended task: its breakpoints (dr/), its counters stopped and dropped (pmu/), then its DS
 * area turned off and freed (ds/): the counter off before its PEBS bit, as Linux's
 * intel_pmu_disable_event() does.
 */
void debugstate_task_exit(const struct switch_task *task)
{
	dr_task_exit(task);
	pmu_task_exit(task);
	ds_task_exit(task);
	lbr_task_exit(task);
}

/*
 * A PMI, in the order of Linux's intel_pmu_handle_irq():
 * 1. Stop the counters (GLOBAL_CTRL 0, its value kept), then BTS (intel_bts_disable_local()):
 *    silicon counts and records the handler's own instructions and branches in the enabled
 *    rings, so the counters stop first, before anything else of the handler counts, and BTS
 *    next, or the handler's branches would fill the buffer it is called to drain. Nothing
 *    counts and no PEBS assist writes while the buffers are drained and the counters reloaded
 *    (__intel_pmu_disable_all(); SDM "Re-configuring PEBS Facilities": stop the counting
 *    first, let the records settle).
 * 2. Read GLOBAL_STATUS once the counters stand still: the overflows this PMI answers
 *    (intel_pmu_get_status()).
 * 3. Drain the active DS area, tracing off (Linux turns BTS off before
 *    intel_pmu_drain_bts_buffer(), and drains PEBS with the counters off:
 *    intel_pmu_drain_pebs_buffer(); docs/emulated-cpu.md rule 3), and acknowledge BUFFER_OVF
 *    (SDM §19.6: else no further PEBS PMI comes).
 * 3b. lbr/: read the stack FREEZE_LBRS_ON_PMI froze, then thaw it (acknowledge
 *    GLOBAL_STATUS.LBR_FRZ from perfmon v4, else set DEBUGCTL.LBR again), as Linux reads the
 *    LBRs before intel_pmu_ack_status().
 * 4. Reload each sampling counter that overflowed, and acknowledge the counter overflows in
 *    GLOBAL_OVF_CTRL (handle_pmi_common(), intel_pmu_ack_status()). The counters stand still
 *    since step 1, so reload and acknowledgement cannot race an overflow; both come before the
 *    restart, which counts from the reloaded values.
 * 5. BTS on again (intel_bts_enable_local()), then the counters as step 1 found them
 *    (__intel_pmu_enable_all()), last, so that they count as little of the handler as they
 *    can. What the handler records after BTS is on must stay under the buffer's threshold:
 *    the LVTPC entry is still masked, and a threshold reached now raises no PMI.
 * 6. arch/x86's pmi_interrupt() unmasks LVTPC when this returns (SDM §19.6.1: delivery masked
 *    it): after the reload and the acknowledgement, as Linux's "late_ack" does, since an
 *    earlier unmask lets an overflow still in GLOBAL_STATUS raise a spurious PMI.
 */
void debugstate_pmi(struct cpu_regs *regs)
{
	uint64_t global_ctrl, status;

	(void)regs;
	global_ctrl = pmu_pmi_stop();
	ds_pmi_stop();
	status = pmu_pmi_status();
	ds_pmi_drain();
	lbr_pmi(status);
	pmu_pmi_reload_and_acknowledge(status);
	ds_pmi_restart();
	pmu_pmi_restart(global_ctrl);
}

static const struct switch_hooks debugstate_switch_hooks = {
	.switch_out = debugstate_switch_out,
	.switch_in = debugstate_switch_in,
	.task_exit = debugstate_task_exit,
};

static const struct pmi_hooks debugstate_pmi_hooks = {
	.enter = debugstate_pmi,
};

void debugstate_init(void)
{
	switch_hooks_register(&debugstate_switch_hooks);
	pmi_register(&debugstate_pmi_hooks);
}
