/* SPDX-License-Identifier: MIT */
/* emulator suite: what observing an instruction costs the model (docs/emulated-cpu.md). */
#include <stdint.h>

#include "arch/x86/cpu.h"
#include "arch/x86/msr.h"
#include "arch/x86/probe.h"
#include "arch/x86/tsc.h"
#include "lib/sort.h"
#include "runner/test.h"
#include "tests/kernel/lib/budget.h"
#include "tests/kernel/lib/emulator_util.h"

/*
 * Every instruction of the stepped samples is single-stepped: budget=quick 5 samples of 200
 * instructions (about 1,000 steps; docs/platforms.md: what a step costs), budget=soak (make
 * bench) 9 of 1,000.
 */
#define ITERATIONS_QUICK 100
#define ITERATIONS_SOAK 500
#define SAMPLES_QUICK 5
#define SAMPLES_MAX 9
#define EVENT_INSTRUCTIONS 0xc0

static uint64_t timed_loop(uint64_t iterations)
{
	uint64_t start = rdtsc_ordered();

	probe_instruction_loop(iterations);
	return rdtsc_ordered() - start;
}

/* Median TSC cycles of the loop, with the test counter counting kernel instructions or not. */
static uint64_t median_loop_cycles(bool counting, unsigned int count, uint64_t iterations)
{
	unsigned int counter = emulator_test_counter();
	uint64_t samples[SAMPLES_MAX];

	for (unsigned int i = 0; i < count; i++) {
		if (counting) {
			wrmsr(MSR_IA32_PERFEVTSEL0 + counter,
			      EVENT_INSTRUCTIONS | PERFEVTSEL_OS | PERFEVTSEL_EN);
			wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 1ull << counter);
		}
		samples[i] = timed_loop(iterations);
		if (counting) {
			wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 0);
			wrmsr(MSR_IA32_PERFEVTSEL0 + counter, 0);
		}
	}
	sort_u64(samples, count);
	return percentile_u64(samples, count, 50);
}

/*
 * Each observed instruction is a single-step #DB round trip through the model. The numbers
 * say how slow the model is on this platform, and nothing about any silicon.
 */
TEST_OBSERVING(emulator, benchmark_single_step_cost, 1200)
{
	unsigned int samples = (unsigned int)budget_count(SAMPLES_QUICK, SAMPLES_MAX);
	uint64_t iterations = budget_count(ITERATIONS_QUICK, ITERATIONS_SOAK);
	uint64_t native, stepped, steps_before = emulator_stats().steps, steps;
	uint64_t instructions = 2ull * iterations;

	require_emulated_intel_pmu();
	native = median_loop_cycles(false, samples, iterations);
	stepped = median_loop_cycles(true, samples, iterations);
	steps = emulator_stats().steps - steps_before;
	check(steps >= samples * instructions, "%llu steps for %u loops of %llu instructions",
	      (unsigned long long)steps, samples, (unsigned long long)instructions);
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
