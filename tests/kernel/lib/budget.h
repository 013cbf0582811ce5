/* SPDX-License-Identifier: MIT */
/* Test budgets: budget=quick (the default) for a short run, budget=soak for long stress runs. */
#ifndef TESTS_KERNEL_LIB_BUDGET_H
#define TESTS_KERNEL_LIB_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

/*
 * A budget is what a test chooses to spend, not what it must check: a stress test's operations
 * or seconds, a benchmark's samples. budget=quick keeps the default run short and still
 * meaningful; budget=soak (make soak, make bench) runs long. Each test states both in a comment.
 */

/* Whether budget=soak was given. */
bool budget_soak(void);

/* "quick" or "soak", for diagnostics and metric lines. */
const char *budget_name(void);

/* quick or soak, as budget= says: a count of operations, samples or rounds. */
uint64_t budget_count(uint64_t quick, uint64_t soak);

/*
 * quick_ms or soak_ms, as budget= says, but never more than half the per-test time limit
 * (timeout=): a budget ends a test, the time limit never does.
 */
uint64_t budget_ms(uint64_t quick_ms, uint64_t soak_ms);

/* Fewest samples a benchmark's median and p99 are reported from. */
#define BUDGET_SAMPLES_MIN 100

/*
 * End a benchmark as skipped when its budget gave fewer than BUDGET_SAMPLES_MIN samples of
 * what: a platform too slow for the budget (docs/platforms.md) has no median to report, and that is
 * not a defect. Called after the benchmark's other checks, whose failures still fail it.
 */
void budget_skip_if_few_samples(const char *what, unsigned int count);

#endif
