/* SPDX-License-Identifier: MIT */
/* emulator suite: architectural PEBS on the model (rule 25): MSRs, records, fragments, PMI. */
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/apic.h"
#include "arch/x86/arch-pebs.h"
#include "arch/x86/cpu.h"
#include "arch/x86/cpuid.h"
#include "arch/x86/debugctl.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/extable.h"
#include "arch/x86/msr.h"
#include "arch/x86/paging.h"
#include "arch/x86/probe.h"
#include "ds/records.h"
#include "ds/save_area.h"
#include "emulator/emulator.h"
#include "lib/format.h"
#include "lib/string.h"
#include "runner/test.h"
#include "tests/kernel/lib/emulator_util.h"

/*
 * The rules of docs/emulated-cpu.md rule 25, each kept (exact bytes, exact index) and broken
 * (#GP, or a report). Run on the model only: the groups' sizes include the model's choices
 * (the counter group's pad, the variable LBR depth). ds.arch_pebs_* test ds/ on any part.
 */
#define FIRST_PERIOD 100 /* instructions to the overflow that arms PEBS */
#define RELOAD_PERIOD 1000 /* the reload: no second overflow in the loop */
#define LOOP 100 /* iterations: 200 instructions */
#define INST_RETIRED 0xc0
#define BASIC_RECORD 64 /* a header and the basic group */
#define NO_PMI_THRESH 0x100 /* 16-byte units: beyond a 4 KiB buffer */

static uint8_t pebs_buffer[PAGE_SIZE] __attribute__((aligned(PAGE_SIZE)));
static struct ds_area area __attribute__((aligned(PAGE_SIZE)));
#define BTS_PAGES 8 /* room for the whole run unwrapped: ~300 records of 24 bytes */
#define BTS_RECORD 24
#define JNZ_BACK_TO_DEC 3 /* probe_instruction_loop(): DEC r64 (3 bytes), then JNZ rel8 to it */
static uint8_t bts_buffer[BTS_PAGES * PAGE_SIZE] __attribute__((aligned(PAGE_SIZE)));

/* Leaf 23H's PEBS counters, read as Linux update_pmu_cap() reads them. */
struct arch_pebs_enum {
	uint32_t gp, fixed;
};

static struct arch_pebs_enum require_arch_pebs(void)
{
	struct arch_pebs_enum e = { 0 };
	uint64_t caps = 0;
	uint32_t sub0;

	require_emulated_intel_pmu();
	if (rdmsr_safe(MSR_IA32_PERF_CAPABILITIES, &caps) ||
	    ((caps & PERF_CAP_PEBS_FORMAT_MASK) >> PERF_CAP_PEBS_FORMAT_SHIFT) !=
		    PERF_CAP_PEBS_FORMAT_ARCH)
		test_skip("PERF_CAPABILITIES PEBS_FMT %llu: not architectural PEBS (0xF) on %s",
			  (unsigned long long)((caps & PERF_CAP_PEBS_FORMAT_MASK) >>
					       PERF_CAP_PEBS_FORMAT_SHIFT),
			  emulator_describe());
	sub0 = cpuid(CPUID_LEAF_PERFMON_EXT, 0).eax;
	if (!(sub0 & CPUID_23_EAX_PEBS_CAPS_SUBLEAF) ||
	    !(sub0 & CPUID_23_EAX_PEBS_COUNTERS_SUBLEAF))
		test_skip("CPUID.23H.0:EAX 0x%x lacks the PEBS sub-leaves (bits 4, 5)", sub0);
	/* Only counters that exist (23H.1): arch_pebs_stray names one beyond them. */
	e.gp = cpuid(CPUID_LEAF_PERFMON_EXT, CPUID_23_SUBLEAF_PEBS_COUNTERS).eax &
	       cpuid(CPUID_LEAF_PERFMON_EXT, CPUID_23_SUBLEAF_COUNTERS).eax;
	e.fixed = cpuid(CPUID_LEAF_PERFMON_EXT, CPUID_23_SUBLEAF_PEBS_COUNTERS).ecx &
		  cpuid(CPUID_LEAF_PERFMON_EXT, CPUID_23_SUBLEAF_COUNTERS).ebx;
	return e;
}

