/* SPDX-License-Identifier: MIT */
/* smp suite helpers (tests/kernel/lib/smp_util.h). */
#include "tests/kernel/lib/smp_util.h"
#include "arch/x86/debug-registers.h"
#include "arch/x86/percpu.h"
#include "dr/dr.h"
#include "ds/ds.h"
#include "kernel/smp.h"
#include "runner/options.h"
#include "tests/kernel/lib/dr_targets.h"

void smp_require_cpus(unsigned int count)
{
	if (smp_cpus() < count)
		test_skip("%u CPU%s online, %u needed: %s", smp_cpus(), smp_cpus() == 1 ? "" : "s",
			  count, smp_cpus() == 1 ? smp_single_reason() : "fewer CPUs than needed");
}

static void read_here(void *arg)
{
	struct smp_registers *registers = arg;
	struct ds_registers ds = ds_registers();

	registers->cpu = this_cpu_index();
	registers->dr7 = read_dr7();
	for (unsigned int slot = 0; slot < 4; slot++)
		registers->dr_address[slot] = read_dr_address(slot);
	registers->ds_area = ds.ds_area;
	registers->debugctl = ds.debugctl;
	registers->pebs_enable = ds.pebs_enable;
}

struct smp_registers smp_read_registers(unsigned int cpu)
{
	struct smp_registers registers = { .cpu = UINT32_MAX };

	if (!smp_call(cpu, read_here, &registers))
		test_abort("CPU %u did not take a call within %u ms", cpu, SMP_CALL_TIMEOUT_MS);
	return registers;
}

bool smp_breakpoint_live(const struct smp_registers *registers, uint64_t address)
{
	for (unsigned int slot = 0; slot < 4; slot++) {
		enum dr_type type;
		unsigned int length;

		if (dr7_decode(registers->dr7, slot, &type, &length) &&
		    registers->dr_address[slot] == address)
			return true;
	}
	return false;
}

struct task *smp_task_on(unsigned int cpu, const char *name, void (*fn)(void *), void *arg)
{
	struct task *task = task_create(name, fn, arg, TASK_START_STOPPED);

	if (!task)
		test_abort("task_create(%s): no task slot or memory", name);
	if (sched_migrate(task, cpu) != 0)
		test_abort("sched_migrate(%s, CPU %u) refused", name, cpu);
	task_continue(task);
	return task;
}

void smp_move_self(unsigned int cpu)
{
	if (sched_migrate(sched_current(), cpu) != 0 || this_cpu_index() != cpu)
		test_abort("moving to CPU %u: now on CPU %u", cpu, this_cpu_index());
}

static DEFINE_PER_CPU(volatile unsigned int, hits_on);

unsigned int smp_hits_on(unsigned int cpu)
{
	return *per_cpu_ptr(hits_on, cpu);
}

void smp_hits_reset(void)
{
	for (unsigned int cpu = 0; cpu < percpu_count(); cpu++)
		*per_cpu_ptr(hits_on, cpu) = 0;
}

void smp_count_hit(const struct dr_hit *hit, struct cpu_regs *regs, void *context)
{
	(void)regs;
	(void)context;
	__atomic_add_fetch(per_cpu_ptr(hits_on, hit->cpu), 1, __ATOMIC_RELAXED);
}

static void call_target_once(void *arg)
{
	(void)arg;
	dr_target_function();
}

void smp_call_target_from(unsigned int cpu, unsigned int count)
{
	struct task *tasks[SMP_CALLERS_MAX];

	if (count > SMP_CALLERS_MAX)
		test_abort("smp_call_target_from: %u tasks, at most %u", count, SMP_CALLERS_MAX);
	for (unsigned int i = 0; i < count; i++)
		tasks[i] = smp_task_on(cpu, "caller", call_target_once, NULL);
	for (unsigned int i = 0; i < count; i++)
		check_eq(0, task_join(tasks[i], NULL));
}

uint64_t smp_random(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 0x2545f4914f6cdd1dull;
}
