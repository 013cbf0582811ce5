/* SPDX-License-Identifier: MIT */
/* Self-monitoring pages: mapped read-only at USER_PMU_BASE; CR4.PCE for their tasks only. */
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/cpu.h"
#include "arch/x86/paging.h"
#include "arch/x86/percpu.h"
#include "arch/x86/processor-flags.h"
#include "arch/x86/user-abi.h"
#include "kernel/address_space.h"
#include "kernel/pfa.h"
#include "kernel/switch_hooks.h"
#include "lib/string.h"
#include "pmu/rotate.h"
#include "pmu/selfmon.h"

_Static_assert(sizeof(((struct pmu_user_page *)0)->event) /
			       sizeof(((struct pmu_user_page *)0)->event[0]) ==
		       PMU_SET_MAX_EVENTS,
	       "a page holds every event of a set");
_Static_assert(sizeof(struct pmu_user_page) <= PAGE_SIZE, "one page");

struct pmu_user_page *pmu_selfmon_pages[SWITCH_TASKS_MAX];
static uint64_t roots[SWITCH_TASKS_MAX];
/* Whether this CPU's CR4.PCE is set: known, so a switch between others reads no CR4. */
static DEFINE_PER_CPU(bool, pce_set);

int pmu_selfmon_map(unsigned int task)
{
	uint64_t root, phys;

	if (task >= SWITCH_TASKS_MAX)
		return -1;
	if (pmu_selfmon_pages[task])
		return 0;
	root = switch_task_address_space(task);
	if (!root)
		return -1;
	phys = pfa_alloc();
	if (!phys)
		return -1;
	memset(phys_to_virt(phys), 0, PAGE_SIZE);
	/* Read-only, no-execute, not owned: this file frees it (as ds/'s user views). */
	if (!address_space_map(root, USER_PMU_BASE, phys, PTE_USER | PTE_NO_EXECUTE)) {
		address_space_unmap(root, USER_PMU_BASE);
		pfa_free(phys);
		return -1;
	}
	roots[task] = root;
	pmu_selfmon_pages[task] = phys_to_virt(phys);
	return 0;
}

void pmu_selfmon_exit(unsigned int task)
{
	if (task >= SWITCH_TASKS_MAX || !pmu_selfmon_pages[task])
		return;
	address_space_unmap(roots[task], USER_PMU_BASE);
	pfa_free(virt_to_phys(pmu_selfmon_pages[task]));
	pmu_selfmon_pages[task] = NULL;
	roots[task] = 0;
}

/* RDPMC at CPL 3 needs CR4.PCE (SDM Vol. 2B RDPMC); Linux sets it per mm (cr4_update_pce()). */
void pmu_selfmon_switch_in(unsigned int task)
{
	bool want = pmu_selfmon_page(task) != NULL;

	if (want == *this_cpu_ptr(pce_set))
		return;
	write_cr4(want ? read_cr4() | CR4_PCE : read_cr4() & ~CR4_PCE);
	*this_cpu_ptr(pce_set) = want;
}
