/* SPDX-License-Identifier: MIT */
/* The run queue, schedule() and the tick: round robin with a time slice, one queue per CPU. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/apic.h"
#include "arch/x86/context.h"
#include "arch/x86/cpu.h"
#include "arch/x86/fpu.h"
#include "arch/x86/gdt.h"
#include "arch/x86/paging.h"
#include "arch/x86/percpu.h"
#include "arch/x86/tsc.h"
#include "lib/cmdline.h"
#include "sched/internal.h"
#include "sched/sched.h"

#define SLICE_DEFAULT_MS 10

struct run_queue {
	struct task *head, *tail;
	struct task *current;
	struct task *idle;
	unsigned int ticks_left;
	bool need_resched;
	uint64_t cr3; /* what CR3 holds: reading it back costs an exit under KVM */
	uint64_t preempt_start; /* TSC when the tick called schedule(); 0 on other paths */
	struct sched_stats stats;
};

static struct run_queue run_queues[MAX_CPUS];
static void (*interrupt_handler)(void);
static void (*preemption_probe)(uint64_t cycles);
static uint64_t slice_ms = SLICE_DEFAULT_MS;
static unsigned int slice_ticks = 1;
static struct task *boot_task;

CMDLINE_OPTION(option_slice, .name = "sched.slice", .syntax = "Nms|Ns",
	       .parse = cmdline_parse_duration_ms, .dest = &slice_ms, .min = 1, .max = 1000);

static struct run_queue *this_run_queue(void)
{
	return &run_queues[this_cpu()->index];
}

struct task *sched_current(void)
{
	return this_run_queue()->current;
}

void run_queue_add(struct task *task, bool at_head)
{
	struct run_queue *queue = this_run_queue();

	task->state = TASK_RUNNABLE;
	if (task == queue->idle)
		return;
	if (at_head) {
		task->next = queue->head;
		queue->head = task;
		if (!queue->tail)
			queue->tail = task;
		return;
	}
	task->next = NULL;
	if (queue->tail)
		queue->tail->next = task;
	else
		queue->head = task;
	queue->tail = task;
}

void run_queue_remove(struct task *task)
{
	struct run_queue *queue = this_run_queue();
	struct task **link = &queue->head, *previous = NULL;

	for (; *link; previous = *link, link = &(*link)->next) {
		if (*link != task)
			continue;
		*link = task->next;
		if (queue->tail == task)
			queue->tail = previous;
		task->next = NULL;
		return;
	}
}

static struct task *run_queue_pop(struct run_queue *queue)
{
	struct task *task = queue->head;

	if (task) {
		queue->head = task->next;
		if (!queue->head)
			queue->tail = NULL;
		task->next = NULL;
	}
	return task;
}

static void switch_to(struct run_queue *queue, struct task *prev, struct task *next)
{
	uint64_t now = rdtsc_ordered();
	uint64_t cr3 = next->address_space ? next->address_space : paging_kernel_root();

	prev->runtime_cycles += now - prev->switched_in_tsc;
	next->switched_in_tsc = now;
	next->switches_in++;
	struct switch_task prev_view = task_switch_view(prev), next_view = task_switch_view(next);

	switch_hooks_run(&prev_view, &next_view);
	if (task_is_user(prev))
		fxsave(&prev->fpu);
	if (task_is_user(next)) {
		fxrstor(&next->fpu);
		tss_set_kernel_stack(task_stack_top(next));
	}
	if (cr3 != queue->cr3) {
		write_cr3(cr3);
		queue->cr3 = cr3;
	}
	queue->current = next;
	next->state = TASK_RUNNING;
	queue->stats.switches++;
	switch_context(&prev->context, next->context);
}

/* Back on the CPU: honour a sched_interrupt() that came while this task was away. */
static void sched_check_interrupted(struct task *task)
{
	if (task->interrupted && interrupt_handler) {
		task->interrupted = false;
		interrupt_handler();
	}
}

static void schedule_from(struct run_queue *queue);

void schedule(void)
{
	struct run_queue *queue = this_run_queue();

	queue->preempt_start = 0;
	schedule_from(queue);
}

