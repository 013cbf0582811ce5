/* SPDX-License-Identifier: MIT */
/* dr suite helpers: breakpoint targets and installing on the calling task. */
#include "tests/kernel/dr_targets.h"
#include "runner/test.h"
#include "sched/sched.h"

volatile unsigned int dr_target_calls;
volatile uint64_t dr_target_data[8] __attribute__((aligned(64)));
volatile uint64_t dr_target_unused[8] __attribute__((aligned(64)));

void __attribute__((noinline)) dr_target_function(void)
{
	dr_target_calls++;
}

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
