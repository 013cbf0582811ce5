/* SPDX-License-Identifier: MIT */
/* Host tests of known defects: the check-level matcher, XFAIL and XPASS, and what applies where. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "lib/glob.h"
#include "lib/ktap.h"
#include "lib/report.h"
#include "runner/known_defects.h"
#include "tests/host/console_capture.h"
#include "tests/host/host_test.h"

/* The general-detect test under TCG: two checks fail, each a known defect. */
static struct report_expected gd[] = {
	{ .check = "1 == count", .reason = "no #DB" },
	{ .check = "0 == read_dr7() & DR7_GD", .reason = "GD stays set" },
};

static void expect_gd(struct test_report *report)
{
	report_begin(report, 1);
	report_expect_failures(report, gd, 2);
}

HOST_TEST(known_defects_every_named_check_failing_is_xfail_with_the_first_reason)
{
	struct test_report report;

	console_capture_start();
	expect_gd(&report);
	host_check(!report_check_equal(1, 0, "1", "count", "dr.c", 80));
	host_check(!report_check_equal(1, 0, "1", "count", "dr.c", 80)); /* again, in a loop */
	host_check(report_check_equal(0, 0, "0", "other", "dr.c", 81));
	host_check(!report_check_equal(0, 0x2000, "0", "read_dr7() & DR7_GD", "dr.c", 83));
	host_check_eq_u64(0, report.failures);
	host_check_eq_u64(3, report.known_failures);
	host_check_eq_u64(KTAP_XFAIL, report_end(&report));
	host_check_str("no #DB", report.reason);
	/* The failure is printed as ever, the reason once per entry, at its first failure. */
	host_check_str("    # dr.c:80: check failed: 1 == count\n"
		       "    #   expected 1 (0x1), got 0 (0x0)\n"
		       "    #   known defect of this platform: no #DB\n"
		       "    # dr.c:80: check failed: 1 == count\n"
		       "    #   expected 1 (0x1), got 0 (0x0)\n"
		       "    # dr.c:83: check failed: 0 == read_dr7() & DR7_GD\n"
		       "    #   expected 0 (0x0), got 8192 (0x2000)\n"
		       "    #   known defect of this platform: GD stays set\n",
		       console_capture_text());
}

HOST_TEST(known_defects_another_failed_check_in_the_same_test_is_a_failure)
{
	struct test_report report;

	console_capture_start();
	expect_gd(&report);
	report_check_equal(1, 0, "1", "count", "dr.c", 80);
	report_check_equal(0, 0x2000, "0", "read_dr7() & DR7_GD", "dr.c", 83);
	report_check_equal(0x2000, 0, "DR6_BD", "hits[0].dr6 & DR6_BD", "dr.c", 82);
	host_check_eq_u64(1, report.failures);
	host_check_eq_u64(KTAP_FAIL, report_end(&report));
}

HOST_TEST(known_defects_an_exception_in_a_known_defect_test_is_a_failure)
{
	struct test_report report;

	console_capture_start();
	expect_gd(&report);
	report_check_equal(1, 0, "1", "count", "dr.c", 80);
	report_check_equal(0, 0x2000, "0", "read_dr7() & DR7_GD", "dr.c", 83);
	report_fail("unexpected exception #GP (vector 13)");
	host_check_eq_u64(KTAP_FAIL, report_end(&report));
}

HOST_TEST(known_defects_a_named_check_that_passes_is_xpass_saying_which)
{
	struct test_report report;

	console_capture_start();
	expect_gd(&report);
	host_check(report_check_equal(1, 1, "1", "count", "dr.c", 80));
	host_check(report_check_equal(0, 0, "0", "read_dr7() & DR7_GD", "dr.c", 83));
	host_check_eq_u64(KTAP_XPASS, report_end(&report));
	host_check_str("no #DB", report.reason);
	host_check(
		strstr(console_capture_text(),
		       "# known defect did not occur: check '1 == count' never failed (no #DB)") !=
		NULL);
}

HOST_TEST(known_defects_one_of_two_named_checks_failing_is_still_xpass)
{
	struct test_report report;

	console_capture_start();
	expect_gd(&report);
	report_check_equal(1, 0, "1", "count", "dr.c", 80);
	report_check_equal(0, 0, "0", "read_dr7() & DR7_GD", "dr.c", 83);
	host_check_eq_u64(KTAP_XPASS, report_end(&report));
	host_check_str("GD stays set", report.reason);
}

