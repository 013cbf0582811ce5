/* SPDX-License-Identifier: MIT */
/* Known defects of the platforms, compiled in from tests/known-defects.toml, and their matcher. */
#ifndef RUNNER_KNOWN_DEFECTS_H
#define RUNNER_KNOWN_DEFECTS_H

#include <stddef.h>

#include "lib/report.h"

/* At most this many entries name one test (scripts/switchyard_defects.py refuses more). */
#define KNOWN_DEFECTS_PER_TEST 8

/*
 * One check of one test that fails on one platform, for a reason outside switchyard; or, with
 * ends set, a test that ends the boot there (the platform hangs or dies in it): the runner runs
 * such a test only in a boot of its own (the option alone), and the harness judges how that boot
 * ended; or, with runs "never", a test whose outcome there is chance (a platform that delivers
 * what it needs only now and then): the runner skips it, with the reason.
 */
struct known_defect {
	const char *platform; /* a glob over the platform identity: "tcg", "kvm-pvm", "metal-*" */
	const char *test; /* "suite.test", as registered (without "__emulated") */
	const char *check; /* the expression as a failure prints it after "check failed: " */
	const char *got; /* the value as the failure prints it after "got"; NULL: any value */
	const char *ends; /* "hang" or "exit": the boot ends in the test; check is NULL */
	const char *runs; /* "never": the test is skipped there; check and ends are NULL */
	const char *reason;
};

/* The table generated from tests/known-defects.toml. */
extern const struct known_defect known_defects[];
extern const size_t known_defects_count;

/*
 * Fill expected[] with the checks of test ("suite.test") that table says fail on platform
 * identity; return how many (at most max).
 */
unsigned int known_defects_select(const struct known_defect *table, size_t count,
				  const char *identity, const char *test,
				  struct report_expected *expected, unsigned int max);

/* The entry saying that test ends the boot on platform identity, or NULL. */
const struct known_defect *known_defects_ending(const struct known_defect *table, size_t count,
						const char *identity, const char *test);

/* The entry saying that test never runs on platform identity, or NULL. */
const struct known_defect *known_defects_never(const struct known_defect *table, size_t count,
					       const char *identity, const char *test);

/* How many entries of table apply to platform identity, whatever the test. */
unsigned int known_defects_on(const struct known_defect *table, size_t count, const char *identity);

#endif
