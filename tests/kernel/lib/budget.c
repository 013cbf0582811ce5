/* SPDX-License-Identifier: MIT */
/* The budget= kernel option: quick or soak budgets for stress tests and benchmarks. */
#include "tests/kernel/lib/budget.h"
#include "lib/cmdline.h"
#include "lib/format.h"
#include "lib/string.h"
#include "runner/options.h"
#include "runner/test.h"

static bool soak;

static bool parse_budget(const struct cmdline_option *opt, const char *value, char *err,
			 size_t err_size)
{
	(void)opt;
	if (value && strcmp(value, "quick") == 0)
		soak = false;
	else if (value && strcmp(value, "soak") == 0)
		soak = true;
	else {
		format(err, err_size, "'%s' is not quick or soak", value ? value : "");
		return false;
	}
	return true;
}

CMDLINE_OPTION(option_budget, .name = "budget", .syntax = "quick|soak", .parse = parse_budget);

bool budget_soak(void)
{
	return soak;
}

const char *budget_name(void)
{
	return soak ? "soak" : "quick";
}

uint64_t budget_count(uint64_t quick, uint64_t soak_count)
{
	return soak ? soak_count : quick;
}

uint64_t budget_ms(uint64_t quick_ms, uint64_t soak_ms)
{
	uint64_t ms = soak ? soak_ms : quick_ms, limit = run_options.timeout_ms / 2;

	return ms < limit ? ms : limit;
}

void budget_skip_if_few_samples(const char *what, unsigned int count)
{
	if (count < BUDGET_SAMPLES_MIN)
		test_skip(
			"%s: %u samples in the %s budget, fewer than the %u a median and p99 need: "
			"too slow here (make bench runs the soak budget)",
			what, count, budget_name(), BUDGET_SAMPLES_MIN);
}