HOST_TEST(known_defects_check_matches_the_expression_without_its_message)
{
	static struct report_expected hit[] = { { .check = "count == 1",
						  .reason = "no data watchpoints" } };
	struct test_report report;

	console_capture_start();
	report_begin(&report, 1);
	report_expect_failures(&report, hit, 1);
	report_check(false, "dr_fire.c", 24, "count == 1", "write, slot %u: %u hits", 0u, 0u);
	host_check_eq_u64(KTAP_XFAIL, report_end(&report));

	/* The printed text is what matches: check_eq(count, 1) prints the same, and is the same. */
	report_begin(&report, 1);
	report_expect_failures(&report, hit, 1);
	report_check_equal(1, 0, "count", "1", "dr_fire.c", 25);
	host_check_eq_u64(KTAP_XFAIL, report_end(&report));

	/* Neither a longer nor a shorter expression, nor the operands swapped, matches. */
	report_begin(&report, 1);
	report_expect_failures(&report, hit, 1);
	report_check(false, "dr_fire.c", 24, "count == 10", " ");
	report_check(false, "dr_fire.c", 24, "count == ", " ");
	report_check_equal(1, 0, "1", "count", "dr_fire.c", 25);
	report_check_equal(1, 0, "count ", "= 1", "dr_fire.c", 25);
	report_check_equal(1, 0, "count", "1 ", "dr_fire.c", 25);
	host_check_eq_u64(5, report.failures);
	host_check_eq_u64(KTAP_FAIL, report_end(&report));
}

HOST_TEST(known_defects_a_skip_is_a_skip_and_a_report_without_them_is_unchanged)
{
	struct test_report report;

	console_capture_start();
	expect_gd(&report);
	report_check_equal(1, 0, "1", "count", "dr.c", 80);
	report_skip("CR4.DE is clear");
	host_check_eq_u64(KTAP_SKIP, report_end(&report));

	report_begin(&report, 1);
	host_check(report.expected == NULL && report.expected_count == 0);
	report_check_equal(1, 0, "1", "count", "dr.c", 80);
	host_check_eq_u64(KTAP_FAIL, report_end(&report));
}

HOST_TEST(known_defects_ktap_writes_xfail_as_ok_and_xpass_as_not_ok)
{
	console_capture_start();
	ktap_result(1, 6, KTAP_XFAIL, "rdmsr_safe_reports_gp", "TCG: no #GP");
	ktap_result(1, 7, KTAP_XPASS, "general_detect", "TCG: no GD");
	ktap_result(1, 8, KTAP_XFAIL, "no_reason", NULL);
	console_capture_check("    ok 6 rdmsr_safe_reports_gp # XFAIL TCG: no #GP\n"
			      "    not ok 7 general_detect # XPASS TCG: no GD\n"
			      "    ok 8 no_reason # XFAIL no reason given\n");
}

#define DEFECT(platform_, test_, check_, reason_)                                        \
	{                                                                                \
		.platform = platform_, .test = test_, .check = check_, .reason = reason_ \
	}

static const struct known_defect table[] = {
	DEFECT("tcg", "dr.general_detect", "1 == count", "TCG: no #DB"),
	DEFECT("kvm-pvm", "dr.watch", "count == 1", "PVM: no watchpoints"),
	DEFECT("kvm-pvm", "dr.general_detect", "x == y", "PVM: something"),
	DEFECT("kvm-*", "dr.any_kvm", "a == b", "every KVM"),
	DEFECT("metal-GenuineIntel-6-*", "dr.watch", "b == c", "family 6"),
	{ .platform = "tcg", .test = "dr.icebp", .ends = "hang", .reason = "TCG hangs" },
	DEFECT("kvm-pvm", "dr.icebp", "a == b", "PVM: wrong DR6"),
	{ .platform = "kvm-pvm", .test = "pmu.pmi", .runs = "never", .reason = "PVM: chance" },
};
#define TABLE_SIZE (sizeof(table) / sizeof(table[0]))

static unsigned int select_for(const char *identity, const char *test,
			       struct report_expected *expected)
{
	return known_defects_select(table, TABLE_SIZE, identity, test, expected,
				    KNOWN_DEFECTS_PER_TEST);
}

HOST_TEST(known_defects_a_kvm_pvm_defect_never_applies_on_kvm_vmx)
{
	struct report_expected expected[KNOWN_DEFECTS_PER_TEST];

	host_check_eq_u64(1, select_for("kvm-pvm", "dr.watch", expected));
	host_check_str("count == 1", expected[0].check);
	host_check_str("PVM: no watchpoints", expected[0].reason);
	host_check_eq_u64(0, select_for("kvm-vmx", "dr.watch", expected));
	host_check_eq_u64(0, select_for("kvm-svm", "dr.watch", expected));
	host_check_eq_u64(0, select_for("kvm", "dr.watch", expected));
	host_check_eq_u64(0, select_for("tcg", "dr.watch", expected));
	host_check_eq_u64(0, select_for("kvm-pvm2", "dr.watch", expected));
	host_check_eq_u64(1, known_defects_on(table, TABLE_SIZE, "kvm-vmx")); /* kvm-* only */
	host_check(known_defects_ending(table, TABLE_SIZE, "kvm-pvm", "dr.icebp") == NULL);
}

