/* SPDX-License-Identifier: MIT */
/* The Debug Store: one context (a DS save area and its buffers) per target, for BTS and PEBS. */
/*
 * Words: the save area (struct ds_area, ds/save_area.h) is what IA32_DS_AREA points at, as the
 * SDM lays it out; a buffer holds one user's records, and ds/buffer.h computes its four fields
 * in the save area; a target's context (struct ds_context, ds/state.h) is its save area, its
 * buffers and their users' configuration. "Active" means IA32_DS_AREA names the save area
 * here (ds/activate.c).
 */
#ifndef DS_DS_H
#define DS_DS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ds/records.h"
#include "ds/save_area.h"
#include "kernel/switch_hooks.h"

enum ds_user {
	DS_USER_BTS,
	DS_USER_PEBS,
	DS_USERS,
};

enum ds_error {
	DS_OK,
	DS_ERROR_CONFIG, /* a buffer or threshold the SDM rules do not allow */
	DS_ERROR_NO_MEMORY,
	DS_ERROR_BUSY, /* that user is attached already */
	DS_ERROR_NOT_ATTACHED,
	DS_ERROR_UNSUPPORTED, /* e.g. BTS_OFF_OS/USR without DS-CPL */
	DS_ERROR_DETACHING, /* another CPU is detaching from the same area: try again */
	DS_ERROR_NO_TARGET, /* no live task (switch_task_live()) or online CPU has that index */
	DS_ERROR_COUNT,
};

const char *ds_error_name(enum ds_error error);

/* Whose DS area: a task (active while it runs) or a CPU (active for every task on it). */
struct ds_target {
	bool cpu;
	unsigned int index; /* task index (struct switch_task.index) or CPU index */
};

struct ds_bts_config {
	size_t records; /* buffer size, in records */
	bool circular; /* wrap, no PMI; else DEBUGCTL.BTINT: PMI at the threshold */
	size_t threshold_records; /* interrupt mode: records that raise the PMI */
	bool off_os, off_usr; /* DEBUGCTL.BTS_OFF_OS / BTS_OFF_USR: need DS-CPL */
};

struct ds_pebs_config {
	unsigned int format; /* PERF_CAPABILITIES[11:8]; decides record layout and reset slots */
	size_t record_size; /* bytes per record; the largest one for adaptive formats */
	size_t records; /* buffer size, in records of record_size */
	size_t threshold_records; /* records that raise the PMI */
	/* MSR_PEBS_DATA_CFG, for adaptive PEBS (format 4 and up with baseline): the groups each
	 * record of an event that asks for adaptive records (pmu_event.pebs_adaptive) carries. */
	uint64_t data_cfg;
	uint64_t enable; /* IA32_PEBS_ENABLE: GP counter i at bit i, fixed i at bit 32 + i */
	uint64_t reset_value; /* reload value of every GP counter enabled in enable */
	/* Architectural PEBS (format PERF_CAP_PEBS_FORMAT_ARCH): the CFG_C group bits of every
	 * counter in enable (arch/x86/arch-pebs.h; a subset of ds_support()->arch_pebs.caps). The
	 * reload value is reset_value's bits 31:0, sign-extended by the CPU: bit 31 must be set. */
	uint64_t groups;
	/* Architectural PEBS: the counters of enable whose events ask for precise distribution
	 * (Linux's precise_ip 3): each must be one CPUID.23H.5 EBX/EDX lists (Linux confines
	 * such an event to pebs_cap.pdists). A DS-area part enumerates none. */
	uint64_t pdist;
};

/*
 * Whether ds_attach_pebs() takes config on this CPU, by the rules it applies: DS_OK, or the
 * error it would return (DS_ERROR_UNSUPPORTED: no PEBS here; DS_ERROR_CONFIG: what config
 * asks breaks a rule) with the first broken rule in reason, the CPUID or MSR value that decides
 * it included. reason is "" with DS_OK.
 */
enum ds_error ds_pebs_check(const struct ds_pebs_config *config, char *reason, size_t size);

/*
 * Attach a user to target's DS area, allocating and filling the area on first use; a second user
 * shares it. Callable from any CPU, for a task in any state: a task's area becomes active when it
 * is next switched in (at once if it is the caller), a CPU's by ds_activate_cpu() on that CPU.
 * A user task gets a read-only view of the area and buffers at USER_DS_BASE, in its own address
 * space (switch_task_address_space(), never a root the caller names). Returns DS_OK or an error; a
 * failure changes nothing.
 */
enum ds_error ds_attach_bts(const struct ds_target *target, const struct ds_bts_config *config);
enum ds_error ds_attach_pebs(const struct ds_target *target, const struct ds_pebs_config *config);

/* Drain what the user's buffer holds, then detach it; the area is freed with its last user. */
enum ds_error ds_detach(const struct ds_target *target, enum ds_user user);

/* The DS area of target, or NULL. It sits at the same linear address in every address space. */
struct ds_area *ds_area_get(const struct ds_target *target);

/* True while nothing was written past a buffer's absolute maximum (a canary fills the rest). */
bool ds_canary_intact(const struct ds_target *target, enum ds_user user);

/* Make the calling CPU's CPU-mode area active (or inactive, when it has none). */
void ds_activate_cpu(void);

