/* SPDX-License-Identifier: MIT */
/* The run queue, schedule() and the tick: round robin with a time slice, one queue per CPU. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/apic.h"
#include "arch/x86/context.h"
#include "arch/x86/cpu.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/fpu.h"
#include "arch/x86/gdt.h"
#include "arch/x86/msr.h"
#include "arch/x86/paging.h"
#include "arch/x86/percpu.h"
#include "arch/x86/traps.h"
#include "arch/x86/tsc.h"
#include "kernel/smp.h"
#include "kernel/spinlock.h"
#include "lib/cmdline.h"
#include "lib/format.h"
#include "lib/panic.h"
#include "sched/internal.h"
#include "sched/sched.h"

#define SLICE_DEFAULT_MS 10

struct run_queue {
	struct task *head, *tail;
	struct task *current;
	struct task *idle;
	struct task *leaving; /* moving to another CPU: queued there once switched out */
	unsigned int ticks_left;
	bool need_resched;
	uint64_t cr3; /* what CR3 holds: reading it back costs an exit under KVM */
	uint64_t preempt_start; /* TSC when the tick called schedule(); 0 on other paths */
	uint64_t resumed_tsc; /* TSC when the current task got the CPU: its switch had ended */
	bool tick_stopped; /* idle with nothing to do (not CPU 0): no tick until a task comes */
	struct sched_stats stats;
};

struct spinlock sched_lock = SPINLOCK_INIT("sched");
static DEFINE_PER_CPU(struct run_queue, run_queues);
static void (*task_interrupt_handler)(void);
static void (*preemption_probe)(uint64_t cycles);
static uint64_t slice_ms = SLICE_DEFAULT_MS;
static unsigned int slice_ticks = 1;
static struct task *boot_task;

CMDLINE_OPTION(option_slice, .name = "sched.slice", .syntax = "Nms|Ns",
	       .parse = cmdline_parse_duration_ms, .dest = &slice_ms, .min = 1, .max = 1000);

static struct run_queue *this_run_queue(void)
{
	return this_cpu_ptr(run_queues);
}

unsigned long sched_lock_irqsave(void)
{
	return spin_lock_irqsave(&sched_lock);
}

void sched_unlock_irqrestore(unsigned long flags)
{
	spin_unlock_irqrestore(&sched_lock, flags);
}

struct task *sched_current(void)
{
	return this_run_queue()->current;
}

/* Ask CPU cpu to run schedule() at its next interrupt, and interrupt it now if it is another. */
static void sched_kick(unsigned int cpu)
{
	per_cpu_ptr(run_queues, cpu)->need_resched = true;
	smp_reschedule(cpu);
}

void sched_request_switch(struct task *task)
{
	sched_kick(task->cpu);
}

void run_queue_add(struct task *task, bool at_head)
{
	struct run_queue *queue = per_cpu_ptr(run_queues, task->cpu);

	task->state = TASK_RUNNABLE;
	if (task == queue->idle)
		return;
	if (at_head) {
		task->next = queue->head;
		queue->head = task;
		if (!queue->tail)
			queue->tail = task;
	} else {
		task->next = NULL;
		if (queue->tail)
			queue->tail->next = task;
		else
			queue->head = task;
		queue->tail = task;
	}
	if (task->cpu != this_cpu_index() && queue->current == queue->idle)
		sched_kick(task->cpu);
}

