/* SPDX-License-Identifier: MIT */
/* Perfmon MSRs, and the EVTSEL and FIXED_CTR_CTRL encodings (SDM Vol. 3B §20.2). Pure. */
#ifndef PMU_EVENT_H
#define PMU_EVENT_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/msr-index.h"

/*
 * Architectural perfmon MSRs (docs/hardware-facts.md §5). They belong with the others in
 * arch/x86/msr-index.h; they live here until the kernel side of pmu/ lands.
 */
#define PMU_MAX_GP 8 /* GP counters this code handles (CPUID.0AH:EAX[15:8] may say more) */
#define PMU_MAX_FIXED 4 /* instructions, core cycles, reference cycles, topdown slots */

/* IA32_PERFEVTSELx. */
#define EVTSEL_EVENT_SHIFT 0
#define EVTSEL_EVENT_MASK (0xffull << EVTSEL_EVENT_SHIFT)
#define EVTSEL_UMASK_SHIFT 8
#define EVTSEL_UMASK_MASK (0xffull << EVTSEL_UMASK_SHIFT)
#define EVTSEL_USR (1ull << 16) /* count at CPL > 0 */
#define EVTSEL_OS (1ull << 17) /* count at CPL 0 */
#define EVTSEL_EDGE (1ull << 18) /* count deasserted-to-asserted transitions */
#define EVTSEL_INT (1ull << 20) /* PMI on overflow */
#define EVTSEL_EN (1ull << 22) /* local enable; GLOBAL_CTRL must enable too (v2+) */
#define EVTSEL_INV (1ull << 23) /* invert the CMASK comparison */
#define EVTSEL_ADAPTIVE (1ull << 34) /* adaptive PEBS record (Linux ICL_EVENTSEL_ADAPTIVE) */
#define EVTSEL_CMASK_SHIFT 24
#define EVTSEL_CMASK_MASK (0xffull << EVTSEL_CMASK_SHIFT)

/* IA32_FIXED_CTR_CTRL: one 4-bit field per fixed counter. */
#define FIXED_CTRL_FIELD_SIZE 4
#define FIXED_CTRL_FIELD_MASK 0xfull
#define FIXED_CTRL_OS (1ull << 0)
#define FIXED_CTRL_USR (1ull << 1)
#define FIXED_CTRL_ANY_THREAD (1ull << 2) /* not used here */
#define FIXED_CTRL_PMI (1ull << 3)

/* IA32_PERF_GLOBAL_CTRL: bit i enables GP counter i, bit 32 + i fixed counter i. */
#define GLOBAL_CTRL_FIXED_SHIFT 32

static inline uint64_t pmu_global_gp(unsigned int counter)
{
	return 1ull << counter;
}

static inline uint64_t pmu_global_fixed(unsigned int counter)
{
	return 1ull << (GLOBAL_CTRL_FIXED_SHIFT + counter);
}

/*
 * One event. A GP counter uses all fields; a fixed counter's event is wired in, so only user,
 * kernel and interrupt apply to it. user and kernel both false: the event counts nothing.
 */
struct pmu_event {
	uint8_t event;
	uint8_t umask;
	uint8_t cmask; /* 0: count every cycle's increments; else compare with it */
	bool user;
	bool kernel;
	bool edge;
	bool invert;
	bool interrupt;
	bool pebs_adaptive; /* EVTSEL bit 34: its PEBS records carry PEBS_DATA_CFG's groups */
	/*
	 * The counter is PEBS-enabled (ds/ sets its IA32_PEBS_ENABLE bit): it never interrupts
	 * at its overflow ("Do NOT set local counter PMI/INT bit", SDM "Requirements to Program
	 * PEBS"; Linux intel_pmu_pebs_enable(), intel_pmu_enable_fixed()), whatever interrupt
	 * says; the PEBS assist reloads it, and the PMI comes at the buffer's threshold.
	 */
	bool pebs;
};

/* Events every part counts, by their generic names (Linux PERF_COUNT_HW_*). */
enum pmu_generic_event {
	PMU_GENERIC_CYCLES,
	PMU_GENERIC_INSTRUCTIONS,
	PMU_GENERIC_BRANCHES,
	PMU_GENERIC_BRANCH_MISSES,
};

/*
 * The event and unit mask of a generic event, user, kernel and the rest false: Linux's
 * intel_perfmon_event_map (the SDM's architectural events: 0x3c, 0xc0, 0xc4, 0xc5) or, amd,
 * amd_perfmon_event_map (0x76, 0xc0, 0xc2, 0xc3). Unit mask 0 in both.
 */
struct pmu_event pmu_generic_event(bool amd, enum pmu_generic_event which);

/*
 * The IA32_PERFEVTSELx value for event, with EN set when enable, and INT when it interrupts and
 * is not a PEBS event. Bits this struct does not name (PC 19, ANY 21, 32 and up) are zero.
 */
uint64_t pmu_evtsel_encode(const struct pmu_event *event, bool enable);

/* The inverse: fills *event from the named fields and returns EN. Other bits are ignored; pebs
 * is false (IA32_PEBS_ENABLE says it, not the select). */
bool pmu_evtsel_decode(uint64_t evtsel, struct pmu_event *event);

/* The bits of IA32_FIXED_CTR_CTRL that belong to fixed counter counter (< PMU_MAX_FIXED). */
uint64_t pmu_fixed_ctrl_mask(unsigned int counter);

/* Fixed counter counter's field for event (user, kernel, interrupt unless pebs), in place;
 * others zero. */
uint64_t pmu_fixed_ctrl_encode(unsigned int counter, const struct pmu_event *event);

/*
 * The inverse: fills *event (event, umask, cmask, edge and invert zero) from counter's field
 * and returns whether it counts at some privilege level (OS or USR set).
 */
bool pmu_fixed_ctrl_decode(uint64_t ctrl, unsigned int counter, struct pmu_event *event);

#endif
