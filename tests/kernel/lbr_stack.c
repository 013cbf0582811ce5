/* SPDX-License-Identifier: MIT */
/* lbr suite: detection, a known branch sequence newest first under each filter, bad requests. */
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/cpu.h"
#include "arch/x86/cpuid.h"
#include "arch/x86/msr.h"
#include "arch/x86/percpu.h"
#include "ds/buffer.h"
#include "ds/ds.h"
#include "ds/records.h"
#include "lbr/lbr.h"
#include "lib/string.h"
#include "pmu/pmu.h"
#include "runner/test.h"
#include "sched/sched.h"
#include "tests/kernel/lib/lbr_probe.h"
#include "tests/kernel/lib/lbr_util.h"

#define ENTRIES LBR_LEGACY_MAX_DEPTH
#define LOOP_ROUNDS 64

static unsigned int self(void)
{
	return sched_current()->index;
}

/* One branch as the probe's labels give it; to 0: the caller's address, not checked. */
struct expected {
	const char *name;
	uint64_t from, to;
};

/*
 * lbr_probe()'s taken branches newest first, as tests/kernel/lib/lbr_probe.asm writes them, for
 * a request of these kinds (LBR_BRANCH_*): the last RET (to the caller), the RET after the
 * indirect call, CALL RAX, JMP rel32, JMP RAX, the first RET, CALL rel32, JZ.
 */
