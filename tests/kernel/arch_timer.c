/* SPDX-License-Identifier: MIT */
/* arch suite: the LAPIC timer ticks at the rate it was calibrated for. */
#include "arch/x86/apic.h"
#include "arch/x86/cpu.h"
#include "arch/x86/nmi.h"
#include "arch/x86/percpu.h"
#include "arch/x86/tsc.h"
#include "lib/sort.h"
#include "runner/test.h"

/*
 * The time between consecutive ticks, by the TSC at each: the median of TICK_INTERVALS of them,
 * so that one tick the host delays (which lengthens one interval and shortens the next) moves
 * nothing. Stated tolerance: the median within 20% of 1 / hz (4 ms at the default 250 Hz): a
 * rate off by a quarter either way fails.
 */
#define TICK_INTERVALS 5
#define TOLERANCE_PERCENT 20

/*
 * A host that stops the guest (its vCPU thread descheduled) stops this loop but not the TSC, nor
 * the host's timer: ticks come late or are lost, whatever the calibration. The longest gap
 * between two TSC reads of the loop shows it; a stop of half a tick or more skips the
 * test with the numbers (docs/platforms.md).
 */
#define STOPPED_FRACTION 2

/* The TSC at the tick after ticks, or 0 when none came before deadline; *gap: the longest stop. */
static uint64_t wait_for_tick_after(uint64_t ticks, uint64_t deadline, uint64_t *gap)
{
	uint64_t before = rdtsc_ordered(), now;

	while (this_cpu()->ticks <= ticks) {
		now = rdtsc_ordered();
		if (now - before > *gap)
			*gap = now - before;
		before = now;
		if (now > deadline)
			return 0;
		cpu_relax();
	}
	return rdtsc_ordered();
}

static unsigned long long microseconds(uint64_t cycles)
{
	return (unsigned long long)(cycles * 1000000 / tsc_hz());
}

TEST(arch, timer_ticks_at_its_calibrated_rate)
{
	uint64_t expected = tsc_hz() / timer_hz(), intervals[TICK_INTERVALS], median;
	uint64_t deadline = rdtsc_ordered() + 4 * (TICK_INTERVALS + 1) * expected;
	uint64_t gap = 0, tick = this_cpu()->ticks,
		 last = wait_for_tick_after(tick, deadline, &gap);

	for (unsigned int i = 0; i < TICK_INTERVALS && last; i++) {
		uint64_t now = wait_for_tick_after(++tick, deadline, &gap);

		intervals[i] = now - last;
		last = now;
	}
	if (!check(last != 0, "fewer than %u ticks came in %llu ms", TICK_INTERVALS + 1,
		   microseconds(4 * (TICK_INTERVALS + 1) * expected) / 1000))
		return;
	if (gap * STOPPED_FRACTION >= expected)
		test_skip(
			"the host stopped the guest for %llu us while it timed a %llu us tick: the "
			"tick's rate cannot be told from its delivery",
			microseconds(gap), microseconds(expected));
	sort_u64(intervals, TICK_INTERVALS);
	median = intervals[TICK_INTERVALS / 2];
	test_diag("tick to tick at %u Hz: median %llu us (%llu to %llu), expected %llu", timer_hz(),
		  microseconds(median), microseconds(intervals[0]),
		  microseconds(intervals[TICK_INTERVALS - 1]), microseconds(expected));
	check(median * 100 >= expected * (100 - TOLERANCE_PERCENT) &&
		      median * 100 <= expected * (100 + TOLERANCE_PERCENT),
	      "median tick to tick %llu us, expected %llu +- %u%%", microseconds(median),
	      microseconds(expected), TOLERANCE_PERCENT);
}

/* The NMI watchdog (20 Hz) wakes HLT too; a tick comes within 3 of its NMIs at 250 Hz. */
#define HALT_NMI_WAKES_MAX 3

/*
 * HLT resumes at an interrupt or an NMI (SDM Vol. 2A, HLT). Each wake without a tick must be
 * the watchdog's NMI; the timer's wake must come before HALT_NMI_WAKES_MAX of them.
 */
TEST(arch, halt_wakes_on_the_timer)
{
	uint64_t before = this_cpu()->ticks;
	unsigned int nmi_wakes = 0;
	bool by_nmi = false;

	for (;;) {
		unsigned long nmis = nmi_timer_ticks();

		halt();
		if (this_cpu()->ticks > before)
			break;
		by_nmi = nmi_timer_ticks() != nmis;
		if (!by_nmi || ++nmi_wakes == HALT_NMI_WAKES_MAX)
			break;
	}
	check(this_cpu()->ticks > before,
	      "no tick woke hlt (ticks %llu): %u wakes by watchdog NMIs, the last by %s",
	      (unsigned long long)before, nmi_wakes,
	      by_nmi ? "a watchdog NMI" : "neither a tick nor a watchdog NMI");
	if (nmi_wakes)
		test_diag("%u watchdog NMIs woke hlt before the tick", nmi_wakes);
}
