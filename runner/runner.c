/* SPDX-License-Identifier: MIT */
/* The test runner: selects tests by glob, groups them by suite, runs each isolated. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/apic.h"
#include "arch/x86/cpu.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/percpu.h"
#include "arch/x86/probe.h"
#include "arch/x86/traps.h"
#include "arch/x86/tsc.h"
#include "dr/dr.h"
#include "ds/ds.h"
#include "emulator/emulator.h"
#include "kernel/switch_hooks.h"
#include "lbr/lbr.h"
#include "lib/format.h"
#include "lib/glob.h"
#include "lib/ktap.h"
#include "lib/report.h"
#include "lib/string.h"
#include "pmu/pmu.h"
#include "runner/debug_state.h"
#include "runner/identity.h"
#include "runner/isolation.h"
#include "runner/known_defects.h"
#include "runner/runner.h"
#include "runner/test.h"
#include "sched/sched.h"

#define FULL_NAME_MAX 96
#define EMULATED_SUFFIX "__emulated"

extern const struct test_case __tests_start[], __tests_end[];

static const struct run_options *options;
/* The tick rate and time slice the run started with: every test starts with them. */
static struct {
	unsigned int hz, slice_ticks;
} boot_timer;

struct totals {
	unsigned int passed, failed, skipped, xfailed, xpassed;
};

uint64_t test_seed(void)
{
	return options->seed;
}

/* "suite.name", cut to size: copied, not formatted (each instruction counts under KVM-PVM). */
static void full_name(const struct test_case *test, char *buf, size_t size)
{
	size_t suite = strlen(test->suite), name = strlen(test->name);

	if (suite + 1 + name >= size) {
		format(buf, size, "%s.%s", test->suite, test->name);
		return;
	}
	memcpy(buf, test->suite, suite);
	buf[suite] = '.';
	memcpy(buf + suite + 1, test->name, name + 1);
}

/* A manual test needs a glob whose suite part is spelled out: "selftest.*", not "*". */
static bool glob_names_suite(const char *glob, size_t length, const char *suite)
{
	size_t suite_length = strlen(suite);

	return length > suite_length && strncmp(glob, suite, suite_length) == 0 &&
	       glob[suite_length] == '.';
}

/*
 * Whether the glob's literal start (up to its first '*' or '?') begins "suite.name": most globs
 * name a suite, so most tests are told apart in a character or two without building the name.
 */
static bool literal_start_matches(const char *glob, size_t length, const struct test_case *test)
{
	const char *part = test->suite;
	bool in_name = false;

	for (size_t i = 0; i < length && glob[i] != '*' && glob[i] != '?'; i++) {
		if (!*part && !in_name) {
			if (glob[i] != '.')
				return false;
			part = test->name;
			in_name = true;
			continue;
		}
		if (glob[i] != *part++)
			return false;
	}
	return true;
}

/* glob_selects_fn for glob_list_unmatched(): one glob of tests= against __tests_start[index]. */
static bool glob_selects_test(const char *glob, size_t length, size_t index, const void *context)
{
	const struct test_case *test = &__tests_start[index];
	char name[FULL_NAME_MAX];

	(void)context;
	if (!literal_start_matches(glob, length, test))
		return false;
	full_name(test, name, sizeof(name));
	return glob_match(glob, length, name) &&
	       (!(test->flags & TEST_MANUAL) || glob_names_suite(glob, length, test->suite));
}

/* Whether tests= selects test, matched once by selection_compute(): on KVM-PVM each name's
 * format and match cost milliseconds, and a run asks about every test four times. */
#define SELECTION_MAX (8 * 4096)
static uint8_t selection[SELECTION_MAX / 8];

