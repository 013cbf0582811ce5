/* SPDX-License-Identifier: MIT */
/* arch suite: the LAPIC timer ticks at the rate it was calibrated for. */
#include "arch/x86/apic.h"
#include "arch/x86/cpu.h"
#include "arch/x86/percpu.h"
#include "arch/x86/tsc.h"
#include "runner/test.h"

#define MEASURE_MS 100
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

TEST(arch, halt_wakes_on_the_timer)
{
	uint64_t before = this_cpu()->ticks;

	halt();
	check(this_cpu()->ticks > before, "ticks %llu before hlt, %llu after",
	      (unsigned long long)before, (unsigned long long)this_cpu()->ticks);
}
