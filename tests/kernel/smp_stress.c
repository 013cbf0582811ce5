/* SPDX-License-Identifier: MIT */
/* smp suite: a seeded stress test. Workers each trap on their own breakpoint and never on the
 * others', while the runner and the workers themselves move them between CPUs at random. */
#include "arch/x86/cpu.h"
#include "arch/x86/percpu.h"
#include "arch/x86/tsc.h"
#include "dr/dr.h"
#include "kernel/smp.h"
#include "lib/bitops.h"
#include "tests/kernel/lib/budget.h"
#include "tests/kernel/lib/dr_targets.h"
#include "tests/kernel/lib/smp_util.h"

#define WORKERS 6
/*
 * budget=quick: 10 ms, a smoke run: the seed's first moves. budget=soak (make soak, many seeds):
 * 30 s (at most half the test's time limit).
 */
#define BUDGET_QUICK_MS 10
/* Past the budget, the runner goes on asking moves until every worker has run elsewhere, for at
 * most this long (and half the time limit): a slow platform makes few moves in 20 ms
 * (docs/platforms.md). */
#define MOVED_CAP_MS 5000
#define BUDGET_SOAK_MS 30000

struct worker {
	struct task *task;
	unsigned int number;
	uint64_t random;
	volatile bool stop, ready;
	uint64_t calls, hits, foreign_calls, stray_hits, wrong_cpu_hits, lost;
	unsigned int wrong_cpu_first[2]; /* the first such hit: its CPU, and the round's */
	uint64_t wrong_cpu_round; /* and which round (calls) it came in */
	uint64_t register_mismatches, self_moves;
	unsigned int first_cpu; /* where its first round ran */
	uint64_t elsewhere; /* rounds on another CPU than first_cpu */
};

static uint64_t target_of(unsigned int number)
{
	return (uint64_t)dr_stress_targets[number];
}

/* With interrupts off (no move in between): the registers hold this worker's breakpoint and
 * no other worker's. */
static bool registers_are_mine(unsigned int number)
{
	struct smp_registers registers = smp_read_registers(this_cpu_index()); /* a direct call */

	if (!smp_breakpoint_live(&registers, target_of(number)))
		return false;
	for (unsigned int other = 0; other < WORKERS; other++)
		if (other != number && smp_breakpoint_live(&registers, target_of(other)))
			return false;
	return true;
}

/* Runs in the worker: worker->task may not be set yet (smp_task_on() has not returned). */
static void collect_hits(struct worker *worker, unsigned int cpu)
{
	struct dr_hit hits[16];
	unsigned int lost = 0, count = dr_read_hits(sched_current()->index, hits, 16, &lost);

	worker->lost = lost;
	for (unsigned int i = 0; i < count; i++) {
		if (hits[i].address != target_of(worker->number))
			worker->stray_hits++;
		else
			worker->hits++;
		if (hits[i].cpu != cpu && worker->wrong_cpu_hits++ == 0) {
			worker->wrong_cpu_first[0] = hits[i].cpu;
			worker->wrong_cpu_first[1] = cpu;
			worker->wrong_cpu_round = worker->calls;
		}
	}
}

static void work(void *arg)
{
	struct worker *worker = arg;
	unsigned int foreign = (worker->number + 1) % WORKERS;

	dr_target_install(target_of(worker->number), DR_TYPE_EXECUTE, 1);
	worker->ready = true;
	while (!worker->stop) {
		unsigned long flags = local_irq_save();
		unsigned int cpu = this_cpu_index();

		worker->register_mismatches += !registers_are_mine(worker->number);
		dr_stress_targets[worker->number]();
		worker->calls++;
		dr_stress_targets[foreign]();
		worker->foreign_calls++;
		if (worker->calls == 1)
			worker->first_cpu = cpu;
		worker->elsewhere += cpu != worker->first_cpu;
		local_irq_restore(flags);
		collect_hits(worker, cpu);
		switch (smp_random(&worker->random) % 8) {
		case 0: /* the runner may move it too: where it lands is the later request's */
			worker->self_moves +=
				sched_migrate(sched_current(),
					      (unsigned int)(smp_random(&worker->random) %
							     smp_cpus())) == 0;
			break;
		case 1:
			sched_yield();
			break;
		default:
			break;
		}
	}
}

