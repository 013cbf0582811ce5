/* SPDX-License-Identifier: MIT */
/* smp suite benchmark: what a migration costs, in cycles and in debug-register and MSR writes. */
#include "arch/x86/cpu.h"
#include "arch/x86/percpu.h"
#include "arch/x86/tsc.h"
#include "dr/dr.h"
#include "kernel/smp.h"
#include "lib/sort.h"
#include "tests/kernel/lib/budget.h"
#include "tests/kernel/lib/dr_targets.h"
#include "tests/kernel/lib/smp_util.h"

/*
 * Lazy migrations are timed (median and p99) and their writes counted; eager ones only have
 * their writes counted. budget=quick: 100 lazy (the p99 is the largest) and 20 eager;
 * budget=soak (make bench): 500 of each. Either stops at BUDGET_MS: a slow platform takes
 * milliseconds a migration (docs/platforms.md).
 */
#define MIGRATIONS_MAX 500
#define LAZY_MIGRATIONS_QUICK 100
#define EAGER_MIGRATIONS_QUICK 20
#define BUDGET_MS 3000
#define WARM_UP 4 /* round trips before counting: each CPU has seen the task's addresses */

struct ping_pong {
	uint64_t cycles[MIGRATIONS_MAX];
	unsigned int done, wanted;
	struct write_counts before[2], after[2];
};

static void snapshot(struct write_counts counts[2])
{
	counts[0] = percpu_get(0)->writes;
	counts[1] = percpu_get(1)->writes;
}

/* Move between CPUs 0 and 1, holding two execute breakpoints that never fire. */
static void ping_pong(void *arg)
{
	struct ping_pong *run = arg;
	/* Either budget: budget_ms() keeps it within half the test's time limit. */
	uint64_t start, budget = tsc_cycles_from_ms(budget_ms(BUDGET_MS, BUDGET_MS));

	dr_target_install((uint64_t)dr_stress_targets[0], DR_TYPE_EXECUTE, 1);
	dr_target_install((uint64_t)dr_stress_targets[1], DR_TYPE_EXECUTE, 1);
	for (unsigned int i = 0; i < 2 * WARM_UP; i++)
		smp_move_self(i % 2 ? 0 : 1);
	snapshot(run->before);
	start = rdtsc_ordered();
	for (run->done = 0; run->done < run->wanted && rdtsc_ordered() - start < budget;
	     run->done++) {
		uint64_t t0 = rdtsc_ordered();

		smp_move_self(run->done % 2 ? 0 : 1);
		run->cycles[run->done] = rdtsc_ordered() - t0;
	}
	snapshot(run->after);
	smp_move_self(0);
}

static uint64_t measure(bool lazy, struct ping_pong *run, uint64_t *msr_writes)
{
	bool was_lazy = dr_is_lazy();
	struct task *task;
	uint64_t dr_writes = 0;

	dr_set_lazy(lazy);
	task = smp_task_on(0, "ping-pong", ping_pong, run);
	check_eq(0, task_join(task, NULL));
	dr_set_lazy(was_lazy);
	*msr_writes = 0;
	for (unsigned int cpu = 0; cpu < 2; cpu++) {
		dr_writes += run->after[cpu].dr - run->before[cpu].dr;
		*msr_writes += run->after[cpu].msr - run->before[cpu].msr;
	}
	return dr_writes;
}

TEST(smp, benchmark_migration_cost_and_register_writes)
{
	static struct ping_pong lazy_run, eager_run;
	uint64_t lazy_writes, eager_writes, lazy_msr, eager_msr;

	smp_require_cpus(2);
	lazy_run.done = eager_run.done = 0;
	lazy_run.wanted = (unsigned int)budget_count(LAZY_MIGRATIONS_QUICK, MIGRATIONS_MAX);
	eager_run.wanted = (unsigned int)budget_count(EAGER_MIGRATIONS_QUICK, MIGRATIONS_MAX);
	lazy_writes = measure(true, &lazy_run, &lazy_msr);
	eager_writes = measure(false, &eager_run, &eager_msr);
	check(lazy_run.done > 0 && eager_run.done > 0, "no migration measured");
	if (!lazy_run.done || !eager_run.done)
		return;
	sort_u64(lazy_run.cycles, lazy_run.done);
	test_diag("metric smp.migration_cycles median=%llu p99=%llu samples=%u",
		  (unsigned long long)lazy_run.cycles[lazy_run.done / 2],
		  (unsigned long long)lazy_run.cycles[lazy_run.done * 99 / 100], lazy_run.done);
	test_diag("metric smp.migration_writes lazy_dr=%llu eager_dr=%llu msr=%llu "
		  "lazy_migrations=%u "
		  "eager_migrations=%u",
		  (unsigned long long)lazy_writes, (unsigned long long)eager_writes,
		  (unsigned long long)(lazy_msr + eager_msr), lazy_run.done, eager_run.done);
	/*
	 * Lazy: the CPU left behind only clears DR7, and the CPU reached finds the task's
	 * addresses still in DR0-DR3 from its last visit: one DR7 write each side.
	 */
	check_eq(2ull * lazy_run.done, lazy_writes);
	check(eager_writes > lazy_writes * eager_run.done / lazy_run.done,
	      "eager %llu writes in %u migrations, lazy %llu in %u",
	      (unsigned long long)eager_writes, eager_run.done, (unsigned long long)lazy_writes,
	      lazy_run.done);
	/* No Debug Store or counters configured: a migration writes no MSR. */
	check_eq(0, lazy_msr + eager_msr);
}

