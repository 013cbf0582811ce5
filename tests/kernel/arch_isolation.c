/* SPDX-License-Identifier: MIT */
/* arch suite: an unexpected exception or an overrun ends only the code that caused it. */
#include <stddef.h>

#include "arch/x86/cpu.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/gdt.h"
#include "arch/x86/probe.h"
#include "arch/x86/processor-flags.h"
#include "arch/x86/tsc.h"
#include "runner/test.h"
#include "tests/kernel/lib/faults.h"

#define SHORT_TIMEOUT_MS 20
#define SPIN_TIMEOUT_MS 8 /* two ticks: what per_test_timeout_fires waits out */

static void spin_forever(void *arg)
{
	(void)arg;
	for (;;)
		cpu_relax();
}

static void double_fault(void *arg)
{
	(void)arg;
	probe_double_fault();
}

static void return_normally(void *arg)
{
	*(int *)arg = 42;
}

TEST(arch, isolated_function_that_returns_is_reported_as_returned)
{
	struct isolation_outcome outcome;
	int value = 0;

	runner_isolate(return_normally, &value, SHORT_TIMEOUT_MS, &outcome);
	check_eq(ISOLATION_RETURNED, outcome.end);
	check_eq(42, value);
}

TEST(arch, unexpected_exception_ends_only_the_isolated_function)
{
	struct isolation_outcome outcome;

	runner_isolate(raise_invalid_opcode, NULL, SHORT_TIMEOUT_MS, &outcome);
	check_eq(ISOLATION_EXCEPTION, outcome.end);
	check_eq(X86_EXC_UD, outcome.vector);
	check_eq(0, outcome.error_code);
	check(is_ud2_in(raise_invalid_opcode, outcome.rip), "rip 0x%llx, function at %p",
	      (unsigned long long)outcome.rip, raise_invalid_opcode);
	/* Still here: the test goes on after the exception. */
	check_eq(RFLAGS_IF, read_rflags() & RFLAGS_IF);
}

TEST(arch, unexpected_page_fault_reports_cr2_and_error_code)
{
	struct isolation_outcome outcome;
	volatile uint8_t *address = (volatile uint8_t *)0x2345;

	runner_isolate(write_unmapped, (void *)address, SHORT_TIMEOUT_MS, &outcome);
	check_eq(ISOLATION_EXCEPTION, outcome.end);
	check_eq(X86_EXC_PF, outcome.vector);
	check_eq(PF_ERROR_WRITE, outcome.error_code);
	check_eq((uint64_t)address, outcome.cr2);
}

TEST(arch, per_test_timeout_fires)
{
	struct isolation_outcome outcome;
	uint64_t start = rdtsc_ordered(), elapsed_ms;

	runner_isolate(spin_forever, NULL, SPIN_TIMEOUT_MS, &outcome);
	elapsed_ms = (rdtsc_ordered() - start) * 1000 / tsc_hz();
	check_eq(ISOLATION_TIMEOUT, outcome.end);
	/* The tick is 4 ms; allow a few ticks of lateness and a slow emulator. */
	check(elapsed_ms >= SPIN_TIMEOUT_MS && elapsed_ms < SPIN_TIMEOUT_MS + 200,
	      "timed out after %llu ms, limit %u ms", (unsigned long long)elapsed_ms,
	      SPIN_TIMEOUT_MS);
}

TEST(arch, double_fault_is_handled_on_its_ist_stack)
{
	struct isolation_outcome outcome;
	uint64_t top = tss_ist_stack_top(IST_DOUBLE_FAULT);

	runner_isolate(double_fault, NULL, SHORT_TIMEOUT_MS, &outcome);
	check_eq(ISOLATION_EXCEPTION, outcome.end);
	check_eq(X86_EXC_DF, outcome.vector);
	check_eq(0, outcome.error_code);
	check(outcome.handler_stack < top && outcome.handler_stack >= top - IST_STACK_SIZE,
	      "frame at 0x%llx, #DF stack 0x%llx-0x%llx", (unsigned long long)outcome.handler_stack,
	      (unsigned long long)(top - IST_STACK_SIZE), (unsigned long long)top);
}
