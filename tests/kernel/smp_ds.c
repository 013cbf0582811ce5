/* SPDX-License-Identifier: MIT */
/* smp suite, synthetic Debug Store: an area allocated on one CPU and activated on another, one
 * area and producer per CPU, and a task's area following it. The records come from ds/synth.c
 * (no CPU here has a Debug Store); they test ds/'s cross-CPU logic, not the hardware. */
#include "arch/x86/cpu.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/msr-index.h"
#include "arch/x86/percpu.h"
#include "arch/x86/smp.h"
#include "arch/x86/tsc.h"
#include "arch/x86/user.h"
#include "tests/kernel/ds_synth_util.h"
#include "tests/kernel/smp_util.h"

#define TRACING (DEBUGCTL_TR | DEBUGCTL_BTS)

static struct ds_target cpu_area(unsigned int cpu)
{
	return (struct ds_target){ true, cpu, 0 };
}

static bool tracing_into(const struct smp_registers *registers, const struct ds_area *area)
{
	return registers->ds_area == (uint64_t)area && (registers->debugctl & TRACING) == TRACING;
}

static void activate_here(void *unused)
{
	(void)unused;
	ds_activate_cpu();
}

/* A producer: count branch records, from SYNTH_FROM + its CPU, on whatever CPU it runs. */
struct producer {
	unsigned int count;
	unsigned int written;
};

static void produce(void *arg)
{
	struct producer *producer = arg;

	for (unsigned int i = 0; i < producer->count; i++)
		producer->written += ds_synth_branch(SYNTH_FROM + this_cpu_index(), SYNTH_TO + i);
}

TEST(smp, synthetic_ds_area_allocated_on_cpu_0_for_cpu_1_is_activated_and_filled_there)
{
	struct ds_bts_config config = { .records = 64, .threshold_records = 64 };
	struct ds_target target = cpu_area(1);
	struct producer producer = { 10, 0 };
	uint64_t written_here = ds_synth_stats_cpu(0).written;
	uint64_t written_there = ds_synth_stats_cpu(1).written;
	struct smp_registers registers;
	struct ds_area *area;
	struct task *task;

	smp_require_cpus(2);
	require_synthetic_backend();
	check_attached(ds_attach_bts(&target, &config)); /* allocated and filled here, CPU 0 */
	area = ds_area_get(&target);
	registers = smp_read_registers(1);
	check(!tracing_into(&registers, area), "CPU 1 traces before its activation");
	check(smp_call(1, activate_here, NULL), "CPU 1 took no call");
	registers = smp_read_registers(1);
	check(tracing_into(&registers, area),
	      "CPU 1 after activation: DS_AREA=0x%llx DEBUGCTL=0x%llx",
	      (unsigned long long)registers.ds_area, (unsigned long long)registers.debugctl);
	registers = smp_read_registers(0);
	check(!tracing_into(&registers, area), "CPU 0 traces into CPU 1's area");
	task = task_create("producer", produce, &producer, TASK_START_STOPPED);
	ds_credit_reset(task->index);
	sched_migrate(task, 1);
	task_continue(task);
	check_eq(0, task_join(task, NULL));
	check_eq(10, producer.written);
	check_eq(10, ds_synth_stats_cpu(1).written - written_there);
	check_eq(0, ds_synth_stats_cpu(0).written - written_here);
	/* Drained when the producer left CPU 1, and credited to it. */
	check_eq(10, ds_credit(task->index).bts_records);
	check_eq(SYNTH_FROM + 1, ds_credit(task->index).last_from);
	check_eq(DS_OK, ds_detach(&target, DS_USER_BTS)); /* from CPU 0: CPU 1 stops first */
	registers = smp_read_registers(1);
	check(!(registers.debugctl & TRACING),
	      "CPU 1 still traces after the detach: DEBUGCTL=0x%llx",
	      (unsigned long long)registers.debugctl);
}

TEST(smp, synthetic_each_cpu_has_its_own_area_buffers_and_producer)
{
	struct ds_bts_config config = { .records = 64, .threshold_records = 64 };
	struct producer producers[MAX_CPUS];
	struct task *tasks[MAX_CPUS];
	uint64_t written[MAX_CPUS];
	unsigned int cpus = smp_cpus();

	smp_require_cpus(2);
	require_synthetic_backend();
	for (unsigned int cpu = 0; cpu < cpus; cpu++) {
		struct ds_target target = cpu_area(cpu);

		check_attached(ds_attach_bts(&target, &config));
		check(smp_call(cpu, activate_here, NULL), "CPU %u took no call", cpu);
		for (unsigned int other = 0; other < cpu; other++) {
			struct ds_target earlier = cpu_area(other);

			check(ds_area_get(&earlier) != ds_area_get(&target),
			      "CPUs %u and %u share an area", other, cpu);
		}
		written[cpu] = ds_synth_stats_cpu(cpu).written;
		producers[cpu] = (struct producer){ 3 * (cpu + 1), 0 };
		tasks[cpu] = task_create("producer", produce, &producers[cpu], TASK_START_STOPPED);
		ds_credit_reset(tasks[cpu]->index);
		sched_migrate(tasks[cpu], cpu);
	}
	for (unsigned int cpu = 0; cpu < cpus; cpu++)
		task_continue(tasks[cpu]);
	for (unsigned int cpu = 0; cpu < cpus; cpu++) {
		struct ds_target target = cpu_area(cpu);

		check_eq(0, task_join(tasks[cpu], NULL));
		check_eq(3 * (cpu + 1), ds_synth_stats_cpu(cpu).written - written[cpu]);
		check_eq(3 * (cpu + 1), ds_credit(tasks[cpu]->index).bts_records);
		check_eq(SYNTH_FROM + cpu, ds_credit(tasks[cpu]->index).last_from);
		check_eq(DS_OK, ds_detach(&target, DS_USER_BTS));
	}
}

