/* SPDX-License-Identifier: MIT */
/* The host test runner: runs every registered HOST_TEST and prints one line per test. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tests/host/host_test.h"

/* Defined by the linker around the "host_tests" section that HOST_TEST fills. */
extern const struct host_test __start_host_tests[];
extern const struct host_test __stop_host_tests[];

/* Whether a check in the running test has failed, and how many it made; reset before each. */
static bool current_test_failed;
static unsigned int current_test_checks;

static bool counted(bool passed)
{
	current_test_checks++;
	return passed;
}

unsigned int host_test_checks_made(void)
{
	return current_test_checks;
}

static void fail_at(const char *file, int line)
{
	current_test_failed = true;
	printf("    %s:%d: ", file, line);
}

bool host_check_at(const char *file, int line, const char *expression, bool condition)
{
	if (!condition) {
		fail_at(file, line);
		printf("check failed: %s\n", expression);
	}
	return counted(condition);
}

bool host_checkf_at(const char *file, int line, bool condition, const char *fmt, ...)
{
	va_list args;

	if (!condition) {
		fail_at(file, line);
		va_start(args, fmt);
		vprintf(fmt, args);
		va_end(args);
		printf("\n");
	}
	return counted(condition);
}

bool host_check_eq_u64_at(const char *file, int line, const char *expected_expression,
			  const char *actual_expression, uint64_t expected, uint64_t actual)
{
	if (expected != actual) {
		fail_at(file, line);
		printf("check failed: %s == %s\n", expected_expression, actual_expression);
		printf("        expected %" PRIu64 " (0x%" PRIx64 "), got %" PRIu64 " (0x%" PRIx64
		       ")\n",
		       expected, expected, actual, actual);
	}
	return counted(expected == actual);
}

bool host_check_eq_i64_at(const char *file, int line, const char *expected_expression,
			  const char *actual_expression, int64_t expected, int64_t actual)
{
	if (expected != actual) {
		fail_at(file, line);
		printf("check failed: %s == %s\n", expected_expression, actual_expression);
		printf("        expected %" PRId64 " (0x%" PRIx64 "), got %" PRId64 " (0x%" PRIx64
		       ")\n",
		       expected, (uint64_t)expected, actual, (uint64_t)actual);
	}
	return counted(expected == actual);
}

/* Print s in double quotes, with non-printing bytes escaped, or NULL. */
static void print_quoted(const char *s)
{
	if (s == NULL) {
		printf("NULL");
		return;
	}
	putchar('"');
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if (*s >= ' ' && *s <= '~')
			putchar(*s);
		else
			printf("\\x%02x", (unsigned char)*s);
	}
	putchar('"');
}

bool host_check_str_at(const char *file, int line, const char *expected_expression,
		       const char *actual_expression, const char *expected, const char *actual)
{
	bool equal = (expected == NULL || actual == NULL) ? expected == actual
							  : strcmp(expected, actual) == 0;

	if (!equal) {
		fail_at(file, line);
		printf("check failed: %s equals %s\n        expected ", expected_expression,
		       actual_expression);
		print_quoted(expected);
		printf(", got ");
		print_quoted(actual);
		printf("\n");
	}
	return counted(equal);
}

/*
 * Run every test whose name contains argv[1] (all without it). Prints "PASS name" or
 * "FAIL name" per test, after that test's failure details, then "N passed, N failed". A test
 * that made no check fails, as a kernel test does: it has shown nothing.
 * Exits 1 when a test failed or when the filter selected nothing, else 0.
 */
int main(int argc, char **argv)
{
	const char *filter = argc > 1 ? argv[1] : "";
	unsigned int passed = 0, failed = 0;

	for (const struct host_test *test = __start_host_tests; test < __stop_host_tests; test++) {
		if (strstr(test->name, filter) == NULL)
			continue;
		current_test_failed = false;
		current_test_checks = 0;
		test->run();
		if (current_test_checks == 0) {
			current_test_failed = true;
			printf("    no check was made\n");
		}
		printf("%s %s\n", current_test_failed ? "FAIL" : "PASS", test->name);
		fflush(stdout);
		if (current_test_failed)
			failed++;
		else
			passed++;
	}
	printf("%u passed, %u failed\n", passed, failed);
	if (passed + failed == 0)
		fprintf(stderr, "no test name contains '%s'\n", filter);
	return failed > 0 || passed + failed == 0 ? 1 : 0;
}