static void expect_no_violation(void)
{
	char text[EMULATOR_VIOLATION_MAX];
	unsigned int count = emulator_take_violations(text, sizeof(text));

	check(count == 0, "expected no report, got %u: %s", count, text);
}

TEST(emulator, rule_25_pebs_enable_and_data_cfg_raise_gp_on_an_arch_pebs_part)
{
	uint64_t value;

	require_arch_pebs();
	check_eq(EXINFO(X86_EXC_GP, 0), rdmsr_safe(MSR_IA32_PEBS_ENABLE, &value));
	check_eq(EXINFO(X86_EXC_GP, 0), wrmsr_safe(MSR_IA32_PEBS_ENABLE, 0));
	check_eq(EXINFO(X86_EXC_GP, 0), rdmsr_safe(MSR_PEBS_DATA_CFG, &value));
	check_eq(EXINFO(X86_EXC_GP, 0), wrmsr_safe(MSR_PEBS_DATA_CFG, 0));
	/* IA32_DS_AREA stays, for BTS. */
	check_eq(0, rdmsr_safe(MSR_IA32_DS_AREA, &value));
}

TEST(emulator, rule_25_pebs_base_index_and_cfg_c_reserved_bits_raise_gp)
{
	static const unsigned int index_reserved[] = { 0, 3, 27, 30, 33, 35, 59, 63 };
	static const unsigned int cfg_c_reserved[] = { 32, 34, 38, 39, 42, 48, 50, 60 };
	uint64_t phys = virt_to_phys(pebs_buffer), value = 0;

	require_arch_pebs();
	for (unsigned int bit = 4; bit < 12; bit++)
		check_eq(EXINFO(X86_EXC_GP, 0),
			 wrmsr_safe(MSR_IA32_PEBS_BASE, phys | (1ull << bit)));
	check_eq(EXINFO(X86_EXC_GP, 0), wrmsr_safe(MSR_IA32_PEBS_BASE, 1ull << 63));
	check_eq(0, wrmsr_safe(MSR_IA32_PEBS_BASE, phys | 4));
	check_eq(0, rdmsr_safe(MSR_IA32_PEBS_BASE, &value));
	check_eq(phys | 4, value);
	check_eq(0, wrmsr_safe(MSR_IA32_PEBS_BASE, 0));
	for (size_t i = 0; i < sizeof(index_reserved) / sizeof(index_reserved[0]); i++)
		check_eq(EXINFO(X86_EXC_GP, 0),
			 wrmsr_safe(MSR_IA32_PEBS_INDEX, 1ull << index_reserved[i]));
	for (size_t i = 0; i < sizeof(cfg_c_reserved) / sizeof(cfg_c_reserved[0]); i++)
		check_eq(EXINFO(X86_EXC_GP, 0),
			 wrmsr_safe(MSR_IA32_PMC_GP0_CFG_C, 1ull << cfg_c_reserved[i]));
	check_eq(0, rdmsr_safe(MSR_IA32_PMC_GP0_CFG_C, &value));
	check_eq(0, value);
}

/* A counter in PEBS_ENABLE numbering: GP i at bit i, fixed i at bit 32 + i. */
static bool is_fixed(unsigned int bit)
{
	return bit >= PEBS_ENABLE_FIXED_SHIFT;
}

static uint32_t cfg_c_msr(unsigned int bit)
{
	return is_fixed(bit) ? MSR_IA32_PMC_FX0_CFG_C +
				       MSR_IA32_PMC_CFG_C_STRIDE * (bit - PEBS_ENABLE_FIXED_SHIFT)
			     : MSR_IA32_PMC_GP0_CFG_C + MSR_IA32_PMC_CFG_C_STRIDE * bit;
}

struct run {
	unsigned int bit; /* the counter */
	uint64_t groups; /* CFG_C group bits */
	uint64_t index; /* IA32_PEBS_INDEX to start with */
	uint64_t reload; /* period after a record */
	uint64_t index_after, status_after;
	uint64_t pmis_masked;
};

