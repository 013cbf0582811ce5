/* SPDX-License-Identifier: MIT */
/* Host tests of lib/report.c: check counting, failure diagnostics and the verdict rules. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "lib/console.h"
#include "lib/report.h"
#include "tests/host/console_capture.h"
#include "tests/host/host_test.h"

HOST_TEST(report_begin_empties_the_report_and_makes_it_current)
{
	struct test_report report;

	memset(&report, 0xa5, sizeof(report));
	report_begin(&report, 1);
	host_check(report_current() == &report);
	host_check_eq_u64(1, report.depth);
	host_check_eq_u64(0, report.checks);
	host_check_eq_u64(0, report.failures);
	host_check(!report.skipped);
	host_check_str("", report.reason);
}

HOST_TEST(report_check_that_passes_counts_and_prints_nothing)
{
	struct test_report report;

	console_capture_start();
	report_begin(&report, 1);
	host_check(report_check(true, "t.c", 10, "x == 1", "x is %d", 1));
	host_check(report_check(true, "t.c", 11, "y", " "));
	host_check_eq_u64(2, report.checks);
	host_check_eq_u64(0, report.failures);
	host_check_str("", console_capture_text());
}

HOST_TEST(report_check_that_fails_prints_file_line_expression_and_message)
{
	struct test_report report;

	console_capture_start();
	report_begin(&report, 1);
	host_check(!report_check(false, "tests/kernel/dr.c", 42, "dr6 & DR6_B0", "dr6=%#x", 0x10));
	host_check(!report_check(false, "a.c", 7, "ok", "%s", ""));
	host_check_eq_u64(2, report.checks);
	host_check_eq_u64(2, report.failures);
	host_check_str("    # tests/kernel/dr.c:42: check failed: dr6 & DR6_B0: dr6=0x10\n"
		       "    # a.c:7: check failed: ok\n",
		       console_capture_text());
	host_check_eq_u64(2, console_lines());
}

HOST_TEST(report_check_equal_prints_both_values_in_decimal_and_hex)
{
	struct test_report report;

	console_capture_start();
	report_begin(&report, 1);
	host_check(report_check_equal(13, 13, "13", "vector", "a.c", 1));
	host_check_str("", console_capture_text());
	host_check(!report_check_equal(13, 0, "13", "vector", "tests/kernel/arch.c", 99));
	host_check_str("    # tests/kernel/arch.c:99: check failed: 13 == vector\n"
		       "    #   expected 13 (0xd), got 0 (0x0)\n",
		       console_capture_text());
	host_check_eq_u64(2, report.checks);
	host_check_eq_u64(1, report.failures);

	console_capture_start();
	report_begin(&report, 0);
	host_check(!report_check_equal(UINT64_MAX, 0x8000000000000000ull, "UINT64_MAX", "top",
				       "b.c", 3));
	host_check_str("# b.c:3: check failed: UINT64_MAX == top\n"
		       "#   expected 18446744073709551615 (0xffffffffffffffff), "
		       "got 9223372036854775808 (0x8000000000000000)\n",
		       console_capture_text());
	host_check_eq_u64(1, report.checks);
	host_check_eq_u64(1, report.failures);
}

HOST_TEST(report_fail_counts_a_failure_but_not_a_check)
{
	struct test_report report;

	console_capture_start();
	report_begin(&report, 1);
	report_fail("unexpected #%s at %#lx", "PF", 0xdeadul);
	host_check_eq_u64(0, report.checks);
	host_check_eq_u64(1, report.failures);
	host_check_str("    # unexpected #PF at 0xdead\n", console_capture_text());
}

HOST_TEST(report_skip_keeps_the_reason_and_prints_nothing)
{
	struct test_report report;
	char long_reason[2 * REPORT_REASON_MAX];

	console_capture_start();
	report_begin(&report, 1);
	report_skip("CPU has no %s", "BTS");
	host_check(report.skipped);
	host_check_str("CPU has no BTS", report.reason);
	host_check_eq_u64(0, report.failures);
	host_check_str("", console_capture_text());

	memset(long_reason, 'r', sizeof(long_reason) - 1);
	long_reason[sizeof(long_reason) - 1] = '\0';
	report_skip("%s", long_reason);
	host_check_eq_u64(REPORT_REASON_MAX - 1, strlen(report.reason));
}

HOST_TEST(report_diag_prints_at_the_current_depth)
{
	struct test_report report;

	console_capture_start();
	report_begin(&report, 2);
	report_diag("metric x median=%d", 5);
	host_check_str("        # metric x median=5\n", console_capture_text());
	host_check_eq_u64(0, report.checks);
	host_check_eq_u64(0, report.failures);
}

/* Each row drives a fresh report through the calls, then checks report_end(). */
static const struct {
	const char *what;
	unsigned int passes;
	unsigned int check_failures;
	unsigned int fails;
	bool skip;
	enum ktap_result verdict;
	bool says_no_checks;
} report_end_cases[] = {
	{ "nothing at all", 0, 0, 0, false, KTAP_FAIL, true },
	{ "one passing check", 1, 0, 0, false, KTAP_PASS, false },
	{ "many passing checks", 5, 0, 0, false, KTAP_PASS, false },
	{ "one failing check", 0, 1, 0, false, KTAP_FAIL, false },
	{ "passes and one failing check", 3, 1, 0, false, KTAP_FAIL, false },
	{ "report_fail alone", 0, 0, 1, false, KTAP_FAIL, false },
	{ "report_fail after passes", 2, 0, 1, false, KTAP_FAIL, false },
	{ "skip without checks", 0, 0, 0, true, KTAP_SKIP, false },
	{ "skip after passes", 2, 0, 0, true, KTAP_SKIP, false },
	{ "skip after a failing check", 1, 1, 0, true, KTAP_FAIL, false },
	{ "skip after report_fail", 0, 0, 1, true, KTAP_FAIL, false },
};

HOST_TEST(report_end_applies_the_verdict_rules)
{
	for (size_t i = 0; i < sizeof(report_end_cases) / sizeof(report_end_cases[0]); i++) {
		struct test_report report;
		enum ktap_result verdict;
		bool said_no_checks;

		console_capture_start();
		report_begin(&report, 1);
		for (unsigned int n = 0; n < report_end_cases[i].passes; n++)
			report_check(true, "t.c", 1, "pass", " ");
		for (unsigned int n = 0; n < report_end_cases[i].check_failures; n++)
			report_check(false, "t.c", 2, "fail", " ");
		for (unsigned int n = 0; n < report_end_cases[i].fails; n++)
			report_fail("failed");
		if (report_end_cases[i].skip)
			report_skip("skipped");
		verdict = report_end(&report);
		said_no_checks = strstr(console_capture_text(), "the test made no checks") != NULL;
		host_checkf(verdict == report_end_cases[i].verdict,
			    "%s: expected verdict %d, got %d", report_end_cases[i].what,
			    report_end_cases[i].verdict, verdict);
		host_checkf(said_no_checks == report_end_cases[i].says_no_checks,
			    "%s: \"the test made no checks\" %s", report_end_cases[i].what,
			    said_no_checks ? "printed" : "missing");
	}
}

HOST_TEST(report_end_says_no_checks_at_the_reports_depth)
{
	struct test_report outer;
	struct test_report report;

	console_capture_start();
	report_begin(&report, 1);
	report_begin(&outer, 0);
	host_check_eq_u64(KTAP_FAIL, report_end(&report));
	host_check_str("    # the test made no checks\n", console_capture_text());
	host_check_eq_u64(KTAP_FAIL, report_end(&outer));
}
