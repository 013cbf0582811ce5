/* SPDX-License-Identifier: MIT */
/* pebs suite: PEBS programmed directly on each counter, as kvm-unit-tests' x86/pmu_pebs.c does. */
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/apic.h"
#include "arch/x86/cpu.h"
#include "arch/x86/cpuid.h"
#include "arch/x86/msr.h"
#include "arch/x86/paging.h"
#include "arch/x86/probe.h"
#include "ds/buffer.h"
#include "ds/ds.h"
#include "ds/records.h"
#include "ds/save_area.h"
#include "emulator/emulator.h"
#include "lib/bitops.h"
#include "lib/format.h"
#include "lib/string.h"
#include "pmu/pmu.h"
#include "runner/test.h"

/*
 * Each case counts instructions retired (event 0xC0, PEBS-capable on every counter with
 * baseline, SDM Vol. 3B "PEBS Facility") over ITERATIONS of the two-instruction loop, started
 * at one of START_VALUES below the counter's overflow: 0 (no overflow in the loop, so no
 * record), 16, 2 and 1 events before it (kvm-unit-tests' 0xfffffffffff0, 0xfffffffffffe and
 * 0xffffffffffff at 48 bits). The reset value is 0, so the counter overflows once and writes
 * one record (at the event after the overflow) per counter. The PEBS interrupt threshold is
 * the first record's end, as kvm-unit-tests sets it: a record sets GLOBAL_STATUS.OvfBuffer (bit
 * 62) and requests a PMI, which LVTPC, masked meanwhile, holds back (SDM "Generation of PMI").
 * Steps on the emulated CPU: about 60 a case.
 */
#define ITERATIONS 12 /* 24 instructions, past the 17th event after the farthest start */
#define EVENT_INSTRUCTIONS 0xc0
#define BUFFER_BYTES PAGE_SIZE /* format 0 takes no more (SDM; the model's rule 12) */
#define NO_OVERFLOW 0

static const uint64_t start_distances[] = { NO_OVERFLOW, 16, 2, 1 };
#define STARTS (sizeof(start_distances) / sizeof(start_distances[0]))

static struct ds_area area __attribute__((aligned(PAGE_SIZE)));
static unsigned int cases_run, records_seen; /* for each test's summary */
static uint8_t buffer[BUFFER_BYTES] __attribute__((aligned(PAGE_SIZE)));

struct pebs_case {
	uint64_t counters; /* PEBS_ENABLE (and GLOBAL_CTRL) numbering */
	uint64_t distance; /* events before overflow; NO_OVERFLOW: start at 0 */
	uint64_t data_cfg; /* programmed in PEBS_DATA_CFG (adaptive formats) */
	bool adaptive; /* the event asks for adaptive records (EVTSEL bit 34, fixed bit 32+4i) */
	bool pebs_enable_first; /* disable: PEBS_ENABLE before GLOBAL_CTRL, as kvm-unit-tests */
};

struct pebs_outcome {
	unsigned int records;
	uint64_t applicable; /* the union of the records' applicable counters */
	unsigned int bad; /* records that failed a check (each reported) */
};

static enum pebs_format record_format(void)
{
	return (enum pebs_format)ds_support()->pebs_format;
}

static bool adaptive_format(void)
{
	return pebs_format_is_adaptive(record_format()) && ds_support()->pebs_baseline;
}

/* PEBS, counters, and the PEBS_ENABLE bits this CPU takes; else skip with the reason. */
static void require_pebs(void)
{
	if (ds_support()->pebs_reason[0])
		test_skip("%s", ds_support()->pebs_reason);
	if (!pmu_usable())
		test_skip("%s", pmu_info()->reason);
	if (pmu_info()->version < 2)
		test_skip("perfmon version %u: no IA32_PERF_GLOBAL_CTRL", pmu_info()->version);
}

static uint64_t width_mask(bool fixed)
{
	unsigned int width = fixed ? pmu_info()->fixed_width : pmu_info()->gp_width;

	return width >= 64 ? UINT64_MAX : (1ull << width) - 1;
}

/* The buffer's records, whole ones from the base: 32-byte units with adaptive records. */
static void area_prepare(const struct pebs_case *c)
{
	size_t unit = adaptive_format() ? PEBS_BASIC_GROUP_SIZE : pebs_record_size(record_format());

	memset(&area, 0, sizeof(area));
	memset(buffer, 0, sizeof(buffer));
	area.pebs_base = area.pebs_index = (uint64_t)buffer;
	area.pebs_max = area.pebs_base + BUFFER_BYTES / unit * unit;
	area.pebs_threshold = area.pebs_base + unit;
	for (uint64_t bits = c->counters; bits; bits &= bits - 1) {
		unsigned int bit = (unsigned int)__builtin_ctzll(bits);
		bool fixed = bit >= 32;
		unsigned int slot = pebs_reset_slot(record_format(), fixed, fixed ? bit - 32 : bit);

		if (slot < DS_PEBS_RESET_SLOTS)
			area.pebs_reset[slot] = 0;
	}
}

