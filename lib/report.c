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

bool report_check(bool ok, const char *file, int line, const char *expression, const char *fmt, ...)
{
	char message[MESSAGE_MAX];
	va_list args;

	current->checks++;
	if (ok)
		return true;
	current->failures++;
	va_start(args, fmt);
	vformat(message, sizeof(message), fmt, args);
	va_end(args);
	ktap_diag(current->depth, "%s:%d: check failed: %s%s%s", file, line, expression,
		  *message ? ": " : "", message);
	return false;
}

bool report_check_equal(uint64_t expected, uint64_t actual, const char *expected_text,
			const char *actual_text, const char *file, int line)
{
	current->checks++;
	if (expected == actual)
		return true;
	current->failures++;
	ktap_diag(current->depth, "%s:%d: check failed: %s == %s", file, line, expected_text,
		  actual_text);
	ktap_diag(current->depth, "  expected %llu (0x%llx), got %llu (0x%llx)",
		  (unsigned long long)expected, (unsigned long long)expected,
		  (unsigned long long)actual, (unsigned long long)actual);
	return false;
}

void report_fail(const char *fmt, ...)
{
	char message[MESSAGE_MAX];
	va_list args;

	current->failures++;
	va_start(args, fmt);
	vformat(message, sizeof(message), fmt, args);
	va_end(args);
	ktap_diag(current->depth, "%s", message);
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
	char message[MESSAGE_MAX];
	va_list args;

	va_start(args, fmt);
	vformat(message, sizeof(message), fmt, args);
	va_end(args);
	ktap_diag(current ? current->depth : 0, "%s", message);
}

enum ktap_result report_end(struct test_report *report)
{
	if (report->failures)
		return KTAP_FAIL;
	if (report->skipped)
		return KTAP_SKIP;
	if (report->checks == 0) {
		ktap_diag(report->depth, "the test made no checks");
		return KTAP_FAIL;
	}
	return KTAP_PASS;
}
