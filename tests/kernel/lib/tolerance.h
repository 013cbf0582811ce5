/* SPDX-License-Identifier: MIT */
/* The tolerances of the tests that judge time, in one place, each with how it was derived. */
#ifndef TESTS_KERNEL_LIB_TOLERANCE_H
#define TESTS_KERNEL_LIB_TOLERANCE_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Tests judge counts wherever the behaviour allows (slices, records, writes, the timer's own
 * count); these are for the few that are about time. The host measurements behind each are in
 * docs/platforms.md ("A loaded host stops a TCG guest, not its TSC").
 */

/*
 * Whether the ticks due in a window came: at least TICKS_CAME_MIN_PERCENT of them. Below it the
 * host stopped the guest or lost its ticks, and a time taken by the TSC over the window charges
 * that stop to whatever ran; such a time is printed, not judged. A quiet host delivers every
 * tick (800 or 801 of 800 at 8 kHz); a loaded one about 40 to 70%: 90 lies between, with
 * room for a tick or two lost at the window's ends.
 */
#define TICKS_CAME_MIN_PERCENT 90

static inline bool ticks_came(uint64_t ticks, uint64_t due)
{
	return ticks * 100 >= due * TICKS_CAME_MIN_PERCENT;
}

/*
 * A loop that polls the TSC and sees it jump by more than 1 / GUEST_STOP_PERIOD_FRACTION of the
 * timer's period between two reads did not run meanwhile: a poll takes well under a microsecond,
 * and a span that long is the host running something else, or QEMU holding the vCPU outside the
 * guest (docs/platforms.md: under TCG on a loaded host such spans were most of a 40 ms wait).
 * The ticks due then are lost, not queued, so such a span is no time the guest could be ticked in.
 */
#define GUEST_STOP_PERIOD_FRACTION 4

/*
 * The timer's period, by its own count against the TSC (SDM Vol. 3 §11.5.4), within
 * TIMER_PERIOD_TOLERANCE_PERCENT of 1 / hz. The calibration reads both clocks side by side and
 * was measured within 0.1% under TCG and 0.8% under KVM-PVM (docs/platforms.md), so 5% leaves
 * room for a loaded host, and a rate off by a twentieth fails.
 */
#define TIMER_PERIOD_TOLERANCE_PERCENT 5

/*
 * Round robin: the fairness window ends, polled, once the task with the fewest slices has had
 * its count, and each task's exit is one slice more, so slice counts are at most
 * FAIR_SLICES_SPREAD apart. With 4 tasks and 9 slices each, that spread alone moves a share
 * from 1/4 to 9/42 or 11/38 (14% and 16% off), so FAIR_SHARE_TOLERANCE_PERCENT is 25: the spread
 * and slices a tick longer or shorter than the rest, not a task given twice the CPU.
 */
#define FAIR_SLICES_SPREAD 2
#define FAIR_SHARE_TOLERANCE_PERCENT 25

/* actual within percent of expected, both sides; the products must fit 64 bits. */
static inline bool within_percent(uint64_t actual, uint64_t expected, unsigned int percent)
{
	return actual * 100 >= expected * (100 - percent) &&
	       actual * 100 <= expected * (100 + percent);
}

#endif