/*
 * Count instructions in ring 0 on one counter with PEBS enabled through its CFG_C, over a 4 KiB
 * buffer at pebs_buffer, LVTPC masked (a PMI is a request the model counts). Every register is
 * put back; a fixed counter's value and field too (pmu/ may know them).
 */
static void run_pebs(struct run *run)
{
	uint64_t mask = emulator_counter_width_mask(), saved_fixed = 0, saved_ctrl = 0;
	uint32_t lvtpc = apic_read_lvtpc();
	unsigned int fixed = run->bit - PEBS_ENABLE_FIXED_SHIFT;
	struct emulator_stats before, after;
	unsigned long flags;

	memset(pebs_buffer, 0, sizeof(pebs_buffer));
	flags = local_irq_save();
	apic_write_lvtpc(VECTOR_TEST | APIC_LVT_MASKED);
	before = emulator_stats();
	wrmsr(MSR_IA32_PEBS_BASE, virt_to_phys(pebs_buffer)); /* size code 0: 4 KiB */
	wrmsr(MSR_IA32_PEBS_INDEX, run->index);
	wrmsr(cfg_c_msr(run->bit),
	      ARCH_PEBS_EN | run->groups | ((0 - run->reload) & ARCH_PEBS_RELOAD_MASK));
	if (is_fixed(run->bit)) {
		saved_fixed = rdmsr(MSR_IA32_FIXED_CTR0 + fixed);
		saved_ctrl = rdmsr(MSR_IA32_FIXED_CTR_CTRL);
		wrmsr(MSR_IA32_FIXED_CTR0 + fixed, (0 - FIRST_PERIOD) & mask);
		wrmsr(MSR_IA32_FIXED_CTR_CTRL,
		      FIXED_CTR_CTRL_OS << (FIXED_CTR_CTRL_FIELD_BITS * fixed));
	} else {
		wrmsr(MSR_IA32_PMC0 + run->bit, (0 - FIRST_PERIOD) & UINT32_MAX);
		wrmsr(MSR_IA32_PERFEVTSEL0 + run->bit,
		      INST_RETIRED | PERFEVTSEL_OS | PERFEVTSEL_EN);
	}
	wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 1ull << run->bit);
	probe_instruction_loop(LOOP);
	wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 0);
	if (is_fixed(run->bit)) {
		wrmsr(MSR_IA32_FIXED_CTR_CTRL, saved_ctrl);
		wrmsr(MSR_IA32_FIXED_CTR0 + fixed, saved_fixed);
	} else {
		wrmsr(MSR_IA32_PERFEVTSEL0 + run->bit, 0);
		wrmsr(MSR_IA32_PMC0 + run->bit, 0);
	}
	wrmsr(cfg_c_msr(run->bit), 0);
	run->index_after = rdmsr(MSR_IA32_PEBS_INDEX);
	run->status_after = rdmsr(MSR_IA32_PERF_GLOBAL_STATUS);
	wrmsr(MSR_IA32_PERF_GLOBAL_OVF_CTRL, run->status_after);
	wrmsr(MSR_IA32_PEBS_BASE, 0); /* the hardware told first; the buffer is static */
	wrmsr(MSR_IA32_PEBS_INDEX, 0);
	after = emulator_stats();
	apic_write_lvtpc(lvtpc);
	local_irq_restore(flags);
	run->pmis_masked = after.pmis_masked - before.pmis_masked;
}

static uint64_t qword_at(size_t offset)
{
	return *(const uint64_t *)(pebs_buffer + offset);
}

static uint64_t wr_bytes(uint64_t index)
{
	return ((index & ARCH_PEBS_INDEX_WR_MASK) >> ARCH_PEBS_INDEX_WR_SHIFT) *
	       ARCH_PEBS_INDEX_UNIT;
}

static uint64_t enabled_index(uint64_t thresh_units)
{
	return ARCH_PEBS_INDEX_EN | thresh_units << ARCH_PEBS_INDEX_THRESH_SHIFT;
}

/*
 * One record on every counter 23H.5 names, each alone: the header says 64 bytes and the basic
 * group, the basic group names that counter alone, INDEX.WR moved by 4 units, no PMI (THRESH
 * beyond), the counter's status bit cleared by the assist. 11 counters of ~300 steps each on
 * pantherlake: ~3,300 steps (budget=quick and soak alike).
 */
