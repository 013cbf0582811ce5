/* SPDX-License-Identifier: MIT */
/* Last Branch Records per task: detection, requests, entries, and the switch's steps. */
#ifndef LBR_LBR_H
#define LBR_LBR_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/msr-index.h"
#include "kernel/switch_hooks.h"

enum lbr_error {
	LBR_OK,
	LBR_ERROR_UNSUPPORTED, /* no LBR here, or a filter or call-stack mode the CPU lacks */
	LBR_ERROR_CONFIG, /* no ring, no branch kind, an unknown kind, call stack with others */
	LBR_ERROR_BUSY, /* the task records already */
	LBR_ERROR_NOT_ATTACHED,
	LBR_ERROR_NO_TARGET, /* no live task has that index */
	LBR_ERROR_COUNT,
};

const char *lbr_error_name(enum lbr_error error);

/* The branch kinds a request records: LBR_SELECT's classes (SDM "Filtering of Last Branch
 * Records"). */
#define LBR_BRANCH_JCC (1u << 0)
#define LBR_BRANCH_NEAR_REL_CALL (1u << 1)
#define LBR_BRANCH_NEAR_IND_CALL (1u << 2)
#define LBR_BRANCH_NEAR_RET (1u << 3)
#define LBR_BRANCH_NEAR_IND_JMP (1u << 4)
#define LBR_BRANCH_NEAR_REL_JMP (1u << 5)
#define LBR_BRANCH_FAR (1u << 6)
#define LBR_BRANCH_ALL 0x7fu
#define LBR_BRANCH_CALLS_AND_RETURNS \
	(LBR_BRANCH_NEAR_REL_CALL | LBR_BRANCH_NEAR_IND_CALL | LBR_BRANCH_NEAR_RET)

/*
 * A request. kernel and user: the rings whose branches (by the ring they end in) are recorded.
 * branches: LBR_BRANCH_* kinds; anything but LBR_BRANCH_ALL needs LBR_SELECT (Nehalem and
 * later). call_stack: the stack is a LIFO of near calls (LBR_SELECT.EN_CALLSTACK, Haswell and
 * later; branches must then be LBR_BRANCH_CALLS_AND_RETURNS and the ring user only), and the
 * task's entries survive its switches (saved and restored as Linux does for its user call-stack
 * users, branch_user_callstack()). Ring 0 is refused: recording stops at switch-out and starts
 * at switch-in at other depths of the switch path, whose calls and returns would then unbalance
 * the stack. Without it, a task's
 * entries are wiped each time it is switched in: they carry no address-space tag.
 */
struct lbr_config {
	bool kernel, user;
	uint32_t branches;
	bool call_stack;
};

/* One entry as lbr_read() returns it: addresses sign-extended, flags decoded by format. */
struct lbr_entry {
	uint64_t from, to;
	bool mispredicted;
	uint16_t cycles; /* LBR_FORMAT_INFO only; 0 where unknown */
};

/*
 * What detection found (docs/hardware-facts.md, LBR). present: model-specific or architectural
 * LBR that lbr/ drives; else reason says exactly why not (CPUID or MSR, as found). For
 * architectural LBR, from_msr, to_msr and info_msr are entry 0's, and select stands for
 * LBR_CTL's filters.
 */
struct lbr_support {
	bool present;
	bool architectural; /* CPUID.(7,0):EDX[19] and leaf 0x1C: LBR_CTL, DEPTH, entry 0 newest */
	/* AMD LbrExtV2 (lbr/amd.c): FROM/TO interleaved, entry 0 newest, DBG_EXTN_CFG.LBRV2EN */
	bool amd;
	bool deep_c_reset; /* architectural: CPUID.1CH:EAX[30], deep C-states may reset it */
	unsigned int format; /* PERF_CAPABILITIES[5:0] */
	unsigned int depth; /* entries, found by probing the FROM bank for #GP */
	uint32_t from_msr, to_msr, info_msr; /* banks; info_msr 0 without INFO */
	bool select; /* MSR_LBR_SELECT exists */
	bool call_stack; /* LBR_SELECT.EN_CALLSTACK takes a write */
	bool freeze; /* DEBUGCTL.FREEZE_LBRS_ON_PMI exists (PDCM and perfmon v2) */
	bool freeze_by_status; /* perfmon v4: GLOBAL_STATUS bit 58 freezes and thaws */
	bool from_sign_extend; /* format EIP_FLAGS2 without TSX: bits 62:61 sign-extend on WRMSR */
	char reason[128];
	/*
	 * Architectural LBR: a call-stack task's stack is saved and restored with one XSAVES and
	 * one XRSTORS of state component 15 (Linux is_arch_lbr_xsave_available()); else by the MSR
	 * loop, and xsaves_reason says why (CPUID, IA32_XSS or the probe's fault, as found).
	 */
	bool xsaves;
	char xsaves_reason[128];
};

