/* SPDX-License-Identifier: MIT */
/* pmu suite: the perfmon MSR writes a switch between tasks with identical event sets makes. */
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/percpu.h"
#include "arch/x86/tsc.h"
#include "ds/buffer.h"
#include "ds/ds.h"
#include "ds/records.h"
#include "pmu/pmu.h"
#include "runner/test.h"
#include "sched/sched.h"
#include "tests/kernel/lib/budget.h"

/*
 * Two kernel tasks on one CPU with the same event set yield to each other. The events count
 * ring-3 instructions, which kernel tasks never run: what a switch writes depends on the
 * configurations it compares, not on what they count, and where the CPU is emulated nothing is
 * single-stepped. Linux caches FIXED_CTR_CTRL for the same reason (perf's 6.9% on `perf bench
 * sched pipe`); here no control register may be written at all. budget=quick 20 yields a
 * configuration, budget=soak (make bench) 1,000.
 */
#define YIELDS_QUICK 20
#define YIELDS_SOAK 1000
/*
 * At most this long a configuration: under a loaded KVM-PVM each diverted MSR access of a switch
 * took about 25 ms, and a PEBS switch makes six.
 */
#define WINDOW_MS 1000
#define SAMPLE_PERIOD 100000

enum config {
	ONE_GP, /* one GP event */
	GP_AND_FIXED, /* a GP event and fixed counter 0 */
	EVERY_GP, /* as many GP events as GP counters */
	SAMPLING, /* a sampling GP event (PMI on overflow) */
	PEBS, /* a PEBS sampling event on GP counter 0, each task its own DS area */
	CONFIGS,
};

static const char *const config_names[CONFIGS] = {
	[ONE_GP] = "one_gp",	 [GP_AND_FIXED] = "gp_and_fixed",
	[EVERY_GP] = "every_gp", [SAMPLING] = "sampling",
	[PEBS] = "pebs",
};

static const struct pmu_event user_instructions = { .event = 0xc0, .user = true };

struct window {
	enum config config;
	unsigned int yields, yielded; /* asked for; made within WINDOW_MS */
	struct pmu_writes writes; /* over the window, on the CPU */
	uint64_t msr_writes, switches;
	volatile bool ready, done, failed;
};

#define PEBS_RECORDS 16

/* A PEBS event, with a DS area of its own: a switch between two changes IA32_DS_AREA. */
static bool add_pebs_event(unsigned int task)
{
	static const struct pmu_event pebs = { .event = 0xc0, .user = true, .pebs = true };
	const struct ds_support *ds = ds_support();
	struct ds_pebs_config config = {
		.format = ds->pebs_format,
		.record_size = pebs_format_is_adaptive((enum pebs_format)ds->pebs_format)
				       ? PEBS_BASIC_GROUP_SIZE
				       : pebs_record_size((enum pebs_format)ds->pebs_format),
		.records = PEBS_RECORDS,
		.threshold_records = PEBS_RECORDS - ds_threshold_room(PEBS_RECORDS),
		.enable = 1,
		.reset_value = (0 - (uint64_t)SAMPLE_PERIOD) & ((1ull << pmu_info()->gp_width) - 1),
	};
	struct ds_target target = { false, task };

	return ds_attach_pebs(&target, &config) == DS_OK &&
	       pmu_add_sampling_event(task, &pebs, SAMPLE_PERIOD) == 0;
}

static bool add_events(unsigned int task, enum config config)
{
	unsigned int gp = pmu_info()->gp_counters;

	switch (config) {
	case ONE_GP:
		return pmu_add_event(task, &user_instructions) >= 0;
	case GP_AND_FIXED:
		return pmu_add_event(task, &user_instructions) >= 0 &&
		       pmu_add_fixed_event(task, 0, &user_instructions) >= 0;
	case SAMPLING:
		return pmu_add_sampling_event(task, &user_instructions, SAMPLE_PERIOD) >= 0;
	case PEBS:
		return add_pebs_event(task);
	case EVERY_GP:
		for (unsigned int i = 0; i < gp; i++)
			if (pmu_add_event(task, &user_instructions) < 0)
				return false;
		return true;
	default:
		return false;
	}
}