static bool test_matches(const struct test_case *test)
{
	const char *glob = options->tests;
	char name[FULL_NAME_MAX];
	bool named = false;

	if (!*glob)
		return !(test->flags & TEST_MANUAL);
	while (*glob) {
		const char *comma = strchr(glob, ',');
		size_t length = comma ? (size_t)(comma - glob) : strlen(glob);

		if (!literal_start_matches(glob, length, test)) {
			glob += length + (comma ? 1 : 0);
			continue;
		}
		if (!named) {
			full_name(test, name, sizeof(name));
			named = true;
		}
		if (glob_match(glob, length, name) &&
		    (!(test->flags & TEST_MANUAL) || glob_names_suite(glob, length, test->suite)))
			return true;
		glob += length + (comma ? 1 : 0);
	}
	return false;
}

static bool selection_compute(void)
{
	size_t count = (size_t)(__tests_end - __tests_start);

	if (count > SELECTION_MAX)
		return false;
	for (size_t i = 0; i < count; i++)
		if (test_matches(&__tests_start[i]))
			selection[i / 8] |= (uint8_t)(1u << (i % 8));
	return true;
}

static bool test_is_selected(const struct test_case *test)
{
	size_t i = (size_t)(test - __tests_start);

	return selection[i / 8] & (1u << (i % 8));
}

/* Tests of one suite are contiguous (the linker sorts .tests.SUITE); return the suite's end. */
static const struct test_case *suite_end(const struct test_case *first)
{
	const struct test_case *test = first;

	while (test < __tests_end && strcmp(test->suite, first->suite) == 0)
		test++;
	return test;
}

static unsigned int count_selected(const struct test_case *first, const struct test_case *end)
{
	unsigned int count = 0;

	for (const struct test_case *test = first; test < end; test++)
		count += test_is_selected(test);
	return count;
}

static void run_test_body(void *arg)
{
	((const struct test_case *)arg)->run();
}

static void report_isolation_end(const struct isolation_outcome *outcome)
{
	switch (outcome->end) {
	case ISOLATION_EXCEPTION:
		report_fail("unexpected exception %s (vector %u) error_code=0x%llx rip=0x%llx "
			    "cr2=0x%llx dr6=0x%llx",
			    exception_name(outcome->vector), outcome->vector,
			    (unsigned long long)outcome->error_code,
			    (unsigned long long)outcome->rip, (unsigned long long)outcome->cr2,
			    (unsigned long long)outcome->dr6);
		break;
	case ISOLATION_TIMEOUT:
		report_fail_kind("timed out", "timed out after %llu ms%s",
				 (unsigned long long)options->timeout_ms,
				 outcome->watchdog ? ", spinning with interrupts off: ended by the "
						     "NMI watchdog"
						   : "");
		break;
	default:
		break;
	}
}

/* Rules of the emulated CPU broken during the test fail it; its warnings are diagnostics. */
static void report_emulator_rules(void)
{
	char text[EMULATOR_VIOLATION_MAX];
	unsigned int count;

	count = emulator_take_warnings(text, sizeof(text));
	if (count)
		test_diag("emulated cpu: %u warning(s), the first: %s", count, text);
	count = emulator_take_violations(text, sizeof(text));
	if (count)
		report_fail("emulated cpu: %u rule violation(s), the first: %s", count, text);
}

/*
 * A test may take an exception from its owner (tests/kernel/lib/db_trace.h); it must give it
 * back.
 */
static void save_exception_handlers(exception_handler *saved)
{
	for (unsigned int vector = 0; vector < X86_EXC_COUNT; vector++)
		saved[vector] = exception_handler_of(vector);
}

static unsigned int restore_exception_handlers(const exception_handler *saved)
{
	unsigned int changed = 0;

	for (unsigned int vector = 0; vector < X86_EXC_COUNT; vector++) {
		if (exception_handler_of(vector) == saved[vector])
			continue;
		exception_register(vector, saved[vector]);
		changed++;
	}
	return changed;
}

/*
 * Tick, PMI, task-switch and interrupt hooks a test registers must not run in later tests: they
 * are saved before it and put back after it, as its exception handlers are.
 */
struct hooks {
	timer_hook timer[TIMER_HOOKS];
	const struct pmi_hooks *pmi[PMI_HOOKS];
	const struct switch_hooks *task_switch[SWITCH_HOOKS_MAX];
	interrupt_handler interrupt[VECTOR_COUNT];
};

