/* SPDX-License-Identifier: MIT */
/* A minimal unit-test framework for host builds of the pure lib/ code. */
#ifndef TESTS_HOST_HOST_TEST_H
#define TESTS_HOST_HOST_TEST_H

#include <stdbool.h>
#include <stdint.h>

struct host_test {
	const char *name;
	void (*run)(void);
};

/*
 * Define and register a test: HOST_TEST(glob_star_matches_dots) { ... }. The entry goes into
 * the "host_tests" linker section, which main() walks from __start_host_tests to
 * __stop_host_tests, so no list needs maintaining. Names must be unique across all files;
 * start them with the module under test. Tests run in link order: by file, then as defined.
 */
#define HOST_TEST(test_name)                                                           \
	static void host_test_##test_name(void);                                       \
	static const struct host_test host_test_entry_##test_name __attribute__((      \
		used, no_reorder, section("host_tests"), aligned(sizeof(void *)))) = { \
		.name = #test_name,                                                    \
		.run = host_test_##test_name,                                          \
	};                                                                             \
	static void host_test_##test_name(void)

/* xorshift64: the next of a fixed sequence from *state (nonzero), so a failure reproduces. */
static inline uint64_t host_random_u64(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

/*
 * Checks. Each records a failure in the running test and prints file:line, the expression, and
 * for comparisons the expected and actual values; the test goes on. Each returns whether it
 * passed, so a test can stop early: if (!host_check(p != NULL)) return;
 * A test that makes no check fails.
 */
#define host_check(condition) host_check_at(__FILE__, __LINE__, #condition, (condition))
#define host_checkf(condition, ...) host_checkf_at(__FILE__, __LINE__, (condition), __VA_ARGS__)
#define host_check_eq_u64(expected, actual)                                                \
	host_check_eq_u64_at(__FILE__, __LINE__, #expected, #actual, (uint64_t)(expected), \
			     (uint64_t)(actual))
#define host_check_eq_i64(expected, actual)                                               \
	host_check_eq_i64_at(__FILE__, __LINE__, #expected, #actual, (int64_t)(expected), \
			     (int64_t)(actual))
/* Compares NUL-terminated strings; either may be NULL. */
#define host_check_str(expected, actual) \
	host_check_str_at(__FILE__, __LINE__, #expected, #actual, (expected), (actual))

/* The checks the running test has made so far: for a runner that forks a test's body (the
 * shim), which must fail a body that made none as main() fails such a test. */
unsigned int host_test_checks_made(void);

bool host_check_at(const char *file, int line, const char *expression, bool condition);
/* On failure prints the printf-style message after file:line, for table rows. */
bool host_checkf_at(const char *file, int line, bool condition, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
bool host_check_eq_u64_at(const char *file, int line, const char *expected_expression,
			  const char *actual_expression, uint64_t expected, uint64_t actual);
bool host_check_eq_i64_at(const char *file, int line, const char *expected_expression,
			  const char *actual_expression, int64_t expected, int64_t actual);
bool host_check_str_at(const char *file, int line, const char *expected_expression,
		       const char *actual_expression, const char *expected, const char *actual);

#endif