static struct pmu_writes writes_since(const struct pmu_writes *before)
{
	struct pmu_writes now = pmu_writes();

	return (struct pmu_writes){ now.evtsel - before->evtsel,
				    now.fixed_ctrl - before->fixed_ctrl,
				    now.global_ctrl - before->global_ctrl,
				    now.counts - before->counts };
}

static void measuring(void *arg)
{
	struct window *w = arg;
	struct pmu_writes before;
	uint64_t msr, switches, deadline;

	if (!add_events(sched_current()->index, w->config))
		w->failed = true;
	while (!w->ready)
		sched_yield();
	before = pmu_writes();
	msr = this_cpu()->writes.msr;
	switches = sched_stats_cpu(this_cpu_index()).switches;
	deadline = rdtsc_ordered() + tsc_cycles_from_ms(WINDOW_MS);
	for (w->yielded = 0; w->yielded < w->yields && rdtsc_ordered() < deadline; w->yielded++)
		sched_yield();
	w->writes = writes_since(&before);
	w->msr_writes = this_cpu()->writes.msr - msr;
	w->switches = sched_stats_cpu(this_cpu_index()).switches - switches;
	w->done = true;
}

static void partner(void *arg)
{
	struct window *w = arg;

	if (!add_events(sched_current()->index, w->config))
		w->failed = true;
	w->ready = true;
	while (!w->done)
		sched_yield();
}

static struct task *on_this_cpu(const char *name, void (*fn)(void *), struct window *w)
{
	struct task *task = task_create(name, fn, w, TASK_START_STOPPED);

	if (!task)
		test_abort("task_create failed");
	if (sched_migrate(task, this_cpu_index()) != 0)
		test_abort("sched_migrate to CPU %u failed", this_cpu_index());
	return task;
}

static struct window measure(enum config config)
{
	struct window w = { .config = config,
			    .yields = (unsigned int)budget_count(YIELDS_QUICK, YIELDS_SOAK) };
	struct task *a = on_this_cpu("measuring", measuring, &w);
	struct task *b = on_this_cpu("partner", partner, &w);

	task_continue(a);
	task_continue(b);
	task_join(a, NULL);
	task_join(b, NULL);
	check(!w.failed, "%s: the events could not be added", config_names[config]);
	check(w.yielded >= 1 && w.switches >= 2ull * w.yielded, "%s: %llu switches in %u yields",
	      config_names[config], (unsigned long long)w.switches, w.yielded);
	return w;
}

static void report(const struct window *w, const char *prefix)
{
	test_diag("%s%s evtsel=%llu fixed_ctrl=%llu global_ctrl=%llu counts=%llu msr=%llu "
		  "switches=%llu",
		  prefix, config_names[w->config], (unsigned long long)w->writes.evtsel,
		  (unsigned long long)w->writes.fixed_ctrl,
		  (unsigned long long)w->writes.global_ctrl, (unsigned long long)w->writes.counts,
		  (unsigned long long)w->msr_writes, (unsigned long long)w->switches);
}

/*
 * Identical sets, counting or sampling, that fit the counters: no EVTSEL, FIXED_CTR_CTRL or
 * GLOBAL_CTRL write, and none of anything for counting events (their counts are accounted by
 * deltas, never loaded). A sampling event's count is its own task's: loaded at each switch-in.
 * An AMD part without PerfMonV2 has no global control: the count is loaded with the counter
 * stopped through its PERF_CTL.EN, so exactly 2 PERF_CTL writes a switch, as Linux's
 * amd_pmu_disable_all() and amd_pmu_enable_all() write them around each switch.
 */
