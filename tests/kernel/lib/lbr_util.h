/* SPDX-License-Identifier: MIT */
/* lbr suite helpers: what a test needs of LBR, and the MSR writes restores and wipes make. */
#ifndef TESTS_KERNEL_LIB_LBR_UTIL_H
#define TESTS_KERNEL_LIB_LBR_UTIL_H

#include <stdint.h>

#include "lbr/lbr.h"
#include "runner/test.h"

static inline void require_lbr(void)
{
	if (!lbr_support()->present)
		test_skip("%s", lbr_support()->reason);
}

/* Call-stack mode (LBR_SELECT.EN_CALLSTACK): Intel's, from Haswell. */
static inline void require_call_stack(void)
{
	require_lbr();
	if (lbr_support()->amd)
		test_skip("AMD LbrExtV2 has no call-stack mode (LBR_SELECT bits 8:0 only; Linux "
			  "lbr_select_map): no stack survives a switch");
	if (!lbr_support()->call_stack)
		test_skip("LBR_SELECT.EN_CALLSTACK takes no write (LBR format %u): no call-stack "
			  "mode before Haswell",
			  lbr_support()->format);
}

/*
 * The stack writes the restores and wipes between two lbr_stats() must have made. Legacy LBR:
 * each restore writes every FROM, TO (and INFO) and TOS, each wipe every entry. Architectural
 * LBR: a wipe is one DEPTH write; a restore of a stack that was not full one DEPTH write, then
 * its entries' FROM, TO and INFO (intel_pmu_arch_lbr_restore()); a restore by XRSTORS none.
 */
static inline uint64_t lbr_expected_stack_writes(const struct lbr_stats *before,
						 const struct lbr_stats *after)
{
	const struct lbr_support *s = lbr_support();
	uint64_t restores = after->restores - before->restores;
	uint64_t wipes = after->wipes - before->wipes;
	uint64_t per_entry = s->info_msr ? 3 : 2;

	if (s->architectural)
		return wipes + (restores - (after->xrstors - before->xrstors)) +
		       3 * (after->restored_entries - before->restored_entries);
	return restores * (s->depth * per_entry + 1) + wipes * s->depth * per_entry;
}

#endif