HOST_TEST(known_defects_select_keys_by_test_and_platform_glob)
{
	struct report_expected expected[KNOWN_DEFECTS_PER_TEST];

	host_check_eq_u64(1, select_for("tcg", "dr.general_detect", expected));
	host_check_str("1 == count", expected[0].check);
	host_check_eq_u64(1, select_for("kvm-pvm", "dr.general_detect", expected));
	host_check_str("x == y", expected[0].check);
	host_check_eq_u64(0, select_for("tcg", "dr.general_detect_more", expected));
	host_check_eq_u64(0, select_for("tcg", "dr.general", expected));
	host_check_eq_u64(1, select_for("kvm-vmx", "dr.any_kvm", expected));
	host_check_eq_u64(1, select_for("kvm-pvm", "dr.any_kvm", expected));
	host_check_eq_u64(0, select_for("kvm", "dr.any_kvm", expected));
	host_check_eq_u64(1, select_for("metal-GenuineIntel-6-85", "dr.watch", expected));
	host_check_eq_u64(0, select_for("metal-AuthenticAMD-25-1", "dr.watch", expected));
	host_check_eq_u64(5, known_defects_on(table, TABLE_SIZE, "kvm-pvm"));
	host_check_eq_u64(
		0, known_defects_select(table, TABLE_SIZE, "kvm-pvm", "dr.watch", expected, 0));
}

/* An entry that ends the boot is no check: the runner asks for it apart, by test and platform. */
HOST_TEST(known_defects_an_ending_entry_is_found_apart_and_never_expected_as_a_check)
{
	struct report_expected expected[KNOWN_DEFECTS_PER_TEST];
	const struct known_defect *ending;

	host_check_eq_u64(0, select_for("tcg", "dr.icebp", expected));
	ending = known_defects_ending(table, TABLE_SIZE, "tcg", "dr.icebp");
	host_check(ending != NULL);
	if (ending)
		host_check_str("TCG hangs", ending->reason);
	host_check(known_defects_ending(table, TABLE_SIZE, "tcg", "dr.general_detect") == NULL);
	host_check(known_defects_ending(table, TABLE_SIZE, "tcg", "dr.icebp_more") == NULL);
	host_check_eq_u64(1, select_for("kvm-pvm", "dr.icebp", expected));
}

/* An entry that never runs is no check and no ending: the runner skips the test with its reason. */
HOST_TEST(known_defects_a_never_running_entry_is_found_apart_and_only_where_it_applies)
{
	struct report_expected expected[KNOWN_DEFECTS_PER_TEST];
	const struct known_defect *never;

	host_check_eq_u64(0, select_for("kvm-pvm", "pmu.pmi", expected));
	host_check(known_defects_ending(table, TABLE_SIZE, "kvm-pvm", "pmu.pmi") == NULL);
	never = known_defects_never(table, TABLE_SIZE, "kvm-pvm", "pmu.pmi");
	host_check(never != NULL);
	if (never)
		host_check_str("PVM: chance", never->reason);
	host_check(known_defects_never(table, TABLE_SIZE, "kvm-vmx", "pmu.pmi") == NULL);
	host_check(known_defects_never(table, TABLE_SIZE, "tcg", "dr.icebp") == NULL);
	host_check(known_defects_never(table, TABLE_SIZE, "kvm-pvm", "pmu.pmi_more") == NULL);
}

/* With got, an entry matches only the failure that printed that value. */
HOST_TEST(known_defects_got_matches_only_the_value_the_failure_printed)
{
	static struct report_expected lost[] = {
		{ .check = "expected == actual", .got = "DB@b:BS", .reason = "loses the first" },
	};
	struct test_report report;

	console_capture_start();
	report_begin(&report, 1);
	report_expect_failures(&report, lost, 1);
	host_check(
		!report_check_text("DB@a:BS DB@b:BS", "DB@b:BS", "expected", "actual", "t.c", 5));
	host_check_eq_u64(0, report.failures);
	host_check_eq_u64(KTAP_XFAIL, report_end(&report));
	host_check_str("    # t.c:5: check failed: expected == actual\n"
		       "    #   expected 'DB@a:BS DB@b:BS'\n"
		       "    #   got 'DB@b:BS'\n"
		       "    #   known defect of this platform: loses the first\n",
		       console_capture_text());

	/* Another wrong value of the same check is a failure, and the entry an XPASS's. */
	report_begin(&report, 1);
	report_expect_failures(&report, lost, 1);
	report_check_text("DB@a:BS DB@b:BS", "DB@a:BS", "expected", "actual", "t.c", 5);
	host_check_eq_u64(1, report.failures);
	host_check_eq_u64(KTAP_FAIL, report_end(&report));

	/* check_eq's value is its decimal "got". */
	lost[0] = (struct report_expected){ .check = "3 == n", .got = "2", .reason = "one lost" };
	report_begin(&report, 1);
	report_expect_failures(&report, lost, 1);
	report_check_equal(3, 2, "3", "n", "t.c", 6);
	host_check_eq_u64(KTAP_XFAIL, report_end(&report));
	report_begin(&report, 1);
	report_expect_failures(&report, lost, 1);
	report_check_equal(3, 0, "3", "n", "t.c", 6);
	host_check_eq_u64(KTAP_FAIL, report_end(&report));

	/* The value's match is strict: a passing check leaves an XPASS that names the value. */
	console_capture_start();
	report_begin(&report, 1);
	report_expect_failures(&report, lost, 1);
	report_check_equal(3, 3, "3", "n", "t.c", 6);
	host_check_eq_u64(KTAP_XPASS, report_end(&report));
	host_check_str(
		"    # known defect did not occur: check '3 == n' never got '2' (one lost)\n",
		console_capture_text());
}

