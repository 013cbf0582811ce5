/* SPDX-License-Identifier: MIT */
/* Activating a context: IA32_DS_AREA, DEBUGCTL's BTS bits and PEBS_ENABLE, written on change. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/cpu.h"
#include "arch/x86/debugctl.h"
#include "arch/x86/msr-index.h"
#include "arch/x86/msr.h"
#include "arch/x86/paging.h"
#include "arch/x86/percpu.h"
#include "ds/activate.h"
#include "ds/detect.h"
#include "ds/ds.h"
#include "ds/state.h"
#include "kernel/address_space.h"
#include "kernel/smp.h"
#include "kernel/switch_hooks.h"
#include "lib/panic.h"

static DEFINE_PER_CPU(uint64_t, quiesced_global_ctrl); /* ds_counters_pause() in ds_quiesce() */
static DEFINE_PER_CPU(bool, pmi_tracing_off); /* from ds_pmi_stop() to ds_pmi_restart() */

static bool context_live(const struct ds_context *context)
{
	return ds_user_live(context, DS_USER_BTS) || ds_user_live(context, DS_USER_PEBS);
}

/* A task's own area wins over its CPU's. An area whose users are all leaving is no one's. */
struct ds_context *ds_context_for(unsigned int task)
{
	struct ds_context *context = ds_context_task(task);

	if (context_live(context))
		return context;
	context = ds_context_cpu(this_cpu_index());
	return context_live(context) ? context : NULL;
}

struct ds_context *ds_context_active(void)
{
	return ds_context_for(switch_task_current()->index);
}

static uint64_t debugctl_for(const struct ds_context *context)
{
	uint64_t bits;

	if (!context || !ds_user_live(context, DS_USER_BTS))
		return 0;
	bits = DEBUGCTL_TR | DEBUGCTL_BTS;
	if (!context->bts.circular)
		bits |= DEBUGCTL_BTINT;
	if (context->bts.off_os)
		bits |= DEBUGCTL_BTS_OFF_OS;
	if (context->bts.off_usr)
		bits |= DEBUGCTL_BTS_OFF_USR;
	return bits;
}

/*
 * The order of Linux's old ds_switch_to(): tracing off, then IA32_DS_AREA, then tracing on, so
 * the CPU never writes a record through an area that is being replaced. With no area wanted,
 * IA32_DS_AREA goes back to 0, as Linux's fini_debug_store_on_cpu() does before the area is
 * freed: a freed page may come back as the next area, and the CPU must never name a page that
 * ds/ no longer owns.
 */
void ds_apply(struct ds_context *context)
{
	const struct ds_registers *now = ds_registers_held();
	uint64_t area = context ? (uint64_t)context->area : 0;
	uint64_t debugctl = *this_cpu_ptr(pmi_tracing_off) ? 0 : debugctl_for(context);
	bool pebs = context && ds_user_live(context, DS_USER_PEBS);
	uint64_t pebs_enable = pebs ? context->pebs.enable & ds_pebs_enable_valid_here() : 0;
	uint64_t data_cfg = pebs ? context->pebs.data_cfg : now->pebs_data_cfg;
	bool pebs_changes =
		pebs_enable != now->pebs_enable ||
		(now->pebs_enable && (area != now->ds_area || data_cfg != now->pebs_data_cfg));
	uint64_t global = pebs_changes ? ds_counters_pause() : 0;

	if (area != now->ds_area || data_cfg != now->pebs_data_cfg) {
		if (now->debugctl)
			ds_write_debugctl(0);
		if (now->pebs_enable)
			ds_write_pebs_enable(0);
	}
	if (area != now->ds_area)
		ds_write_ds_area(area);
	if (data_cfg != now->pebs_data_cfg)
		ds_write_pebs_data_cfg(data_cfg);
	if (debugctl != now->debugctl)
		ds_write_debugctl(debugctl);
	if (pebs_enable != now->pebs_enable)
		ds_write_pebs_enable(pebs_enable);
	ds_counters_resume(global);
}

/*
 * Tracing off on this CPU while software reads and resets the active area's indexes, as Linux
 * disables BTS before it drains (intel_pmu_disable_bts, intel_bts_disable_local) and drains PEBS
 * with the counters off; ds_resume() turns it back on. ds_lock held.
 */
void ds_quiesce(void)
{
	const struct ds_registers *now = ds_registers_held();

	*this_cpu_ptr(quiesced_global_ctrl) = now->pebs_enable ? ds_counters_pause() : 0;
	if (now->debugctl)
		ds_write_debugctl(0);
	if (now->pebs_enable)
		ds_write_pebs_enable(0);
}

void ds_resume(void)
{
	ds_apply(ds_context_active());
	ds_counters_resume(*this_cpu_ptr(quiesced_global_ctrl));
	*this_cpu_ptr(quiesced_global_ctrl) = 0;
}

/*
 * BTS off for the whole PMI handler, as Linux's intel_pmu_handle_irq() calls
 * intel_bts_disable_local() first and intel_bts_enable_local() last: silicon records the
 * handler's branches too (SDM Vol. 3B DEBUGCTL.TR, "taken branch, interrupt, or exception"), and
 * with BTS on they would land in the buffer the handler drains, past its threshold, and raise the
 * next PMI from inside this one. The drain's ds_resume() keeps it off meanwhile. Interrupts are
 * off in a PMI handler; no switch comes between the two.
 */
void ds_pmi_stop(void)
{
	*this_cpu_ptr(pmi_tracing_off) = true;
	if (ds_registers_held()->debugctl)
		ds_write_debugctl(0);
}

void ds_pmi_restart(void)
{
	*this_cpu_ptr(pmi_tracing_off) = false;
	ds_lock_irqs_off();
	ds_apply(ds_context_active());
	ds_unlock_irqs_off();
}

void ds_activate_cpu(void)
{
	unsigned long flags = ds_lock_irqsave();

	ds_apply(ds_context_active());
	ds_unlock_irqrestore(flags);
}

/* On the CPU concerned: apply, and forget translations of a user view that was unmapped. */
static void ds_sync_here(void *unmapped_root)
{
	ds_activate_cpu();
	if (unmapped_root)
		address_space_flush_if_loaded((uint64_t)unmapped_root);
}

void ds_sync_target(const struct ds_target *target, bool detaching)
{
	int cpu = target->cpu ? (int)target->index : switch_task_running_cpu(target->index);

	if (cpu < 0 || (unsigned int)cpu >= smp_cpus())
		return;
	/* Another CPU's area: allocated here, activated there by ds_activate_cpu(). */
	if (target->cpu && !detaching && (unsigned int)cpu != this_cpu_index())
		return;
	if (!smp_call((unsigned int)cpu, ds_sync_here,
		      detaching ? (void *)ds_context_of(target)->address_space : NULL))
		panic("ds: CPU %d did not apply a DS change within %u ms", cpu,
		      SMP_CALL_TIMEOUT_MS);
}