/* Records drained and credited to a task (the one that was running when they were written). */
struct ds_credit {
	uint64_t bts_records, pebs_records;
	/* PEBS samples by counter (a record naming two counters gives each one), and records that
	 * give none (pebs_record_samples(): a collision before format 3, a status naming none). */
	uint64_t pebs_samples, pebs_dropped;
	uint64_t last_from, last_to; /* the last BTS record */
	uint64_t last_pebs_ip;
	/* Architectural PEBS: the last record's header group bits (BASIC included) and fragments.
	 */
	uint64_t last_pebs_groups;
	unsigned int last_pebs_fragments;
	/* The last record's applicable counters (formats 1-3: its status; adaptive and
	 * architectural: its applicable-counters field); 0 in format 0, which has none. */
	uint64_t last_pebs_counters;
	/*
	 * Architectural PEBS: drains that found IA32_PEBS_INDEX.FULL set. The CPU sets it when a
	 * record did not fit below the buffer's end, and loses that record and every later one
	 * until software clears it; it counts none of them, so neither can ds/ (Linux
	 * intel_pmu_drain_arch_pebs() clears FULL and counts nothing). Each is a loss of one or
	 * more records.
	 */
	uint64_t pebs_full;
};
struct ds_credit ds_credit(unsigned int task);
void ds_credit_reset(unsigned int task);

/* Drain target's buffers now, crediting the task running here. */
void ds_drain(const struct ds_target *target);

/* What the three MSRs hold on this CPU (DEBUGCTL: only its BTS bits), as ds/ wrote them. */
struct ds_registers {
	uint64_t ds_area;
	uint64_t debugctl;
	uint64_t pebs_enable;
	uint64_t pebs_data_cfg; /* MSR_PEBS_DATA_CFG, on CPUs with adaptive PEBS */
};
struct ds_registers ds_registers(void);

/*
 * For the runner, between tests: detach every user of every CPU's area and of task's own area
 * (the tasks that ended released theirs), and return how many were left attached.
 */
unsigned int ds_release_leftovers(unsigned int task);
/* Write each register of this CPU as ds/'s shadow says (and DEBUGCTL as its shadow says),
 * whatever the CPU holds now, the features off while IA32_DS_AREA changes: after a write behind
 * ds/'s back. */
void ds_registers_rewrite(void);

/* What this CPU supports, and the first missing condition as a skip reason ("" if none). */
/*
 * Architectural PEBS (PERF_CAPABILITIES PEBS_FMT 0xF with CPUID leaf 23H; ds/arch_pebs.c): PEBS
 * in a physically addressed buffer named by IA32_PEBS_BASE, enabled per counter through its
 * CFG_C, beside the DS area, which BTS keeps. Counter bitmaps in PEBS_ENABLE numbering: GP
 * counter i at bit i, fixed counter i at bit 32 + i (Linux's, INTEL_PMC_IDX_FIXED).
 */
struct ds_arch_pebs_support {
	bool usable; /* else reason says why, as Linux update_pmu_cap() would refuse it */
	uint64_t counters; /* 23H.1: the counters that exist (EAX GP, EBX fixed) */
	uint64_t pebs; /* 23H.5 EAX, ECX: the counters that can PEBS */
	uint64_t pdist; /* 23H.5 EBX, EDX: the counters with precise distribution */
	uint64_t caps; /* 23H.4 EBX << 32: the CFG_C group bits the CPU takes */
	char reason[128];
};

struct ds_support {
	bool ds, dtes64, ds_cpl, pdcm;
	bool bts_unavailable, pebs_unavailable; /* IA32_MISC_ENABLE bits 11 and 12 */
	bool ds_area_keeps_value; /* the read-back probe */
	unsigned int pebs_format;
	bool pebs_baseline; /* PERF_CAPABILITIES bit 14: PEBS on every counter, adaptive records */
	/*
	 * PERF_CAPABILITIES bit 7, PEBSSaveArchRegs: a record's RFLAGS, RIP and GPR fields (every
	 * format 0-3 record; an adaptive record's GPR group) hold the registers at the assist.
	 * Without it they are not the task's registers, and a reader must not take them as such.
	 */
	bool pebs_arch_regs;
	unsigned int gp_counters, fixed_counters; /* CPUID.0AH: what PEBS_ENABLE may name */
	uint64_t pebs_enable_valid; /* the PEBS_ENABLE bits this driver may set on this CPU */
	char bts_reason[96], pebs_reason[96];
	struct ds_arch_pebs_support arch_pebs;
};
const struct ds_support *ds_support(void);

/*
 * The architectural-PEBS MSR writes ds/ made on this CPU since boot (ds/arch_pebs_context.c):
 * each counter's CFG_C is cached and written only when it changes.
 */
struct ds_arch_pebs_writes {
	uint64_t cfg_c, base, index;
};
struct ds_arch_pebs_writes ds_arch_pebs_writes(void);

/* PMIs taken since boot. */
uint64_t ds_pmi_count(void);

/*
 * The steps of a switch and of a PMI that are ds/'s, for debugstate/ to run in their order
 * (debugstate/debugstate.c says why). switch_out credits the records a CPU-mode area took to
 * the task leaving (the area is shared by every task); switch_in makes the registers what the
 * incoming task's area (else its CPU's) needs, tracing off while IA32_DS_AREA changes; a task's
 * area dies with it at task_exit. pmi_stop turns BTS off for the PMI handler, pmi_restart
 * back on as it ends (Linux intel_bts_disable_local() and intel_bts_enable_local()); pmi_drain
 * drains the active area with BTS and PEBS off, credits the task running here, and acknowledges
 * GLOBAL_STATUS.BUFFER_OVF (SDM §19.6: else no further PEBS PMI comes).
 */
void ds_switch_out(const struct switch_task *prev, const struct switch_task *next);
void ds_switch_in(const struct switch_task *prev, const struct switch_task *next);
void ds_task_exit(const struct switch_task *task);
void ds_pmi_stop(void);
void ds_pmi_drain(void);
void ds_pmi_restart(void);

/* Detect support. */
void ds_init(void);
/* On each other CPU as it comes up: its own PEBS_ENABLE bits (hybrid parts differ by core). */
void ds_init_cpu(void);

#endif
