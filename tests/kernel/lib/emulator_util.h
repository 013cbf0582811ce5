/* SPDX-License-Identifier: MIT */
/* emulator suite helpers: the model's presence, its reports, and a GP counter pmu/ leaves alone. */
#ifndef TESTS_KERNEL_LIB_EMULATOR_UTIL_H
#define TESTS_KERNEL_LIB_EMULATOR_UTIL_H

#include <stdint.h>

#include "arch/x86/cpuid.h"
#include "emulator/emulator.h"
#include "lib/format.h"
#include "lib/string.h"
#include "runner/test.h"

static inline void require_emulator(void)
{
	if (!emulator_active())
		test_skip("the emulated CPU is %s", emulator_describe());
}

/*
 * A rule of Intel's PMU (CPUID leaf 0AH, IA32_PERFEVTSELx, GLOBAL_*): not one an AMD profile
 * plays (rule 26; emulator.amd_* test those).
 */
static inline void require_emulated_intel_pmu(void)
{
	require_emulator();
	if (CPUID_PERFMON_VERSION(cpuid(CPUID_LEAF_PERFMON, 0).eax) == 0)
		test_skip("the emulated CPU (%s) has no CPUID leaf 0AH perfmon: the rule is "
			  "Intel's",
			  emulator_describe());
}

/* The last GP counter: pmu/ leaves it alone while the runner has no event. */
static inline unsigned int emulator_test_counter(void)
{
	return CPUID_PERFMON_GP_COUNTERS(cpuid(CPUID_LEAF_PERFMON, 0).eax) - 1;
}

static inline uint64_t emulator_counter_width_mask(void)
{
	unsigned int width = CPUID_PERFMON_GP_WIDTH(cpuid(CPUID_LEAF_PERFMON, 0).eax);

	return width >= 64 ? UINT64_MAX : (1ull << width) - 1;
}

/* The violations since the last take must be at least one, the first of rule `rule`. */
static inline void expect_violation(unsigned int rule)
{
	char text[EMULATOR_VIOLATION_MAX], prefix[16];
	unsigned int count = emulator_take_violations(text, sizeof(text));
	size_t length = (size_t)format(prefix, sizeof(prefix), "rule %u:", rule);

	test_diag("reported: %s", count ? text : "nothing");
	check(count >= 1 && strncmp(text, prefix, length) == 0,
	      "expected a '%s' report, got %u: %s", prefix, count, text);
}

#endif
