/* SPDX-License-Identifier: MIT */
/* Checks and verdicts of the current test. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include "lib/format.h"
#include "lib/ktap.h"
#include "lib/report.h"
#include "lib/string.h"

#define MESSAGE_MAX 256

static struct test_report *current;

void report_begin(struct test_report *report, unsigned int depth)
{
	memset(report, 0, sizeof(*report));
	report->depth = depth;
	current = report;
}

struct test_report *report_current(void)
{
	return current;
}

void report_expect_failures(struct test_report *report, struct report_expected *expected,
			    unsigned int count)
{
	for (unsigned int i = 0; i < count; i++)
		expected[i].failed = 0;
	report->expected = expected;
	report->expected_count = count;
}

/* Whether text is left followed by " == " and right (right NULL: text is exactly left). */
static bool text_is(const char *text, const char *left, const char *right)
{
	size_t length = strlen(left);

	if (strncmp(text, left, length) != 0)
		return false;
	if (!right)
		return text[length] == '\0';
	return strncmp(text + length, " == ", 4) == 0 && strcmp(text + length + 4, right) == 0;
}

/*
 * A failed check: a known failure when an expected failure names it, and its value when it names
 * one (its reason printed at the first), else a failure.
 */
static void count_failed_check(const char *left, const char *right, const char *got)
{
	for (unsigned int i = 0; i < current->expected_count; i++) {
		struct report_expected *expected = &current->expected[i];

		if (!text_is(expected->check, left, right))
			continue;
		if (expected->got && strcmp(expected->got, got) != 0)
			continue;
		if (expected->failed++ == 0)
			ktap_diag(current->depth, "  known defect of this platform: %s",
				  expected->reason);
		current->known_failures++;
		return;
	}
	current->failures++;
}

bool report_check(bool ok, const char *file, int line, const char *expression, const char *fmt, ...)
{
	char message[MESSAGE_MAX];
	va_list args;

	current->checks++;
	if (ok)
		return true;
	va_start(args, fmt);
	vformat(message, sizeof(message), fmt, args);
	va_end(args);
	ktap_diag(current->depth, "%s:%d: check failed: %s%s%s", file, line, expression,
		  *message ? ": " : "", message);
	count_failed_check(expression, NULL, "");
	return false;
}

bool report_check_equal(uint64_t expected, uint64_t actual, const char *expected_text,
			const char *actual_text, const char *file, int line)
{
	char got[24];

	current->checks++;
	if (expected == actual)
		return true;
	ktap_diag(current->depth, "%s:%d: check failed: %s == %s", file, line, expected_text,
		  actual_text);
	ktap_diag(current->depth, "  expected %llu (0x%llx), got %llu (0x%llx)",
		  (unsigned long long)expected, (unsigned long long)expected,
		  (unsigned long long)actual, (unsigned long long)actual);
	format(got, sizeof(got), "%llu", (unsigned long long)actual);
	count_failed_check(expected_text, actual_text, got);
	return false;
}

bool report_check_text(const char *expected, const char *actual, const char *expected_text,
		       const char *actual_text, const char *file, int line)
{
	current->checks++;
	if (strcmp(expected, actual) == 0)
		return true;
	ktap_diag(current->depth, "%s:%d: check failed: %s == %s", file, line, expected_text,
		  actual_text);
	ktap_diag(current->depth, "  expected '%s'", expected);
	ktap_diag(current->depth, "  got '%s'", actual);
	count_failed_check(expected_text, actual_text, actual);
	return false;
}

/* A diagnostic line of the current test, at its depth (top level outside a test). */
static void vdiag(const char *fmt, va_list args)
{
	ktap_vdiag(current ? current->depth : 0, fmt, args);
}

void report_fail(const char *fmt, ...)
{
	va_list args;

	current->failures++;
	va_start(args, fmt);
	vdiag(fmt, args);
	va_end(args);
}

void report_fail_kind(const char *kind, const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	vdiag(fmt, args);
	va_end(args);
	count_failed_check(kind, NULL, "");
}

void report_skip(const char *fmt, ...)
{
	va_list args;

	current->skipped = true;
	va_start(args, fmt);
	vformat(current->reason, sizeof(current->reason), fmt, args);
	va_end(args);
}

void report_diag(const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	vdiag(fmt, args);
	va_end(args);
}

/* Every expected failure occurred: XFAIL with the first reason; else XPASS, saying which not. */
static enum ktap_result report_end_expected(struct test_report *report)
{
	const struct report_expected *missing = NULL;

	for (unsigned int i = 0; i < report->expected_count; i++) {
		const struct report_expected *expected = &report->expected[i];

		if (expected->failed)
			continue;
		if (expected->got)
			ktap_diag(report->depth,
				  "known defect did not occur: check '%s' never got '%s' (%s)",
				  expected->check, expected->got, expected->reason);
		else
			ktap_diag(report->depth,
				  "known defect did not occur: check '%s' never failed (%s)",
				  expected->check, expected->reason);
		missing = missing ? missing : expected;
	}
	format(report->reason, sizeof(report->reason), "%s",
	       missing ? missing->reason : report->expected[0].reason);
	return missing ? KTAP_XPASS : KTAP_XFAIL;
}

enum ktap_result report_end(struct test_report *report)
{
	if (report->failures)
		return KTAP_FAIL;
	if (report->skipped)
		return KTAP_SKIP;
	if (report->expected_count)
		return report_end_expected(report);
	if (report->checks == 0) {
		ktap_diag(report->depth, "the test made no checks");
		return KTAP_FAIL;
	}
	return KTAP_PASS;
}
