/* SPDX-License-Identifier: MIT */
/* dr suite: a pointer argument that faults does so before dr/'s lock, failing only its caller. */
#include <stdint.h>

#include "arch/x86/cpuid.h"
#include "arch/x86/exceptions.h"
#include "dr/dr.h"
#include "runner/test.h"
#include "sched/sched.h"
#include "tests/kernel/lib/dr_targets.h"

/* Non-canonical: any access is #GP(0), whatever the page tables map. */
#define NON_CANONICAL 0x8000000000000000ull

static void install_through_a_faulting_pointer(void *arg)
{
	(void)arg;
	dr_install(sched_current()->index, (const struct dr_breakpoint *)NON_CANONICAL, NULL, NULL);
}

static void install_many_into_a_faulting_slots_array(void *arg)
{
	static const struct dr_breakpoint breakpoint = { (uint64_t)&dr_target_data[0],
							 DR_TYPE_WRITE, 8 };

	(void)arg;
	dr_install_many(sched_current()->index, &breakpoint, 1, (int *)NON_CANONICAL);
}

/* The fault ends the isolated call alone; dr_lock is free for the next install. */
static void check_faults_alone(void (*call)(void *), const char *what)
{
	struct isolation_outcome outcome;

	runner_isolate(call, NULL, 1000, &outcome);
	check(outcome.end == ISOLATION_EXCEPTION && outcome.vector == X86_EXC_GP,
	      "%s: end %u, vector %u, expected an exception, #GP", what, outcome.end,
	      outcome.vector);
	check_eq(0, dr_target_install((uint64_t)&dr_target_data[1], DR_TYPE_WRITE, 8));
	check_eq(1, dr_uninstall_all(sched_current()->index));
}

TEST(dr, a_faulting_breakpoint_pointer_fails_only_its_caller)
{
	check_faults_alone(install_through_a_faulting_pointer, "dr_install");
}

TEST(dr, a_faulting_slots_array_fails_only_its_caller)
{
	check_faults_alone(install_many_into_a_faulting_slots_array, "dr_install_many");
}

/*
 * A range data breakpoint (a power of two beyond 8 bytes, aligned) needs AMD's address masks.
 * Where CPUID 0x80000001 ECX[26] is clear (QEMU TCG, KVM, the emulated CPU, every Intel part)
 * dr_install() refuses it with that reason and changes nothing.
 */
TEST(dr, a_range_breakpoint_is_refused_with_its_reason_without_bpext)
{
	static uint8_t page[4096] __attribute__((aligned(4096)));
	struct dr_breakpoint range = { (uint64_t)page, DR_TYPE_WRITE, sizeof(page) };
	unsigned int before = dr_task_count(sched_current()->index);
	int slot;

	if (cpuid(CPUID_LEAF_EXTENDED, 0).eax >= CPUID_LEAF_AMD_FEATURES &&
	    (cpuid(CPUID_LEAF_AMD_FEATURES, 0).ecx & CPUID_80000001_ECX_BPEXT))
		test_skip("CPUID 0x80000001 ECX[26] BPEXT is set: ranges are taken (dr_bpext.c)");
	slot = dr_install(sched_current()->index, &range, NULL, NULL);
	test_diag("dr_install of a 4096-byte write range: %d (%s)", slot,
		  slot < 0 ? dr_error_name((enum dr_error) - slot) : "installed");
	check_eq(-DR_ERROR_NEEDS_BPEXT, slot);
	check_eq(before, dr_task_count(sched_current()->index));
}