struct mover {
	unsigned int before, after;
	struct smp_registers left, arrived;
	const struct ds_area *area;
};

static void produce_move_produce(void *arg)
{
	struct mover *mover = arg;
	struct producer first = { mover->before, 0 }, second = { mover->after, 0 };

	produce(&first);
	smp_move_self(1);
	mover->left = smp_read_registers(0);
	mover->arrived = smp_read_registers(1);
	produce(&second);
	mover->before = first.written;
	mover->after = second.written;
}

TEST(smp, synthetic_task_ds_area_follows_the_task_to_another_cpu)
{
	struct ds_bts_config config = { .records = 64, .threshold_records = 64 };
	struct mover mover = { 5, 7, { 0 }, { 0 }, NULL };
	uint64_t written_0 = ds_synth_stats_cpu(0).written;
	uint64_t written_1 = ds_synth_stats_cpu(1).written;
	struct ds_target target;
	struct task *task;

	smp_require_cpus(2);
	require_synthetic_backend();
	task = task_create("mover", produce_move_produce, &mover, TASK_START_STOPPED);
	sched_migrate(task, 0);
	target = task_target(task);
	ds_credit_reset(task->index);
	check_attached(ds_attach_bts(&target, &config));
	mover.area = ds_area_get(&target);
	task_continue(task);
	check_eq(0, task_join(task, NULL)); /* its exit drained and freed the area */
	check_eq(5, mover.before);
	check_eq(7, mover.after);
	check(!tracing_into(&mover.left, mover.area), "CPU 0 still traces into the area it left");
	check(tracing_into(&mover.arrived, mover.area),
	      "CPU 1 does not trace into the task's area");
	check_eq(5, ds_synth_stats_cpu(0).written - written_0);
	check_eq(7, ds_synth_stats_cpu(1).written - written_1);
	check_eq(12, ds_credit(task->index).bts_records);
}

TEST(smp, detaching_a_user_tasks_area_on_another_cpu_unmaps_its_view_there_at_once)
{
	struct ds_bts_config config = { .records = 16, .circular = true };
	volatile uint64_t *reads;
	struct user_fault fault = { 0 };
	struct ds_target target;
	struct task *task;
	uint64_t at_return, start;
	long code;

	smp_require_cpus(2);
	task = task_create_user("reader", user_ds_read_loop, USER_DATA_BASE, TASK_START_STOPPED);
	if (!task)
		test_abort("task_create_user failed");
	reads = task_user_data(task);
	target = task_target(task);
	check_attached(ds_attach_bts(&target, &config));
	check_eq(0, sched_migrate(task, 1));
	task_continue(task);
	start = rdtsc_ordered();
	while (*reads < 1000 && rdtsc_ordered() - start < tsc_cycles_from_ms(2000))
		sched_yield();
	check(*reads >= 1000, "the reader made %llu reads on CPU 1", (unsigned long long)*reads);
	/* From CPU 0, while it reads on CPU 1 through a translation that CPU 1 has cached. */
	check_eq(DS_OK, ds_detach(&target, DS_USER_BTS));
	at_return = *reads;
	start = rdtsc_ordered();
	while (task->state != TASK_DEAD && rdtsc_ordered() - start < tsc_cycles_from_ms(2000))
		sched_yield();
	check(task->state == TASK_DEAD, "CPU 1 still reads the unmapped view: %llu reads since",
	      (unsigned long long)(*reads - at_return));
	if (task->state != TASK_DEAD)
		return; /* the runner ends it */
	/* A read that had passed its load when the flush came may still count itself. */
	check(*reads - at_return <= 1, "%llu reads after ds_detach() returned",
	      (unsigned long long)(*reads - at_return));
	code = task_join(task, &fault);
	check_eq(TASK_EXIT_FAULTED, code);
	check_eq(X86_EXC_PF, fault.vector);
	check_eq(USER_DS_BASE, fault.cr2);
}
