/* SPDX-License-Identifier: MIT */
/* emulator suite: a step at an address a disabled debug-register slot still holds. */
#include <stdint.h>

#include "arch/x86/debug-registers.h"
#include "arch/x86/debugctl.h"
#include "arch/x86/msr.h"
#include "arch/x86/paging.h"
#include "arch/x86/probe.h"
#include "ds/ds.h"
#include "ds/records.h"
#include "ds/save_area.h"
#include "emulator/emulator.h"
#include "lib/string.h"
#include "runner/test.h"
#include "tests/kernel/lib/ds_util.h"
#include "tests/kernel/lib/emulator_util.h"

#define RECORDS 64
#define STALE_SLOT (DR_SLOTS - 1)

static struct ds_area area __attribute__((aligned(PAGE_SIZE)));
static struct bts_record records[RECORDS] __attribute__((aligned(PAGE_SIZE)));

/*
 * dr/ disables a removed breakpoint in DR7 and leaves its address in DRn, as Linux's
 * arch_uninstall_hw_breakpoint() does. The CPU may then set that slot's B bit beside BS when it
 * single-steps the instruction there (SDM Vol. 3 §18.2.3; QEMU's helper_single_step() does).
 * The model's step at it is still the model's own #DB, not an unexpected one for the test.
 */
TEST(emulator, a_step_at_a_disabled_slots_address_is_the_models_own_debug_exception)
{
	unsigned long held = read_dr_address(STALE_SLOT);
	uint64_t used;

	require_emulator();
	if (ds_support()->bts_reason[0])
		test_skip("%s", ds_support()->bts_reason);
	check(!(read_dr7() & DR7_ENABLE_MASK(STALE_SLOT)), "slot %u is enabled: DR7 0x%lx",
	      STALE_SLOT, read_dr7());
	write_dr_address(STALE_SLOT, (unsigned long)probe_branch_1);
	memset(&area, 0, sizeof(area));
	area.bts_base = area.bts_index = (uint64_t)records;
	area.bts_max = area.bts_base + sizeof(records);
	area.bts_threshold = area.bts_max + sizeof(records[0]);
	wrmsr(MSR_IA32_DS_AREA, (uint64_t)&area);
	debugctl_update(DEBUGCTL_TR | DEBUGCTL_BTS, DEBUGCTL_TR | DEBUGCTL_BTS);
	probe_branches();
	debugctl_update(DEBUGCTL_TR | DEBUGCTL_BTS, 0);
	wrmsr(MSR_IA32_DS_AREA, 0);
	write_dr_address(STALE_SLOT, held);
	used = (area.bts_index - area.bts_base) / sizeof(records[0]);
	/* An interrupt that came just before the jump is a record from it too (rule 21). */
	for (uint64_t i = 0; i < used; i++)
		if (records[i].from == (uint64_t)probe_branch_1 &&
		    !record_of_an_entry(&records[i])) {
			check_eq((uint64_t)probe_branch_1_target, records[i].to);
			return;
		}
	check(0, "no record from probe_branch_1 (0x%llx) in %llu records",
	      (unsigned long long)probe_branch_1, (unsigned long long)used);
}