/* Detection on the boot CPU, before the first switch (boot/main.c), and its result. */
void lbr_init(void);
const struct lbr_support *lbr_support(void);

/*
 * A task asks for LBR recording (from any CPU, for a live task in any state; it starts at the
 * task's next switch-in, at once for the caller), and gives it back. A failure changes nothing.
 */
enum lbr_error lbr_attach(unsigned int task, const struct lbr_config *config);
enum lbr_error lbr_detach(unsigned int task);

/*
 * A CPU asks for LBR recording (cpu < percpu_count()), and gives it back: every task switched
 * in on that CPU that has no request of its own records with the CPU's filters, and the CPU's
 * entries run on across those tasks' switches (the stack is wiped only when a task with its own
 * request used it in between, so that neither sees the other's branches). Not call-stack mode
 * (LBR_ERROR_CONFIG): that is a task's. From the CPU itself it starts or stops at once; from
 * another, at that CPU's next switch-in (its running task records on until it is switched out).
 * A failure changes nothing.
 */
enum lbr_error lbr_attach_cpu(unsigned int cpu, const struct lbr_config *config);
enum lbr_error lbr_detach_cpu(unsigned int cpu);
/*
 * The CPU's entries, newest first, read on that CPU (LBR_ERROR_BUSY from another): the live
 * stack when the CPU's request is loaded (the caller has none of its own; recording stops for
 * the read), none while the caller's own request is.
 */
enum lbr_error lbr_read_cpu(unsigned int cpu, struct lbr_entry *entries, unsigned int max,
			    unsigned int *count);

/*
 * The task's entries, newest first, at most max, their number in *count: the live stack when
 * the caller is the task (recording stops for the read), else the saved stack of a call-stack
 * task that is off the CPU; none otherwise. lbr_read_pmi(): the stack as the last PMI froze it
 * while the task recorded (FREEZE_LBRS_ON_PMI), read in the PMI.
 */
enum lbr_error lbr_read(unsigned int task, struct lbr_entry *entries, unsigned int max,
			unsigned int *count);
enum lbr_error lbr_read_pmi(unsigned int task, struct lbr_entry *entries, unsigned int max,
			    unsigned int *count);

/*
 * A CPU's counts (cpu < percpu_count()). stack_writes: WRMSRs of FROM, TO, INFO and TOS (with
 * architectural LBR, DEPTH); select_writes: of LBR_SELECT (LBR_CTL's filters); debugctl_writes:
 * the writes that turn recording on and off (DEBUGCTL's LBR and FREEZE bits, LBR_CTL.LBREN);
 * xss_writes: IA32_XSS, once per CPU before its first XSAVES. xsaves, xrstors: the saves and
 * restores made by XSAVES and XRSTORS (among saves and restores); each XRSTORS also loads
 * LBR_CTL and DEPTH, which no WRMSR count then includes.
 */
struct lbr_stats {
	uint64_t stack_writes, select_writes, debugctl_writes, xss_writes;
	uint64_t saves, restores, restores_elided, wipes, wipes_skipped, pmis;
	uint64_t xsaves, xrstors;
	uint64_t restored_entries; /* the entries the MSR loop's restores wrote back */
};
struct lbr_stats lbr_stats(unsigned int cpu);

/*
 * lazy (the default): a call-stack task's restore is skipped while the CPU still holds its
 * stack. false: restored at every switch-in (eager), for comparison (lbr.benchmark_*).
 */
void lbr_set_lazy(bool lazy);
bool lbr_is_lazy(void);

/*
 * use (the default): save and restore with XSAVES and XRSTORS where lbr_support()->xsaves.
 * false: the MSR loop (the fallback), for comparison (lbr.xsaves_*). A stack saved one way is
 * restored the same way.
 */
void lbr_set_xsaves(bool use);
bool lbr_uses_xsaves(void);

/* The steps debugstate/ runs (debugstate/debugstate.c says where and why). */
void lbr_switch_out(const struct switch_task *prev, const struct switch_task *next);
void lbr_switch_in(const struct switch_task *prev, const struct switch_task *next);
void lbr_task_exit(const struct switch_task *task);
/* In the PMI, with GLOBAL_STATUS as read: read the frozen stack, then thaw it. */
void lbr_pmi(uint64_t status);

#endif