/* How many of each kind restore_hooks() put back. */
struct hooks_changed {
	unsigned int timer, pmi, task_switch, interrupt;
};

static void save_hooks(struct hooks *saved)
{
	for (unsigned int i = 0; i < TIMER_HOOKS; i++)
		saved->timer[i] = timer_hook_at(i);
	for (unsigned int i = 0; i < PMI_HOOKS; i++)
		saved->pmi[i] = pmi_hooks_at(i);
	for (unsigned int i = 0; i < SWITCH_HOOKS_MAX; i++)
		saved->task_switch[i] = switch_hooks_at(i);
	for (unsigned int vector = X86_EXC_COUNT; vector < VECTOR_COUNT; vector++)
		saved->interrupt[vector] = interrupt_handler_of(vector);
}

static unsigned int restore_hooks(const struct hooks *saved, struct hooks_changed *changed)
{
	*changed = (struct hooks_changed){ 0 };
	for (unsigned int i = 0; i < TIMER_HOOKS; i++) {
		if (timer_hook_at(i) != saved->timer[i]) {
			timer_hook_set(i, saved->timer[i]);
			changed->timer++;
		}
	}
	for (unsigned int i = 0; i < PMI_HOOKS; i++) {
		if (pmi_hooks_at(i) != saved->pmi[i]) {
			pmi_hooks_set(i, saved->pmi[i]);
			changed->pmi++;
		}
	}
	for (unsigned int i = 0; i < SWITCH_HOOKS_MAX; i++) {
		if (switch_hooks_at(i) != saved->task_switch[i]) {
			switch_hooks_set(i, saved->task_switch[i]);
			changed->task_switch++;
		}
	}
	for (unsigned int vector = X86_EXC_COUNT; vector < VECTOR_COUNT; vector++) {
		if (interrupt_handler_of(vector) != saved->interrupt[vector]) {
			interrupt_register(vector, saved->interrupt[vector]);
			changed->interrupt++;
		}
	}
	return changed->timer + changed->pmi + changed->task_switch + changed->interrupt;
}

/*
 * What dr/, ds/ and pmu/ hold for indices with no live task: the next task given the index would
 * inherit it. They refuse such indices; this finds what got past them, reading tables alone
 * unless an index holds something (it runs around every test). Returns how many indices held
 * something.
 */
static unsigned int release_free_indices(void)
{
	unsigned int held = 0;

	for (unsigned int index = 0; index < SWITCH_TASKS_MAX; index++) {
		struct ds_target target = { false, index };
		bool any = false;

		if (switch_task_live(index))
			continue;
		if (dr_task_count(index))
			any |= dr_uninstall_all(index) != 0;
		if (ds_area_get(&target)) {
			ds_release_leftovers(index);
			any = true;
		}
		if (pmu_task_used(index))
			any |= pmu_release(index);
		held += any;
	}
	return held;
}

/*
 * A test that ends the boot on this platform (a known defect with ends): it runs only in a boot of
 * its own (the option alone), where the harness judges how the boot ended. Here it is a SKIP that
 * says so (docs/output.md, "Tests that end the boot").
 */
static bool skip_ending_test(const struct known_defect *ending, struct test_report *report)
{
	if (!ending || options->alone)
		return false;
	report_begin(report, 1);
	report_skip("runs alone: %s", ending->reason);
	return true;
}

/*
 * What a stepped instruction costs a test here, by ring (0 kernel, 1 user): the lowest of
 * whole tests' time over their steps in that ring, among tests with PACE_STEPS_MIN of them.
 * A test's time holds whatever its steps cost the flow besides the #DB (interrupts, system
 * calls and switches: a ring-3 step can cost a test several times a ring-0 one, docs/platforms.md),
 * and its other work, so each is an upper bound and the lowest the closest.
 */
#define PACE_STEPS_MIN 50
/*
 * The share of the time limit a paced test may need: the pace is the fastest test's, and a
 * test's own steps can cost more (PMIs, assists, ring 3): 2.7 times on KVM-PVM for a PEBS test
 * on every counter, with the fastest pace itself 2.1 times apart between boots
 * (docs/platforms.md): a sixth leaves room for both.
 */