void run_queue_remove(struct task *task)
{
	struct run_queue *queue = per_cpu_ptr(run_queues, task->cpu);
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

	if (queue->tick_stopped) { /* leaving idle: the task has a time slice */
		timer_start_cpu();
		queue->tick_stopped = false;
	}
	/* A task switched inside an interrupt handler resumes inside it: the depth is its own. */
	prev->interrupt_depth = this_cpu()->interrupt_depth;
	this_cpu()->interrupt_depth = next->switches_in ? next->interrupt_depth : 0;
	prev->runtime_cycles += now - prev->switched_in_tsc;
	next->switched_in_tsc = now;
	next->switches_in++;
	struct switch_task prev_view = task_switch_view(prev), next_view = task_switch_view(next);

	/* The per-task debug state (dr/, ds/, pmu/), in debugstate_switch_out() and _in()'s order,
	 * before the stacks change: the registers are the next task's when it resumes. */
	switch_hooks_run(&prev_view, &next_view);
	/*
	 * Ring 3's GS base is in KERNEL_GS_BASE while its task is in the kernel. A task cannot set
	 * it through the ABI, but can where WRGSBASE works (CR4.FSGSBASE, or KVM-PVM without it):
	 * it stays with its task, and the MSR is written only when the next task's differs.
	 */
	if (task_is_user(prev)) {
		fxsave(&prev->fpu);
		prev->user_gs_base = rdmsr(MSR_KERNEL_GS_BASE);
	}
	if (task_is_user(next)) {
		uint64_t live = task_is_user(prev) ? prev->user_gs_base : rdmsr(MSR_KERNEL_GS_BASE);

		if (live != next->user_gs_base)
			wrmsr(MSR_KERNEL_GS_BASE, next->user_gs_base);
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

void task_set_cpu(struct task *task, unsigned int cpu)
{
	if (task->cpu != cpu)
		task->migrations++;
	task->cpu = cpu;
	task->migrate_pending = false;
}

/*
 * The end of a switch, on the incoming task's stack: the outgoing task's stack is free now, so a
 * task that is moving to another CPU may be queued there (whose CPU cannot take it before this
 * CPU lets go of sched_lock).
 */
static void schedule_tail(void)
{
	struct run_queue *queue = this_run_queue();
	struct task *task = queue->leaving;

	queue->resumed_tsc = rdtsc_ordered();
	if (!task)
		return;
	queue->leaving = NULL;
	task_set_cpu(task, task->migrate_to);
	run_queue_add(task, false); /* an idle CPU is kicked; a busy one takes it in turn */
}

/*
 * Back on the CPU: honour a sched_interrupt() that came while this task was away. The handler
 * may unwind this stack (it does not return then), so sched_lock is let go around it.
 */
static void sched_check_interrupted(struct task *task)
{
	if (task->interrupted && task_interrupt_handler) {
		task->interrupted = false;
		spin_unlock(&sched_lock);
		task_interrupt_handler();
		spin_lock(&sched_lock);
	}
}

/*
 * Carry out what other CPUs asked of the outgoing task (kill_pending, stop_requested,
 * migrate_pending), whether it is still RUNNING or blocked or ended by itself before this CPU
 * heard the request. Off the CPU for good, it may change CPU now: nothing can run it before
 * this CPU lets go of sched_lock. Still runnable, it moves once switched out (schedule_tail()).
 */
static void schedule_requests(struct run_queue *queue, struct task *prev)
{
	if (prev->state == TASK_RUNNING) {
		if (prev->kill_pending) {
			prev->kill_pending = false;
			sched_run_exit_hooks(prev);
			prev->exit_code = TASK_EXIT_KILLED;
			prev->state = TASK_DEAD;
			if (prev->joiner)
				sched_wake_locked(prev->joiner);
		} else if (prev->stop_requested) {
			prev->state = TASK_STOPPED;
		} else if (prev->migrate_pending && prev->migrate_to != prev->cpu) {
			prev->state = TASK_RUNNABLE;
			queue->leaving = prev;
			return;
		} else {
			run_queue_add(prev, false);
		}
	} else if (prev->stop_requested && prev->state == TASK_BLOCKED) {
		prev->stop_pending = true; /* it stops when its block ends */
	}
	prev->stop_requested = false;
	if (prev->migrate_pending)
		task_set_cpu(prev, prev->migrate_to);
}

/* schedule(), for the tick and the reschedule IPI: preempt_start stays as the caller set it. */
static void schedule_core(void)
{
	struct run_queue *queue = this_run_queue();
	struct task *prev = queue->current, *next;

	schedule_requests(queue, prev);
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
	/* prev is this stack's task again, back after any number of other tasks ran, perhaps on
	 * another CPU: queue is stale. */
	schedule_tail();
	sched_check_interrupted(prev);
}

void schedule(void)
{
	this_run_queue()->preempt_start = 0;
	schedule_core();
}

void sched_task_started(struct task *task)
{
	schedule_tail();
	sched_check_interrupted(task);
	spin_unlock(&sched_lock);
	local_irq_enable();
}

void sched_block(void)
{
	sched_current()->state = TASK_BLOCKED;
	schedule();
}

void sched_yield(void)
{
	unsigned long flags = sched_lock_irqsave();

	schedule();
	sched_unlock_irqrestore(flags);
}

void sched_interrupt(struct task *task)
{
	unsigned long flags;

	if (!task_is_valid(task)) /* before the lock: task_is_valid() */
		return;
	flags = sched_lock_irqsave();

	task->interrupted = true;
	if (task->state == TASK_RUNNING) {
		/* Running elsewhere: its CPU runs the handler from the reschedule IPI. */
		if (task->cpu != this_cpu_index())
			sched_kick(task->cpu);
		sched_unlock_irqrestore(flags);
		return;
	}
	if (task->state == TASK_RUNNABLE)
		run_queue_remove(task);
	if (task->state != TASK_DEAD) {
		task->wake_tsc = 0;
		task->stop_pending = false;
		run_queue_add(task, true);
	}
	sched_kick(task->cpu);
	sched_unlock_irqrestore(flags);
}

void sched_set_interrupt_handler(void (*handler)(void))
{
	task_interrupt_handler = handler;
}

/*
 * Whether this tick is the current task's: one that fell due while the switch to it ran is not.
 * A switch can take several tick periods (docs/platforms.md: KVM-PVM); counting such a tick, a
 * one-tick slice would end before the task's first instruction, at every switch, for ever.
 */
static bool tick_is_the_tasks(const struct run_queue *queue)
{
	unsigned int hz = timer_hz();

	return !hz || rdtsc_ordered() - queue->resumed_tsc >= tsc_hz() / hz / 2;
}

/*
 * In interrupt context, sched_lock held: switch if this CPU was asked to or its slice is up.
 * Returns the preemption's cost for the probe, when this task was preempted by the timer too.
 */
static uint64_t sched_preempt(struct run_queue *queue, bool tick)
{
	uint64_t cycles = 0;

	if (tick && queue->ticks_left && tick_is_the_tasks(queue))
		queue->ticks_left--;
	if (queue->need_resched || (tick && queue->ticks_left == 0) ||
	    (queue->current == queue->idle && queue->head)) {
		queue->stats.preemptions++;
		queue->preempt_start = rdtsc_ordered();
		schedule_core();
		/* Back in a task; it was preempted too if preempt_start survived. */
		queue = this_run_queue();
		if (queue->preempt_start)
			cycles = rdtsc_ordered() - queue->preempt_start;
		queue->preempt_start = 0;
	}
	sched_check_interrupted(queue->current);
	return cycles;
}

static void sched_tick(struct cpu_regs *regs)
{
	uint64_t cycles;

	(void)regs;
	spin_lock(&sched_lock);
	sched_wake_sleepers();
	cycles = sched_preempt(this_run_queue(), true);
	spin_unlock(&sched_lock);
	if (cycles && preemption_probe)
		preemption_probe(cycles);
}

static void sched_reschedule_interrupt(struct cpu_regs *regs)
{
	(void)regs;
	spin_lock(&sched_lock);
	sched_preempt(this_run_queue(), false);
	spin_unlock(&sched_lock);
}

void sched_set_preemption_probe(void (*probe)(uint64_t cycles))
{
	preemption_probe = probe;
}

/*
 * Other CPUs idle without a tick: where a tick of an idle vCPU is a costly exit, and vCPUs
 * outnumber host cores, those ticks take the busy ones' time (docs/platforms.md). CPU 0 keeps
 * ticking: its tick wakes the sleepers of every CPU (a woken task kicks its idle CPU) and
 * watches the time limits. switch_to() restarts the tick when a task comes.
 */
static void __attribute__((noreturn)) idle_loop(void)
{
	for (;;) {
		struct run_queue *queue;

		sched_lock_irqsave();
		queue = this_run_queue();
		if (queue->head)
			schedule();
		if (!queue->head && !queue->tick_stopped && this_cpu_index() != 0) {
			timer_stop_cpu();
			queue->tick_stopped = true;
		}
		spin_unlock(&sched_lock);
		safe_halt(); /* STI; HLT: an interrupt that came since is taken after the HLT */
	}
}

static void idle_start(void *arg)
{
	sched_task_started(arg);
	idle_loop();
}

static void run_queue_init(struct run_queue *queue, struct task *current)
{
	struct switch_task view;

	current->state = TASK_RUNNING;
	current->cpu = this_cpu_index();
	current->switched_in_tsc = rdtsc_ordered();
	/*
	 * It runs already: its first switch-in is a return, not a start (first_run), and it
	 * resumes at whatever interrupt depth it left at (kernel/switch_hooks.c).
	 */
	current->switches_in = 1;
	queue->current = current;
	view = task_switch_view(current);
	switch_hooks_set_current(&view);
	queue->cr3 = paging_kernel_root();
	queue->ticks_left = slice_ticks;
}

void sched_init(void)
{
	struct run_queue *queue = this_run_queue();

	slice_ticks = (unsigned int)(slice_ms * timer_hz() / 1000);
	if (slice_ticks == 0)
		slice_ticks = 1;
	boot_task = task_alloc("runner", NULL, false);
	run_queue_init(queue, boot_task);
	queue->idle = task_alloc("idle", idle_start, false);
	queue->idle->state = TASK_RUNNABLE;
	syscall_init();
	user_faults_init();
	timer_register_hook(sched_tick);
	interrupt_register(VECTOR_RESCHEDULE, sched_reschedule_interrupt);
}

void sched_start_cpu(void)
{
	struct run_queue *queue = this_run_queue();
	char name[TASK_NAME_MAX];
	struct task *idle;

	format(name, sizeof(name), "idle/%u", this_cpu_index());
	idle = task_alloc(name, NULL, false);
	if (!idle)
		panic("CPU %u: no task slot for its idle task", this_cpu_index());
	queue->idle = idle;
	run_queue_init(queue, idle);
}

void __attribute__((noreturn)) sched_idle(void)
{
	idle_loop();
}

unsigned int sched_slice_ticks(void)
{
	return slice_ticks;
}

void sched_set_slice_ticks(unsigned int ticks)
{
	slice_ticks = ticks ? ticks : 1;
}

static bool sched_is_idle_task(const struct task *task)
{
	for (unsigned int cpu = 0; cpu < percpu_count(); cpu++)
		if (per_cpu_ptr(run_queues, cpu)->idle == task)
			return true;
	return false;
}

bool sched_is_system_task(const struct task *task)
{
	return task == boot_task || sched_is_idle_task(task);
}

struct sched_stats sched_stats(void)
{
	return this_run_queue()->stats;
}

struct sched_stats sched_stats_cpu(unsigned int cpu)
{
	return per_cpu_ptr(run_queues, cpu)->stats;
}
