/* SPDX-License-Identifier: MIT */
/* emulator suite: rule 27, the model's AMD LbrExtV2 stack, each rule broken on purpose or kept. */
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/apic.h"
#include "arch/x86/cpu.h"
#include "arch/x86/cpuid.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/msr-index.h"
#include "arch/x86/msr.h"
#include "arch/x86/probe.h"
#include "arch/x86/traps.h"
#include "arch/x86/tsc.h"
#include "emulator/emulator.h"
#include "lib/string.h"
#include "runner/test.h"
#include "tests/kernel/lib/emulator_util.h"
#include "tests/kernel/lib/lbr_probe.h"

#define GP EXINFO(X86_EXC_GP, 0)
#define AMD_EVENT_INSTRUCTIONS 0xc0 /* Linux amd_perfmon_event_map */
/* LBR_SELECT: every branch kind suppressed but one, both rings kept (bits 1:0 clear). */
#define ONLY_NEAR_REL_JMP      \
	(AMD_LBR_SELECT_MASK & \
	 ~(LBR_SELECT_CPL_EQ_0 | LBR_SELECT_CPL_NEQ_0 | LBR_SELECT_NEAR_REL_JMP))
#define ONLY_JCC \
	(AMD_LBR_SELECT_MASK & ~(LBR_SELECT_CPL_EQ_0 | LBR_SELECT_CPL_NEQ_0 | LBR_SELECT_JCC))
#define LBR_V2_MAX_DEPTH 63 /* EBX[9:4] */
#define ADDRESS_BITS 58 /* an entry's address field (Linux amd/lbr.c struct branch_entry) */
#define OVERFLOW_AFTER 64
#define PMI_LOOP 100
#define PMI_WAIT_MS 2000
#define FROZEN_LEFT_SET \
	"rule 14: the PMI handler returned with GLOBAL_STATUS bits 0x400000000000000 "

/* The LbrExtV2 stack as CPUID enumerates it, as Linux amd_pmu_lbr_init() reads it. */
struct lbr_v2 {
	bool amd, present;
	unsigned int depth, counters;
};

static struct lbr_v2 find_lbr_v2(void)
{
	struct lbr_v2 v = { 0 };
	struct cpuid_result leaf;
	char vendor[13];

	require_emulator();
	cpuid_vendor(vendor);
	v.amd = strcmp(vendor, "AuthenticAMD") == 0;
	if (!v.amd || cpuid(CPUID_LEAF_EXTENDED, 0).eax < CPUID_LEAF_AMD_PERFMON)
		return v;
	leaf = cpuid(CPUID_LEAF_AMD_PERFMON, 0);
	v.present = (leaf.eax & CPUID_80000022_EAX_PERFMON_V2) &&
		    (leaf.eax & CPUID_80000022_EAX_LBR_EXT_V2);
	v.depth = v.present ? CPUID_80000022_EBX_LBR_STACK(leaf.ebx) : 0;
	v.counters = CPUID_80000022_EBX_CORE_COUNTERS(leaf.ebx);
	return v;
}

static struct lbr_v2 require_lbr_v2(void)
{
	struct lbr_v2 v = find_lbr_v2();

	if (!v.amd)
		test_skip("the emulated CPU (%s) is not an AMD part: LbrExtV2 is AMD's",
			  emulator_describe());
	if (!v.present)
		test_skip("CPUID 0x80000022 EAX[1] (LbrExtV2) is 0 on %s (emulate=cpu:zen4)",
			  emulator_describe());
	return v;
}

static uint32_t from_msr(unsigned int i)
{
	return MSR_AMD_SAMP_BR_FROM + 2 * i;
}

static uint32_t to_msr(unsigned int i)
{
	return MSR_AMD_SAMP_BR_FROM + 2 * i + 1;
}

/* An entry's address, its flags dropped and bits 57:0 sign-extended (Linux amd_pmu_lbr_read()). */
static uint64_t address_of(uint64_t entry)
{
	return (uint64_t)((int64_t)(entry << (64 - ADDRESS_BITS)) >> (64 - ADDRESS_BITS));
}