TEST(pmu, identical_event_sets_write_no_control_register_at_switch)
{
	if (!pmu_usable())
		test_skip("%s", pmu_info()->reason);
	for (enum config c = ONE_GP; c < PEBS; c++) {
		struct window w;
		uint64_t evtsel;

		if (c == GP_AND_FIXED && pmu_info()->fixed_counters == 0) {
			test_diag("gp_and_fixed: CPUID.0AH:EDX[4:0]=0, no fixed counter");
			continue;
		}
		w = measure(c);
		report(&w, "");
		evtsel = c == SAMPLING && pmu_info()->amd && !pmu_info()->amd_perfmon_v2
				 ? 2 * w.switches
				 : 0;
		check(w.writes.evtsel == evtsel && w.writes.fixed_ctrl == 0 &&
			      w.writes.global_ctrl == 0,
		      "%s: control writes in %llu switches: evtsel %llu (expected %llu), "
		      "fixed_ctrl %llu, global_ctrl %llu",
		      config_names[c], (unsigned long long)w.switches,
		      (unsigned long long)w.writes.evtsel, (unsigned long long)evtsel,
		      (unsigned long long)w.writes.fixed_ctrl,
		      (unsigned long long)w.writes.global_ctrl);
		if (c != SAMPLING)
			check_eq(0, w.msr_writes);
	}
}

/*
 * make bench: the writes per switch by MSR, for each configuration, and PEBS where the CPU has
 * it: each task's own DS area is installed at its switch-in, which takes PEBS off first, so the
 * counters stop at the switch-out and start at the switch-in (2 GLOBAL_CTRL writes), as pmu/'s
 * switch-out says. Not a multiplexed set: its rotation at every tick, each a dozen diverted
 * MSR accesses, outlasts the tick under KVM-PVM (the test ran out its 10 s there), and the
 * two tasks' rotations make what a switch writes chance. budget=quick (make check) measures PEBS
 * alone: pmu.identical_event_sets_write_no_control_register_at_switch measures and judges the
 * other configurations in the same run (under KVM-PVM the two together took 7.5 s).
 */
TEST(pmu, benchmark_msr_writes_per_switch)
{
	bool pebs = !ds_support()->pebs_reason[0] && (ds_support()->pebs_enable_valid & 1);

	if (!pmu_usable())
		test_skip("%s", pmu_info()->reason);
	if (!pebs && !budget_soak())
		test_skip("budget=quick measures PEBS alone, and %s",
			  ds_support()->pebs_reason[0] ? ds_support()->pebs_reason
						       : "GP counter 0 has no PEBS");
	for (enum config c = ONE_GP; c < CONFIGS; c++) {
		struct window w;
		uint64_t s;

		if ((c == GP_AND_FIXED && pmu_info()->fixed_counters == 0) ||
		    (c != PEBS && !budget_soak()))
			continue;
		if (c == PEBS && !pebs) {
			test_diag("pebs: %s", ds_support()->pebs_reason[0]
						      ? ds_support()->pebs_reason
						      : "no PEBS on GP counter 0");
			continue;
		}
		w = measure(c);
		s = w.switches ? w.switches : 1;
		test_diag("metric pmu.switch_writes.%s evtsel_per_switch=%llu.%03llu "
			  "fixed_ctrl_per_switch=%llu.%03llu global_ctrl_per_switch=%llu.%03llu "
			  "counts_per_switch=%llu.%03llu msr_per_switch=%llu.%03llu switches=%llu",
			  config_names[c], (unsigned long long)(w.writes.evtsel / s),
			  (unsigned long long)(w.writes.evtsel * 1000 / s % 1000),
			  (unsigned long long)(w.writes.fixed_ctrl / s),
			  (unsigned long long)(w.writes.fixed_ctrl * 1000 / s % 1000),
			  (unsigned long long)(w.writes.global_ctrl / s),
			  (unsigned long long)(w.writes.global_ctrl * 1000 / s % 1000),
			  (unsigned long long)(w.writes.counts / s),
			  (unsigned long long)(w.writes.counts * 1000 / s % 1000),
			  (unsigned long long)(w.msr_writes / s),
			  (unsigned long long)(w.msr_writes * 1000 / s % 1000),
			  (unsigned long long)w.switches);
	}
}
