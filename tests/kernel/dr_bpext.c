/* SPDX-License-Identifier: MIT */
/* dr suite: AMD range data breakpoints through the DR0-3 address masks (BPEXT), on silicon. */
#include "arch/x86/cpuid.h"
#include "arch/x86/debug-registers.h"
#include "arch/x86/debugreg.h"
#include "arch/x86/msr.h"
#include "arch/x86/percpu.h"
#include "dr/bpext.h"
#include "dr/dr.h"
#include "runner/test.h"
#include "sched/sched.h"
#include "tests/kernel/lib/switch_window.h"

#define RANGE_LENGTH 64
#define ROUNDS 100

static uint8_t target[2 * RANGE_LENGTH] __attribute__((aligned(RANGE_LENGTH)));

/* CPUID 0x80000001 ECX[26]; QEMU TCG and KVM (which does not virtualise BPEXT) lack it. */
static void require_bpext(void)
{
	if (cpuid(CPUID_LEAF_EXTENDED, 0).eax < CPUID_LEAF_AMD_FEATURES ||
	    !(cpuid(CPUID_LEAF_AMD_FEATURES, 0).ecx & CPUID_80000001_ECX_BPEXT))
		test_skip("CPUID 0x80000001 ECX[26] BPEXT is clear: no DR address masks");
}

/* Write one byte of target and say whether the task took a hit of the breakpoint in slot. */
static bool write_hits(unsigned int offset)
{
	struct dr_hit hits[4];
	unsigned int count;

	dr_discard_hits(sched_current()->index);
	((volatile uint8_t *)target)[offset] = 1;
	count = dr_read_hits(sched_current()->index, hits, 4, NULL);
	return count == 1 && hits[0].address == (uint64_t)target;
}

/*
 * A 64-byte write range (Linux arch_build_bp_info(): DR7.LEN 1 byte, mask 63) fires for its
 * first, middle and last byte and not the byte after; its mask is 63 while installed and 0 after
 * (AMD APM Vol. 2 §13.1.1.3; Linux amd_set_dr_addr_mask()).
 */
TEST(dr, a_range_breakpoint_fires_across_its_range_and_its_mask_goes_with_it)
{
	struct dr_breakpoint range = { (uint64_t)target, DR_TYPE_WRITE, RANGE_LENGTH };
	unsigned int task = sched_current()->index, hardware;
	unsigned long dr7;
	int slot;

	require_bpext();
	slot = dr_install(task, &range, NULL, NULL);
	if (slot < 0)
		test_abort("dr_install of a %u-byte range: %s", RANGE_LENGTH,
			   dr_error_name((enum dr_error) - slot));
	for (hardware = 0; hardware < DR_SLOTS; hardware++)
		if (read_dr_address(hardware) == (uint64_t)target)
			break;
	check(hardware < DR_SLOTS, "no debug register holds the range's address");
	if (hardware < DR_SLOTS) {
		enum dr_type type;
		unsigned int length;

		dr7 = read_dr7();
		check(dr7_decode(dr7, hardware, &type, &length), "DR7 0x%lx", dr7);
		check_eq(DR_TYPE_WRITE, type);
		check_eq(1, length);
		check_eq(RANGE_LENGTH - 1, rdmsr(dr_mask_msr(hardware)));
	}
	check(write_hits(0), "no hit for the range's first byte");
	check(write_hits(RANGE_LENGTH / 2), "no hit for its middle byte");
	check(write_hits(RANGE_LENGTH - 1), "no hit for its last byte");
	check(!write_hits(RANGE_LENGTH), "a hit for the byte after it");
	check_eq(0, dr_uninstall(task, slot));
	if (hardware < DR_SLOTS)
		check_eq(0, rdmsr(dr_mask_msr(hardware)));
}

/* Two tasks with the same range switch without a mask write; with different ones, per switch. */
TEST(dr, a_switch_writes_a_mask_only_when_the_tasks_ranges_differ)
{
	static const unsigned int lengths[2][2] = { { 64, 64 }, { 64, 128 } };

	require_bpext();
	for (unsigned int differ = 0; differ < 2; differ++) {
		struct switch_window window = { .rounds = ROUNDS };
		struct task *a =
			task_create("a", switch_window_measure, &window, TASK_START_STOPPED);
		struct task *b = task_create("b", switch_window_yield, &window, TASK_START_STOPPED);
		struct dr_breakpoint first = { (uint64_t)target, DR_TYPE_WRITE,
					       lengths[differ][0] };
		struct dr_breakpoint second = { (uint64_t)target, DR_TYPE_WRITE,
						lengths[differ][1] };

		if (!a || !b)
			test_abort("task_create failed");
		check_eq(0, dr_install(a->index, &first, NULL, NULL));
		check_eq(0, dr_install(b->index, &second, NULL, NULL));
		task_continue(a);
		task_continue(b);
		check_eq(0, task_join(a, NULL));
		check_eq(0, task_join(b, NULL));
		test_diag("ranges of %u and %u bytes: %llu MSR writes in %llu switches",
			  lengths[differ][0], lengths[differ][1],
			  (unsigned long long)window.writes.msr,
			  (unsigned long long)window.switches);
		check(window.switches >= ROUNDS, "%llu switches",
		      (unsigned long long)window.switches);
		/* Different masks: one write per switch (dr/layout.h); the same: none. */
		check_eq(differ ? window.switches : 0, window.writes.msr);
	}
}
