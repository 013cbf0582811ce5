/* SPDX-License-Identifier: MIT */
/* emulator suite: each rule of the emulated CPU, broken on purpose, is reported
 * (docs/emulated-cpu.md). */
#include <stdint.h>

#include "arch/x86/cpuid.h"
#include "arch/x86/debugctl.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/extable.h"
#include "arch/x86/msr.h"
#include "arch/x86/paging.h"
#include "arch/x86/probe.h"
#include "arch/x86/witness_marker.h"
#include "ds/area.h"
#include "ds/ds.h"
#include "ds/records.h"
#include "emulator/emulator.h"
#include "lib/format.h"
#include "lib/string.h"
#include "runner/test.h"
#include "tests/kernel/emulator_util.h"

#define BTS_RECORD 24
#define RECORDS 16
#define UNMAPPED_BUFFER 0x0000100000000000ull /* lower half, never mapped in the runner's CR3 */

static struct ds_area area __attribute__((aligned(PAGE_SIZE)));
static uint8_t buffer[PAGE_SIZE] __attribute__((aligned(PAGE_SIZE)));

/* Circular BTS over buffer, by the SDM's rules, unless a test breaks one. */
static void area_fill_bts(uint64_t base, uint64_t records)
{
	memset(&area, 0, sizeof(area));
	area.bts_base = area.bts_index = base;
	area.bts_max = base + records * BTS_RECORD;
	area.bts_threshold = area.bts_max + BTS_RECORD;
}

/* The BTS rules need BTS: a PEBS-only guest (kvm_pebs) has none. */
static void require_bts(void)
{
	require_emulator();
	if (ds_support()->bts_reason[0])
		test_skip("%s", ds_support()->bts_reason);
}

static void bts_on(void)
{
	wrmsr(MSR_IA32_DS_AREA, (uint64_t)&area);
	debugctl_update(DEBUGCTL_TR | DEBUGCTL_BTS, DEBUGCTL_TR | DEBUGCTL_BTS);
}

static void bts_off(void)
{
	debugctl_update(DEBUGCTL_TR | DEBUGCTL_BTS, 0);
	wrmsr(MSR_IA32_DS_AREA, 0);
}

/* The violations since the last call must be at least one, the first of rule `rule`. */
static void expect_violation(unsigned int rule)
{
	char text[EMULATOR_VIOLATION_MAX], prefix[16];
	unsigned int count = emulator_take_violations(text, sizeof(text));
	size_t length = (size_t)format(prefix, sizeof(prefix), "rule %u:", rule);

	test_diag("reported: %s", count ? text : "nothing");
	check(count >= 1 && strncmp(text, prefix, length) == 0,
	      "expected a '%s' report, got %u: %s", prefix, count, text);
}

#define CALL_REL32_LENGTH 5

/* The records of probe_branches(): the call, its two jumps and the return, in that order. */
static long find_probe_records(const struct bts_record *records, long used)
{
	for (long i = 1; i + 2 < used; i++) {
		if (records[i].from == (uint64_t)probe_branch_1 &&
		    records[i].to == (uint64_t)probe_branch_1_target &&
		    records[i + 1].from == (uint64_t)probe_branch_2 &&
		    records[i + 1].to == (uint64_t)probe_branch_2_target &&
		    records[i - 1].to == (uint64_t)probe_branches &&
		    records[i + 2].from == (uint64_t)probe_branch_2_target &&
		    records[i + 2].to == records[i - 1].from + CALL_REL32_LENGTH)
			return i;
	}
	return -1;
}

TEST(emulator, a_kept_rule_reports_nothing_and_every_branch_is_recorded)
{
	char text[EMULATOR_VIOLATION_MAX];
	long used;

	require_bts();
	area_fill_bts((uint64_t)buffer, RECORDS);
	witness_begin(WITNESS_BTS_TRACED);
	bts_on();
	probe_branches();
	bts_off();
	witness_end(WITNESS_BTS_TRACED);
	used = (long)((area.bts_index - area.bts_base) / BTS_RECORD);
	for (long i = 0; i < used; i++)
		test_diag("bts record %ld: 0x%llx -> 0x%llx", i,
			  (unsigned long long)((const struct bts_record *)buffer)[i].from,
			  (unsigned long long)((const struct bts_record *)buffer)[i].to);
	check_eq(0, emulator_take_violations(text, sizeof(text)));
	check(find_probe_records((const struct bts_record *)buffer, used) >= 0,
	      "call, jmp, jmp, ret of probe_branches() not found in %ld records", used);
	for (long i = 0; i < used; i++)
		check_eq(0, ((const struct bts_record *)buffer)[i].flags);
}

