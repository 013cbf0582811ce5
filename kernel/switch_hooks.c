/* SPDX-License-Identifier: MIT */
/* The registry of task-switch hooks, and each CPU's current task as hooks see it. */
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/percpu.h"
#include "kernel/smp.h"
#include "kernel/switch_hooks.h"

static const struct switch_hooks *registered[SWITCH_HOOKS_MAX];
static DEFINE_PER_CPU(struct switch_task, current);
static uint64_t address_spaces[SWITCH_TASKS_MAX];
static bool live[SWITCH_TASKS_MAX];

int switch_hooks_register(const struct switch_hooks *hooks)
{
	for (int handle = 0; handle < SWITCH_HOOKS_MAX; handle++) {
		if (!registered[handle]) {
			switch_hooks_set((unsigned int)handle, hooks);
			return handle;
		}
	}
	return -1;
}

void switch_hooks_unregister(int handle)
{
	switch_hooks_set((unsigned int)handle, NULL);
}

const struct switch_hooks *switch_hooks_at(unsigned int handle)
{
	return __atomic_load_n(&registered[handle], __ATOMIC_ACQUIRE);
}

void switch_hooks_set(unsigned int handle, const struct switch_hooks *hooks)
{
	__atomic_store_n(&registered[handle], hooks, __ATOMIC_RELEASE);
}

void switch_hooks_run(const struct switch_task *prev, const struct switch_task *next)
{
	for (unsigned int i = 0; i < SWITCH_HOOKS_MAX; i++) {
		const struct switch_hooks *hooks = switch_hooks_at(i);

		if (hooks && hooks->switch_out)
			hooks->switch_out(prev, next);
	}
	for (unsigned int i = 0; i < SWITCH_HOOKS_MAX; i++) {
		const struct switch_hooks *hooks = switch_hooks_at(i);

		if (hooks && hooks->switch_in)
			hooks->switch_in(prev, next);
	}
	switch_hooks_set_current(next);
}

void switch_hooks_run_exit(const struct switch_task *task)
{
	switch_task_set_live(task->index, false); /* before the hooks release what it had */
	for (unsigned int i = 0; i < SWITCH_HOOKS_MAX; i++) {
		const struct switch_hooks *hooks = switch_hooks_at(i);

		if (hooks && hooks->task_exit)
			hooks->task_exit(task);
	}
}

void switch_hooks_set_current(const struct switch_task *task)
{
	*this_cpu_ptr(current) = *task;
	this_cpu()->task_id = task->id;
}

void switch_task_set_live(unsigned int index, bool is_live)
{
	__atomic_store_n(&live[index], is_live, __ATOMIC_SEQ_CST);
}

bool switch_task_live(unsigned int index)
{
	return index < SWITCH_TASKS_MAX && __atomic_load_n(&live[index], __ATOMIC_SEQ_CST);
}

int switch_task_running_cpu(unsigned int index)
{
	for (unsigned int cpu = 0; cpu < smp_cpus(); cpu++)
		if (per_cpu_ptr(current, cpu)->index == index)
			return (int)cpu;
	return -1;
}

void switch_task_set_address_space(unsigned int index, uint64_t root)
{
	if (index < SWITCH_TASKS_MAX)
		__atomic_store_n(&address_spaces[index], root, __ATOMIC_RELEASE);
}

uint64_t switch_task_address_space(unsigned int index)
{
	return index < SWITCH_TASKS_MAX ? __atomic_load_n(&address_spaces[index], __ATOMIC_ACQUIRE)
					: 0;
}

const struct switch_task *switch_task_current(void)
{
	return this_cpu_ptr(current);
}
