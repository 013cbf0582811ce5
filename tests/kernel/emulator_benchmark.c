/* SPDX-License-Identifier: MIT */
/* emulator suite: what observing an instruction costs the model here (docs/emulated-cpu.md). */
#include <stdint.h>

#include "arch/x86/cpu.h"
#include "arch/x86/msr.h"
#include "arch/x86/probe.h"
#include "arch/x86/tsc.h"
#include "lib/sort.h"
#include "runner/test.h"
#include "tests/kernel/emulator_util.h"

#define ITERATIONS 500 /* 1,000 instructions a sample */
#define SAMPLES 9
#define EVENT_INSTRUCTIONS 0xc0

static uint64_t timed_loop(void)
{
	uint64_t start = rdtsc_ordered();

	probe_instruction_loop(ITERATIONS);
	return rdtsc_ordered() - start;
}

/* Median TSC cycles of the loop, with the test counter counting kernel instructions or not. */
static uint64_t median_loop_cycles(bool counting)
{
	unsigned int counter = emulator_test_counter();
	uint64_t samples[SAMPLES];

	for (unsigned int i = 0; i < SAMPLES; i++) {
		if (counting) {
			wrmsr(MSR_IA32_PERFEVTSEL0 + counter,
			      EVENT_INSTRUCTIONS | PERFEVTSEL_OS | PERFEVTSEL_EN);
			wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 1ull << counter);
		}
		samples[i] = timed_loop();
		if (counting) {
			wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 0);
			wrmsr(MSR_IA32_PERFEVTSEL0 + counter, 0);
		}
	}
	sort_u64(samples, SAMPLES);
	return percentile_u64(samples, SAMPLES, 50);
}

/*
 * Each observed instruction is a single-step #DB round trip through the model. The numbers
 * say how slow the model is on this platform, and nothing about any silicon.
 */
TEST(emulator, benchmark_single_step_cost)
{
	uint64_t native, stepped, steps_before = emulator_stats().steps, steps;
	uint64_t instructions = 2ull * ITERATIONS;

	require_emulator();
	native = median_loop_cycles(false);
	stepped = median_loop_cycles(true);
	steps = emulator_stats().steps - steps_before;
	check(steps >= SAMPLES * instructions, "%llu steps for %u loops of %llu instructions",
	      (unsigned long long)steps, SAMPLES, (unsigned long long)instructions);
	check(stepped > native, "stepped %llu cycles, native %llu", (unsigned long long)stepped,
	      (unsigned long long)native);
	test_diag("metric emulator.step_cost cycles_per_stepped_instruction=%llu "
		  "cycles_per_native_instruction=%llu.%02llu slowdown=%llu "
		  "steps_per_second=%llu",
		  (unsigned long long)(stepped / instructions),
		  (unsigned long long)(native / instructions),
		  (unsigned long long)(native * 100 / instructions % 100),
		  (unsigned long long)(stepped / (native ? native : 1)),
		  (unsigned long long)(instructions * tsc_hz() / (stepped ? stepped : 1)));
}