static void counter_program(unsigned int bit, const struct pebs_case *c)
{
	bool fixed = bit >= 32;
	uint64_t start = c->distance == NO_OVERFLOW ? 0 : (0 - c->distance) & width_mask(fixed);

	if (fixed) {
		unsigned int i = bit - 32;
		uint64_t field = FIXED_CTR_CTRL_OS | FIXED_CTR_CTRL_USR;
		uint64_t ctrl = rdmsr(MSR_IA32_FIXED_CTR_CTRL);

		wrmsr(MSR_IA32_FIXED_CTR0 + i, start);
		ctrl |= field << (FIXED_CTR_CTRL_FIELD_BITS * i);
		if (c->adaptive)
			ctrl |= FIXED_CTR_CTRL_ADAPTIVE << (FIXED_CTR_CTRL_FIELD_BITS * i);
		wrmsr(MSR_IA32_FIXED_CTR_CTRL, ctrl);
		return;
	}
	/* A legacy write sign-extends bit 31: a value near the top lands at the width's top. */
	wrmsr(MSR_IA32_PMC0 + bit, start & 0xffffffffull);
	wrmsr(MSR_IA32_PERFEVTSEL0 + bit, EVENT_INSTRUCTIONS | PERFEVTSEL_OS | PERFEVTSEL_USR |
						  PERFEVTSEL_EN |
						  (c->adaptive ? PERFEVTSEL_ADAPTIVE : 0));
}

/*
 * The SDM's order ("Setting Up the DS Save Area", "Requirements to Program PEBS"): the DS area
 * and DATA_CFG, the counters, PEBS_ENABLE, then GLOBAL_CTRL. Stopped in one of the two orders
 * kvm-unit-tests takes; every register then back to 0 and the DS area to what it was.
 */
static uint64_t run_case(const struct pebs_case *c)
{
	unsigned long flags = local_irq_save();
	uint64_t saved_area = rdmsr(MSR_IA32_DS_AREA), saved_data_cfg = 0, status;
	uint32_t lvtpc = apic_read_lvtpc();

	area_prepare(c);
	apic_write_lvtpc(lvtpc | APIC_LVT_MASKED);
	wrmsr(MSR_IA32_DS_AREA, (uint64_t)&area);
	if (adaptive_format()) {
		saved_data_cfg = rdmsr(MSR_PEBS_DATA_CFG);
		wrmsr(MSR_PEBS_DATA_CFG, c->data_cfg);
	}
	for (uint64_t bits = c->counters; bits; bits &= bits - 1)
		counter_program((unsigned int)__builtin_ctzll(bits), c);
	wrmsr(MSR_IA32_PEBS_ENABLE, c->counters);
	wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, c->counters);
	probe_instruction_loop(ITERATIONS);
	if (c->pebs_enable_first)
		wrmsr(MSR_IA32_PEBS_ENABLE, 0);
	wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 0);
	wrmsr(MSR_IA32_PEBS_ENABLE, 0);
	wrmsr(MSR_IA32_FIXED_CTR_CTRL, 0);
	for (unsigned int i = 0; i < pmu_info()->gp_counters && i < PMU_MAX_GP; i++) {
		wrmsr(MSR_IA32_PERFEVTSEL0 + i, 0);
		wrmsr(MSR_IA32_PMC0 + i, 0);
	}
	for (unsigned int i = 0; i < pmu_info()->fixed_counters; i++)
		wrmsr(MSR_IA32_FIXED_CTR0 + i, 0);
	status = rdmsr(MSR_IA32_PERF_GLOBAL_STATUS);
	wrmsr(MSR_IA32_PERF_GLOBAL_OVF_CTRL, status);
	wrmsr(MSR_IA32_DS_AREA, saved_area);
	/*
	 * PEBS_DATA_CFG back as ds/ holds it: ds/ writes it only when its own copy changes, so a
	 * 0 left here made the next ds/ user with the same groups get basic records only
	 * (pebs.records_hold_the_registers_as_perf_capabilities_promises: "no registers").
	 */
	if (adaptive_format())
		wrmsr(MSR_PEBS_DATA_CFG, saved_data_cfg);
	apic_write_lvtpc(lvtpc);
	local_irq_restore(flags);
	/*
	 * The model reports PEBS_ENABLE cleared under a counting counter (rule 18: Linux stops the
	 * counter first); the SDM allows it, and kvm-unit-tests does it on purpose. Expected.
	 */
	if (c->pebs_enable_first && emulator_active()) {
		char text[EMULATOR_VIOLATION_MAX];
		unsigned int count = emulator_take_violations(text, sizeof(text));

		check(count >= 1 && strncmp(text, "rule 18:", 8) == 0,
		      "PEBS_ENABLE cleared while counting: expected the model's rule 18, got %u: "
		      "%s",
		      count, count ? text : "nothing");
	}
	return status;
}

