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
#include "tests/kernel/lib/tolerance.h"

/*
 * The timer counts down from the initial count it was given, reloading it at each tick (SDM Vol.
 * 3 §11.5.4, periodic mode). Its period is that count at the rate the current count falls,
 * measured against the TSC while the guest polls both: a host that stops the guest stops
 * neither, so no stop or late tick moves it (docs/platforms.md: loaded hosts lose ticks or
 * deliver them late, or in a burst). A sample spans half a period, so the count wraps at most
 * once, unless the guest was stopped for longer, which drops the sample. The median of
 * PERIOD_SAMPLES within TIMER_PERIOD_TOLERANCE_PERCENT of 1 / hz (tests/kernel/lib/tolerance.h).
 */
#define PERIOD_SAMPLES 5
/*
 * And the ticks come: TICKS_TO_COME more within 4 times their periods of the guest's own running
 * time (spans the host stopped it for do not count: tests/kernel/lib/tolerance.h), waited for at
 * most TICKS_WALL_FACTOR times that on the TSC before the test skips, saying how long it ran.
 */
#define TICKS_TO_COME 5
#define TICKS_WALL_FACTOR 25

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
	if (gap >= expected / GUEST_STOP_PERIOD_FRACTION || elapsed == 0)
		return 0;
	return (tsc1 - tsc0) * initial / elapsed;
}

/* The guest's running time left for the ticks to come in, and a TSC deadline past which not. */
struct tick_wait {
	uint64_t running_left;
	uint64_t wall_deadline;
	uint64_t stop_gap; /* a longer span between two polls is a stop of the guest */
	uint64_t stopped; /* cycles of such spans */
};

/* The TSC at the tick after ticks, or 0 when none came in the time wait has left. */
static uint64_t wait_for_tick_after(uint64_t ticks, struct tick_wait *wait)
{
	uint64_t before = rdtsc_ordered(), now;

	while (this_cpu()->ticks <= ticks) {
		cpu_relax();
		now = rdtsc_ordered();
		if (now > wait->wall_deadline)
			return 0;
		if (now - before >= wait->stop_gap)
			wait->stopped += now - before;
		else if (now - before >= wait->running_left)
			return 0;
		else
			wait->running_left -= now - before;
		before = now;
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
	uint64_t first, last = 0, tick, start;
	struct tick_wait wait = { 0 };
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
	wait.running_left = 4 * TICKS_TO_COME * expected;
	wait.stop_gap = expected / GUEST_STOP_PERIOD_FRACTION;
	start = rdtsc_ordered();
	wait.wall_deadline = start + TICKS_WALL_FACTOR * wait.running_left;
	tick = this_cpu()->ticks;
	first = wait_for_tick_after(tick, &wait);
	if (first)
		last = wait_for_tick_after(tick + TICKS_TO_COME, &wait); /* 5 periods later */
	test_diag("period by the count at %u Hz: median %llu us (%llu to %llu), expected %llu; %u "
		  "ticks in %llu us, the guest stopped for %llu us",
		  timer_hz(), microseconds(median), microseconds(periods[0]),
		  microseconds(periods[PERIOD_SAMPLES - 1]), microseconds(expected), TICKS_TO_COME,
		  last ? microseconds(last - first) : 0ull, microseconds(wait.stopped));
	check(within_percent(median, expected, TIMER_PERIOD_TOLERANCE_PERCENT),
	      "period %llu us, expected %llu +- %u%%", microseconds(median), microseconds(expected),
	      TIMER_PERIOD_TOLERANCE_PERCENT);
	if (!last && rdtsc_ordered() > wait.wall_deadline)
		test_skip("the host stopped the guest for %llu of %llu ms while %u ticks were due",
			  microseconds(wait.stopped) / 1000,
			  microseconds(rdtsc_ordered() - start) / 1000, TICKS_TO_COME + 1);
	check(last != 0, "fewer than %u ticks came in %llu ms the guest ran (%llu ms stopped)",
	      TICKS_TO_COME + 1, microseconds(4 * TICKS_TO_COME * expected) / 1000,
	      microseconds(wait.stopped) / 1000);
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
