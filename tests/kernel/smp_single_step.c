/* SPDX-License-Identifier: MIT */
/* smp suite: a user task's single-step goes with it from CPU to CPU, and stops when turned off. */
#include "arch/x86/cpu.h"
#include "arch/x86/debugreg.h"
#include "arch/x86/percpu.h"
#include "arch/x86/tsc.h"
#include "dr/dr.h"
#include "kernel/smp.h"
#include "lib/string.h"
#include "tests/kernel/lib/smp_util.h"
#include "tests/kernel/lib/user_programs.h"

#define ROUNDS 3
#define LONG_LOOP 1000000 /* iterations of user_dr_script's empty loop: never ends stepped */
/* Host-time bounds on events, not measurements: a trap on the CPU, the task's end. */
#define TRAP_WAIT_MS 3000
#define END_WAIT_MS 5000

/* Drain the task's hits until one comes from cpu, where it moved from from; false after
 * TRAP_WAIT_MS. */
static bool wait_for_step_on(const struct task *task, unsigned int from, unsigned int cpu,
			     uint64_t *traps)
{
	uint64_t start = rdtsc_ordered(), limit = tsc_cycles_from_ms(TRAP_WAIT_MS);
	struct dr_hit hits[16];
	uint64_t from_ticks = percpu_get(from)->ticks, to_ticks = percpu_get(cpu)->ticks;
	uint64_t to_stepped = percpu_get(cpu)->stepped_exceptions;

	while (rdtsc_ordered() - start < limit) {
		unsigned int count = dr_read_hits(task->index, hits, 16, NULL);
		bool seen = false;

		for (unsigned int i = 0; i < count; i++) {
			check(hits[i].dr6 == (DR6_RESET | DR6_BS) && hits[i].from_user,
			      "hit on CPU %u: dr6 0x%llx, user %u", hits[i].cpu,
			      (unsigned long long)hits[i].dr6, hits[i].from_user);
			seen |= hits[i].cpu == cpu;
			*traps += 1;
		}
		if (seen)
			return true;
		sched_yield();
	}
	/* Where the task was left: switch-ins without traps are a task preempted before it ran. */
	test_diag("no trap on CPU %u in %u ms: task on CPU %u (was %u), state %u, move pending %u, "
		  "switched in %llu times",
		  cpu, TRAP_WAIT_MS, task->cpu, from, task->state, task->migrate_pending,
		  (unsigned long long)task->switches_in);
	test_diag("stepped exceptions on CPU %u meanwhile: %llu", cpu,
		  (unsigned long long)(percpu_get(cpu)->stepped_exceptions - to_stepped));
	test_diag("ticks meanwhile: CPU %u %llu, CPU %u %llu", from,
		  (unsigned long long)(percpu_get(from)->ticks - from_ticks), cpu,
		  (unsigned long long)(percpu_get(cpu)->ticks - to_ticks));
	return false;
}

TEST(smp, a_single_stepped_user_task_keeps_trapping_on_every_cpu_it_is_moved_to)
{
	struct user_dr_script script = { .action = USER_DR_NOTHING, .repeat = LONG_LOOP };
	struct task *task;
	struct user_fault fault = { 0 };
	unsigned int slice = sched_slice_ticks();
	uint64_t traps = 0, off, off_ticks;
	long code;

	smp_require_cpus(2);
	/* Stepped on CPU 0, the task keeps it until the tick: one-tick slices, not 10 ms. */
	sched_set_slice_ticks(1);
	task = task_create_user("stepper", user_dr_script, USER_DATA_BASE, TASK_START_STOPPED);
	if (!task)
		test_abort("task_create_user failed");
	memcpy(task_user_data(task), &script, sizeof(script));
	check_eq(0, dr_set_single_step(task->index, true));
	task_continue(task);
	for (unsigned int round = 0; round < ROUNDS; round++) {
		for (unsigned int cpu = 0; cpu < smp_cpus(); cpu++) {
			unsigned int from = task->cpu;

			check_eq(0, sched_migrate(task, cpu));
			check(wait_for_step_on(task, from, cpu, &traps),
			      "round %u: no step trap on CPU %u", round, cpu);
		}
	}
	/*
	 * Off: the next trap clears TF from its frame (or its next switch-in does, here a move if
	 * it is still running). Stepped, the rest of LONG_LOOP would take minutes; unstepped it
	 * ends at once, and a trap after the flag went off must not reach it as a fault.
	 */
	check_eq(0, dr_set_single_step(task->index, false));
	sched_migrate(task, 0); /* fails harmlessly if it has already ended */
	off = rdtsc_ordered();
	off_ticks = percpu_get(task->cpu)->ticks;
	while (task->state != TASK_DEAD && rdtsc_ordered() - off < tsc_cycles_from_ms(END_WAIT_MS))
		sched_yield(); /* to it, on this CPU */
	if (task->state != TASK_DEAD) {
		struct dr_hit hits[16];
		unsigned int lost = 0, count = dr_read_hits(task->index, hits, 16, &lost);

		check(false,
		      "still running %u ms after single-step was turned off: CPU %u, state %u, "
		      "%u traps since (%u lost), CPU %u took %llu ticks",
		      END_WAIT_MS, task->cpu, task->state, count, lost, task->cpu,
		      (unsigned long long)(percpu_get(task->cpu)->ticks - off_ticks));
	}
	while (task->state != TASK_DEAD)
		sched_sleep_ms(1);
	code = task_join(task, &fault);
	sched_set_slice_ticks(slice);
	check(code == 0, "exit code %ld; last fault: vector %u error 0x%llx rip 0x%llx", code,
	      fault.valid ? fault.vector : 0, (unsigned long long)fault.error_code,
	      (unsigned long long)fault.rip);
	test_diag("%llu step traps drained over %u moves", (unsigned long long)traps,
		  ROUNDS * smp_cpus());
}