#define PACE_LIMIT_SHARE 6
/*
 * A ring-3 step costs a test several times a ring-0 one (docs/platforms.md: 3.8 and about 10
 * in two KVM-PVM runs): until a ring-3 pace is known, a TEST_OBSERVING_USER test is paced at
 * ring 0's times this.
 */
#define USER_STEP_FACTOR 4
/* Steps over twice a test's declared count, and this many more, make its count stale. */
#define OBSERVING_STEPS_MIN 1000

struct pace {
	uint64_t cycles_per_step; /* 0: no test had PACE_STEPS_MIN steps in the ring yet */
	uint64_t steps; /* of the test that set it */
	bool probe; /* probe_pace() set it, not a test */
};
static struct pace paces[2];
static bool debug_state_clean; /* the last debug_state_check() found nothing to fix */

static void note_pace(uint64_t cycles, uint64_t kernel_steps, uint64_t user_steps, bool probe)
{
	uint64_t steps[2] = { kernel_steps, user_steps };

	for (unsigned int ring = 0; ring < 2; ring++) {
		uint64_t per_step;

		if (steps[ring] < PACE_STEPS_MIN)
			continue;
		per_step = cycles / steps[ring];
		if (!paces[ring].cycles_per_step || per_step < paces[ring].cycles_per_step)
			paces[ring] = (struct pace){ per_step, steps[ring], probe };
	}
}

/* The pace of ring, else ring 0's (at most ring 3's); NULL while none is known. */
static const struct pace *pace_of(unsigned int ring)
{
	if (paces[ring].cycles_per_step)
		return &paces[ring];
	return paces[0].cycles_per_step ? &paces[0] : NULL;
}

/*
 * Before the first paced test, when no test has set a pace: count a short ring-0 loop with
 * pmu/ (the emulated CPU steps each of its instructions) and take its pace. Without it that
 * test ran unpaced: as the first of a KVM-PVM boot on the zen4 profile one overran the limit.
 */
#define PACE_PROBE_ITERATIONS 100

static void probe_pace(void)
{
	struct pmu_event event = pmu_generic_event(pmu_info()->amd, PMU_GENERIC_INSTRUCTIONS);
	unsigned int task = sched_current()->index;
	uint64_t steps, start;

	event.kernel = true;
	if (!pmu_usable() || pmu_add_event(task, &event) < 0)
		return;
	steps = emulator_stats_all().steps;
	start = rdtsc_ordered();
	probe_instruction_loop(PACE_PROBE_ITERATIONS);
	note_pace(rdtsc_ordered() - start, emulator_stats_all().steps - steps, 0, true);
	pmu_release(task);
}

/*
 * A test that observes many instructions (TEST_OBSERVING) where the emulated CPU steps each: a
 * SKIP with the numbers when the mean cost of the steps so far says they need more than
 * 1/PACE_LIMIT_SHARE of the time limit. The name carries the model's suffix: the model decided it.
 */
static bool skip_slow_observing(const struct test_case *test, struct test_report *report,
				bool *emulated)
{
	bool user = test->flags & TEST_OBSERVES_USER;
	const struct pace *pace = pace_of(user ? 1 : 0);
	uint64_t per_step, need_ms;

	if (!test->observed || !emulator_active())
		return false;
	if (!pace) {
		probe_pace();
		pace = pace_of(user ? 1 : 0);
	}
	if (!pace)
		return false;
	per_step = pace->cycles_per_step * (user && pace == &paces[0] ? USER_STEP_FACTOR : 1);
	need_ms = test->observed * per_step / tsc_cycles_from_ms(1);
	if (need_ms <= options->timeout_ms / PACE_LIMIT_SHARE)
		return false;
	*emulated = true;
	report_begin(report, 1);
	report_skip("the emulated CPU takes %llu cycles a step here (%llu ring-%s steps "
		    "of %s): ~%llu instructions need ~%llu ms, over 1/6 of the %llu "
		    "ms limit",
		    (unsigned long long)per_step, (unsigned long long)pace->steps,
		    pace == &paces[1] ? "3"
		    : user	      ? "0*4"
				      : "0",
		    pace->probe ? "a probe" : "one test", (unsigned long long)test->observed,
		    (unsigned long long)need_ms, (unsigned long long)options->timeout_ms);
	return true;
}

