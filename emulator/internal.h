/* SPDX-License-Identifier: MIT */
/* What the files of emulator/ share: the per-CPU model state and the engine's entry points. */
#ifndef EMULATOR_INTERNAL_H
#define EMULATOR_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/percpu.h"
#include "arch/x86/regs.h"
#include "emulator/emulator.h"
#include "emulator/pebs_record.h"
#include "emulator/profile.h"
#include "emulator/registers.h"
#include "kernel/switch_hooks.h"

/* Which privilege levels the model must observe by single-stepping. */
#define OBSERVE_KERNEL (1u << 0)
#define OBSERVE_USER (1u << 1)

/* One buffer's four DS fields as the model last wrote or accepted them (rule 3). */
struct emulator_ds_fields {
	uint64_t base, index, max, threshold;
};

/*
 * A PEBS record in flight when PEBS was turned off (SDM "Re-configuring PEBS Facilities":
 * "latent residual PEBS records" complete "at their previously specified buffer address"):
 * where it and the index update land, and when (store.c, emulator_pebs_in_flight()).
 */
struct emulator_pebs_flight {
	bool pending;
	struct pebs_assist assist;
	uint64_t at, bytes; /* the record's place, checked against the fields at the disable */
	uint64_t area, threshold; /* IA32_DS_AREA and the PEBS threshold at the disable */
	uint64_t lands; /* TSC: the first model entry from here lands it */
};

struct emulator_cpu {
	struct emulator_registers registers;
	/* Single-stepping: the instruction that runs next, as seen at the last step. */
	bool pending_valid;
	bool pending_user;
	uint64_t pending_rip;
	uint64_t exceptions_seen; /* this_cpu()->stepped_exceptions at the last step */
	/*
	 * Whose TF: the live kernel flow's (it passes from task to task at a switch, as RFLAGS
	 * does), that of the kernel frame an interrupt saved for a task, and a task's ring-3 frame.
	 */
	bool tf_kernel;
	bool tf_interrupted[SWITCH_TASKS_MAX];
	bool tf_user[SWITCH_TASKS_MAX];
	/* GP counters with EVTSEL.EDGE whose condition held in their previous cycle. */
	uint32_t edge_asserted;
	/* Counters whose overflow armed PEBS: the assist comes with their next event. */
	uint64_t pebs_armed;
	struct emulator_pebs_flight pebs_flight;
	/*
	 * NMIs taken inside the model's own service of the stepped flow (nmi.c): recorded where the
	 * flow's records put them. nmis_before came after the service's step was processed (DR6.BS
	 * clear), so before the next instruction's record; nmis_after before it was (BS set), so
	 * after that step's record. Written from NMI context: atomic.
	 */
	unsigned int nmis_before, nmis_after;
	/* An exception delivered to the stepped flow has not returned to it (its handler runs). */
	bool flow_in_exception;
	/*
	 * Rule 21: the handler of an exception or interrupt (not the timer's) delivered to the
	 * stepped flow while ring 0 is observed, stepped as the flow is (step.c,
	 * emulator_delivery()). frame: its entry frame, whose resume ends it; arming: divert.c's
	 * POPF set TF and the #DB after its next instruction, the model's, is still to come; tf:
	 * the model's TF in the handler (tf_kernel stays the interrupted flow's).
	 */
	struct {
		bool active, arming, tf;
		const struct cpu_regs *frame;
	} handler;
	/*
	 * What the counting registers (EVTSEL, FIXED_CTR_CTRL, GLOBAL_CTRL) enable, worked out
	 * when they change (emulator_counters_changed()), not at every step.
	 */
	struct {
		uint32_t gp, fixed; /* enabled counters */
		unsigned int observed; /* OBSERVE_* bits the enabled counters ask for */
	} counting;
	/* The DS fields, while the feature is on (rule 3). */
	bool bts_tracking, pebs_tracking;
	struct emulator_ds_fields bts_seen, pebs_seen;
	/* The #DB or #UD being handled is the model's own service (rule 21: exempt). */
	bool serviced;
	/*
	 * The resume hook runs: a switch made inside an exception handler can have set the live
	 * flow's TF, so the hook's own code is stepped. Such steps are the model's service, never
	 * re-enter it, and leave nothing pending.
	 */
	bool in_resume;
	/* A PMI was delivered and its handler has not returned yet (rule 14). */
	bool pmi_outstanding, pmi_froze;
	/* An overflow asked for a PMI; it is requested when pmi_skid_left more have retired. */
	bool pmi_skid_pending;
	unsigned int pmi_skid_left;
	uint64_t pmi_status, pmi_global_ctrl; /* as the handler found them */
	/*
	 * Status bits the PMI handler acknowledged (GLOBAL_OVF_CTRL, AMD GlobalStatusClr): one the
	 * hardware sets again after that, from the handler's own counted instructions once it
	 * restarted the counters, was acknowledged all the same (rule 14).
	 */
	uint64_t pmi_acknowledged;
	struct emulator_stats stats;
	/* The LBR stack at a PEBS assist, for its record's LBR group (store.c). */
	struct pebs_assist_lbr pebs_lbr[LBR_LEGACY_MAX_DEPTH];
	/* Violations of the rules, latched for the runner (never printed from a trap). */
	unsigned int violations;
	char violation[EMULATOR_VIOLATION_MAX];
	unsigned int warnings;
	char warning[EMULATOR_VIOLATION_MAX];
};

struct emulator_cpu *emulator_this_cpu(void);

/* The model's TF in the kernel context that runs: a stepped handler's, else the flow's. */
static inline bool *emulator_kernel_tf(struct emulator_cpu *cpu)
{
	return cpu->handler.active ? &cpu->handler.tf : &cpu->tf_kernel;
}

