/* SPDX-License-Identifier: MIT */
/* arch suite: the LAPIC timer ticks at the rate it was calibrated for. */
#include "arch/x86/apic.h"
#include "arch/x86/cpu.h"
#include "arch/x86/nmi.h"
#include "arch/x86/percpu.h"
#include "arch/x86/tsc.h"
#include "runner/test.h"

/*
 * The time from one tick to the MEASURED_TICKS-th after it, by the TSC: starting at a tick, not
 * at an arbitrary moment, the count is exact and only the two interrupts' latencies blur it.
 * Stated tolerance: within 20% of MEASURED_TICKS / hz (16 ms at the default 250 Hz): a rate off
 * by a quarter either way fails.
 */
#define MEASURED_TICKS 4
#define TOLERANCE_PERCENT 20

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
	uint64_t expected = tsc_hz() * MEASURED_TICKS / timer_hz();
	uint64_t deadline = rdtsc_ordered() + 4 * expected;
	uint64_t first_tick = this_cpu()->ticks + 1, start, end;

	start = wait_for_tick_after(first_tick - 1, deadline);
	end = start ? wait_for_tick_after(first_tick + MEASURED_TICKS - 1, deadline) : 0;
	if (!check(end != 0, "%llu of %u ticks came in %u ms",
		   (unsigned long long)(this_cpu()->ticks + 1 - first_tick), MEASURED_TICKS + 1,
		   4 * MEASURED_TICKS * 1000 / timer_hz()))
		return;
	test_diag("%u ticks at %u Hz took %llu us, expected %llu", MEASURED_TICKS, timer_hz(),
		  microseconds(end - start), microseconds(expected));
	check((end - start) * 100 >= expected * (100 - TOLERANCE_PERCENT) &&
		      (end - start) * 100 <= expected * (100 + TOLERANCE_PERCENT),
	      "%u ticks took %llu us, expected %llu +- %u%%", MEASURED_TICKS,
	      microseconds(end - start), microseconds(expected), TOLERANCE_PERCENT);
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
