/* SPDX-License-Identifier: MIT */
/* dr suite helpers: breakpoint targets and installing on the calling task. */
#include "tests/kernel/lib/dr_targets.h"
#include "runner/test.h"
#include "sched/sched.h"

volatile unsigned int dr_target_calls;
volatile uint64_t dr_target_data[8] __attribute__((aligned(64)));
volatile uint64_t dr_target_unused[8] __attribute__((aligned(64)));

void __attribute__((noinline)) dr_target_function(void)
{
	dr_target_calls++;
}

#define STRESS_TARGET(n)                                              \
	static void __attribute__((noinline)) stress_target_##n(void) \
	{                                                             \
		dr_target_calls++;                                    \
	}
STRESS_TARGET(0)
STRESS_TARGET(1)
STRESS_TARGET(2)
STRESS_TARGET(3)
STRESS_TARGET(4)
STRESS_TARGET(5)
STRESS_TARGET(6)
STRESS_TARGET(7)

void (*const dr_stress_targets[DR_STRESS_TARGETS])(void) = {
	stress_target_0, stress_target_1, stress_target_2, stress_target_3,
	stress_target_4, stress_target_5, stress_target_6, stress_target_7,
};

int dr_target_install(uint64_t address, enum dr_type type, unsigned int length)
{
	struct dr_breakpoint breakpoint = { address, type, length };
	int slot = dr_install(sched_current()->index, &breakpoint, NULL, NULL);

	if (slot < 0)
		test_abort("dr_install(0x%llx, type %u, length %u): %s",
			   (unsigned long long)address, type, length, dr_error_name(-slot));
	return slot;
}

unsigned int dr_target_hits(struct dr_hit *hits)
{
	return dr_read_hits(sched_current()->index, hits, 16, NULL);
}