/*
 * Rule 27: LbrExtV2 is enumerated (0x80000022 EAX[1], EAX[2], EBX[9:4]) on zen4 only, and its
 * MSRs exist exactly there and up to the depth: on every other profile, Intel's too, LBR_SELECT,
 * DBG_EXTN_CFG and the first FROM/TO pair raise #GP on read and write.
 */
TEST(emulator, rule_27_lbr_ext_v2_msrs_exist_where_cpuid_enumerates_them)
{
	static const uint32_t family[] = { MSR_AMD64_LBR_SELECT, MSR_AMD_DBG_EXTN_CFG,
					   MSR_AMD_SAMP_BR_FROM, MSR_AMD_SAMP_BR_FROM + 1 };
	struct lbr_v2 v = find_lbr_v2();
	uint64_t value = 0;

	test_diag("%s: AMD=%u LbrExtV2=%u depth=%u", emulator_describe(), v.amd, v.present,
		  v.depth);
	if (!v.present) {
		for (unsigned int i = 0; i < sizeof(family) / sizeof(family[0]); i++) {
			check(rdmsr_safe(family[i], &value) == GP, "RDMSR 0x%x did not raise #GP",
			      family[i]);
			check(wrmsr_safe(family[i], 0) == GP, "WRMSR 0x%x did not raise #GP",
			      family[i]);
		}
		return;
	}
	check(cpuid(CPUID_LEAF_AMD_PERFMON, 0).eax & CPUID_80000022_EAX_LBR_PMC_FREEZE,
	      "zen4 enumerates LbrExtV2 without LbrAndPmcFreeze");
	check_eq(16, v.depth);
	check_eq(0, rdmsr_safe(MSR_AMD64_LBR_SELECT, &value));
	check_eq(0, rdmsr_safe(MSR_AMD_DBG_EXTN_CFG, &value));
	for (unsigned int i = 0; i < v.depth; i++) {
		check_eq(0, rdmsr_safe(from_msr(i), &value));
		check_eq(0, rdmsr_safe(to_msr(i), &value));
	}
	check_eq(GP, rdmsr_safe(from_msr(v.depth), &value));
	check_eq(GP, rdmsr_safe(to_msr(v.depth), &value));
	check_eq(GP, wrmsr_safe(from_msr(v.depth), 0));
}

/*
 * Rule 27: LBR_SELECT takes bits 8:0 only (no call-stack bit on AMD: Linux lbr_select_map has
 * none), DBG_EXTN_CFG LBRV2EN only (choice), a FROM bits 62:47 sign-extended, a TO bits 60:47
 * sign-extended with its reserved bit 61 clear. The values read before are put back.
 */
TEST(emulator, rule_27_lbr_ext_v2_reserved_bits_raise_gp)
{
	uint64_t select = 0, cfg = 0, from = 0, to = 0, value = 0;

	require_lbr_v2();
	check_eq(0, rdmsr_safe(MSR_AMD64_LBR_SELECT, &select));
	check_eq(0, rdmsr_safe(MSR_AMD_DBG_EXTN_CFG, &cfg));
	check_eq(0, rdmsr_safe(from_msr(1), &from));
	check_eq(0, rdmsr_safe(to_msr(1), &to));
	check_eq(GP, wrmsr_safe(MSR_AMD64_LBR_SELECT, LBR_SELECT_EN_CALLSTACK));
	check_eq(0, wrmsr_safe(MSR_AMD64_LBR_SELECT, AMD_LBR_SELECT_MASK));
	check_eq(0, rdmsr_safe(MSR_AMD64_LBR_SELECT, &value));
	check_eq(AMD_LBR_SELECT_MASK, value);
	check_eq(GP, wrmsr_safe(MSR_AMD_DBG_EXTN_CFG, DBG_EXTN_CFG_LBRV2EN << 1));
	check_eq(GP, wrmsr_safe(from_msr(1), 1ull << 47));
	check_eq(GP, wrmsr_safe(to_msr(1), (uint64_t)probe_branch_1_target));
	check_eq(0, wrmsr_safe(to_msr(1),
			       ((uint64_t)probe_branch_1_target & (AMD_LBR_TO_RESERVED - 1)) |
				       AMD_LBR_TO_VALID));
	check_eq(GP, wrmsr_safe(to_msr(1), AMD_LBR_TO_RESERVED));
	check_eq(0, wrmsr_safe(from_msr(1), (uint64_t)probe_branch_1 | AMD_LBR_FROM_MISPREDICT));
	check_eq(0, rdmsr_safe(from_msr(1), &value));
	check_eq((uint64_t)probe_branch_1 | AMD_LBR_FROM_MISPREDICT, value);
	check_eq(0, wrmsr_safe(from_msr(1), from));
	check_eq(0, wrmsr_safe(to_msr(1), to));
	check_eq(0, wrmsr_safe(MSR_AMD64_LBR_SELECT, select));
	check_eq(0, wrmsr_safe(MSR_AMD_DBG_EXTN_CFG, cfg));
}