/* Samples of each kind, for a median: budget=quick 16, budget=soak (make bench) 128 (with 8,
 * OVMF's boot once gave a remote median below the local one). */
#define INSTALL_SAMPLES_QUICK 16
#define INSTALL_SAMPLES_MAX 128

struct idler {
	volatile bool stop;
};

static void spin_until_stopped(void *arg)
{
	struct idler *idler = arg;

	while (!idler->stop)
		cpu_relax();
}

/* Median cycles of install + uninstall of one breakpoint for task (running where it runs). */
static uint64_t install_cycles(unsigned int task, uint64_t *samples, unsigned int count)
{
	struct dr_breakpoint breakpoint = { (uint64_t)&dr_target_unused[0], DR_TYPE_WRITE, 8 };

	for (unsigned int i = 0; i < count; i++) {
		uint64_t start = rdtsc_ordered();
		int slot = dr_install(task, &breakpoint, NULL, NULL);

		dr_uninstall(task, slot);
		samples[i] = rdtsc_ordered() - start;
	}
	sort_u64(samples, count);
	return samples[count / 2];
}

TEST(smp, benchmark_breakpoint_change_for_a_task_on_another_cpu)
{
	static uint64_t samples[INSTALL_SAMPLES_MAX];
	unsigned int count = (unsigned int)budget_count(INSTALL_SAMPLES_QUICK, INSTALL_SAMPLES_MAX);
	struct idler idler = { false };
	uint64_t local, remote, system = 0, failures = dr_sync_failures(), remote_writes;
	struct dr_breakpoint breakpoint = { (uint64_t)&dr_target_unused[1], DR_TYPE_WRITE, 8 };
	struct task *task;

	smp_require_cpus(2);
	local = install_cycles(sched_current()->index, samples, count);
	task = smp_task_on(1, "spinner", spin_until_stopped, &idler);
	while (task->state != TASK_RUNNING)
		sched_yield();
	remote_writes = percpu_get(1)->writes.dr;
	remote = install_cycles(task->index, samples, count);
	remote_writes = percpu_get(1)->writes.dr - remote_writes;
	for (unsigned int i = 0; i < count; i++) {
		uint64_t start = rdtsc_ordered();
		int slot = dr_install_system(&breakpoint, NULL, NULL);

		dr_uninstall_system(slot);
		samples[i] = rdtsc_ordered() - start;
	}
	sort_u64(samples, count);
	system = samples[count / 2];
	idler.stop = true;
	check_eq(0, task_join(task, NULL));
	test_diag("metric smp.breakpoint_change_cycles local=%llu remote=%llu system_wide=%llu "
		  "cpus=%u samples=%u",
		  (unsigned long long)local, (unsigned long long)remote, (unsigned long long)system,
		  smp_cpus(), count);
	test_diag("metric smp.breakpoint_change_ratio remote_over_local=%llu.%02llu",
		  (unsigned long long)(remote / local),
		  (unsigned long long)(remote % local * 100 / local));
	/*
	 * Each change to the running task reached CPU 1 before dr_install() returned: CPU 1 wrote
	 * its debug registers (DR0 and DR7 to install, DR7 to uninstall) once a change at least.
	 * The cycles are the metric; on TCG with more vCPUs than host cores they say nothing.
	 */
	check_eq(failures, dr_sync_failures());
	check(remote_writes >= 2ull * count,
	      "CPU 1 wrote its debug registers %llu times for %u installs and uninstalls",
	      (unsigned long long)remote_writes, count);
}