TEST_OBSERVING(emulator, rule_25_a_record_on_each_pebs_counter_lands_at_pebs_base, 3400)
{
	struct arch_pebs_enum e = require_arch_pebs();
	unsigned int tried = 0;

	for (unsigned int bit = 0; bit < 64; bit++) {
		struct run run = { .bit = bit,
				   .index = enabled_index(NO_PMI_THRESH),
				   .reload = RELOAD_PERIOD };

		if (is_fixed(bit) ? !(e.fixed & (1u << (bit - PEBS_ENABLE_FIXED_SHIFT)))
				  : bit >= 32 || !(e.gp & (1u << bit)))
			continue;
		run_pebs(&run);
		tried++;
		test_diag("counter bit %u: INDEX 0x%llx header 0x%llx", bit,
			  (unsigned long long)run.index_after, (unsigned long long)qword_at(0));
		check_eq(BASIC_RECORD, wr_bytes(run.index_after));
		check_eq(BASIC_RECORD | ARCH_PEBS_HEADER_BASIC, qword_at(0));
		check_eq(1ull << bit, qword_at(ARCH_PEBS_HEADER_BYTES + 8)); /* applicable */
		check(qword_at(ARCH_PEBS_HEADER_BYTES + 16) != 0, "no TSC in the basic group");
		check_eq(0, qword_at(BASIC_RECORD)); /* nothing after it */
		check_eq(0, run.pmis_masked);
		check_eq(0, run.status_after &
				    ((1ull << bit) | PERF_GLOBAL_STATUS_ARCH_PEBS_THRESHOLD));
	}
	expect_no_violation();
	test_diag("%u counters", tried);
	check(tried > 0, "23H.5 names no counter");
}

/*
 * The threshold PMI: THRESH at 8 units (two basic records), reload 40, ~200 instructions: 3 or
 * 4 records, one PMI, with GLOBAL_STATUS bit 54 and not bit 62 (the DS area's). ~300 steps.
 */
TEST(emulator, rule_25_the_threshold_pmi_sets_global_status_bit_54_not_62)
{
	struct run run = { .bit = 0, .index = enabled_index(8), .reload = 40 };

	require_arch_pebs();
	run_pebs(&run);
	test_diag("INDEX 0x%llx GLOBAL_STATUS 0x%llx", (unsigned long long)run.index_after,
		  (unsigned long long)run.status_after);
	check(wr_bytes(run.index_after) >= 2 * BASIC_RECORD, "WR 0x%llx below THRESH",
	      (unsigned long long)wr_bytes(run.index_after));
	check_eq(1, run.pmis_masked);
	check_eq(PERF_GLOBAL_STATUS_ARCH_PEBS_THRESHOLD,
		 run.status_after &
			 (PERF_GLOBAL_STATUS_ARCH_PEBS_THRESHOLD | PERF_GLOBAL_STATUS_BUFFER_OVF));
	expect_no_violation();
}

