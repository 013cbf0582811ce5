/* SPDX-License-Identifier: MIT */
/* Diverted instructions: RDMSR, WRMSR and CPUID served by a registered CPU model. */
#ifndef ARCH_X86_DIVERT_H
#define ARCH_X86_DIVERT_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/regs.h"

struct cpuid_result {
	uint32_t eax, ebx, ecx, edx;
};

/*
 * A CPU model stands in for hardware that the CPU lacks (an emulated Debug Store and PMU). It
 * lives above arch/x86 and registers itself here; arch/x86 never includes it.
 *
 * The accessors in msr.h and cpuid.h ask owns_msr()/owns_cpuid() first. For what the model
 * owns they execute UD2 followed by the real instruction's bytes, at a site listed in section
 * .divert: the #UD reaches divert_handle_trap() before any other handler, which calls the
 * model and resumes after the instruction. So a diverted access is one instruction, taken with
 * interrupts off, as on silicon; and a #GP that the model raises is delivered from that site
 * exactly as the CPU's own: a _safe accessor's fix-up sees it, a plain one takes it.
 *
 * owns_msr() and owns_cpuid() run in the caller's context, from the accessors. Every other
 * callback runs in exception, interrupt or system-call context, interrupts off, on the CPU
 * concerned.
 */
struct cpu_model_ops {
	bool (*owns_msr)(uint32_t index);
	bool (*owns_cpuid)(uint32_t leaf);
	/* Return true to raise #GP(0); then nothing changed. */
	bool (*read_msr)(struct cpu_regs *regs, uint32_t index, uint64_t *value);
	bool (*write_msr)(struct cpu_regs *regs, uint32_t index, uint64_t value);
	struct cpuid_result (*cpuid)(uint32_t leaf, uint32_t subleaf, struct cpuid_result real);
	/* A diverted instruction completed: regs->rip is already past it. */
	void (*retired)(struct cpu_regs *regs);
	/*
	 * The first look at every #DB, with DR7 already clear; dr7 is what it held. True when the
	 * model consumed the whole exception.
	 */
	bool (*debug_trap)(struct cpu_regs *regs, unsigned long dr7);
	/*
	 * An interrupt arrived in the task's own flow (not inside another handler). Return true to
	 * have its handler single-stepped: divert_interrupted() sets RFLAGS.TF as it returns, so
	 * the first #DB follows the instruction after that POPF.
	 */
	bool (*interrupted)(struct cpu_regs *regs);
	/* A system call entered from ring 3: regs->rip is past its SYSCALL (or the #UD gate). */
	void (*system_call)(struct cpu_regs *regs);
	/*
	 * An exception (not an NMI) that is neither the model's own #DB nor a diverted access is
	 * delivered: regs is its frame, before any handler ran. Return true to have its handler
	 * single-stepped, as for interrupted().
	 */
	bool (*exception)(struct cpu_regs *regs);
	/*
	 * A context is about to be resumed from regs by IRET (every entry path returns so), by the
	 * IRETQ at iret_site.
	 */
	void (*resume)(struct cpu_regs *regs, uint64_t iret_site);
	/*
	 * RDPMC at regs->rip, length bytes long, in either ring: read the counter ECX names into
	 * EDX:EAX and complete it (regs->rip past it, retired as the model counts it). Return true
	 * to raise #GP(0) instead; then nothing changed. Optional.
	 */
	bool (*rdpmc)(struct cpu_regs *regs, unsigned int length);
	/*
	 * An NMI arrived, regs its frame, before its handler runs: between any two instructions,
	 * the model's own included, so it must only note or record what it interrupted, and never
	 * resumes through resume(). Optional.
	 */
	void (*nmi)(struct cpu_regs *regs);
	/*
	 * XSAVES (restore false) or XRSTORS (true) of supervisor components the model plays
	 * (owns_xstate()) at regs->rip, DIVERTED_XSAVE_SITE_LENGTH long: RSI the area, EDX:EAX the
	 * requested-feature mask. Complete it (regs->rip past it, retired as the model counts it),
	 * or return true to raise #GP(0); then nothing changed. Optional, with owns_xstate.
	 */
	bool (*owns_xstate)(uint64_t components);
	bool (*xsaves)(struct cpu_regs *regs, bool restore);
};

/* UD2 and the two bytes of the real instruction. */
#define DIVERTED_SITE_LENGTH 4
/* UD2 and XSAVES64 (%rsi) or XRSTORS64 (%rsi): REX.W 0F C7 /5 or /3. */
#define DIVERTED_XSAVE_SITE_LENGTH 6

/* Install the model (once, on the boot CPU, before the other CPUs start). */
void cpu_model_register(const struct cpu_model_ops *ops);
bool cpu_model_registered(void);

/* For the accessors: does the model serve this MSR or leaf? */
bool msr_diverted(uint32_t index);
bool cpuid_diverted(uint32_t leaf);
/*
 * RDPMC is the model's too when it has an rdpmc callback: the accessor (arch/x86/pmc.h) diverts
 * it as an MSR access is; an RDPMC executed as itself (ring-3 code) raises #UD under TCG and #GP
 * where a hypervisor has no vPMU, and either reaches the model (divert_handle_trap()). On a CPU
 * that has counters a ring-3 RDPMC with CR4.PCE set raises nothing and reads the CPU's own.
 */
bool rdpmc_diverted(void);

/* For traps.c and the entry paths. */
enum divert_outcome {
	DIVERT_NONE, /* not a diverted site: dispatch the #UD as usual */
	DIVERT_DONE, /* emulated; resume at regs->rip */
	DIVERT_FAULT, /* the model raised #GP(0): regs->vector and error_code now say so */
};
/* A #UD (a diverted site, or RDPMC) or a #GP (RDPMC only) the model may serve. */
enum divert_outcome divert_handle_trap(struct cpu_regs *regs);
bool divert_debug_trap(struct cpu_regs *regs, unsigned long dr7);
void divert_interrupted(struct cpu_regs *regs);
void divert_system_call(struct cpu_regs *regs);
void divert_exception(struct cpu_regs *regs);
void divert_nmi(struct cpu_regs *regs);
void divert_resume(struct cpu_regs *regs);
/* The system-call entry's resume: it returns by its own IRETQ. */
void divert_resume_system_call(struct cpu_regs *regs);

/* Record the current instruction as a diverted site (see above). */
#define _ASM_DIVERT(site)                 \
	".pushsection .divert, \"a\"\n\t" \
	".balign 8\n\t"                   \
	".quad " #site "\n\t"             \
	".popsection\n\t"

#endif