TEST(emulator, rule_1_a_bts_buffer_that_is_not_mapped_is_reported)
{
	require_bts();
	area_fill_bts(UNMAPPED_BUFFER, RECORDS);
	bts_on();
	probe_branches();
	bts_off();
	expect_violation(1);
	check_eq(UNMAPPED_BUFFER, area.bts_index); /* nothing was stored */
}

TEST(emulator, rule_2_a_bts_maximum_below_one_record_is_reported)
{
	require_bts();
	area_fill_bts((uint64_t)buffer, RECORDS);
	area.bts_max = area.bts_base + BTS_RECORD - 8;
	bts_on();
	probe_branches();
	bts_off();
	expect_violation(2);
}

TEST(emulator, rule_2_a_circular_bts_threshold_inside_the_buffer_is_reported)
{
	require_bts();
	area_fill_bts((uint64_t)buffer, RECORDS);
	area.bts_threshold = area.bts_max; /* clearing BTINT is not enough: it must lie beyond */
	bts_on();
	probe_branches();
	bts_off();
	expect_violation(2);
}

TEST(emulator, rule_3_resetting_the_bts_index_while_tracing_is_reported)
{
	require_bts();
	area_fill_bts((uint64_t)buffer, RECORDS);
	bts_on();
	probe_branches();
	area.bts_index = area.bts_base; /* a drain without turning BTS off first */
	probe_branches();
	bts_off();
	expect_violation(3);
}

TEST(emulator, rule_4_replacing_ds_area_while_tracing_is_reported)
{
	static struct ds_area other __attribute__((aligned(PAGE_SIZE)));

	require_bts();
	area_fill_bts((uint64_t)buffer, RECORDS);
	bts_on();
	wrmsr(MSR_IA32_DS_AREA, (uint64_t)&other);
	bts_off();
	expect_violation(4);
}

TEST(emulator, rule_6_a_reserved_pebs_enable_bit_raises_gp)
{
	require_emulator();
	/* Bit 48 is reserved on every part (bit 63 is precise store from Haswell to Skylake). */
	check_eq(EXINFO(X86_EXC_GP, 0), wrmsr_safe(MSR_IA32_PEBS_ENABLE, 1ull << 48));
	check_eq(EXINFO(X86_EXC_GP, 0), wrmsr_safe(MSR_IA32_DEBUGCTL, 1ull << 31));
	check_eq(EXINFO(X86_EXC_GP, 0), wrmsr_safe(MSR_IA32_DS_AREA, 0x0000800000000000ull));
}

static void plain_write_of_a_reserved_bit(void *arg)
{
	(void)arg;
	wrmsr(MSR_IA32_PEBS_ENABLE, 1ull << 48);
}

TEST(emulator, rule_6_a_plain_wrmsr_of_a_reserved_bit_takes_the_gp)
{
	struct isolation_outcome outcome;

	require_emulator();
	runner_isolate(plain_write_of_a_reserved_bit, NULL, 1000, &outcome);
	check_eq(ISOLATION_EXCEPTION, outcome.end);
	check_eq(X86_EXC_GP, outcome.vector);
	check_eq(0, outcome.error_code);
}

TEST(emulator, rule_7_a_legacy_counter_write_sign_extends_bit_31)
{
	unsigned int width = CPUID_PERFMON_GP_WIDTH(cpuid(CPUID_LEAF_PERFMON, 0).eax);
	uint64_t mask = width >= 64 ? UINT64_MAX : (1ull << width) - 1;
	uint64_t value = 0, saved, full_width = 0;

	require_emulator();
	saved = rdmsr(MSR_IA32_PMC0); /* pmu/ keeps a shadow of it: put it back */
	rdmsr_safe(MSR_IA32_PERF_CAPABILITIES, &full_width);
	wrmsr(MSR_IA32_PMC0, 0x80000000ull);
	check_eq(0, rdmsr_safe(MSR_IA32_PMC0, &value));
	check_eq(0xffffffff80000000ull & mask, value);
	wrmsr(MSR_IA32_PMC0, 0x7fffffffull);
	check_eq(0x7fffffffull, rdmsr(MSR_IA32_PMC0));
	if (full_width & PERF_CAP_FULL_WIDTH_WRITE) {
		check_eq(EXINFO(X86_EXC_GP, 0), wrmsr_safe(MSR_IA32_A_PMC0, mask + 1));
		wrmsr(MSR_IA32_A_PMC0, saved);
	} else {
		check_eq(EXINFO(X86_EXC_GP, 0), wrmsr_safe(MSR_IA32_A_PMC0, 0));
		wrmsr(MSR_IA32_PMC0, saved); /* a count below 2^31, or sign-extended from one */
	}
	check_eq(saved, rdmsr(MSR_IA32_PMC0));
}

