/* SPDX-License-Identifier: MIT */
/* arch suite: the LAPIC timer ticks at the rate it was calibrated for. */
#include "arch/x86/apic.h"
#include "arch/x86/cpu.h"
#include "arch/x86/nmi.h"
#include "arch/x86/percpu.h"
#include "arch/x86/tsc.h"
#include "runner/test.h"

#define MEASURE_MS 60 /* 15 ticks at the default 250 Hz: a rate off by a quarter shows */
/* Stated tolerance: the tick count over MEASURE_MS within 25% of hz * MEASURE_MS / 1000. */
#define TOLERANCE_PERCENT 25

TEST(arch, timer_ticks_at_its_calibrated_rate)
{
	uint64_t expected = (uint64_t)timer_hz() * MEASURE_MS / 1000;
	uint64_t start_ticks = this_cpu()->ticks, start = rdtsc_ordered(), ticks;

	while (rdtsc_ordered() - start < tsc_cycles_from_ms(MEASURE_MS))
		cpu_relax();
	ticks = this_cpu()->ticks - start_ticks;
	test_diag("%llu ticks in %u ms at %u Hz, expected %llu", (unsigned long long)ticks,
		  MEASURE_MS, timer_hz(), (unsigned long long)expected);
	check(ticks * 100 >= expected * (100 - TOLERANCE_PERCENT) &&
		      ticks * 100 <= expected * (100 + TOLERANCE_PERCENT),
	      "%llu ticks, expected %llu +- %u%%", (unsigned long long)ticks,
	      (unsigned long long)expected, TOLERANCE_PERCENT);
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
