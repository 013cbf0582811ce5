/* SPDX-License-Identifier: MIT */
/* ds/'s state: every target's context, ds_lock, each CPU's register shadow, the credits. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/cpu.h"
#include "arch/x86/debugctl.h"
#include "arch/x86/msr-index.h"
#include "arch/x86/msr.h"
#include "arch/x86/percpu.h"
#include "arch/x86/tsc.h"
#include "ds/ds.h"
#include "ds/save_area.h"
#include "ds/state.h"
#include "kernel/spinlock.h"
#include "kernel/switch_hooks.h"

/* The longest quiescent period after PEBS goes off with an assist armed (choice: the SDM gives
 * none; twice the emulated CPU's flight of 1 ms, docs/emulated-cpu.md). */
#define DS_PEBS_QUIESCENT_US 2000

static struct spinlock lock = SPINLOCK_INIT("ds");
static struct ds_context contexts[SWITCH_TASKS_MAX];
static DEFINE_PER_CPU(struct ds_context, cpu_contexts);
static DEFINE_PER_CPU(struct ds_registers, held); /* what the CPU (or synthetic file) holds */
static struct ds_credit credits[SWITCH_TASKS_MAX];
static uint64_t pmis;
static bool pebs_in_ds; /* ds_state_pebs_in_ds_area() */

unsigned long ds_lock_irqsave(void)
{
	return spin_lock_irqsave(&lock);
}

void ds_unlock_irqrestore(unsigned long flags)
{
	spin_unlock_irqrestore(&lock, flags);
}

void ds_lock_irqs_off(void)
{
	spin_lock(&lock);
}

void ds_unlock_irqs_off(void)
{
	spin_unlock(&lock);
}

struct ds_context *ds_context_task(unsigned int task)
{
	return &contexts[task];
}

struct ds_context *ds_context_cpu(unsigned int cpu)
{
	return per_cpu_ptr(cpu_contexts, cpu);
}

struct ds_context *ds_context_of(const struct ds_target *target)
{
	return target->cpu ? ds_context_cpu(target->index) : ds_context_task(target->index);
}

bool ds_user_live(const struct ds_context *context, enum ds_user user)
{
	return context->area && context->buffers[user].phys && !context->stopping[user];
}

const struct ds_registers *ds_registers_held(void)
{
	return this_cpu_ptr(held);
}

struct ds_registers ds_registers(void)
{
	return *this_cpu_ptr(held);
}

void ds_write_ds_area(uint64_t value)
{
	wrmsr(MSR_IA32_DS_AREA, value);
	this_cpu_ptr(held)->ds_area = value;
}

void ds_write_debugctl(uint64_t value)
{
	debugctl_update(DS_DEBUGCTL_BITS, value);
	this_cpu_ptr(held)->debugctl = value;
}

void ds_write_pebs_data_cfg(uint64_t value)
{
	wrmsr(MSR_PEBS_DATA_CFG, value);
	this_cpu_ptr(held)->pebs_data_cfg = value;
}

/*
 * The PEBS-enabled counters in bits whose overflow armed an assist that has not come: the assist
 * clears a counter's overflow status when it stores its record (SDM "PEBS" of the Core
 * microarchitecture: "store the data record ..., clear the counter overflow status, and reload
 * the counter"), so a PEBS counter whose GLOBAL_STATUS bit is set still has a record to come.
 * GLOBAL_STATUS numbers the counters as PEBS_ENABLE does. Read with the counters stopped.
 */
static uint64_t pebs_armed(uint64_t bits)
{
	uint64_t status;

	if (rdmsr_safe(MSR_IA32_PERF_GLOBAL_STATUS, &status) != 0) /* none: nothing to wait for */
		return 0;
	return status & bits;
}

/*
 * SDM "Re-configuring PEBS Facilities": after PEBS is turned off, "a quiescent period" lets
 * "latent residual PEBS records ... complete its capture at their previously specified buffer
 * address (provided by IA32_DS_AREA)". Its length is not given. Until it is over the buffer, the
 * DS save area and the index must stay as they were: nothing may be freed, reused or reset
 * (the caller holds ds_lock). It ends when the index moves (the record landed) or after
 * DS_PEBS_QUIESCENT_US. Each pass reads PEBS_ENABLE back: a pause on silicon, and the moment an
 * emulated CPU, which acts only when an instruction reaches it, lands what it has in flight
 * (docs/emulated-cpu.md).
 */