/* The table built from tests/known-defects.toml: its kvm-pvm entries stay on KVM-PVM. */
/* Entries of table for test that apply on identity, counted apart from the matcher. */
static unsigned int checks_applying(const char *identity, const char *test)
{
	unsigned int count = 0;

	for (size_t i = 0; i < known_defects_count; i++)
		count += !known_defects[i].ends && strcmp(known_defects[i].test, test) == 0 &&
			 glob_match(known_defects[i].platform, strlen(known_defects[i].platform),
				    identity);
	return count;
}

HOST_TEST(known_defects_the_real_tables_kvm_pvm_entries_apply_nowhere_else)
{
	static const char *const others[] = { "kvm-vmx", "kvm-svm", "kvm", "tcg",
					      "metal-GenuineIntel-6-85" };
	unsigned int pvm = 0;

	for (size_t i = 0; i < known_defects_count; i++) {
		const struct known_defect *defect = &known_defects[i];
		struct report_expected expected[KNOWN_DEFECTS_PER_TEST];

		if (strcmp(defect->platform, "kvm-pvm") != 0)
			continue;
		pvm++;
		for (size_t j = 0; j < sizeof(others) / sizeof(others[0]); j++) {
			unsigned int n = known_defects_select(known_defects, known_defects_count,
							      others[j], defect->test, expected,
							      KNOWN_DEFECTS_PER_TEST);

			/* Each other platform gets its own entries for the test, none more. */
			host_checkf(n == checks_applying(others[j], defect->test),
				    "%s: %u entries apply on %s, the table has %u of its own",
				    defect->test, n, others[j],
				    checks_applying(others[j], defect->test));
			host_checkf(known_defects_ending(known_defects, known_defects_count,
							 others[j], defect->test) != defect,
				    "%s: kvm-pvm's ending entry applies on %s", defect->test,
				    others[j]);
		}
		if (defect->ends)
			host_checkf(known_defects_ending(known_defects, known_defects_count,
							 "kvm-pvm", defect->test) == defect,
				    "%s: kvm-pvm's ending entry does not apply on kvm-pvm",
				    defect->test);
	}
	host_checkf(pvm > 0, "no kvm-pvm entry in the table");
}

HOST_TEST(known_defects_name_a_timeout_by_its_kind_and_a_plain_failure_stays_one)
{
	static struct report_expected slow[] = {
		{ .check = "timed out", .reason = "starves interrupts while stepping" }
	};
	struct test_report report;

	console_capture_start();
	report_begin(&report, 1);
	report_expect_failures(&report, slow, 1);
	host_check(report_check(true, "t.c", 1, "x", " "));
	report_fail_kind("timed out", "timed out after %u ms", 10000u);
	host_check_eq_u64(0, report.failures);
	host_check_eq_u64(KTAP_XFAIL, report_end(&report));
	host_check_str("starves interrupts while stepping", report.reason);
	host_check(strstr(console_capture_text(), "    # timed out after 10000 ms\n") != NULL);

	/* Without an entry it is a failure; an entry does not excuse report_fail(). */
	report_begin(&report, 1);
	report_fail_kind("timed out", "timed out after %u ms", 10000u);
	host_check_eq_u64(KTAP_FAIL, report_end(&report));
	report_begin(&report, 1);
	report_expect_failures(&report, slow, 1);
	report_fail("timed out after %u ms", 10000u);
	host_check_eq_u64(KTAP_FAIL, report_end(&report));
	/* An entry for a timeout that did not come is an XPASS, as for a check. */
	report_begin(&report, 1);
	report_expect_failures(&report, slow, 1);
	host_check(report_check(true, "t.c", 1, "x", " "));
	host_check_eq_u64(KTAP_XPASS, report_end(&report));
}
