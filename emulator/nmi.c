/* SPDX-License-Identifier: MIT */
/* The emulated CPU's view of an NMI in the flow it steps: a delivery and an IRETQ (rule 21). */
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/debug-registers.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/percpu.h"
#include "arch/x86/traps.h"
#include "emulator/internal.h"

/*
 * One NMI that came before the flow's instruction at (SDM Vol. 3B DEBUGCTL.TR: a record "when the
 * processor detects a taken branch, interrupt, or exception"): its delivery is a record from at
 * to the NMI gate's target and counts nothing; its handler is not observed (docs/emulated-cpu.md);
 * its IRETQ retires in ring 0 as a far branch and is a record back to at. A transfer between
 * rings is stored when either ring is traced, as for any delivery.
 */
static void record(struct emulator_cpu *cpu, uint64_t at, bool user, struct cpu_regs *regs)
{
	uint64_t iret = entry_iret_site(X86_EXC_NMI);

	emulator_bts_store_transfer(cpu, at, user, idt_gate_target(X86_EXC_NMI), false);
	cpu->stats.taken_branches++;
	emulator_retire(cpu, false, true, iret, regs);
	emulator_bts_store_transfer(cpu, iret, false, at, user);
	cpu->stats.nmis_recorded++;
}

/*
 * An NMI comes between any two instructions. Where it interrupted the stepped flow itself (the
 * model's TF in its frame), it is recorded at once. The flow steps every instruction, so an NMI
 * usually lands in the model's service of a step instead (a single-step #DB has priority over
 * an NMI, SDM Vol. 3A "Priority Among Concurrent Events"; or a diverted access's #UD): silicon
 * would have taken it between the flow's two instructions, so it is recorded there, deferred to
 * the flow's next record point (emulator_nmi_flush()), which is after the step's own record if
 * the step was not processed yet (DR6.BS still set) and before the next one's if it was. A
 * handler the model steps (step.c, emulator_delivery()) is such a flow; one inside a handler
 * it does not step (the timer's) is not observed: counted (nmis_unobserved), not recorded.
 * Interrupted model code is never re-entered: the deferral is an atomic count.
 */
void emulator_nmi(struct cpu_regs *regs)
{
	struct emulator_cpu *cpu = emulator_this_cpu();

	if (!cpu->in_resume && emulator_steps_context(cpu, regs)) {
		record(cpu, regs->rip, regs_from_user(regs), regs);
		return;
	}
	if (!cpu->pending_valid || !emulator_observed(cpu))
		return;
	if ((this_cpu()->interrupt_depth || cpu->flow_in_exception) && !cpu->handler.active) {
		cpu->stats.nmis_unobserved++;
		return;
	}
	__atomic_add_fetch((read_dr6() & DR6_BS) ? &cpu->nmis_after : &cpu->nmis_before, 1,
			   __ATOMIC_RELAXED);
}

void emulator_nmi_flush(struct emulator_cpu *cpu, unsigned int *deferred, uint64_t at, bool user,
			struct cpu_regs *regs)
{
	for (unsigned int n = __atomic_exchange_n(deferred, 0, __ATOMIC_RELAXED); n; n--)
		record(cpu, at, user, regs);
}
