/* SPDX-License-Identifier: MIT */
/* dr suite: the IA32_DEBUGCTL shadow starts from what each CPU holds, not from 0. */
#include "arch/x86/cpu.h"
#include "arch/x86/debugctl.h"
#include "arch/x86/msr-index.h"
#include "arch/x86/msr.h"
#include "dr/dr.h"
#include "kernel/smp.h"
#include "runner/test.h"
#include "sched/sched.h"
#include "tests/kernel/lib/dr_targets.h"

struct debugctl_seen {
	uint32_t fault;
	uint64_t msr;
	uint64_t shadow;
};

static void read_debugctl_here(void *arg)
{
	struct debugctl_seen *seen = arg;

	seen->fault = rdmsr_safe(MSR_IA32_DEBUGCTL, &seen->msr);
	seen->shadow = debugctl_shadow();
}

TEST(dr, debugctl_shadow_equals_the_msr_on_every_cpu)
{
	for (unsigned int cpu = 0; cpu < smp_cpus(); cpu++) {
		struct debugctl_seen seen = { 0 };

		if (!smp_call(cpu, read_debugctl_here, &seen))
			test_abort("CPU %u took no call", cpu);
		if (seen.fault)
			test_skip("RDMSR IA32_DEBUGCTL faults here");
		check(seen.shadow == seen.msr, "CPU %u: shadow 0x%llx, MSR 0x%llx", cpu,
		      (unsigned long long)seen.shadow, (unsigned long long)seen.msr);
	}
}

/*
 * As firmware would: a bit set behind the shadow's back before dr_init_cpu(), the function each
 * CPU runs as it comes up. BTS_OFF_OS alone does nothing (BTS stays off); the emulated CPU keeps
 * it on every profile.
 */
TEST(dr, debugctl_shadow_starts_from_the_msr_when_a_cpu_comes_up)
{
	unsigned long flags = local_irq_save();
	uint64_t found = 0;
	uint64_t shadow;

	if (wrmsr_safe(MSR_IA32_DEBUGCTL, DEBUGCTL_BTS_OFF_OS) ||
	    rdmsr_safe(MSR_IA32_DEBUGCTL, &found) || !(found & DEBUGCTL_BTS_OFF_OS)) {
		wrmsr_safe(MSR_IA32_DEBUGCTL, 0);
		local_irq_restore(flags);
		test_skip("IA32_DEBUGCTL does not keep BTS_OFF_OS here");
	}
	dr_init_cpu();
	shadow = debugctl_shadow();
	debugctl_update(DEBUGCTL_BTS_OFF_OS, 0); /* through the shadow, as dr/ and ds/ write it */
	rdmsr_safe(MSR_IA32_DEBUGCTL, &found);
	if (found) { /* the shadow missed the bit: put things back by hand */
		wrmsr_safe(MSR_IA32_DEBUGCTL, 0);
		dr_init_cpu();
	}
	local_irq_restore(flags);
	check_eq(DEBUGCTL_BTS_OFF_OS, shadow);
	check_eq(0, found);
	check_eq(0, debugctl_shadow());
}

/*
 * The CPU clears BTF when it delivers #DB (SDM, as quoted in Linux's exc_debug_user()): the
 * shadow follows, and dr/ sets BTF again for a task that steps on branches. BTF without TF
 * changes nothing for this kernel task.
 */
TEST(dr, debugctl_shadow_follows_the_btf_that_a_db_clears)
{
	unsigned int task = sched_current()->index;
	struct dr_hit hits[16];
	unsigned long flags;
	uint64_t msr = 0;

	if (!dr_branch_step_supported())
		test_skip("IA32_DEBUGCTL does not keep BTF here (it reads back without it)");
	check_eq(0, dr_set_branch_step(task, true));
	dr_target_install((uint64_t)dr_target_function, DR_TYPE_EXECUTE, 1);
	flags = local_irq_save();
	dr_target_function();
	rdmsr_safe(MSR_IA32_DEBUGCTL, &msr);
	local_irq_restore(flags);
	check_eq(DEBUGCTL_BTF, msr & DEBUGCTL_BTF);
	check_eq(msr, debugctl_shadow());
	dr_uninstall_all(task);
	dr_set_branch_step(task, false);
	rdmsr_safe(MSR_IA32_DEBUGCTL, &msr);
	check_eq(0, msr & DEBUGCTL_BTF);
	check_eq(msr, debugctl_shadow());
	check_eq(1, dr_target_hits(hits));
}
