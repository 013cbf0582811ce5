/* SPDX-License-Identifier: MIT */
/* smp suite: breakpoints follow a task to another CPU and leave the old one; system-wide ones
 * are live on every CPU; a change to a task running elsewhere is applied there at once. */
#include "arch/x86/cpu.h"
#include "arch/x86/percpu.h"
#include "dr/dr.h"
#include "kernel/smp.h"
#include "tests/kernel/lib/dr_targets.h"
#include "tests/kernel/lib/smp_util.h"

#define TARGET ((uint64_t)dr_target_function)

struct traveller {
	unsigned int calls;
	unsigned int live_here; /* CPUs where its breakpoint was in the registers while it ran */
	unsigned int live_behind; /* CPUs left behind that still had it */
	unsigned int hit_count;
	struct dr_hit hits[16];
};

/* Visit every CPU in turn, trapping once on each, and look back at the one just left. */
static void travel(void *arg)
{
	struct traveller *traveller = arg;

	dr_target_install(TARGET, DR_TYPE_EXECUTE, 1);
	for (unsigned int cpu = 0; cpu < smp_cpus(); cpu++) {
		smp_move_self(cpu);
		struct smp_registers here = smp_read_registers(cpu); /* this CPU: a direct call */

		traveller->live_here += smp_breakpoint_live(&here, TARGET);
		dr_target_function();
		traveller->calls++;
		if (cpu > 0) {
			struct smp_registers behind = smp_read_registers(cpu - 1);

			traveller->live_behind += smp_breakpoint_live(&behind, TARGET);
		}
	}
	traveller->hit_count = dr_target_hits(traveller->hits);
}

TEST(smp, a_migrating_tasks_breakpoint_fires_on_each_new_cpu_and_leaves_the_old)
{
	struct traveller traveller = { 0 };
	struct dr_hit runner_hits[16];
	struct task *task;

	smp_require_cpus(2);
	task = smp_task_on(0, "traveller", travel, &traveller);
	check_eq(0, task_join(task, NULL));
	check_eq(smp_cpus(), traveller.calls);
	check_eq(smp_cpus(), traveller.live_here);
	check_eq(0, traveller.live_behind);
	check_eq(smp_cpus(), traveller.hit_count);
	for (unsigned int i = 0; i < traveller.hit_count; i++) {
		check_eq(i, traveller.hits[i].cpu);
		check_eq(TARGET, traveller.hits[i].address);
	}
	/* It is gone: no CPU keeps its breakpoint, and the runner runs the code untrapped. */
	for (unsigned int cpu = 0; cpu < smp_cpus(); cpu++) {
		struct smp_registers registers = smp_read_registers(cpu);

		check(!smp_breakpoint_live(&registers, TARGET), "CPU %u: DR7=0x%llx still has it",
		      cpu, (unsigned long long)registers.dr7);
	}
	dr_target_function();
	check_eq(0, dr_target_hits(runner_hits));
}

struct looper {
	volatile bool stop;
	volatile uint64_t calls;
};

#define LOOPER_PAUSE 1000 /* iterations of PAUSE between hits (docs/platforms.md) */

static void call_in_a_loop(void *arg)
{
	struct looper *looper = arg;

	while (!looper->stop) {
		dr_target_function();
		looper->calls++;
		/* Time outside #DB between hits: some platforms deliver interrupts (the runner's
		 * calls) to a CPU in a #DB storm only now and then (docs/platforms.md). */
		for (unsigned int i = 0; i < LOOPER_PAUSE; i++)
			cpu_relax();
	}
}

/* Wait (bounded) until the looper made count more calls. */
static bool wait_calls(struct looper *looper, uint64_t count)
{
	uint64_t target = looper->calls + count;

	for (unsigned int i = 0; i < 500 && looper->calls < target; i++)
		sched_sleep_ms(1);
	return looper->calls >= target;
}

TEST(smp, a_breakpoint_given_to_a_task_running_elsewhere_is_live_there_at_once)
{
	struct dr_breakpoint breakpoint = { TARGET, DR_TYPE_EXECUTE, 1 };
	struct looper looper = { false, 0 };
	uint64_t failures = dr_sync_failures();
	struct smp_registers registers;
	struct dr_hit hits[16];
	unsigned int hit_total = 0, taken;
	struct task *task;
	int slot;

	smp_require_cpus(2);
	task = smp_task_on(1, "looper", call_in_a_loop, &looper);
	check(wait_calls(&looper, 10), "the looper does not run on CPU 1");
	slot = dr_install(task->index, &breakpoint, NULL, NULL);
	check_eq(0, slot);
	/* Installed from CPU 0 while the task never left CPU 1: live there now, not here. */
	registers = smp_read_registers(1);
	check(smp_breakpoint_live(&registers, TARGET), "CPU 1: DR7=0x%llx",
	      (unsigned long long)registers.dr7);
	registers = smp_read_registers(0);
	check(!smp_breakpoint_live(&registers, TARGET), "CPU 0: DR7=0x%llx",
	      (unsigned long long)registers.dr7);
	check(wait_calls(&looper, 10), "the looper stopped");
	while ((taken = dr_read_hits(task->index, hits, 16, NULL)) > 0)
		hit_total += taken;
	check(hit_total > 0, "no hit on CPU 1 after the install");
	check_eq(0, dr_uninstall(task->index, slot));
	registers = smp_read_registers(1);
	check(!smp_breakpoint_live(&registers, TARGET), "CPU 1 still has it: DR7=0x%llx",
	      (unsigned long long)registers.dr7);
	dr_read_hits(task->index, hits, 16, NULL);
	check(wait_calls(&looper, 10), "the looper stopped");
	check_eq(0, dr_read_hits(task->index, hits, 16, NULL));
	looper.stop = true;
	check_eq(0, task_join(task, NULL));
	check_eq(failures, dr_sync_failures());
}