/*
 * probe_branches() recorded under LBR_SELECT select on a stack emptied first (as Linux
 * amd_pmu_lbr_reset() does): the stack's FROMs and TOs after.
 */
static void record_probe_branches(uint64_t select, unsigned int depth, uint64_t *from, uint64_t *to)
{
	unsigned long flags;

	for (unsigned int i = 0; i < depth; i++) {
		wrmsr(from_msr(i), 0);
		wrmsr(to_msr(i), 0);
	}
	flags = local_irq_save();
	wrmsr(MSR_AMD64_LBR_SELECT, select);
	wrmsr(MSR_AMD_DBG_EXTN_CFG, DBG_EXTN_CFG_LBRV2EN);
	probe_branches();
	wrmsr(MSR_AMD_DBG_EXTN_CFG, 0);
	local_irq_restore(flags);
	for (unsigned int i = 0; i < depth; i++) {
		from[i] = rdmsr(from_msr(i));
		to[i] = rdmsr(to_msr(i));
	}
	wrmsr(MSR_AMD64_LBR_SELECT, 0);
}

/* The entry whose FROM is ip, or depth. */
static unsigned int entry_from(const uint64_t *from, unsigned int depth, const char *ip)
{
	unsigned int k;

	for (k = 0; k < depth && address_of(from[k]) != (uint64_t)ip; k++)
		;
	return k;
}

/*
 * Rule 27: with LBRV2EN and LBR_SELECT letting near relative jumps through, probe_branches()'s
 * two jumps are entries k and k + 1 (newest first; the WRMSR that stops recording may add its
 * own jumps before them): FROM their addresses, TO their targets with VALID set and SPEC clear;
 * the CALL into it and its RET are filtered out, so they are not entries k + 2 and k - 1. With
 * ring 0 suppressed too (CPL_EQ_0) neither jump is recorded.
 */
TEST_OBSERVING(emulator, rule_27_lbr_ext_v2_entries_are_the_branches_newest_first, 1000)
{
	struct lbr_v2 v = require_lbr_v2();
	uint64_t from[LBR_V2_MAX_DEPTH] = { 0 }, to[LBR_V2_MAX_DEPTH] = { 0 };
	unsigned int k;

	record_probe_branches(ONLY_NEAR_REL_JMP, v.depth, from, to);
	k = entry_from(from, v.depth, probe_branch_2);
	if (!check(k + 1 < v.depth, "probe_branch_2 (%p) not in %u entries; entry 0 FROM 0x%llx",
		   (const void *)probe_branch_2, v.depth, (unsigned long long)from[0]))
		return;
	test_diag("probe_branch_2 is entry %u", k);
	check_eq((uint64_t)probe_branch_2_target, address_of(to[k]));
	check_eq((uint64_t)probe_branch_1, address_of(from[k + 1]));
	check_eq((uint64_t)probe_branch_1_target, address_of(to[k + 1]));
	check_eq(AMD_LBR_TO_VALID,
		 to[k] & (AMD_LBR_TO_VALID | AMD_LBR_TO_SPEC | AMD_LBR_TO_RESERVED));
	check_eq(0, from[k] & AMD_LBR_FROM_MISPREDICT);
	if (k > 0)
		check(address_of(from[k - 1]) != (uint64_t)probe_branch_2_target,
		      "probe_branches()'s RET recorded with near returns suppressed");
	if (k + 2 < v.depth)
		check(address_of(to[k + 2]) != (uint64_t)probe_branches,
		      "the CALL of probe_branches() recorded with near calls suppressed");
	record_probe_branches(ONLY_NEAR_REL_JMP | LBR_SELECT_CPL_EQ_0, v.depth, from, to);
	check_eq(v.depth, entry_from(from, v.depth, probe_branch_2));
}