/* Each group alone, and all together: header bits and the size the layout gives (typed). */
TEST_OBSERVING(emulator, rule_25_each_group_alone_and_together_has_its_size, 2200)
{
	static const struct {
		uint64_t groups;
		uint64_t bytes;
	} cases[] = {
		{ ARCH_PEBS_AUX, 64 + 64 },
		{ ARCH_PEBS_GPR, 64 + 160 },
		{ ARCH_PEBS_XMM, 64 + 16 + 256 },
		{ 1ull << ARCH_PEBS_LBR_SHIFT, 64 + 48 + 8 * 24 },
		{ 2ull << ARCH_PEBS_LBR_SHIFT, 64 + 48 + 16 * 24 },
		/* GP counter 0 allowed and snapshotted: one value and the model's pad. */
		{ ARCH_PEBS_CNTR_ALLOW | ARCH_PEBS_CNTR_GP, 64 + 16 + 16 },
		{ ARCH_PEBS_AUX | ARCH_PEBS_GPR | ARCH_PEBS_XMM | (1ull << ARCH_PEBS_LBR_SHIFT) |
			  ARCH_PEBS_CNTR_ALLOW | ARCH_PEBS_CNTR_GP,
		  64 + 64 + 160 + 272 + 240 + 32 },
	};

	require_arch_pebs();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct run run = { .bit = 0,
				   .groups = cases[i].groups,
				   .index = enabled_index(NO_PMI_THRESH),
				   .reload = RELOAD_PERIOD };
		uint64_t header = 0, bytes = 0, seen = 0;

		run_pebs(&run);
		/* Walk the fragments as Linux does: the record may come in several. */
		for (size_t at = 0; at < wr_bytes(run.index_after);) {
			header = qword_at(at);
			if ((header & ARCH_PEBS_HEADER_SIZE_MASK) < ARCH_PEBS_HEADER_BYTES)
				break;
			bytes += header & ARCH_PEBS_HEADER_SIZE_MASK;
			seen |= header & ~(ARCH_PEBS_HEADER_SIZE_MASK | ARCH_PEBS_HEADER_CONT);
			at += header & ARCH_PEBS_HEADER_SIZE_MASK;
		}
		test_diag("groups 0x%llx: %llu bytes, header bits 0x%llx",
			  (unsigned long long)cases[i].groups, (unsigned long long)bytes,
			  (unsigned long long)seen);
		check_eq(wr_bytes(run.index_after), bytes);
		check_eq(ARCH_PEBS_HEADER_BASIC |
				 (cases[i].groups & ~ARCH_PEBS_CNTR_ALLOW & ~ARCH_PEBS_RELOAD_MASK),
			 seen);
		/* Fragments add a 16-byte header each, and a null one may come between. */
		check(bytes >= cases[i].bytes && (bytes - cases[i].bytes) % 16 == 0,
		      "%llu bytes, expected %llu plus fragment headers", (unsigned long long)bytes,
		      (unsigned long long)cases[i].bytes);
	}
	expect_no_violation();
}

/* PEBS_BASE withdrawn (0) while a counter's CFG_C.EN is still set and it overflows: reported. */
TEST(emulator, rule_25_a_pebs_counter_armed_with_pebs_base_0_is_reported)
{
	uint32_t lvtpc = apic_read_lvtpc();
	unsigned long flags;

	require_arch_pebs();
	flags = local_irq_save();
	apic_write_lvtpc(VECTOR_TEST | APIC_LVT_MASKED);
	wrmsr(MSR_IA32_PEBS_BASE, 0);
	wrmsr(MSR_IA32_PEBS_INDEX, enabled_index(NO_PMI_THRESH));
	wrmsr(MSR_IA32_PMC_GP0_CFG_C, ARCH_PEBS_EN | ((0 - RELOAD_PERIOD) & ARCH_PEBS_RELOAD_MASK));
	wrmsr(MSR_IA32_PMC0, (0 - FIRST_PERIOD) & UINT32_MAX);
	wrmsr(MSR_IA32_PERFEVTSEL0, INST_RETIRED | PERFEVTSEL_OS | PERFEVTSEL_EN);
	wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 1);
	probe_instruction_loop(LOOP);
	wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 0);
	wrmsr(MSR_IA32_PERFEVTSEL0, 0);
	wrmsr(MSR_IA32_PMC0, 0);
	wrmsr(MSR_IA32_PMC_GP0_CFG_C, 0);
	wrmsr(MSR_IA32_PERF_GLOBAL_OVF_CTRL, rdmsr(MSR_IA32_PERF_GLOBAL_STATUS));
	wrmsr(MSR_IA32_PEBS_INDEX, 0);
	apic_write_lvtpc(lvtpc);
	local_irq_restore(flags);
	expect_violation(25);
}

/* A record that does not fit below the buffer's end: FULL set, WR kept, nothing written. */
TEST(emulator, rule_25_a_record_beyond_the_buffer_sets_full_and_is_lost)
{
	uint64_t wr_units = (PAGE_SIZE - BASIC_RECORD / 2) / ARCH_PEBS_INDEX_UNIT;
	struct run run = { .bit = 0,
			   .index = enabled_index(NO_PMI_THRESH) |
				    wr_units << ARCH_PEBS_INDEX_WR_SHIFT,
			   .reload = RELOAD_PERIOD };

	require_arch_pebs();
	run_pebs(&run);
	check_eq(run.index | ARCH_PEBS_INDEX_FULL, run.index_after);
	check_eq(0, qword_at(PAGE_SIZE - BASIC_RECORD / 2));
	check_eq(0, run.pmis_masked);
	expect_no_violation();
}