/* A test whose outcome on this platform is chance (a known defect with runs "never"). */
static bool skip_never_running_test(const char *name, struct test_report *report)
{
	const struct known_defect *never =
		known_defects_never(known_defects, known_defects_count, platform_identity(), name);

	if (!never)
		return false;
	report_begin(report, 1);
	report_skip("%s", never->reason);
	return true;
}

/* In its own boot, a test that returns did not end it as known: strict, as an XPASS. */
static enum ktap_result judge_ending_test(const struct known_defect *ending,
					  struct test_report *report, enum ktap_result result)
{
	if (!ending || (result != KTAP_PASS && result != KTAP_XFAIL))
		return result;
	ktap_diag(1, "known defect did not occur: the boot did not end (%s: %s)", ending->ends,
		  ending->reason);
	format(report->reason, sizeof(report->reason), "%s", ending->reason);
	return KTAP_XPASS;
}

/*
 * A test may run the tick faster or change the slice (to take many rotations or slices in
 * little time); it must set them back. Either left changed would change every later test.
 */
static void restore_timer(bool judge)
{
	if (timer_hz() != boot_timer.hz) {
		if (judge)
			report_fail("the test left the timer at %u Hz; it was set back to %u Hz",
				    timer_hz(), boot_timer.hz);
		timer_set_hz(boot_timer.hz);
	}
	if (sched_slice_ticks() != boot_timer.slice_ticks) {
		if (judge)
			report_fail("the test left the time slice at %u ticks; it was set back "
				    "to %u",
				    sched_slice_ticks(), boot_timer.slice_ticks);
		sched_set_slice_ticks(boot_timer.slice_ticks);
	}
}

/*
 * The report lives in the caller's frame: its reason is printed after this returns. *emulated
 * says whether the emulated CPU served the test (its own checks around the test aside).
 */
