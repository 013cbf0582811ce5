/* SPDX-License-Identifier: MIT */
/* lbr/'s state: each task's request and saved stack, each CPU's registers as held, the lock. */
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/percpu.h"
#include "kernel/spinlock.h"
#include "kernel/switch_hooks.h"
#include "lbr/state.h"

static struct spinlock lock = SPINLOCK_INIT("lbr");
static struct lbr_task tasks[SWITCH_TASKS_MAX];
static struct lbr_xsave_area xsave_areas[SWITCH_TASKS_MAX];
static DEFINE_PER_CPU(struct lbr_cpu, cpus);

unsigned long lbr_lock_irqsave(void)
{
	return spin_lock_irqsave(&lock);
}

void lbr_unlock_irqrestore(unsigned long flags)
{
	spin_unlock_irqrestore(&lock, flags);
}

void lbr_lock_irqs_off(void)
{
	spin_lock(&lock);
}

void lbr_unlock_irqs_off(void)
{
	spin_unlock(&lock);
}

struct lbr_task *lbr_task_state(unsigned int task)
{
	return &tasks[task];
}

struct lbr_xsave_area *lbr_task_xsave(unsigned int task)
{
	return &xsave_areas[task];
}

struct lbr_cpu *lbr_this_cpu(void)
{
	return this_cpu_ptr(cpus);
}

struct lbr_cpu *lbr_cpu_state(unsigned int cpu)
{
	return per_cpu_ptr(cpus, cpu);
}