static volatile unsigned int freeze_pmis;
static volatile uint64_t status_in_handler, from_in_handler;
static unsigned int freeze_counter;

/*
 * As Linux amd_pmu_v2_handle_irq(): read GlobalStatus and the stack; acknowledge the counter
 * through GlobalStatusClr. LBRS_FROZEN is left set here, so that the test sees the freeze hold
 * (and rule 14 reports it, which the test expects).
 */
static void freeze_pmi(struct cpu_regs *regs)
{
	(void)regs;
	status_in_handler = rdmsr(MSR_AMD64_PERF_CNTR_GLOBAL_STATUS);
	from_in_handler = rdmsr(MSR_AMD_SAMP_BR_FROM);
	wrmsr(MSR_AMD64_PERF_CNTR_GLOBAL_STATUS_CLR, 1ull << freeze_counter);
	wrmsr(MSR_F15H_PERF_CTL0 + 2 * freeze_counter, 0);
	freeze_pmis++;
}

static bool in_probe_other(uint64_t from)
{
	uint64_t ip = address_of(from);

	return ip >= (uint64_t)lbr_probe_other && ip < (uint64_t)lbr_probe_other_end;
}

/* Whether an entry of the stack is one of lbr_probe_other()'s JCCs; *newest entry 0's FROM. */
static bool stack_holds_probe_other(unsigned int depth, uint64_t *newest)
{
	bool found = false;

	*newest = rdmsr(MSR_AMD_SAMP_BR_FROM);
	for (unsigned int i = 0; i < depth; i++)
		found |= in_probe_other(rdmsr(from_msr(i)));
	return found;
}

/*
 * Record JCCs while the last counter overflows with a PMI after OVERFLOW_AFTER instructions,
 * then run lbr_probe_other()'s JCCs: whether the stack holds one of them after (the WRMSR
 * that stops recording adds JCCs of its own), and entry 0's FROM in *newest.
 */
static bool overflow_then_other_jccs(bool freeze, unsigned int depth, uint64_t *newest)
{
	uint32_t lvtpc = apic_read_lvtpc();
	uint64_t global = rdmsr(MSR_AMD64_PERF_CNTR_GLOBAL_CTL);
	uint64_t debugctl = rdmsr(MSR_IA32_DEBUGCTL), deadline;
	bool found;
	uint32_t ctl = MSR_F15H_PERF_CTL0 + 2 * freeze_counter;
	unsigned long flags;

	freeze_pmis = 0;
	status_in_handler = from_in_handler = 0;
	interrupt_register(VECTOR_TEST, freeze_pmi);
	apic_write_lvtpc(VECTOR_TEST);
	wrmsr(MSR_AMD64_PERF_CNTR_GLOBAL_CTL, global | (1ull << freeze_counter));
	wrmsr(MSR_IA32_DEBUGCTL, freeze ? debugctl | DEBUGCTL_FREEZE_LBRS_ON_PMI
					: debugctl & ~DEBUGCTL_FREEZE_LBRS_ON_PMI);
	wrmsr(MSR_AMD64_LBR_SELECT, ONLY_JCC);
	wrmsr(MSR_AMD_DBG_EXTN_CFG, DBG_EXTN_CFG_LBRV2EN);
	wrmsr(ctl + 1, (0 - (uint64_t)OVERFLOW_AFTER) & ((1ull << AMD_COUNTER_WIDTH) - 1));
	wrmsr(ctl, AMD_EVENT_INSTRUCTIONS | PERFEVTSEL_OS | PERFEVTSEL_INT | PERFEVTSEL_EN);
	probe_instruction_loop(PMI_LOOP);
	deadline = rdtsc_ordered() + tsc_cycles_from_ms(PMI_WAIT_MS);
	while (freeze_pmis == 0 && rdtsc_ordered() < deadline)
		cpu_relax();
	lbr_probe_other();
	flags = local_irq_save();
	wrmsr(MSR_AMD_DBG_EXTN_CFG, 0);
	found = stack_holds_probe_other(depth, newest);
	wrmsr(ctl, 0);
	wrmsr(ctl + 1, 0);
	wrmsr(MSR_AMD64_PERF_CNTR_GLOBAL_STATUS_CLR,
	      (1ull << freeze_counter) | PERF_GLOBAL_STATUS_LBRS_FROZEN);
	wrmsr(MSR_AMD64_PERF_CNTR_GLOBAL_CTL, global);
	wrmsr(MSR_IA32_DEBUGCTL, debugctl);
	wrmsr(MSR_AMD64_LBR_SELECT, 0);
	apic_write_lvtpc(lvtpc);
	local_irq_restore(flags);
	interrupt_register(VECTOR_TEST, NULL);
	return found;
}