static enum ktap_result run_test(const struct test_case *test, struct test_report *report,
				 bool *emulated)
{
	static struct report_expected expected[KNOWN_DEFECTS_PER_TEST]; /* outlives the report */
	char name[FULL_NAME_MAX];
	exception_handler handlers[X86_EXC_COUNT];
	static struct hooks hooks; /* 2 KiB: off the runner's stack */
	struct hooks_changed changed;
	const struct known_defect *ending;
	struct isolation_outcome outcome;
	struct emulator_stats before, after;
	uint64_t served, steps, start;
	unsigned int left;

	full_name(test, name, sizeof(name));
	ending =
		known_defects_ending(known_defects, known_defects_count, platform_identity(), name);
	*emulated = false;
	if (skip_never_running_test(name, report) || skip_ending_test(ending, report) ||
	    skip_slow_observing(test, report, emulated))
		return report_end(report);
	/* Before anything of the test runs: a log that ends here names the test it ended in. */
	ktap_diag(1, "running %s", name);
	report_begin(report, 1);
	report_expect_failures(report, expected,
			       known_defects_select(known_defects, known_defects_count,
						    platform_identity(), name, expected,
						    KNOWN_DEFECTS_PER_TEST));
	/* What one test leaves is the next one's start: checked once between them, after the
	 * first (before it too), and again before the next when the check found it dirty. */
	if (!debug_state_clean)
		debug_state_clean = debug_state_check("before");
	/* The runner is outside any handler; a depth left over would pass into every test. */
	if (this_cpu()->interrupt_depth) {
		report_fail(
			"interrupt depth %u before the test, outside any handler: a task switch "
			"lost it (reset to 0)",
			this_cpu()->interrupt_depth);
		this_cpu()->interrupt_depth = 0;
	}
	save_exception_handlers(handlers);
	save_hooks(&hooks);
	emulator_take_violations(NULL, 0); /* what came before the test is not its doing */
	served = emulator_stats_all().diverted;
	before = emulator_stats_all();
	start = rdtsc_ordered();
	isolation_name_test(name);
	runner_isolate(run_test_body, (void *)test, options->timeout_ms, &outcome);
	isolation_name_test("");
	after = emulator_stats_all();
	steps = after.steps - before.steps;
	note_pace(rdtsc_ordered() - start, steps - (after.user_steps - before.user_steps),
		  after.user_steps - before.user_steps, false);
	*emulated = emulator_stats_all().diverted != served || steps;
	if (steps > 2 * test->observed + OBSERVING_STEPS_MIN)
		ktap_diag(1,
			  "the emulated CPU stepped %llu instructions, TEST_OBSERVING says ~%llu",
			  (unsigned long long)steps, (unsigned long long)test->observed);
	report_isolation_end(&outcome);
	if (this_cpu_index() != 0) {
		if (outcome.end == ISOLATION_RETURNED)
			report_fail("the test left the runner on CPU %u; it was moved back",
				    this_cpu_index());
		sched_migrate(sched_current(), 0);
	}
	left = restore_exception_handlers(handlers);
	if (left && outcome.end == ISOLATION_RETURNED)
		report_fail("the test left %u exception handlers replaced; they were restored",
			    left);
	left = restore_hooks(&hooks, &changed);
	if (left && outcome.end == ISOLATION_RETURNED)
		report_fail("the test left %u hooks changed (timer %u, PMI %u, task switch %u, "
			    "interrupt %u); they were restored",
			    left, changed.timer, changed.pmi, changed.task_switch,
			    changed.interrupt);
	left = sched_kill_others();
	if (left && outcome.end == ISOLATION_RETURNED)
		report_fail("the test left %u tasks running or unjoined; they were ended", left);
	left = dr_uninstall_all(sched_current()->index) + dr_uninstall_all_system() +
	       dr_uninstall_all_pinned();
	if (left && outcome.end == ISOLATION_RETURNED)
		report_fail("the test left %u breakpoints installed; they were removed", left);
	dr_discard_hits(sched_current()->index); /* the next test reads only its own hits */
	left = ds_release_leftovers(sched_current()->index);
	if (left && outcome.end == ISOLATION_RETURNED)
		report_fail("the test left %u Debug Store users attached; they were detached",
			    left);
	if (pmu_release(sched_current()->index) && outcome.end == ISOLATION_RETURNED)
		report_fail("the test left counters in use; they were released");
	if (lbr_detach(sched_current()->index) == LBR_OK && outcome.end == ISOLATION_RETURNED)
		report_fail("the test left LBR recording attached; it was detached");
	left = release_free_indices();
	if (left && outcome.end == ISOLATION_RETURNED)
		report_fail(
			"the test left state on %u task indices with no live task (breakpoints, "
			"Debug Store areas, counters); it was released",
			left);
	restore_timer(outcome.end == ISOLATION_RETURNED);
	report_emulator_rules();
	debug_state_clean = debug_state_check("after");
	return judge_ending_test(ending, report, report_end(report));
}

static enum ktap_result run_suite(const struct test_case *first, const struct test_case *end,
				  struct totals *totals)
{
	enum ktap_result suite_result = KTAP_PASS;
	unsigned int number = 0;

	ktap_version(1);
	ktap_subtest(1, first->suite);
	ktap_plan(1, count_selected(first, end));
	for (const struct test_case *test = first; test < end; test++) {
		struct test_report report;
		enum ktap_result result;
		char name[FULL_NAME_MAX];
		bool emulated;
		uint64_t start = rdtsc_ordered();

		if (!test_is_selected(test))
			continue;
		result = run_test(test, &report, &emulated);
		if (options->durations)
			ktap_diag(1, "duration %s.%s %llu us", test->suite, test->name,
				  (unsigned long long)((rdtsc_ordered() - start) * 1000000 /
						       tsc_hz()));
		/* A result the emulated CPU took part in never passes for a hardware one. */
		format(name, sizeof(name), "%s%s", test->name, emulated ? EMULATED_SUFFIX : "");
		ktap_result(1, ++number, result, name, report.reason);
		if (result == KTAP_FAIL || result == KTAP_XPASS)
			suite_result = KTAP_FAIL; /* a "not ok" line makes the suite "not ok" */
		totals->failed += result == KTAP_FAIL;
		totals->xpassed += result == KTAP_XPASS;
		totals->xfailed += result == KTAP_XFAIL;
		totals->skipped += result == KTAP_SKIP;
		totals->passed += result == KTAP_PASS;
	}
	return suite_result;
}