/* What the adaptive record's format field must say: DATA_CFG's groups for an adaptive event. */
static uint64_t expected_groups(const struct pebs_case *c)
{
	uint64_t groups = PEBS_DATA_CFG_MEMINFO | PEBS_DATA_CFG_GPRS | PEBS_DATA_CFG_XMMS |
			  PEBS_DATA_CFG_LBRS;

	if (!c->adaptive)
		return 0;
	if (c->data_cfg & PEBS_DATA_CFG_LBRS)
		groups |= PEBS_DATA_CFG_LBR_MASK << PEBS_DATA_CFG_LBR_SHIFT;
	return c->data_cfg & groups;
}

#define FORMAT_SIZE_SHIFT 48 /* adaptive basic group: record size in bits 63:48 */
#define FORMAT_GROUPS_MASK ((1ull << FORMAT_SIZE_SHIFT) - 1)

/* Each record: decodable, its size, format field and applicable counters as programmed. */
static struct pebs_outcome walk_records(const struct pebs_case *c, const char *what)
{
	const uint8_t *at = (const uint8_t *)area.pebs_base;
	const uint8_t *end = (const uint8_t *)area.pebs_index;
	struct pebs_outcome out = { 0 };
	uint64_t groups = expected_groups(c);
	size_t size = 0;

	for (; at < end; at += size, out.records++) {
		struct pebs_sample sample;

		if (!check(pebs_decode(record_format(), at, (size_t)(end - at), c->data_cfg,
				       &sample, &size),
			   "%s: record %u does not decode", what, out.records)) {
			out.bad++;
			break;
		}
		if (sample.has_status) {
			out.applicable |= sample.status;
			if (!check((sample.status & c->counters) && !(sample.status & ~c->counters),
				   "%s: record %u applies to 0x%llx, enabled 0x%llx", what,
				   out.records, (unsigned long long)sample.status,
				   (unsigned long long)c->counters))
				out.bad++;
		}
		if (!adaptive_format())
			continue;
		{
			uint64_t format_size = *(const uint64_t *)at;
			size_t expected_size = pebs_adaptive_record_size(groups);

			if (!check((format_size & FORMAT_GROUPS_MASK) == groups &&
					   size == expected_size,
				   "%s: record %u format 0x%llx (%zu bytes), expected groups "
				   "0x%llx "
				   "in %zu bytes",
				   what, out.records, (unsigned long long)format_size, size,
				   (unsigned long long)groups, expected_size))
				out.bad++;
		}
		/* LBRs are off (DEBUGCTL.LBR clear): no entry may hold anything. */
		for (unsigned int e = 0; sample.has_lbrs && e < sample.lbr_count; e++) {
			const struct pebs_lbr_entry *lbr =
				(const struct pebs_lbr_entry *)(at + sample.lbr_offset) + e;

			if (!check(lbr->from == 0 && lbr->to == 0 && lbr->info == 0,
				   "%s: record %u LBR entry %u is 0x%llx -> 0x%llx (0x%llx) with "
				   "LBRs off",
				   what, out.records, e, (unsigned long long)lbr->from,
				   (unsigned long long)lbr->to, (unsigned long long)lbr->info))
				out.bad++;
		}
	}
	return out;
}

/*
 * The counters that take PEBS here and count instructions: the GP counters, and fixed counter 0
 * (with baseline). Fixed counters 1-3 count cycles and slots, which the loop does not make
 * reach an overflow 16 events away on silicon: not used.
 */
static uint64_t pebs_counters(void)
{
	uint64_t gp = (1ull << pmu_info()->gp_counters) - 1;

	return ds_support()->pebs_enable_valid &
	       (gp | (pmu_info()->fixed_counters ? 1ull << 32 : 0));
}

/* No overflow: no record. An overflow: one record per counter (reset 0), naming it. */
static void check_case(const struct pebs_case *c, const char *what)
{
	struct pebs_outcome out;
	unsigned int counters = bits_set(c->counters);
	uint64_t status;

	status = run_case(c);
	out = walk_records(c, what);
	cases_run++;
	records_seen += out.records;
	check(!!(status & PERF_GLOBAL_STATUS_BUFFER_OVF) == (out.records > 0),
	      "%s: %u records, GLOBAL_STATUS 0x%llx: OvfBuffer (bit 62) must be set exactly "
	      "when one crossed the threshold",
	      what, out.records, (unsigned long long)status);
	if (c->distance == NO_OVERFLOW) {
		check(out.records == 0, "%s: no overflow, yet %u records", what, out.records);
		return;
	}
	check(out.records >= 1 && out.records <= counters,
	      "%s: %u records for %u counters that overflowed once", what, out.records, counters);
	if (out.records && (record_format() != PEBS_FORMAT_0))
		check(out.applicable == c->counters,
		      "%s: the records apply to 0x%llx, expected 0x%llx", what,
		      (unsigned long long)out.applicable, (unsigned long long)c->counters);
}