static unsigned int probe_expected(uint32_t kinds, struct expected *out)
{
	const struct {
		uint32_t kind;
		struct expected branch;
	} all[] = {
		{ LBR_BRANCH_NEAR_RET, { "ret to the caller", (uint64_t)lbr_probe_last, 0 } },
		{ LBR_BRANCH_NEAR_RET,
		  { "ret after call rax", (uint64_t)lbr_probe_callee_ret,
		    (uint64_t)lbr_probe_ind_call_return } },
		{ LBR_BRANCH_NEAR_IND_CALL,
		  { "call rax", (uint64_t)lbr_probe_ind_call, (uint64_t)lbr_probe_callee } },
		{ LBR_BRANCH_NEAR_REL_JMP,
		  { "jmp rel32", (uint64_t)lbr_probe_rel_jmp, (uint64_t)lbr_probe_rel_target } },
		{ LBR_BRANCH_NEAR_IND_JMP,
		  { "jmp rax", (uint64_t)lbr_probe_ind_jmp, (uint64_t)lbr_probe_ind_target } },
		{ LBR_BRANCH_NEAR_RET,
		  { "ret after call rel32", (uint64_t)lbr_probe_callee_ret,
		    (uint64_t)lbr_probe_call_return } },
		{ LBR_BRANCH_NEAR_REL_CALL,
		  { "call rel32", (uint64_t)lbr_probe_call, (uint64_t)lbr_probe_callee } },
		{ LBR_BRANCH_JCC,
		  { "jz", (uint64_t)lbr_probe_jcc, (uint64_t)lbr_probe_jcc_target } },
	};
	unsigned int n = 0;

	for (unsigned int i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (kinds & all[i].kind)
			out[n++] = all[i].branch;
	return n;
}

static bool in_probe(uint64_t address)
{
	return address >= (uint64_t)lbr_probe && address < (uint64_t)lbr_probe_end;
}

/*
 * Record lbr_probe() under config with interrupts off, and return the task's entries, newest
 * first: the probe's, then what ran before it since the attach; newer ones are the return path
 * and lbr_read()'s own entry.
 */
static unsigned int record_probe(const struct lbr_config *config, struct lbr_entry *entries)
{
	unsigned int task = self(), count = 0;
	unsigned long flags;
	enum lbr_error error;

	error = lbr_attach(task, config);
	if (error != LBR_OK)
		test_abort("lbr_attach: %s", lbr_error_name(error));
	flags = local_irq_save();
	lbr_probe();
	error = lbr_read(task, entries, ENTRIES, &count);
	local_irq_restore(flags);
	check_eq(LBR_OK, error);
	check_eq(LBR_OK, lbr_detach(task));
	return count;
}

static bool calls_recorded(const struct expected *expected, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		if (expected[i].from == (uint64_t)lbr_probe_call)
			return true;
	return false;
}

/*
 * The probe's entries are exactly `expected`, in order, newest first, with nothing between. The
 * read's own branches come newer than the probe's (on the model, the MSR accessor's check of
 * the diversion too): where they leave fewer entries of the stack than the probe has, the
 * newest that fit are checked, and a stack they fill entirely skips the test, measured.
 */
static void check_probe_entries(const char *what, const struct lbr_entry *entries,
				unsigned int count, const struct expected *expected, unsigned int n)
{
	unsigned int first = count, fit;

	for (unsigned int i = 0; i < count; i++) {
		if (in_probe(entries[i].from)) {
			first = i;
			break;
		}
	}
	for (unsigned int i = 0; i < count; i++)
		test_diag("%s: entry %u 0x%llx -> 0x%llx%s", what, i,
			  (unsigned long long)entries[i].from, (unsigned long long)entries[i].to,
			  entries[i].mispredicted ? " (mispredicted)" : "");
	if (n && first == count && count == lbr_support()->depth)
		test_skip("the read's own %u branches fill the %u-deep stack before the probe's %u "
			  "(%s)",
			  count, lbr_support()->depth, n, what);
	if (!check(first < count || !n, "%s: none of the probe's %u entries in %u", what, n, count))
		return;
	fit = count - first < n ? count - first : n;
	if (fit < n)
		test_diag("%s: %u of the probe's %u entries fit after the read's own %u", what, fit,
			  n, first);
	for (unsigned int i = 0; i < fit; i++) {
		const struct lbr_entry *e = &entries[first + i];

		check(e->from == expected[i].from && (!expected[i].to || e->to == expected[i].to),
		      "%s: entry %u is 0x%llx -> 0x%llx, expected %s 0x%llx -> 0x%llx", what,
		      first + i, (unsigned long long)e->from, (unsigned long long)e->to,
		      expected[i].name, (unsigned long long)expected[i].from,
		      (unsigned long long)expected[i].to);
	}
	/* With calls recorded, the entry older than the probe's is the CALL into it. */
	if (fit == n && first + n < count && calls_recorded(expected, n))
		check(!in_probe(entries[first + n].from) &&
			      entries[first + n].to == (uint64_t)lbr_probe,
		      "%s: entry %u before the probe is 0x%llx -> 0x%llx, expected the call to "
		      "0x%llx",
		      what, first + n, (unsigned long long)entries[first + n].from,
		      (unsigned long long)entries[first + n].to, (unsigned long long)lbr_probe);
}

TEST(lbr, detection_reports_the_format_depth_and_banks)
{
	const struct lbr_support *s = lbr_support();

	test_diag("lbr: present=%u format=%u depth=%u from=0x%x to=0x%x info=0x%x select=%u "
		  "call_stack=%u freeze=%u by_status=%u from_sign_extend=%u reason='%s'",
		  s->present, s->format, s->depth, s->from_msr, s->to_msr, s->info_msr, s->select,
		  s->call_stack, s->freeze, s->freeze_by_status, s->from_sign_extend, s->reason);
	require_lbr();
	if (s->architectural) {
		/* Entry 0's MSRs (SDM Vol. 4: IA32_LBR_0_FROM_IP 1500H, _TO_IP 1600H, _INFO 1200H),
		 * and a depth leaf 1CH can enumerate: a multiple of 8. */
		check_eq(PERF_CAP_LBR_FORMAT_ARCH, s->format);
		check_eq(0x1500, s->from_msr);
		check_eq(0x1600, s->to_msr);
		check_eq(0x1200, s->info_msr);
		check(s->depth && s->depth % 8 == 0 && s->depth <= 64, "depth %u", s->depth);
		return;
	}
	if (s->amd) {
		/* LbrExtV2 (Linux amd/lbr.c): entry 0 at MSR_AMD_SAMP_BR_FROM 0xC0010300, its TO
		 * next; CPUID 0x80000022 EBX[9:4] the depth; no INFO, no call-stack mode; the
		 * freeze is LbrAndPmcFreeze's, by PerfCntrGlobalStatus bit 58. */
		struct cpuid_result leaf = cpuid(CPUID_LEAF_AMD_PERFMON, 0);

		check_eq(0xc0010300, s->from_msr);
		check_eq(0xc0010301, s->to_msr);
		check_eq(0, s->info_msr);
		check_eq((leaf.ebx >> 4) & 0x3f, s->depth);
		check(s->select && !s->call_stack, "select=%u call_stack=%u", s->select,
		      s->call_stack);
		check_eq(!!(leaf.eax & CPUID_80000022_EAX_LBR_PMC_FREEZE), s->freeze);
		check_eq(s->freeze, s->freeze_by_status);
		return;
	}
	check(s->depth == 4 || s->depth == 8 || s->depth == 16 || s->depth == 32,
	      "depth %u is none of Linux's 4, 8, 16, 32", s->depth);
	check(s->from_msr == MSR_LBR_NHM_FROM || s->from_msr == MSR_LBR_CORE2_FROM,
	      "FROM bank 0x%x", s->from_msr);
	check_eq(s->from_msr == MSR_LBR_NHM_FROM ? MSR_LBR_NHM_TO : MSR_LBR_CORE2_TO, s->to_msr);
	check_eq(s->format == PERF_CAP_LBR_FORMAT_INFO ? MSR_LBR_INFO_0 : 0, s->info_msr);
	/* The Core 2 bank has no LBR_SELECT; EN_CALLSTACK only with it. */
	check(!s->call_stack || s->select, "call stack without LBR_SELECT");
}

/*
 * What kvm-unit-tests' x86/pmu_lbr.c checks: after a branchy loop with LBR on, every FROM/TO
 * entry of the stack is non-zero (here through detection's bank and depth, found by probing
 * for #GP as pmu_lbr.c does). Its TOS != 0 check was dropped as invalid (kvm-x86 584a927eaf58):
 * TOS may wrap to 0.
 */
TEST_OBSERVING(lbr, every_entry_is_set_after_a_branchy_loop, 1400)
{
	struct lbr_config config = { .kernel = true, .user = true, .branches = LBR_BRANCH_ALL };
	struct lbr_entry entries[ENTRIES];
	unsigned int count = 0;

	require_lbr();
	check_eq(LBR_OK, lbr_attach(self(), &config));
	for (int i = 0; i < LOOP_ROUNDS; i++)
		lbr_probe();
	check_eq(LBR_OK, lbr_read(self(), entries, ENTRIES, &count));
	check_eq(LBR_OK, lbr_detach(self()));
	/* Recording is off after the detach: DEBUGCTL.LBR, or AMD's DBG_EXTN_CFG.LBRV2EN. */
	check_eq(0, rdmsr(MSR_IA32_DEBUGCTL) & DEBUGCTL_LBR);
	if (lbr_support()->amd)
		check_eq(0, rdmsr(MSR_AMD_DBG_EXTN_CFG) & DBG_EXTN_CFG_LBRV2EN);
	check_eq(lbr_support()->depth, count);
	for (unsigned int i = 0; i < count; i++)
		check(entries[i].from && entries[i].to, "entry %u: 0x%llx -> 0x%llx", i,
		      (unsigned long long)entries[i].from, (unsigned long long)entries[i].to);
}

TEST(lbr, a_known_sequence_is_its_branches_newest_first)
{
	struct lbr_config config = { .kernel = true, .user = true, .branches = LBR_BRANCH_ALL };
	struct lbr_entry entries[ENTRIES];
	struct expected expected[8];
	unsigned int n, count;

	require_lbr();
	count = record_probe(&config, entries);
	n = probe_expected(LBR_BRANCH_ALL, expected);
	check_eq(8, n);
	check_probe_entries("all kinds", entries, count, expected, n);
}

/*
 * LBR_SELECT's filters: each request records exactly the probe's branches of its kinds, in
 * order; a user-only request none of this kernel code.
 */
TEST_OBSERVING(lbr, filters_record_only_the_kinds_and_rings_asked_for, 1400)
{
	static const struct {
		const char *what;
		uint32_t kinds;
	} filters[] = {
		{ "no jcc", LBR_BRANCH_ALL & ~LBR_BRANCH_JCC },
		{ "calls", LBR_BRANCH_NEAR_REL_CALL | LBR_BRANCH_NEAR_IND_CALL },
		{ "returns", LBR_BRANCH_NEAR_RET },
		{ "jumps", LBR_BRANCH_NEAR_REL_JMP | LBR_BRANCH_NEAR_IND_JMP | LBR_BRANCH_JCC },
	};
	struct lbr_entry entries[ENTRIES];
	struct expected expected[8];
	unsigned int n, count;

	require_lbr();
	if (!lbr_support()->select)
		test_skip("no MSR_LBR_SELECT (LBR format %u, FROM at 0x%x): no filters",
			  lbr_support()->format, lbr_support()->from_msr);
	for (unsigned int f = 0; f < sizeof(filters) / sizeof(filters[0]); f++) {
		struct lbr_config config = { .kernel = true, .branches = filters[f].kinds };
		unsigned int first = 0;

		count = record_probe(&config, entries);
		n = probe_expected(filters[f].kinds, expected);
		/* Calls into the probe and returns after it come from outside: skip newer ones. */
		while (first < count && !in_probe(entries[first].from))
			first++;
		check_probe_entries(filters[f].what, entries, count, expected, n);
		for (unsigned int i = 0; i < count; i++)
			check(!in_probe(entries[i].from) || i < first + n,
			      "%s: entry %u 0x%llx from the probe beyond its %u", filters[f].what,
			      i, (unsigned long long)entries[i].from, n);
	}
	{
		struct lbr_config user = { .user = true, .branches = LBR_BRANCH_ALL };

		count = record_probe(&user, entries);
		check_eq(0, count);
	}
}

TEST(lbr, bad_requests_get_a_clear_error)
{
	struct lbr_config none = { .branches = LBR_BRANCH_ALL };
	struct lbr_config no_kinds = { .kernel = true };
	struct lbr_config unknown = { .kernel = true, .branches = LBR_BRANCH_ALL | (1u << 7) };
	struct lbr_config stack_jcc = { .user = true,
					.branches = LBR_BRANCH_CALLS_AND_RETURNS | LBR_BRANCH_JCC,
					.call_stack = true };
	struct lbr_config stack_kernel = { .kernel = true,
					   .user = true,
					   .branches = LBR_BRANCH_CALLS_AND_RETURNS,
					   .call_stack = true };
	struct lbr_config good = { .kernel = true, .branches = LBR_BRANCH_ALL, .user = true };
	struct lbr_config stack = { .user = true,
				    .branches = LBR_BRANCH_CALLS_AND_RETURNS,
				    .call_stack = true };
	struct lbr_entry entry;
	unsigned int count;

	check_text("invalid request", lbr_error_name(LBR_ERROR_CONFIG));
	check_text("unknown error", lbr_error_name(LBR_ERROR_COUNT));
	if (!lbr_support()->present) {
		check_eq(LBR_ERROR_UNSUPPORTED, lbr_attach(self(), &good));
		test_skip("%s", lbr_support()->reason);
	}
	check_eq(LBR_ERROR_CONFIG, lbr_attach(self(), &none));
	check_eq(LBR_ERROR_CONFIG, lbr_attach(self(), &no_kinds));
	check_eq(LBR_ERROR_CONFIG, lbr_attach(self(), &unknown));
	check_eq(LBR_ERROR_CONFIG, lbr_attach(self(), &stack_jcc));
	check_eq(LBR_ERROR_CONFIG, lbr_attach(self(), &stack_kernel));
	check_eq(LBR_ERROR_CONFIG, lbr_attach(self(), NULL));
	check_eq(LBR_ERROR_NO_TARGET, lbr_attach(SWITCH_TASKS_MAX, &good));
	check_eq(LBR_ERROR_NOT_ATTACHED, lbr_detach(self()));
	check_eq(LBR_ERROR_NOT_ATTACHED, lbr_read(self(), &entry, 1, &count));
	check_eq(lbr_support()->call_stack ? LBR_OK : LBR_ERROR_UNSUPPORTED,
		 lbr_attach(self(), &stack));
	if (lbr_support()->call_stack)
		check_eq(LBR_OK, lbr_detach(self()));
	check_eq(LBR_OK, lbr_attach(self(), &good));
	check_eq(LBR_ERROR_BUSY, lbr_attach(self(), &good));
	check_eq(LBR_OK, lbr_detach(self()));
}

#define EVENT_INSTRUCTIONS_RETIRED 0xc0 /* architectural event, umask 0 */
#define PMI_PERIOD 500 /* instructions: the probe loop takes 2 or 3 periods */
#define PMI_LOOP_CALLS 100

/*
 * FREEZE_LBRS_ON_PMI (DEBUGCTL bit 11): the stack freezes when the counter's overflow requests
 * its PMI, so what the PMI reads (lbr_read_pmi()) is the branches before it, all of them the
 * probe loop's, and none of the interrupt's or its handler's. Interrupts are off over the loop,
 * so no tick comes between; the PMI is delivered when they are on again, which without the
 * freeze would put the handler's path in the stack.
 */
TEST_OBSERVING(lbr, freeze_on_pmi_keeps_the_branches_before_the_pmi, 8100)
{
	struct lbr_config config = { .kernel = true, .user = true, .branches = LBR_BRANCH_ALL };
	bool resumed = false;
	struct pmu_event instructions = { .event = EVENT_INSTRUCTIONS_RETIRED,
					  .kernel = true,
					  .interrupt = true };
	unsigned int task = self(), cpu = this_cpu_index(), count = 0, outside = 0;
	struct lbr_entry entries[ENTRIES];
	uint64_t pmis = lbr_stats(cpu).pmis;
	unsigned long flags;

	require_lbr();
	if (!lbr_support()->freeze)
		test_skip(
			"no DEBUGCTL.FREEZE_LBRS_ON_PMI: it needs CPUID.1:ECX.PDCM and perfmon v2");
	if (!pmu_usable())
		test_skip("counters unusable: %s", pmu_info()->reason);
	check_eq(LBR_OK, lbr_attach(task, &config));
	if (pmu_add_sampling_event(task, &instructions, PMI_PERIOD) < 0)
		test_abort("pmu_add_sampling_event refused");
	flags = local_irq_save();
	lbr_probe_loop(PMI_LOOP_CALLS);
	local_irq_restore(flags); /* the PMI comes here */
	pmu_release(task);
	/* The PMI thawed the stack (acknowledged bit 58, or set DEBUGCTL.LBR again). */
	flags = local_irq_save();
	check_eq(LBR_OK, lbr_read(task, entries, ENTRIES, &count));
	local_irq_restore(flags);
	/* Frozen, the stack would still be the probe loop's alone: the read's own came after. */
	for (unsigned int i = 0; i < count; i++)
		resumed |= !in_probe(entries[i].from);
	check(resumed, "recording did not resume after the PMI (%u entries, all the loop's)",
	      count);
	check_eq(LBR_OK, lbr_read_pmi(task, entries, ENTRIES, &count));
	check_eq(LBR_OK, lbr_detach(task));
	for (unsigned int i = 0; i < count; i++) {
		if (in_probe(entries[i].from) && in_probe(entries[i].to))
			continue;
		if (outside++ < 4)
			test_diag("PMI's entry %u 0x%llx -> 0x%llx is not the probe loop's", i,
				  (unsigned long long)entries[i].from,
				  (unsigned long long)entries[i].to);
	}
	test_diag("%llu PMIs read the stack; the last one %u entries",
		  (unsigned long long)(lbr_stats(cpu).pmis - pmis), count);
	check(lbr_stats(cpu).pmis > pmis, "no PMI read the frozen stack");
	check_eq(lbr_support()->depth, count);
	check_eq(0, outside);
}

#define PEBS_LBR_ENTRIES 8
#define PEBS_PERIOD 97 /* instructions: a prime, so records fall at changing places */
#define PEBS_RECORDS 64
#define PEBS_LOOP_CALLS 40 /* about 530 instructions: 5 records */
#define PROBE_STRAIGHT_BYTES 16 /* the probe's longest run of bytes without a branch */

/*
 * Adaptive PEBS's LBR group (PEBS_DATA_CFG bit 3, N entries) holds the LBR stack as the record
 * is written: the branches before the eventing instruction, newest first. Over the probe loop,
 * whose every branch lies inside the probe, each record's N entries are the loop's, and the
 * newest one's target is at or before the eventing IP with no branch between: straight code,
 * less than PROBE_STRAIGHT_BYTES on.
 */
TEST_OBSERVING(lbr, pebs_lbr_group_holds_the_branches_before_the_eventing_instruction, 8200)
{
	struct lbr_config config = { .kernel = true, .user = true, .branches = LBR_BRANCH_ALL };
	struct pmu_event instructions = { .event = EVENT_INSTRUCTIONS_RETIRED,
					  .kernel = true,
					  .pebs_adaptive = true,
					  .pebs = true };
	uint64_t cfg = pebs_data_cfg_lbrs(PEBS_LBR_ENTRIES);
	struct ds_target target = { false, self() };
	const uint8_t *at, *end;
	unsigned int records = 0, in_loop = 0;
	unsigned long flags;
	size_t size = 0;

	require_lbr();
	if (ds_support()->pebs_reason[0])
		test_skip("%s", ds_support()->pebs_reason);
	if (!pmu_usable())
		test_skip("counters unusable: %s", pmu_info()->reason);
	if (ds_support()->pebs_format < PEBS_FORMAT_4 || !ds_support()->pebs_baseline)
		test_skip("PEBS format %u%s: no adaptive records, no LBR group",
			  ds_support()->pebs_format,
			  ds_support()->pebs_baseline ? "" : " without baseline");
	{
		struct ds_pebs_config pebs = {
			.format = ds_support()->pebs_format,
			.record_size = pebs_adaptive_record_size(cfg),
			.records = PEBS_RECORDS,
			.threshold_records = PEBS_RECORDS - ds_threshold_room(PEBS_RECORDS),
			.data_cfg = cfg,
			.enable = 1,
			.reset_value = (0 - PEBS_PERIOD) & ((1ull << pmu_info()->gp_width) - 1),
		};

		check_eq(LBR_OK, lbr_attach(target.index, &config));
		check_eq(DS_OK, ds_attach_pebs(&target, &pebs));
	}
	if (pmu_add_sampling_event(target.index, &instructions, PEBS_PERIOD) != 0)
		test_abort("pmu_add_sampling_event did not get counter 0");
	flags = local_irq_save();
	lbr_probe_loop(PEBS_LOOP_CALLS);
	local_irq_restore(flags);
	pmu_release(target.index);
	check_eq(LBR_OK, lbr_detach(target.index));
	at = (const uint8_t *)ds_area_get(&target)->pebs_base;
	end = (const uint8_t *)ds_area_get(&target)->pebs_index;
	for (; at < end; at += size, records++) {
		struct pebs_sample sample;
		struct pebs_lbr_entry newest, entry;
		bool all_loop = true;

		if (!check(pebs_decode((enum pebs_format)ds_support()->pebs_format, at,
				       (size_t)(end - at), cfg, &sample, &size),
			   "record %u does not decode", records))
			break;
		if (!in_probe(sample.ip))
			continue; /* counted before or after the loop */
		in_loop++;
		check_eq(PEBS_LBR_ENTRIES, sample.lbr_count);
		for (unsigned int e = 0; e < sample.lbr_count; e++)
			if (pebs_lbr_entry(at, &sample, e, &entry))
				all_loop &= in_probe(entry.from) && in_probe(entry.to);
		check(all_loop, "record %u at 0x%llx: an LBR entry outside the probe loop", records,
		      (unsigned long long)sample.ip);
		if (pebs_lbr_entry(at, &sample, 0, &newest))
			check(newest.to <= sample.ip &&
				      sample.ip - newest.to < PROBE_STRAIGHT_BYTES,
			      "record %u: eventing IP 0x%llx, the newest branch 0x%llx -> 0x%llx",
			      records, (unsigned long long)sample.ip,
			      (unsigned long long)newest.from, (unsigned long long)newest.to);
	}
	test_diag("%u records, %u of them in the probe loop", records, in_loop);
	check(in_loop >= 3, "%u records in the loop", in_loop);
	check_eq(DS_OK, ds_detach(&target, DS_USER_PEBS));
}