/* Whether every worker has run a round on a CPU other than its first. */
static bool every_worker_moved(const struct worker *workers)
{
	for (unsigned int i = 0; i < WORKERS; i++)
		if (!__atomic_load_n(&workers[i].elsewhere, __ATOMIC_RELAXED))
			return false;
	return true;
}

TEST(smp, seeded_stress_moves_tasks_between_cpus_and_no_breakpoint_is_lost_or_stray)
{
	static struct worker workers[WORKERS];
	uint64_t random = test_seed() ^ 0x5eed5eedull, moves = 0, refused = 0, rounds = 0;
	uint64_t budget_milliseconds = budget_ms(BUDGET_QUICK_MS, BUDGET_SOAK_MS);
	uint64_t start, budget = tsc_cycles_from_ms(budget_milliseconds);
	uint64_t cap = tsc_cycles_from_ms(budget_ms(MOVED_CAP_MS, MOVED_CAP_MS));
	uint64_t failures = dr_sync_failures();

	smp_require_cpus(2);
	test_diag("seed=%llu: %u workers on %u CPUs for %llu ms (budget=%s)",
		  (unsigned long long)test_seed(), WORKERS, smp_cpus(),
		  (unsigned long long)budget_milliseconds, budget_name());
	for (unsigned int i = 0; i < WORKERS; i++) {
		workers[i] = (struct worker){ .number = i, .random = smp_random(&random) | 1 };
		workers[i].task = smp_task_on(i % smp_cpus(), "worker", work, &workers[i]);
	}
	for (unsigned int i = 0; i < WORKERS; i++)
		while (!workers[i].ready)
			sched_yield();
	start = rdtsc_ordered();
	while (rdtsc_ordered() - start < budget ||
	       (!every_worker_moved(workers) && rdtsc_ordered() - start < cap)) {
		struct worker *worker = &workers[smp_random(&random) % WORKERS];
		unsigned int cpu = (unsigned int)(smp_random(&random) % smp_cpus());

		if (sched_migrate(worker->task, cpu) == 0)
			moves++;
		else
			refused++;
		if (smp_random(&random) % 4 == 0)
			sched_sleep_ms(1);
		rounds++;
	}
	for (unsigned int i = 0; i < WORKERS; i++)
		workers[i].stop = true;
	for (unsigned int i = 0; i < WORKERS; i++) {
		struct worker *worker = &workers[i];
		uint64_t migrations = worker->task->migrations;

		check_eq(0, task_join(worker->task, NULL));
		test_diag("worker %u: %llu calls, %llu migrations (%llu by itself), first on CPU "
			  "%u, %llu rounds elsewhere",
			  i, (unsigned long long)worker->calls, (unsigned long long)migrations,
			  (unsigned long long)worker->self_moves, worker->first_cpu,
			  (unsigned long long)worker->elsewhere);
		check(worker->calls > 0, "worker %u never ran", i);
		check_eq(worker->calls, worker->hits);
		check_eq(0, worker->stray_hits);
		check(worker->wrong_cpu_hits == 0,
		      "worker %u: %llu hits recorded on another CPU than their round's, the first "
		      "on CPU %u in round %llu on CPU %u",
		      i, (unsigned long long)worker->wrong_cpu_hits, worker->wrong_cpu_first[0],
		      (unsigned long long)worker->wrong_cpu_round, worker->wrong_cpu_first[1]);
		check_eq(0, worker->lost);
		check_eq(0, worker->register_mismatches);
		check(worker->elsewhere > 0, "worker %u ran on CPU %u only", i, worker->first_cpu);
	}
	test_diag("runner: %llu moves asked in %llu rounds, %llu refused",
		  (unsigned long long)moves, (unsigned long long)rounds,
		  (unsigned long long)refused);
	check(moves > 0, "no migration happened");
	check_eq(0, refused);
	check_eq(failures, dr_sync_failures());
}
