/* SPDX-License-Identifier: MIT */
/* smp suite: breakpoints pinned to one CPU trap every task there and no other CPU, and the
 * reservation is checked on every CPU: each CPU's pinned ones, system-wide ones and the largest
 * task (which may run anywhere) share that CPU's four registers. */
#include "arch/x86/percpu.h"
#include "dr/dr.h"
#include "kernel/smp.h"
#include "tests/kernel/lib/dr_targets.h"
#include "tests/kernel/lib/smp_util.h"

#define TARGET ((uint64_t)dr_target_function)

TEST(smp, a_pinned_breakpoint_traps_every_task_on_its_cpu_and_nothing_elsewhere)
{
	struct dr_breakpoint breakpoint = { TARGET, DR_TYPE_EXECUTE, 1 };
	struct smp_registers registers;
	unsigned int last = smp_cpus() - 1;
	int slot;

	smp_require_cpus(2);
	smp_hits_reset();
	slot = dr_install_pinned(last, &breakpoint, smp_count_hit, NULL);
	if (slot < 0)
		test_abort("dr_install_pinned: %s", dr_error_name(-slot));
	registers = smp_read_registers(last);
	check(smp_breakpoint_live(&registers, TARGET), "CPU %u: DR7=0x%llx", last,
	      (unsigned long long)registers.dr7);
	registers = smp_read_registers(0);
	check(!smp_breakpoint_live(&registers, TARGET), "CPU 0 has CPU %u's: DR7=0x%llx", last,
	      (unsigned long long)registers.dr7);
	smp_call_target_from(last, 3);
	smp_call_target_from(0, 2);
	dr_target_function(); /* the runner, on CPU 0 */
	check_eq(3, smp_hits_on(last));
	check_eq(0, smp_hits_on(0));
	check_eq(0, dr_uninstall_pinned(last, slot));
	registers = smp_read_registers(last);
	check(!smp_breakpoint_live(&registers, TARGET), "CPU %u keeps it: DR7=0x%llx", last,
	      (unsigned long long)registers.dr7);
	smp_call_target_from(last, 1);
	check_eq(3, smp_hits_on(last));
	check_eq(-DR_ERROR_NO_CPU, dr_install_pinned(smp_cpus(), &breakpoint, NULL, NULL));
}

/* Install an unused write watchpoint pinned to cpu; the slot, or fail the test. */
static int pin_unused(unsigned int cpu, unsigned int which)
{
	struct dr_breakpoint breakpoint = { (uint64_t)&dr_target_unused[which], DR_TYPE_WRITE, 8 };
	int slot = dr_install_pinned(cpu, &breakpoint, NULL, NULL);

	if (slot < 0)
		test_abort("pinning %u on CPU %u: %s", which, cpu, dr_error_name(-slot));
	return slot;
}

/* The hits of the mover's breakpoint on each CPU. */
static DEFINE_PER_CPU(unsigned int, hits_by_cpu);

/* With one breakpoint of its own, trap once on each CPU. */
static void trap_on_every_cpu(void *arg)
{
	struct dr_hit hits[16];

	(void)arg;
	dr_target_install(TARGET, DR_TYPE_EXECUTE, 1);
	for (unsigned int cpu = 0; cpu < smp_cpus(); cpu++) {
		unsigned int count;

		smp_move_self(cpu);
		dr_target_function();
		/* Read as it goes: the hit ring holds 16, and there may be more CPUs. */
		count = dr_target_hits(hits);
		for (unsigned int i = 0; i < count; i++)
			(*per_cpu_ptr(hits_by_cpu, hits[i].cpu))++;
	}
}

TEST(smp, the_reservation_counts_each_cpus_pinned_breakpoints_against_every_other_user)
{
	struct dr_breakpoint system = { (uint64_t)&dr_target_unused[7], DR_TYPE_WRITE, 8 };
	struct dr_breakpoint own = { TARGET, DR_TYPE_EXECUTE, 1 };
	unsigned int runner = sched_current()->index;
	struct smp_registers registers;
	int pinned[3], system_slot;
	struct task *task;

	smp_require_cpus(2);
	for (unsigned int i = 0; i < 3; i++)
		pinned[i] = pin_unused(1, i);
	/* CPU 1 has one slot left: one system-wide breakpoint fits, a second does not, although
	 * CPU 0 has room for it; and no task may take one, since it could run on CPU 1. */
	system_slot = dr_install_system(&system, NULL, NULL);
	check(system_slot >= 0, "the first system-wide one: %d", system_slot);
	check_eq(-DR_ERROR_NO_SLOT, dr_install_system(&system, NULL, NULL));
	check_eq(0, dr_task_free_slots(runner));
	check_eq(-DR_ERROR_NO_SLOT, dr_install(runner, &own, NULL, NULL));
	check_eq(-DR_ERROR_NO_SLOT, dr_install_pinned(1, &system, NULL, NULL));
	/* CPU 0 is not full: it takes pinned ones of its own up to its four. */
	check(dr_install_pinned(0, &own, NULL, NULL) >= 0, "CPU 0 refused a pinned one");
	registers = smp_read_registers(1);
	for (unsigned int i = 0; i < 3; i++)
		check(smp_breakpoint_live(&registers, (uint64_t)&dr_target_unused[i]),
		      "CPU 1 lost pinned %u: DR7=0x%llx", i, (unsigned long long)registers.dr7);
	check(smp_breakpoint_live(&registers, system.address), "CPU 1: no system-wide one");
	check_eq(4, dr_uninstall_all_pinned()); /* CPU 1's three and CPU 0's one */
	check_eq(0, dr_uninstall_system(system_slot));
	/* With two pinned on CPU 1, a task's breakpoint fits next to them and traps everywhere. */
	for (unsigned int i = 0; i < 2; i++)
		pinned[i] = pin_unused(1, i);
	for (unsigned int cpu = 0; cpu < smp_cpus(); cpu++)
		*per_cpu_ptr(hits_by_cpu, cpu) = 0;
	task = smp_task_on(0, "mover", trap_on_every_cpu, NULL);
	check_eq(0, task_join(task, NULL));
	for (unsigned int cpu = 0; cpu < smp_cpus(); cpu++)
		check(*per_cpu_ptr(hits_by_cpu, cpu) == 1,
		      "CPU %u: %u hits of the task's breakpoint", cpu,
		      *per_cpu_ptr(hits_by_cpu, cpu));
	for (unsigned int i = 0; i < 2; i++)
		check_eq(0, dr_uninstall_pinned(1, pinned[i]));
	check_eq(DR_SLOTS, dr_task_free_slots(runner));
}
