/* SPDX-License-Identifier: MIT */
/* smp suite: an unexpected exception on another CPU ends the test that caused it, with the
 * vector, error code, RIP and CR2 read on that CPU; the runner and that CPU go on. */
#include "arch/x86/cpu.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/paging.h"
#include "kernel/smp.h"
#include "tests/kernel/lib/faults.h"
#include "tests/kernel/lib/smp_util.h"

#define FAULT_TIMEOUT_MS 2000 /* the time limit is not what ends these */
#define UNMAPPED 0x2345ul

struct faulting {
	void (*fn)(void *);
	void *arg;
	unsigned int cpu;
	bool spin; /* wait on the CPU, running, instead of blocked in task_join() */
	struct task *waiter;
};

/*
 * The faulting task: without spin it faults only once the waiter is asleep in task_join(), so
 * the fault always ends a blocked test. Earlier, the waiter could enter task_join() with the
 * interrupt that unwinds it still masked, find the faulter dead and collect it itself.
 */
static void fault_when_waited_for(void *arg)
{
	struct faulting *faulting = arg;

	while (!faulting->spin && faulting->waiter->state != TASK_BLOCKED)
		cpu_relax();
	faulting->fn(faulting->arg);
}

/* Under runner_isolate(): a task on another CPU faults while this one waits for it. */
static void fault_elsewhere(void *arg)
{
	struct faulting *faulting = arg;
	struct task *task;

	faulting->waiter = sched_current();
	task = smp_task_on(faulting->cpu, "faulter", fault_when_waited_for, faulting);

	while (faulting->spin)
		cpu_relax(); /* ended from an interrupt: the reschedule IPI, or the tick */
	task_join(task, NULL);
	test_abort("the faulting task on CPU %u exited normally", faulting->cpu);
}

TEST(smp, an_invalid_opcode_on_another_cpu_ends_the_test_that_caused_it)
{
	struct faulting faulting = { raise_invalid_opcode, NULL, 1, false, NULL };
	struct isolation_outcome outcome;

	smp_require_cpus(2);
	runner_isolate(fault_elsewhere, &faulting, FAULT_TIMEOUT_MS, &outcome);
	check_eq(ISOLATION_EXCEPTION, outcome.end);
	check_eq(X86_EXC_UD, outcome.vector);
	check_eq(0, outcome.error_code);
	check(is_ud2_in(raise_invalid_opcode, outcome.rip), "rip 0x%llx, function at %p",
	      (unsigned long long)outcome.rip, raise_invalid_opcode);
	/* The faulting task ended; what is left of it is collected as after every test. */
	check_eq(1, sched_kill_others());
	check(smp_read_registers(1).cpu == 1, "CPU 1 takes no call after the fault");
}

TEST(smp, a_page_fault_on_another_cpu_reports_that_cpus_cr2)
{
	struct faulting faulting = { write_unmapped, (void *)UNMAPPED, 0, false, NULL };
	struct isolation_outcome outcome;

	smp_require_cpus(2);
	faulting.cpu = smp_cpus() - 1;
	runner_isolate(fault_elsewhere, &faulting, FAULT_TIMEOUT_MS, &outcome);
	check_eq(ISOLATION_EXCEPTION, outcome.end);
	check_eq(X86_EXC_PF, outcome.vector);
	check_eq(PF_ERROR_WRITE, outcome.error_code);
	check_eq(UNMAPPED, outcome.cr2);
	check_eq(1, sched_kill_others());
}

TEST(smp, an_exception_on_another_cpu_interrupts_a_test_that_is_running_not_waiting)
{
	struct faulting faulting = { raise_invalid_opcode, NULL, 1, true, NULL };
	struct isolation_outcome outcome;

	smp_require_cpus(2);
	runner_isolate(fault_elsewhere, &faulting, FAULT_TIMEOUT_MS, &outcome);
	check_eq(ISOLATION_EXCEPTION, outcome.end);
	check_eq(X86_EXC_UD, outcome.vector);
	check_eq(1, sched_kill_others());
}