static void pebs_quiescent_period(const volatile struct ds_area *area, uint64_t index)
{
	uint64_t end = rdtsc_ordered() + tsc_hz() / 1000000 * DS_PEBS_QUIESCENT_US;
	uint64_t value;

	while (area->pebs_index == index && rdtsc_ordered() < end) {
		(void)rdmsr_safe(MSR_IA32_PEBS_ENABLE, &value);
		cpu_relax();
	}
}

/*
 * PEBS_ENABLE, with the counters stopped (ds_apply(), ds_quiesce()). A counter whose PEBS bit
 * goes while its assist is armed may still have its record in flight: the quiescent period
 * follows. Without an armed counter no record is due, and no time is spent.
 */
void ds_write_pebs_enable(uint64_t value)
{
	struct ds_registers *now = this_cpu_ptr(held);
	uint64_t armed = pebs_armed(now->pebs_enable & ~value);
	const volatile struct ds_area *area = (const volatile struct ds_area *)now->ds_area;
	uint64_t index = armed && area ? area->pebs_index : 0;

	wrmsr(MSR_IA32_PEBS_ENABLE, value);
	now->pebs_enable = value;
	if (armed && area)
		pebs_quiescent_period(area, index);
}

/*
 * Whatever the CPU holds, BTS and PEBS go off before IA32_DS_AREA is written, and come back on
 * after it: the SDM has IA32_DS_AREA written before either is enabled ("Setting Up the DS Save
 * Area"), and the CPU must never store through an area that is being replaced (ds_apply()).
 */
void ds_state_pebs_in_ds_area(bool usable)
{
	pebs_in_ds = usable;
}

void ds_registers_rewrite(void)
{
	unsigned long flags = spin_lock_irqsave(&lock);
	const struct ds_registers *now = this_cpu_ptr(held);

	/* No IA32_PEBS_ENABLE to rewrite where ds/ has no DS-area PEBS: it may not exist (#GP). */
	if (pebs_in_ds)
		wrmsr(MSR_IA32_PEBS_ENABLE, 0);
	debugctl_rewrite_without(DS_DEBUGCTL_BITS);
	wrmsr(MSR_IA32_DS_AREA, now->ds_area);
	debugctl_rewrite();
	if (pebs_in_ds)
		wrmsr(MSR_IA32_PEBS_ENABLE, now->pebs_enable);
	spin_unlock_irqrestore(&lock, flags);
}

struct ds_credit *ds_credit_of(unsigned int task)
{
	return &credits[task];
}

struct ds_credit ds_credit(unsigned int task)
{
	return task < SWITCH_TASKS_MAX ? credits[task] : (struct ds_credit){ 0 };
}

void ds_credit_reset(unsigned int task)
{
	if (task < SWITCH_TASKS_MAX)
		credits[task] = (struct ds_credit){ 0 };
}

void ds_pmi_counted(void)
{
	__atomic_add_fetch(&pmis, 1, __ATOMIC_RELAXED);
}

uint64_t ds_pmi_count(void)
{
	return pmis;
}

/*
 * PEBS_ENABLE changes only with the counters stopped: Linux sets it before GLOBAL_CTRL and
 * clears a counter before its PEBS bit (intel_pmu_enable_all(), intel_pmu_disable_event()), and
 * drains PEBS with GLOBAL_CTRL cleared; a PEBS counter that overflows while its bit is off is not
 * reloaded, and its records stop. GLOBAL_CTRL is cleared around the change and put back as it
 * was found, so pmu/'s view of it stays true. Returns what to put back (0: nothing ran, or no
 * GLOBAL_CTRL: perfmon version 1).
 */
uint64_t ds_counters_pause(void)
{
	uint64_t global = 0;

	if (rdmsr_safe(MSR_IA32_PERF_GLOBAL_CTRL, &global) != 0)
		return 0;
	if (global)
		wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 0);
	return global;
}

void ds_counters_resume(uint64_t global)
{
	if (global)
		wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, global);
}
