/* SPDX-License-Identifier: MIT */
/* pebs suite: PEBS on a hybrid part, whose core types have different counters (SDM CPUID 1AH). */
#include <stdint.h>

#include "arch/x86/cpuid.h"
#include "arch/x86/percpu.h"
#include "ds/ds.h"
#include "kernel/smp.h"
#include "runner/test.h"
#include "sched/sched.h"
#include "tests/kernel/lib/ds_util.h"
#include "tests/kernel/lib/smp_util.h"

struct core_visit {
	uint64_t pebs_enable[2]; /* on CPU 0 and CPU 1, as ds/ holds it there */
};

static void visit_both_cores(void *arg)
{
	struct core_visit *visit = arg;

	for (unsigned int cpu = 0; cpu < 2; cpu++) {
		smp_move_self(cpu);
		visit->pebs_enable[cpu] = ds_registers().pebs_enable;
	}
	smp_move_self(0);
}

#define PEBS_RECORDS 8
#define PEBS_THRESHOLD 4
#define PEBS_PERIOD (1ull << 30) /* no counter counts here: never reached */

static DEFINE_PER_CPU(unsigned int, gp_counters_seen);

static void read_gp_counters(void *unused)
{
	(void)unused;
	*this_cpu_ptr(gp_counters_seen) =
		CPUID_PERFMON_GP_COUNTERS(cpuid(CPUID_LEAF_PERFMON, 0).eax);
}

/* CPUID.0AH's GP counters as CPU cpu enumerates them (on a hybrid part, by core type). */
static unsigned int gp_counters_of(unsigned int cpu)
{
	*per_cpu_ptr(gp_counters_seen, cpu) = 0;
	if (!smp_call(cpu, read_gp_counters, NULL))
		test_abort("CPU %u took no call", cpu);
	return *per_cpu_ptr(gp_counters_seen, cpu);
}

/*
 * On a hybrid part each core type has its own counters (SDM CPUID leaf 1AH). A task whose PEBS
 * uses a counter only the big core has runs on a small core with that PEBS_ENABLE bit off there
 * (writing it would #GP), and on again back on the big core, as Linux keeps pebs_events_mask per
 * hybrid PMU.
 */
TEST(pebs, a_counter_only_the_big_core_has_is_off_on_a_small_one_and_back_on_the_big_one)
{
	struct core_visit visit = { { ~0ull, ~0ull } };
	struct ds_pebs_config config;
	struct ds_target target;
	unsigned int big, small, counter;
	struct task *task;

	smp_require_cpus(2);
	require_pebs();
	big = gp_counters_of(0);
	small = gp_counters_of(1);
	if (small >= big)
		test_skip("CPU 1 has as many GP counters as CPU 0 (%u): not a hybrid part's small "
			  "core",
			  big);
	counter = big - 1;
	if (!(ds_support()->pebs_enable_valid & (1ull << counter)))
		test_skip("PEBS_ENABLE has no bit for counter %u here", counter);
	task = task_create("visitor", visit_both_cores, &visit, TASK_START_STOPPED);
	if (!task || sched_migrate(task, 0) != 0)
		test_abort("no visitor on CPU 0");
	target = task_target(task);
	config = pebs_config(PEBS_RECORDS, PEBS_THRESHOLD, PEBS_PERIOD);
	config.enable = 1ull << counter;
	check_eq(DS_OK, ds_attach_pebs(&target, &config));
	task_continue(task);
	check_eq(0, task_join(task, NULL));
	test_diag("counter %u: CPU 0 (%u GP counters) PEBS_ENABLE 0x%llx, CPU 1 (%u) 0x%llx",
		  counter, big, (unsigned long long)visit.pebs_enable[0], small,
		  (unsigned long long)visit.pebs_enable[1]);
	check_eq(1ull << counter, visit.pebs_enable[0]);
	check_eq(0, visit.pebs_enable[1]);
}