static void schedule_from(struct run_queue *queue)
{
	struct task *prev = queue->current, *next;

	if (prev->state == TASK_RUNNING)
		run_queue_add(prev, false);
	next = run_queue_pop(queue);
	if (!next)
		next = queue->idle;
	queue->ticks_left = slice_ticks;
	queue->need_resched = false;
	if (next == prev) {
		prev->state = TASK_RUNNING;
		return;
	}
	switch_to(queue, prev, next);
	/* prev is this stack's task again, back after any number of other tasks ran. */
	sched_check_interrupted(prev);
}

void sched_task_started(struct task *task)
{
	sched_check_interrupted(task);
	local_irq_enable();
}

void sched_block(void)
{
	sched_current()->state = TASK_BLOCKED;
	schedule();
}

void sched_yield(void)
{
	unsigned long flags = local_irq_save();

	schedule();
	local_irq_restore(flags);
}

void sched_interrupt(struct task *task)
{
	struct run_queue *queue = this_run_queue();

	task->interrupted = true;
	if (task == queue->current)
		return;
	if (task->state == TASK_RUNNABLE)
		run_queue_remove(task);
	if (task->state != TASK_DEAD) {
		task->wake_tsc = 0;
		task->stop_pending = false;
		run_queue_add(task, true);
	}
	queue->need_resched = true;
}

void sched_set_interrupt_handler(void (*handler)(void))
{
	interrupt_handler = handler;
}

static void sched_tick(struct cpu_regs *regs)
{
	struct run_queue *queue = this_run_queue();

	(void)regs;
	sched_wake_sleepers();
	if (queue->ticks_left)
		queue->ticks_left--;
	if (queue->need_resched || queue->ticks_left == 0 ||
	    (queue->current == queue->idle && queue->head)) {
		queue->stats.preemptions++;
		queue->preempt_start = rdtsc_ordered();
		schedule_from(queue);
		/* Back in a task; it was preempted too if preempt_start survived. */
		if (queue->preempt_start && preemption_probe)
			preemption_probe(rdtsc_ordered() - queue->preempt_start);
		queue->preempt_start = 0;
	}
}

void sched_set_preemption_probe(void (*probe)(uint64_t cycles))
{
	preemption_probe = probe;
}

static void idle_loop(void *arg)
{
	struct run_queue *queue = this_run_queue();

	(void)arg;
	for (;;) {
		local_irq_disable();
		if (queue->head)
			schedule();
		safe_halt();
	}
}

static void idle_start(void *arg)
{
	sched_task_started(arg);
	idle_loop(arg);
}

void sched_init(void)
{
	struct run_queue *queue = this_run_queue();
	struct switch_task boot_view;

	slice_ticks = (unsigned int)(slice_ms * timer_hz() / 1000);
	if (slice_ticks == 0)
		slice_ticks = 1;
	boot_task = task_alloc("runner", NULL, false);
	boot_task->state = TASK_RUNNING;
	boot_task->switched_in_tsc = rdtsc_ordered();
	queue->current = boot_task;
	boot_view = task_switch_view(boot_task);
	switch_hooks_set_current(&boot_view);
	queue->cr3 = paging_kernel_root();
	queue->ticks_left = slice_ticks;
	queue->idle = task_alloc("idle", idle_start, false);
	queue->idle->state = TASK_RUNNABLE;
	syscall_init();
	user_faults_init();
	timer_register_hook(sched_tick);
}

unsigned int sched_slice_ticks(void)
{
	return slice_ticks;
}

void sched_set_slice_ticks(unsigned int ticks)
{
	slice_ticks = ticks ? ticks : 1;
}

unsigned int sched_kill_others(void)
{
	unsigned long flags = local_irq_save();
	struct run_queue *queue = this_run_queue();
	unsigned int ended = 0;

	for (struct task *task = task_pool_next(NULL); task; task = task_pool_next(task)) {
		if (task == queue->current || task == queue->idle || task == boot_task)
			continue;
		if (task->state == TASK_RUNNABLE)
			run_queue_remove(task);
		if (task->state != TASK_DEAD) {
			sched_run_exit_hooks(task);
			task->state = TASK_DEAD;
			task->exit_code = TASK_EXIT_KILLED;
		}
		task_free(task);
		ended++;
	}
	local_irq_restore(flags);
	return ended;
}

struct sched_stats sched_stats(void)
{
	return this_run_queue()->stats;
}