TEST(emulator, rule_5_changing_data_cfg_over_buffered_records_is_reported)
{
	char text[EMULATOR_VIOLATION_MAX];
	uint64_t capabilities = 0, *record = (uint64_t *)buffer;

	require_emulator();
	rdmsr_safe(MSR_IA32_PERF_CAPABILITIES, &capabilities);
	if (!(capabilities & PERF_CAP_PEBS_BASELINE))
		test_skip("no adaptive PEBS: PERF_CAPABILITIES.PEBS_BASELINE=0");
	memset(&area, 0, sizeof(area));
	area.pebs_base = (uint64_t)buffer;
	area.pebs_max = area.pebs_base + PAGE_SIZE / 2;
	area.pebs_threshold = area.pebs_base + 64;
	/* One record with the GPR group in the buffer, as the CPU would have left it. */
	record[0] = PEBS_DATACFG_GP | (32ull + 144ull) << 48;
	area.pebs_index = area.pebs_base + 32 + 144;
	wrmsr(MSR_IA32_DS_AREA, (uint64_t)&area);
	wrmsr(MSR_PEBS_DATA_CFG, PEBS_DATACFG_GP); /* the same groups: allowed */
	check_eq(0, emulator_take_violations(text, sizeof(text)));
	wrmsr(MSR_PEBS_DATA_CFG, PEBS_DATACFG_MEMINFO); /* another size over that record */
	wrmsr(MSR_PEBS_DATA_CFG, 0);
	wrmsr(MSR_IA32_DS_AREA, 0);
	expect_violation(5);
}

/* Format 0 only (Core 2): a buffer over one page hangs it (Linux ds.c); PEBS is then skipped. */
TEST(emulator, rule_12_a_format_0_pebs_buffer_over_one_page_is_reported)
{
	static uint8_t pages[2 * PAGE_SIZE] __attribute__((aligned(PAGE_SIZE)));
	uint64_t capabilities = 0;
	unsigned int counter = 0;

	require_emulator();
	rdmsr_safe(MSR_IA32_PERF_CAPABILITIES, &capabilities);
	if ((capabilities & PERF_CAP_PEBS_FORMAT_MASK) >> PERF_CAP_PEBS_FORMAT_SHIFT != 0)
		test_skip("PEBS format %llu: the rule is format 0's",
			  (unsigned long long)((capabilities & PERF_CAP_PEBS_FORMAT_MASK) >>
					       PERF_CAP_PEBS_FORMAT_SHIFT));
	memset(&area, 0, sizeof(area));
	area.pebs_base = area.pebs_index = (uint64_t)pages;
	area.pebs_max = area.pebs_base + 28 * 144 + 144; /* 29 records: 4,176 bytes */
	area.pebs_threshold = area.pebs_base + 144;
	area.pebs_reset[counter] = (uint64_t)-100;
	wrmsr(MSR_IA32_DS_AREA, (uint64_t)&area);
	wrmsr(MSR_IA32_PMC0 + counter, (uint64_t)-100 & 0xffffffff);
	wrmsr(MSR_IA32_PERFEVTSEL0 + counter, 0xc0 | PERFEVTSEL_OS | PERFEVTSEL_EN);
	wrmsr(MSR_IA32_PEBS_ENABLE, 1ull << counter);
	wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 1ull << counter);
	probe_instruction_loop(200); /* 400 instructions: one overflow */
	wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 0);
	wrmsr(MSR_IA32_PEBS_ENABLE, 0);
	wrmsr(MSR_IA32_PERFEVTSEL0 + counter, 0);
	wrmsr(MSR_IA32_PMC0 + counter, 0);
	wrmsr(MSR_IA32_PERF_GLOBAL_OVF_CTRL, rdmsr(MSR_IA32_PERF_GLOBAL_STATUS));
	wrmsr(MSR_IA32_DS_AREA, 0);
	expect_violation(12);
	check_eq(area.pebs_base, area.pebs_index); /* no record: PEBS was skipped */
}