/*
 * The stepped handler is over (its resume, a switch away from it, or it was unwound). A switch
 * ends it with TF live: active goes first, so that each step in between finds its owner in
 * handler.tf or else in tf_kernel (emulator_kernel_tf()).
 */
static inline void emulator_handler_end(struct emulator_cpu *cpu)
{
	cpu->handler.active = false;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	cpu->handler.arming = cpu->handler.tf = false;
	cpu->handler.frame = NULL;
}
/* A PMI held back by the profile's skid, requested now: the model stops observing (rule 22). */
void emulator_pmi_skid_flush(struct emulator_cpu *cpu);
const struct emulator_profile *emulator_profile(void);
/* Whether the BTS threshold PMI sets GLOBAL_STATUS bit 62 (emulate=...,bts_status:0|1). */
bool emulator_bts_sets_status(void);

/* Latch a broken rule (rule is its number in docs/emulated-cpu.md) or a warning. */
void emulator_violation(unsigned int rule, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void emulator_warning(unsigned int rule, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* OBSERVE_* bits: what the registers say must be stepped now; none once this CPU has overrun
 * (arch/x86/percpu.h). */
unsigned int emulator_observed(const struct emulator_cpu *cpu);
/* Call after the counting registers of cpu, whose profile is p, changed. */
void emulator_counters_changed(struct emulator_cpu *cpu, const struct emulator_profile *p);

/*
 * Rules 15-18, after a WRMSR of index with value took effect; before is the register file as it
 * was (step.c says what each rule reports).
 */
void emulator_pebs_write_check(struct emulator_cpu *cpu, const struct emulator_registers *before,
			       uint32_t index, uint64_t value);

/* The #DB side: one completed instruction. */
bool emulator_step(struct cpu_regs *regs, unsigned long dr7);
/* A system call from ring 3: retire the SYSCALL whose step never traps, and record it. */
void emulator_system_call(struct cpu_regs *regs);
/*
 * Rule 21: an interrupt or exception delivered to a context the model steps (regs: its frame,
 * before any handler ran), and the IRETQ at iret_site that resumes one. Returns whether the
 * handler is to be stepped (divert.c sets TF on the way out of the hook).
 */
bool emulator_delivery(struct cpu_regs *regs);
void emulator_iret(struct cpu_regs *regs, uint64_t iret_site);
/* Rule 21 for NMIs (nmi.c): the cpu_model_ops hook, and the deferred records of those taken in
 * the model's service, flushed from the flow's instruction at, in ring user, at the flow's next
 * record point (step.c). */
void emulator_nmi(struct cpu_regs *regs);
void emulator_nmi_flush(struct emulator_cpu *cpu, unsigned int *deferred, uint64_t at, bool user,
			struct cpu_regs *regs);
bool emulator_steps_context(const struct emulator_cpu *cpu, const struct cpu_regs *regs);
/* Count one retired instruction at the given privilege (a diverted RDMSR/WRMSR/CPUID too). */
void emulator_retire(struct emulator_cpu *cpu, bool user, bool branch, uint64_t eventing_ip,
		     struct cpu_regs *regs);

/* The Debug Store side (store.c). */
void emulator_bts_store(struct emulator_cpu *cpu, uint64_t from, uint64_t to, bool user);
/* Rule 21: a far transfer's record, stored when either of its rings is traced. */
void emulator_bts_store_transfer(struct emulator_cpu *cpu, uint64_t from, bool from_user,
				 uint64_t to, bool to_user);
bool emulator_pebs_assist(struct emulator_cpu *cpu, uint64_t bits, uint64_t eventing_ip,
			  struct cpu_regs *regs);
/* The architectural state a PEBS record captures, from a stepped context's frame. */
struct pebs_machine_state;
void emulator_machine_state(const struct cpu_regs *regs, struct pebs_machine_state *state);
/*
 * Rule 25: the assist on an arch-PEBS part (arch_pebs_store.c), as emulator_pebs_assist() is
 * for the DS area's PEBS: one record at IA32_PEBS_INDEX.WR in the buffer IA32_PEBS_BASE names,
 * the counters reloaded from their CFG_C, the threshold PMI with GLOBAL_STATUS bit 54.
 */
bool emulator_arch_pebs_assist(struct emulator_cpu *cpu, uint64_t bits, uint64_t eventing_ip,
			       struct cpu_regs *regs);
/* Rules 17 and 18 for a CFG_C written while its counter counts, after the WRMSR took effect. */
void emulator_arch_pebs_write_check(struct emulator_cpu *cpu,
				    const struct emulator_registers *before);
/*
 * PEBS turned off (PEBS_ENABLE lost bits) for the armed counters in bits: their assist completes
 * as the disabling WRMSR retires, but its record and index update are in flight and land only
 * EMULATOR_PEBS_FLIGHT_US later, at the model's first entry on this CPU from then
 * (emulator_pebs_land(), at each diverted access, step and interrupt). docs/emulated-cpu.md.
 */
#define EMULATOR_PEBS_FLIGHT_US 1000 /* choice: the SDM gives the quiescent period no length */
void emulator_pebs_in_flight(struct emulator_cpu *cpu, uint64_t bits, struct cpu_regs *regs);
void emulator_pebs_land(struct emulator_cpu *cpu);
/* Rules 2 and 3 while a feature is on; called at every step and when a feature turns on. */
void emulator_ds_check_fields(struct emulator_cpu *cpu);
bool emulator_pebs_buffered_groups(struct emulator_cpu *cpu, uint64_t *groups);
void emulator_ds_features_changed(struct emulator_cpu *cpu, uint64_t old_debugctl,
				  uint64_t old_pebs_enable);

/* Request a PMI through LVTPC, as the local APIC does for an overflow. */
void emulator_pmi_request(struct emulator_cpu *cpu);

#endif
