/* SPDX-License-Identifier: MIT */
/* What a kernel test includes: registration, checks, skipping and isolation. */
#ifndef RUNNER_TEST_H
#define RUNNER_TEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/report.h"

struct test_case {
	const char *suite;
	const char *name;
	void (*run)(void);
	unsigned long flags;
	uint64_t observed; /* instructions it has counted or traced, about (TEST_OBSERVING) */
} __attribute__((aligned(8)));

/* Run only when a tests= glob names the suite explicitly: for tests meant to fail. */
#define TEST_MANUAL (1ul << 0)
/* What a TEST_OBSERVING test observes is mostly ring-3 code (TEST_OBSERVING_USER). */
#define TEST_OBSERVES_USER (1ul << 1)

/*
 * TEST(suite, name) { ... } registers a test in section .tests.SUITE; the linker sorts those
 * sections by name, so each suite's tests are contiguous, in link order. suite and name are
 * pasted into C identifiers, so they are KTAP names ([A-Za-z0-9_]) by construction.
 */
#define TEST_CASE(suite_, name_, flags_, observed_)                               \
	static void test_##suite_##_##name_(void);                                \
	static const struct test_case test_case_##suite_##_##name_                \
		__attribute__((used, section(".tests." #suite_), aligned(8))) = { \
			.suite = #suite_,                                         \
			.name = #name_,                                           \
			.run = test_##suite_##_##name_,                           \
			.flags = (flags_),                                        \
			.observed = (observed_),                                  \
		};                                                                \
	static void test_##suite_##_##name_(void)
#define TEST_FLAGS(suite, name, flags) TEST_CASE(suite, name, flags, 0)
#define TEST(suite, name) TEST_CASE(suite, name, 0, 0)
/*
 * A test that counts or traces about `instructions` instructions in the default budget. Where an
 * emulated CPU plays the PMU and Debug Store, it steps each one; the runner skips the test, with
 * the numbers, when the steps measured so far in the same ring say they need more than a sixth
 * of the time limit (docs/platforms.md has the pace of each platform). Silicon, and a model fast
 * enough (TCG), run it. TEST_OBSERVING_USER: the instructions are mostly ring 3's.
 */
#define TEST_OBSERVING(suite, name, instructions) TEST_CASE(suite, name, 0, instructions)
#define TEST_OBSERVING_USER(suite, name, instructions) \
	TEST_CASE(suite, name, TEST_OBSERVES_USER, instructions)

/* check(cond, fmt, ...): count a check; on failure print the expression and the message. */
#define check(cond, ...) report_check(!!(cond), __FILE__, __LINE__, #cond, __VA_ARGS__)
/* check_eq(expected, actual): on failure print both values, decimal and hex. */
#define check_eq(expected, actual)                                                                 \
	report_check_equal((uint64_t)(expected), (uint64_t)(actual), #expected, #actual, __FILE__, \
			   __LINE__)

/* check_text(expected, actual): strings; on failure print both, quoted. */
#define check_text(expected, actual) \
	report_check_text((expected), (actual), #expected, #actual, __FILE__, __LINE__)

/* A diagnostic line of the current test. */
#define test_diag(...) report_diag(__VA_ARGS__)

/* End the test now as skipped, with the exact reason. */
void __attribute__((noreturn, format(printf, 1, 2))) test_skip(const char *fmt, ...);
/* End the test now as failed, with a reason: for a failure that makes the rest meaningless. */
void __attribute__((noreturn, format(printf, 1, 2))) test_abort(const char *fmt, ...);

/* The run's seed (seed= or the TSC): randomised tests derive their choices from it. */
uint64_t test_seed(void);

/* How a function run by runner_isolate() ended. */
enum isolation_end {
	ISOLATION_RETURNED,
	ISOLATION_EXCEPTION, /* an exception nobody expected: vector, error code, rip, cr2, dr6 */
	ISOLATION_TIMEOUT,
	ISOLATION_SKIPPED,
	ISOLATION_ABORTED,
};

struct isolation_outcome {
	enum isolation_end end;
	unsigned int vector;
	uint64_t error_code, rip, cr2, dr6;
	uint64_t handler_stack; /* where the exception frame was: tells IST stacks apart */
	bool watchdog; /* a timeout the NMI watchdog ended: interrupts were off, no tick came */
};

/*
 * Run fn(arg) with its own time limit, as the runner runs a test: an unexpected exception or an
 * overrun ends fn and is described in *outcome; the caller goes on. Checks made by fn count
 * for the current test.
 */
void runner_isolate(void (*fn)(void *), void *arg, uint64_t timeout_ms,
		    struct isolation_outcome *outcome);

#endif
