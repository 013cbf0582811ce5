/* SPDX-License-Identifier: MIT */
/* smp suite: system-wide breakpoints are installed on, fire on, and leave every CPU; the
 * reservation counts a task on another CPU. */
#include "arch/x86/cpu.h"
#include "arch/x86/percpu.h"
#include "dr/dr.h"
#include "kernel/smp.h"
#include "tests/kernel/lib/dr_targets.h"
#include "tests/kernel/lib/smp_util.h"

#define TARGET ((uint64_t)dr_target_function)

/* One task on each CPU calls the target once; returns when all are joined. */
static void call_on_every_cpu(void)
{
	for (unsigned int cpu = 0; cpu < smp_cpus(); cpu++)
		smp_call_target_from(cpu, 1);
}

TEST(smp, a_system_wide_breakpoint_is_live_and_fires_on_every_cpu_until_removed)
{
	struct dr_breakpoint breakpoint = { TARGET, DR_TYPE_EXECUTE, 1 };
	uint64_t failures = dr_sync_failures();
	int slot;

	smp_require_cpus(2);
	smp_hits_reset();
	slot = dr_install_system(&breakpoint, smp_count_hit, NULL);
	if (slot < 0)
		test_abort("dr_install_system: %s", dr_error_name(-slot));
	/* Every CPU has it now, each idle or running whatever it runs: no switch was needed. */
	for (unsigned int cpu = 0; cpu < smp_cpus(); cpu++) {
		struct smp_registers registers = smp_read_registers(cpu);

		check(smp_breakpoint_live(&registers, TARGET), "CPU %u: DR7=0x%llx", cpu,
		      (unsigned long long)registers.dr7);
	}
	call_on_every_cpu();
	for (unsigned int cpu = 0; cpu < smp_cpus(); cpu++)
		check(smp_hits_on(cpu) == 1, "CPU %u: %u hits, expected 1", cpu, smp_hits_on(cpu));
	check_eq(0, dr_uninstall_system(slot));
	for (unsigned int cpu = 0; cpu < smp_cpus(); cpu++) {
		struct smp_registers registers = smp_read_registers(cpu);

		check(!smp_breakpoint_live(&registers, TARGET), "CPU %u keeps it: DR7=0x%llx", cpu,
		      (unsigned long long)registers.dr7);
	}
	call_on_every_cpu();
	for (unsigned int cpu = 0; cpu < smp_cpus(); cpu++)
		check(smp_hits_on(cpu) == 1, "CPU %u: %u hits after the removal", cpu,
		      smp_hits_on(cpu));
	check_eq(failures, dr_sync_failures());
}

struct holder {
	volatile bool holding, release;
};

static void hold_every_slot(void *arg)
{
	struct holder *holder = arg;

	for (unsigned int slot = 0; slot < DR_SLOTS; slot++)
		dr_target_install((uint64_t)&dr_target_unused[slot], DR_TYPE_WRITE, 8);
	holder->holding = true;
	while (!holder->release)
		cpu_relax();
}

TEST(smp, a_system_wide_breakpoint_is_refused_while_a_task_on_another_cpu_holds_every_slot)
{
	struct dr_breakpoint breakpoint = { TARGET, DR_TYPE_EXECUTE, 1 };
	struct holder holder = { false, false };
	struct smp_registers registers;
	struct task *task;
	int slot;

	smp_require_cpus(2);
	task = smp_task_on(1, "holder", hold_every_slot, &holder);
	while (!holder.holding)
		sched_yield();
	check_eq(-DR_ERROR_NO_SLOT, dr_install_system(&breakpoint, NULL, NULL));
	/* Refused without stealing: the holder's four are still in CPU 1's registers. */
	registers = smp_read_registers(1);
	for (unsigned int i = 0; i < DR_SLOTS; i++)
		check(smp_breakpoint_live(&registers, (uint64_t)&dr_target_unused[i]),
		      "CPU 1 lost the holder's breakpoint %u: DR7=0x%llx", i,
		      (unsigned long long)registers.dr7);
	for (unsigned int cpu = 0; cpu < smp_cpus(); cpu++) {
		registers = smp_read_registers(cpu);
		check(!smp_breakpoint_live(&registers, TARGET), "CPU %u has the refused one", cpu);
	}
	holder.release = true;
	check_eq(0, task_join(task, NULL));
	slot = dr_install_system(&breakpoint, NULL, NULL);
	check(slot >= 0, "refused after the holder exited: %d", slot);
	if (slot >= 0)
		check_eq(0, dr_uninstall_system(slot));
}
