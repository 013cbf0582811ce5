/* SPDX-License-Identifier: MIT */
/* ds/'s state: every target's context, ds_lock, each CPU's register shadow, the credits. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/debugctl.h"
#include "arch/x86/msr-index.h"
#include "arch/x86/msr.h"
#include "arch/x86/percpu.h"
#include "ds/ds.h"
#include "ds/state.h"
#include "kernel/spinlock.h"
#include "kernel/switch_hooks.h"

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

void ds_write_pebs_enable(uint64_t value)
{
	wrmsr(MSR_IA32_PEBS_ENABLE, value);
	this_cpu_ptr(held)->pebs_enable = value;
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
