/* SPDX-License-Identifier: MIT */
/* arch suite: the LAPIC timer ticks at the rate it was calibrated for. */
#include "arch/x86/apic.h"
#include "arch/x86/apic_mode.h"
#include "arch/x86/cpu.h"
#include "arch/x86/percpu.h"
#include "arch/x86/tsc.h"
#include "lib/sort.h"
#include "platform/pc/nmi_timer.h"
#include "runner/test.h"

/*
 * The timer counts down from the initial count it was given, reloading it at each tick (SDM Vol.
 * 3 §11.5.4, periodic mode). Its period is that count at the rate the current count falls,
 * measured against the TSC while the guest polls both: a host that stops the guest stops
 * neither, so no stop or late tick moves it (docs/platforms.md: loaded hosts lose ticks or
 * deliver them late, or in a burst). A sample spans half a period, so the count wraps at most
 * once, unless the guest was stopped for longer, which drops the sample. The median of
 * PERIOD_SAMPLES within 5% of 1 / hz: the calibration's own error is well under that, a rate off
 * by a twentieth fails.
 */
#define PERIOD_SAMPLES 5
#define TOLERANCE_PERCENT 5
#define TICKS_TO_COME 5 /* and they come: this many within 4 times their periods */

/* One period by the count, in TSC cycles; 0 when the guest was stopped while it looked. */
static uint64_t period_by_count(uint64_t expected)
{
	uint32_t initial = apic_read(APIC_TIMER_INITIAL), count0, count1, elapsed;
	unsigned long flags = local_irq_save(); /* no tick handler between the reads */
	uint64_t tsc0 = rdtsc_ordered(), before = tsc0, now, tsc1, gap = 0;

	count0 = apic_read(APIC_TIMER_CURRENT);
	do {
		now = rdtsc_ordered();
		gap = now - before > gap ? now - before : gap;
		before = now;
	} while (now - tsc0 < expected / 2);
	count1 = apic_read(APIC_TIMER_CURRENT);
	tsc1 = rdtsc_ordered();
	local_irq_restore(flags);
	elapsed = count0 >= count1 ? count0 - count1 : count0 + initial - count1;
	if (gap >= expected / 4 || elapsed == 0)
		return 0;
	return (tsc1 - tsc0) * initial / elapsed;
}

/* The TSC at the tick after ticks, or 0 when none came before deadline. */
static uint64_t wait_for_tick_after(uint64_t ticks, uint64_t deadline)
{
	while (this_cpu()->ticks <= ticks) {
		if (rdtsc_ordered() > deadline)
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
	uint64_t expected = tsc_hz() / timer_hz(), periods[PERIOD_SAMPLES], median;
	uint64_t deadline, first, last = 0, tick;
	unsigned int taken = 0, tries = 0;

	while (taken < PERIOD_SAMPLES && tries++ < 4 * PERIOD_SAMPLES) {
		periods[taken] = period_by_count(expected);
		taken += periods[taken] != 0;
	}
	if (taken < PERIOD_SAMPLES)
		test_skip("the host stopped the guest in %u of %u looks at the timer's count",
			  tries - taken, tries);
	sort_u64(periods, PERIOD_SAMPLES);
	median = periods[PERIOD_SAMPLES / 2];
	deadline = rdtsc_ordered() + 4 * TICKS_TO_COME * expected;
	tick = this_cpu()->ticks;
	first = wait_for_tick_after(tick, deadline);
	if (first)
		last = wait_for_tick_after(tick + TICKS_TO_COME, deadline); /* 5 periods later */
	test_diag("period by the count at %u Hz: median %llu us (%llu to %llu), expected %llu; %u "
		  "ticks in %llu us",
		  timer_hz(), microseconds(median), microseconds(periods[0]),
		  microseconds(periods[PERIOD_SAMPLES - 1]), microseconds(expected), TICKS_TO_COME,
		  last ? microseconds(last - first) : 0ull);
	check(median * 100 >= expected * (100 - TOLERANCE_PERCENT) &&
		      median * 100 <= expected * (100 + TOLERANCE_PERCENT),
	      "period %llu us, expected %llu +- %u%%", microseconds(median), microseconds(expected),
	      TOLERANCE_PERCENT);
	check(last != 0, "fewer than %u ticks came in %llu ms", TICKS_TO_COME + 1,
	      microseconds(4 * TICKS_TO_COME * expected) / 1000);
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