/*
 * BTS in the DS area and arch-PEBS beside it, on one CPU at once: each writes its own buffer,
 * neither breaks rule 4 or 19 (PEBS no longer reads IA32_DS_AREA). BTS holds the loop's 99
 * taken JNZs exactly, PEBS its one record. ~2,000 steps (the MSR accesses are traced too).
 */
TEST_OBSERVING(emulator, rule_25_bts_keeps_the_ds_area_while_pebs_writes_beside_it, 2000)
{
	struct run run = { .bit = 0, .index = enabled_index(NO_PMI_THRESH), .reload = 1000 };
	const struct bts_record *records = (const struct bts_record *)bts_buffer;
	uint64_t used, loop_branches = 0;

	require_arch_pebs();
	memset(&area, 0, sizeof(area));
	area.bts_base = area.bts_index = (uint64_t)bts_buffer;
	area.bts_max = area.bts_base + sizeof(bts_buffer) / BTS_RECORD * BTS_RECORD;
	area.bts_threshold = area.bts_max + BTS_RECORD; /* circular */
	wrmsr(MSR_IA32_DS_AREA, (uint64_t)&area);
	debugctl_update(DEBUGCTL_TR | DEBUGCTL_BTS, DEBUGCTL_TR | DEBUGCTL_BTS);
	run_pebs(&run);
	debugctl_update(DEBUGCTL_TR | DEBUGCTL_BTS, 0);
	wrmsr(MSR_IA32_DS_AREA, 0);
	used = (area.bts_index - area.bts_base) / BTS_RECORD;
	for (uint64_t i = 0; i < used; i++)
		loop_branches += records[i].to + JNZ_BACK_TO_DEC == records[i].from;
	test_diag("BTS %llu records, %llu of the loop; PEBS INDEX 0x%llx", (unsigned long long)used,
		  (unsigned long long)loop_branches, (unsigned long long)run.index_after);
	check(used > 0 && area.bts_index < area.bts_max, "BTS index 0x%llx max 0x%llx",
	      (unsigned long long)area.bts_index, (unsigned long long)area.bts_max);
	check_eq(LOOP - 1, loop_branches);
	check_eq(BASIC_RECORD, wr_bytes(run.index_after));
	check_eq(BASIC_RECORD | ARCH_PEBS_HEADER_BASIC, qword_at(0));
	check_eq(0, area.pebs_base | area.pebs_index);
	expect_no_violation();
}

/*
 * Rules 17 and 18 for CFG_C: written while its counter counts (EVTSEL.EN and its GLOBAL_CTRL
 * bit set), a change of EN is reported under 18, of the reload value under 17. Nothing is
 * stepped: the counter counts an event the model does not observe (0x00: no modelled event).
 */
TEST(emulator, rule_25_cfg_c_of_a_counting_counter_is_not_rewritten)
{
	unsigned long flags;

	require_arch_pebs();
	flags = local_irq_save();
	wrmsr(MSR_IA32_PERFEVTSEL0, PERFEVTSEL_OS | PERFEVTSEL_EN);
	wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 1);
	emulator_take_violations(NULL, 0);
	wrmsr(MSR_IA32_PMC_GP0_CFG_C, ARCH_PEBS_EN);
	expect_violation(18);
	wrmsr(MSR_IA32_PMC_GP0_CFG_C, ARCH_PEBS_EN | 0x1000);
	expect_violation(17);
	wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 0);
	wrmsr(MSR_IA32_PMC_GP0_CFG_C, 0); /* stopped: allowed */
	expect_no_violation();
	wrmsr(MSR_IA32_PERFEVTSEL0, 0);
	wrmsr(MSR_IA32_PMC0, 0);
	local_irq_restore(flags);
}
