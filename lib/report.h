/* SPDX-License-Identifier: MIT */
/* Checks inside a test and the test's outcome: bookkeeping over KTAP diagnostics, no control flow.
 */
#ifndef LIB_REPORT_H
#define LIB_REPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/ktap.h"

#define REPORT_REASON_MAX 160

/*
 * A check that is expected to fail on this platform: a known defect (kvm-unit-tests'
 * report_kfail). check is the expression exactly as a failure prints it after "check failed: "
 * ("EXPECTED == ACTUAL" for report_check_equal); its failure counts as known, not as a failure.
 */
struct report_expected {
	const char *check;
	const char *got; /* the actual value as the failure prints it after "got"; NULL: any */
	const char *reason;
	unsigned int failed; /* failures of the check so far */
};

struct test_report {
	unsigned int depth; /* KTAP depth of the test's diagnostics */
	unsigned int checks; /* checks evaluated */
	unsigned int failures; /* checks that failed, plus report_fail() calls */
	unsigned int known_failures; /* failed checks that an expected failure names */
	bool skipped;
	struct report_expected *expected; /* the test's known defects on this platform */
	unsigned int expected_count;
	char reason[REPORT_REASON_MAX]; /* the SKIP, XFAIL or XPASS reason */
};

/* Make report the current one, emptied. Checks go to the current report. */
void report_begin(struct test_report *report, unsigned int depth);
struct test_report *report_current(void);

/* After report_begin(): these checks are expected to fail (their failed counts are reset). */
void report_expect_failures(struct test_report *report, struct report_expected *expected,
			    unsigned int count);

/* Count a check; when it fails print "FILE:LINE: check failed: EXPRESSION: MESSAGE". */
bool report_check(bool ok, const char *file, int line, const char *expression, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* Count a check; when expected != actual print both, in decimal and hex. */
bool report_check_equal(uint64_t expected, uint64_t actual, const char *expected_text,
			const char *actual_text, const char *file, int line);

/* Count a check; when the strings differ print both, quoted ("got 'ACTUAL'"). */
bool report_check_text(const char *expected, const char *actual, const char *expected_text,
		       const char *actual_text, const char *file, int line);

/* A failure that is not a check (an exception, a timeout, leaked state): always printed. */
void report_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * The same, for a failure a known-defect entry may name as if it were a check, by kind (the
 * runner's "timed out"): a platform where the test cannot finish in time is then an XFAIL.
 */
void report_fail_kind(const char *kind, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void report_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void report_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * The verdict: FAIL when anything failed but expected checks; SKIP when skipped; with expected
 * failures, XFAIL when each of them failed, else XPASS, with a diagnostic for each that did not
 * (strict: a known defect that went away is reported, never absorbed); FAIL, with a diagnostic,
 * when the test made no check at all (a test that cannot fail is a defect); PASS otherwise.
 */
enum ktap_result report_end(struct test_report *report);

#endif
