/* SPDX-License-Identifier: MIT */
/* What the watchdog's NMIs add to a window that interrupts off cannot protect (rule 21). */
#ifndef TESTS_KERNEL_LIB_NMI_MARGIN_H
#define TESTS_KERNEL_LIB_NMI_MARGIN_H

#include <stdint.h>

#include "arch/x86/percpu.h"
#include "emulator/emulator.h"

/*
 * IF does not hold off an NMI, and the watchdog's come 20 a second: in any window that lasts,
 * as one does under the emulated CPU's single-stepping (milliseconds to seconds). Silicon counts
 * and records an NMI in an observed ring as any interrupt (SDM Vol. 3B DEBUGCTL.TR; rule 21):
 * its IRETQ is a ring-0 instruction and branch, its delivery and IRETQ are two BTS records, and
 * its handler's instructions and branches count and record too. The model steps no NMI's
 * handler (docs/emulated-cpu.md): exactly 1 instruction, 1 branch and 2 records an NMI. On
 * silicon, at most the handler's on top (stated tolerance: the witness measured 780 to 1,300
 * instructions in the watchdog's handler).
 * nmis: what nmi_count() moved by around the window (an upper bound: it may count NMIs just
 * outside it). No NMI, no margin: the exact value stands.
 */
#define NMI_HANDLER_INSTRUCTIONS_MAX 2000

/* Every NMI this CPU took, the watchdog's and any other source's (arch/x86/traps.c). */
static inline unsigned long nmi_count(void)
{
	return (unsigned long)__atomic_load_n(&this_cpu()->nmis, __ATOMIC_RELAXED);
}
#define NMI_HANDLER_BRANCHES_MAX 400

static inline uint64_t nmi_extra_instructions(unsigned long nmis)
{
	return nmis * (emulator_active() ? 1 : 1 + NMI_HANDLER_INSTRUCTIONS_MAX);
}

static inline uint64_t nmi_extra_branches(unsigned long nmis)
{
	return nmis * (emulator_active() ? 1 : 1 + NMI_HANDLER_BRANCHES_MAX);
}

static inline uint64_t nmi_extra_records(unsigned long nmis)
{
	return nmis * (emulator_active() ? 2 : 2 + NMI_HANDLER_BRANCHES_MAX);
}

#endif