/*
 * Item 10 of issue 29: PEBS on each counter PEBS_ENABLE takes (each GP counter; fixed counter 0
 * with baseline), from each start value; odd counters stop with PEBS_ENABLE first.
 * Steps: up to 9 counters x 4 starts x about 60: about 2,200.
 */
TEST_OBSERVING(pebs, each_counter_writes_a_record_only_when_it_overflows, 2200)
{
	uint64_t valid;
	unsigned int n = 0;

	require_pebs();
	cases_run = records_seen = 0;
	valid = pebs_counters();
	for (uint64_t bits = valid; bits; bits &= bits - 1, n++) {
		uint64_t bit = bits & -bits;

		for (unsigned int s = 0; s < STARTS; s++) {
			struct pebs_case c = { .counters = bit,
					       .distance = start_distances[s],
					       .adaptive = adaptive_format(),
					       .pebs_enable_first = n % 2 };
			char what[64];

			format(what, sizeof(what), "counter bit %u, %llu before overflow",
			       (unsigned int)__builtin_ctzll(bit),
			       (unsigned long long)start_distances[s]);
			check_case(&c, what);
		}
	}
	test_diag("PEBS format %u%s, PEBS_ENABLE bits 0x%llx: %u cases, %u records",
		  ds_support()->pebs_format, adaptive_format() ? " (adaptive)" : "",
		  (unsigned long long)valid, cases_run, records_seen);
}

/* Items 10 and 11: every counter PEBS_ENABLE takes at once, from each start value. */
TEST_OBSERVING(pebs, all_counters_at_once_write_records_naming_each, 500)
{
	uint64_t valid;

	require_pebs();
	cases_run = records_seen = 0;
	valid = pebs_counters();
	for (unsigned int s = 0; s < STARTS; s++) {
		for (unsigned int order = 0; order < 2; order++) {
			struct pebs_case c = { .counters = valid,
					       .distance = start_distances[s],
					       .adaptive = adaptive_format(),
					       .pebs_enable_first = order };
			char what[64];

			format(what, sizeof(what), "all counters, %llu before overflow, order %u",
			       (unsigned long long)start_distances[s], order);
			check_case(&c, what);
		}
	}
	test_diag("%u cases, %u records", cases_run, records_seen);
}

/*
 * Item 11: every combination of MEMINFO, GPRS, XMMS and LBRS (32 entries) in PEBS_DATA_CFG, for
 * an event that asks for adaptive records and for one that does not ("Ignored Adaptive": basic
 * records, format field 0), on GP counter 0 and fixed counter 0, each started 2 events before
 * overflow. Steps: 64 cases x about 60: about 3,900.
 */
#define DATA_CFG_GROUPS 4
#define LBR_ENTRIES 32

TEST_OBSERVING(pebs, each_data_cfg_combination_shapes_adaptive_records_and_only_theirs, 4000)
{
	static const uint64_t counters[] = { 1, 1ull << 32 };

	require_pebs();
	cases_run = records_seen = 0;
	if (!adaptive_format())
		test_skip("PEBS format %u%s: no adaptive records", ds_support()->pebs_format,
			  ds_support()->pebs_baseline ? "" : " without baseline");
	for (unsigned int k = 0; k < 2; k++) {
		if (!(ds_support()->pebs_enable_valid & counters[k]))
			continue;
		for (uint64_t groups = 0; groups < (1u << DATA_CFG_GROUPS); groups++) {
			uint64_t cfg = groups & PEBS_DATA_CFG_LBRS
					       ? (groups & ~PEBS_DATA_CFG_LBRS) |
							 pebs_data_cfg_lbrs(LBR_ENTRIES)
					       : groups;

			for (unsigned int adaptive = 0; adaptive < 2; adaptive++) {
				struct pebs_case c = { .counters = counters[k],
						       .distance = 2,
						       .data_cfg = cfg,
						       .adaptive = adaptive };
				char what[80];

				format(what, sizeof(what), "%s counter 0, data_cfg 0x%llx%s",
				       k ? "fixed" : "GP", (unsigned long long)cfg,
				       adaptive ? "" : " (ignored adaptive)");
				check_case(&c, what);
			}
		}
	}
	test_diag("%u cases, %u records", cases_run, records_seen);
}
