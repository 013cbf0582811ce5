/* SPDX-License-Identifier: MIT */
/* What interrupt handlers add to a count taken in an observed ring 0 (rule 21). */
#ifndef TESTS_KERNEL_LIB_HANDLER_MARGIN_H
#define TESTS_KERNEL_LIB_HANDLER_MARGIN_H

#include <stdint.h>

#include "arch/x86/percpu.h"
#include "emulator/emulator.h"

/*
 * Silicon counts and records an interrupt handler in the enabled rings like any other code
 * (SDM Vol. 3B DEBUGCTL.TR: a record "when the processor detects a taken branch, interrupt, or
 * exception"; counters count every instruction retired in the rings they select), and so does
 * the model, which steps every handler but the timer's (docs/emulated-cpu.md).
 *
 * A PMI's handler counts until it stops the counters and again once it starts them
 * (debugstate/debugstate.c): on the model here 164 to 165 instructions a PMI (2 and 12 PMIs
 * over one loop; its entry before the model's hook and its return after the resume hook are not
 * stepped, and silicon counts those too). Stated bound, a PMI:
 */
#define PMI_HANDLER_INSTRUCTIONS_MAX 400ull

/*
 * The timer's handler is not stepped (1,417 instructions a tick, the witness measured, against
 * 4 ms between ticks): the model counts each tick it leaves unstepped while ring 0 is observed
 * (emulator_stats().ticks_unstepped), and each is exactly 1 instruction and 1 branch (its
 * IRETQ) and 2 BTS records (its delivery and its IRETQ) of the interrupted flow's. On silicon,
 * the handler's on top: at most TICK_HANDLER_*_MAX (stated tolerance). So a test counting ring 0
 * with interrupts on allows exactly that for each tick, and no more.
 */
#define TICK_HANDLER_INSTRUCTIONS_MAX 2000ull
#define TICK_HANDLER_BRANCHES_MAX 400ull

/*
 * Ticks so far that count in an observed ring 0: on the model the ones it left unstepped, on
 * silicon every tick this CPU took (an upper bound for a window: it may take in ticks just
 * outside it).
 */
static inline uint64_t tick_count(void)
{
	return emulator_active() ? emulator_stats().ticks_unstepped
				 : __atomic_load_n(&this_cpu()->ticks, __ATOMIC_RELAXED);
}

static inline uint64_t tick_extra_instructions(uint64_t ticks)
{
	return ticks * (emulator_active() ? 1 : 1 + TICK_HANDLER_INSTRUCTIONS_MAX);
}

static inline uint64_t tick_extra_branches(uint64_t ticks)
{
	return ticks * (emulator_active() ? 1 : 1 + TICK_HANDLER_BRANCHES_MAX);
}

static inline uint64_t tick_extra_records(uint64_t ticks)
{
	return ticks * (emulator_active() ? 2 : 2 + TICK_HANDLER_BRANCHES_MAX);
}

/*
 * PEBS records at most over a counted loop that gives at most `records` on its own, with pmis
 * PMIs and ticks ticks in it: each PMI's counted handler one more record a period it spans,
 * and the ticks' extra instructions likewise.
 */
static inline uint64_t pebs_records_max(uint64_t records, uint64_t pmis, uint64_t ticks,
					uint64_t period)
{
	return records + pmis * ((PMI_HANDLER_INSTRUCTIONS_MAX + period - 1) / period) +
	       (tick_extra_instructions(ticks) + period - 1) / period;
}

#endif