static void list_tests(void)
{
	char name[FULL_NAME_MAX];

	for (const struct test_case *test = __tests_start; test < __tests_end; test++) {
		if (!test_is_selected(test))
			continue;
		full_name(test, name, sizeof(name));
		ktap_diag(0, "test %s%s", name, test->flags & TEST_MANUAL ? " (manual)" : "");
	}
	ktap_plan(0, 0);
}

/* Every name must be valid KTAP: a bad one is a bug in the kernel, found before any test runs. */
void runner_usage_error(const char *error)
{
	char usage[512];

	ktap_diag(0, "error: %s", error);
	options_usage(usage, sizeof(usage));
	ktap_diag(0, "valid options: %s", usage);
	ktap_bail_out("invalid kernel command line");
}

enum exit_code runner_run(const struct run_options *run_options)
{
	struct totals totals = { 0 };
	unsigned int suites = 0, number = 0;
	char error[CMDLINE_STRING_MAX + 64];
	const char *unmatched;
	size_t length;

	options = run_options;
	boot_timer.hz = timer_hz();
	boot_timer.slice_ticks = sched_slice_ticks();
	if (!selection_compute()) {
		ktap_bail_out("more tests than SELECTION_MAX");
		return EXIT_BAIL_OUT;
	}
	unmatched = glob_list_unmatched(options->tests, (size_t)(__tests_end - __tests_start),
					glob_selects_test, NULL, &length);
	if (unmatched) {
		format(error, sizeof(error), "option 'tests': '%.*s' selects no test", (int)length,
		       unmatched);
		runner_usage_error(error);
		return EXIT_USAGE;
	}
	for (const struct test_case *first = __tests_start; first < __tests_end;
	     first = suite_end(first))
		suites += count_selected(first, suite_end(first)) != 0;
	if (suites == 0) {
		format(error, sizeof(error), "option 'tests': '%s' selects no test",
		       options->tests);
		runner_usage_error(error);
		return EXIT_USAGE;
	}
	if (options->alone && count_selected(__tests_start, __tests_end) != 1) {
		format(error, sizeof(error),
		       "option 'alone': tests= must select exactly one test, it selects %u",
		       count_selected(__tests_start, __tests_end));
		runner_usage_error(error);
		return EXIT_USAGE;
	}
	if (options->list) {
		list_tests();
		return EXIT_PASS;
	}
	if (options->kernel_fault)
		ud2(); /* outside any test: must bail out with a register dump */
	platform_identity_report();
	ktap_diag(0, "known defects: %u of %zu entries apply to %s",
		  known_defects_on(known_defects, known_defects_count, platform_identity()),
		  known_defects_count, platform_identity());
	isolation_watchdog_start(!options->watchdog_off);
	debug_state_init();
	debug_state_describe();
	ktap_plan(0, suites);
	for (const struct test_case *first = __tests_start; first < __tests_end;
	     first = suite_end(first)) {
		const struct test_case *end = suite_end(first);

		if (count_selected(first, end) == 0)
			continue;
		ktap_result(0, ++number, run_suite(first, end, &totals), first->suite, NULL);
	}
	ktap_diag(0, "totals: pass=%u fail=%u skip=%u xfail=%u xpass=%u", totals.passed,
		  totals.failed, totals.skipped, totals.xfailed, totals.xpassed);
	return totals.failed || totals.xpassed ? EXIT_FAIL : EXIT_PASS;
}