/*
 * Rule 27, the freeze: with LbrAndPmcFreeze and DEBUGCTL.FREEZE_LBRS_ON_PMI a PMI sets
 * GlobalStatus bit 58 and the stack keeps the branches before it: lbr_probe_other()'s JCCs
 * after the PMI are not entry 0. Without the DEBUGCTL bit (the negative case) they are, and
 * bit 58 stays clear. Once GlobalStatusClr clears bit 58 the stack records again.
 */
TEST_OBSERVING(emulator, rule_27_a_pmi_freezes_lbr_ext_v2_until_global_status_clr, 2000)
{
	struct lbr_v2 v = require_lbr_v2();
	char text[EMULATOR_VIOLATION_MAX] = "";
	uint64_t after = 0;
	bool found;

	freeze_counter = v.counters - 1;
	found = overflow_then_other_jccs(false, v.depth, &after);
	check_eq(1, freeze_pmis);
	check_eq(1ull << freeze_counter, status_in_handler);
	check(found, "not frozen, no entry is lbr_probe_other()'s; entry 0 FROM 0x%llx",
	      (unsigned long long)after);
	check(emulator_take_violations(text, sizeof(text)) == 0, "the model reported: %s", text);
	found = overflow_then_other_jccs(true, v.depth, &after);
	check_eq(1, freeze_pmis);
	check_eq((1ull << freeze_counter) | PERF_GLOBAL_STATUS_LBRS_FROZEN, status_in_handler);
	check(!found, "frozen, an entry is lbr_probe_other()'s; entry 0 FROM 0x%llx",
	      (unsigned long long)after);
	check_eq(from_in_handler, after);
	/* The handler left LBRS_FROZEN set, which Linux acknowledges: rule 14 says so. */
	check_eq(1, emulator_take_violations(text, sizeof(text)));
	check(strncmp(text, FROZEN_LEFT_SET, sizeof(FROZEN_LEFT_SET) - 1) == 0,
	      "expected \"%s...\", the model reported \"%s\"", FROZEN_LEFT_SET, text);
	/* Thawed (overflow_then_other_jccs() cleared bit 58): recording again. */
	wrmsr(MSR_AMD64_LBR_SELECT, ONLY_JCC);
	wrmsr(MSR_AMD_DBG_EXTN_CFG, DBG_EXTN_CFG_LBRV2EN);
	lbr_probe_other();
	wrmsr(MSR_AMD_DBG_EXTN_CFG, 0);
	found = stack_holds_probe_other(v.depth, &after);
	wrmsr(MSR_AMD64_LBR_SELECT, 0);
	check(found, "thawed, no entry is lbr_probe_other()'s; entry 0 FROM 0x%llx",
	      (unsigned long long)after);
	check(emulator_take_violations(text, sizeof(text)) == 0, "the model reported: %s", text);
}
