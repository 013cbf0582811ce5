/* SPDX-License-Identifier: MIT */
/* emulator suite: rule 24, the model's LBR stack, each rule broken on purpose (#GP) or kept. */
#include <stdint.h>

#include "arch/x86/cpu.h"
#include "arch/x86/cpuid.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/msr-index.h"
#include "arch/x86/msr.h"
#include "arch/x86/probe.h"
#include "arch/x86/xsave.h"
#include "ds/ds.h"
#include "ds/records.h"
#include "lbr/lbr.h"
#include "lib/string.h"
#include "runner/test.h"
#include "sched/sched.h"
#include "tests/kernel/lib/ds_util.h"
#include "tests/kernel/lib/emulator_util.h"

#define GP EXINFO(X86_EXC_GP, 0)
#define KERNEL_ADDRESS_AS_RECORDED 0x1fffffff81234567ull /* format 4: bits 62:61 clear */
#define KERNEL_ADDRESS_SIGN_EXTENDED 0x7fffffff81234567ull /* the same, 62:61 from 60:59 */
#define LBR_SELECT_BEYOND_CALLSTACK (1ull << 10)
#define BTS_RECORDS 4096 /* the read after the probe stores about 1,000: no wrap */

/* The model's LBR stack, as lbr/ found it: rule 24's tests need one. */
static const struct lbr_support *require_emulated_lbr(void)
{
	require_emulator();
	if (!lbr_support()->present)
		test_skip("%s", lbr_support()->reason);
	if (lbr_support()->amd)
		test_skip("AMD LbrExtV2, not Intel's LBR: emulator.rule_27_* test it");
	return lbr_support();
}

/* A model-specific one (LBR_SELECT, TOS, banks). */
static const struct lbr_support *require_emulated_legacy_lbr(void)
{
	if (require_emulated_lbr()->architectural)
		test_skip("architectural LBR: no LBR_SELECT, TOS or legacy banks "
			  "(emulator.rule_24_architectural_* test it)");
	return lbr_support();
}

/* An architectural one. */
static const struct lbr_support *require_emulated_arch_lbr(void)
{
	if (!require_emulated_lbr()->architectural)
		test_skip(
			"LBR format %u: model-specific, not architectural (emulate=cpu:arrowlake)",
			lbr_support()->format);
	return lbr_support();
}

/*
 * Rule 24: LBR_SELECT's undefined bits raise #GP: bit 9 (EN_CALLSTACK) before Haswell, bit 10
 * and up everywhere (SDM Vol. 3B "Filtering of Last Branch Records"; Linux LBR_SEL_MASK 0x3ff).
 * The value written before is put back: lbr/ keeps what the CPU holds.
 */
TEST(emulator, rule_24_lbr_select_reserved_bits_raise_gp)
{
	const struct lbr_support *s = require_emulated_legacy_lbr();
	uint64_t defined = s->call_stack ? LBR_SELECT_CALLSTACK_MASK : LBR_SELECT_NEHALEM_MASK;
	uint64_t old = 0, value = 0;

	if (!s->select)
		test_skip("no MSR_LBR_SELECT (LBR FROM at 0x%x): rdmsr_safe(0x1c8) raises #GP",
			  s->from_msr);
	check_eq(0, rdmsr_safe(MSR_LBR_SELECT, &old));
	check_eq(GP, wrmsr_safe(MSR_LBR_SELECT, LBR_SELECT_BEYOND_CALLSTACK));
	if (!s->call_stack)
		check_eq(GP, wrmsr_safe(MSR_LBR_SELECT, LBR_SELECT_EN_CALLSTACK));
	check_eq(0, wrmsr_safe(MSR_LBR_SELECT, defined));
	check_eq(0, rdmsr_safe(MSR_LBR_SELECT, &value));
	check_eq(defined, value);
	check_eq(0, wrmsr_safe(MSR_LBR_SELECT, old));
}

/* Rule 24: FROM and TO exist up to the profile's depth, the next one raises #GP, INFO only with
 * format 5, and TOS takes an index below the depth only. */
TEST(emulator, rule_24_lbr_msrs_beyond_the_depth_raise_gp)
{
	const struct lbr_support *s = require_emulated_legacy_lbr();
	uint64_t value = 0, tos = 0;

	check_eq(0, rdmsr_safe(s->from_msr + s->depth - 1, &value));
	check_eq(GP, rdmsr_safe(s->from_msr + s->depth, &value));
	/* Past 32 TO entries is IA32_TSC_DEADLINE (0x6e0), past 32 INFO others: not judged. */
	if (s->depth < LBR_LEGACY_MAX_DEPTH) {
		check_eq(GP, rdmsr_safe(s->to_msr + s->depth, &value));
		check_eq(GP, wrmsr_safe(s->to_msr + s->depth, 0));
	}
	if (!s->info_msr)
		check_eq(GP, rdmsr_safe(MSR_LBR_INFO_0, &value));
	check_eq(0, rdmsr_safe(MSR_LBR_TOS, &tos));
	check_eq(GP, wrmsr_safe(MSR_LBR_TOS, s->depth));
	check_eq(0, wrmsr_safe(MSR_LBR_TOS, tos));
}

/*
 * Rule 24, the TSX-off rule (Linux lbr_from_signext_quirk_wr(); Xen's failed VM entries): with
 * LBR format EIP_FLAGS2 and no TSX, bits 62:61 of a FROM write are sign extension, though the
 * CPU's own records hold 0 there: the value as recorded takes #GP, the sign-extended one not.
 */
TEST(emulator, rule_24_a_tsx_off_from_write_must_sign_extend_bits_62_61)
{
	const struct lbr_support *s = require_emulated_lbr();
	uint64_t old = 0, value = 0;

	if (!s->from_sign_extend)
		test_skip("LBR format %u%s: the rule is format 4 without TSX (emulate=cpu:haswell)",
			  s->format,
			  cpuid(CPUID_LEAF_EXTENDED_FEATURES, 0).ebx & CPUID_7_EBX_RTM ? " with TSX"
										       : "");
	check_eq(0, rdmsr_safe(s->from_msr, &old));
	check_eq(GP, wrmsr_safe(s->from_msr, KERNEL_ADDRESS_AS_RECORDED));
	check_eq(0, wrmsr_safe(s->from_msr, KERNEL_ADDRESS_SIGN_EXTENDED));
	check_eq(0, rdmsr_safe(s->from_msr, &value));
	check_eq(KERNEL_ADDRESS_SIGN_EXTENDED, value);
	check_eq(0, wrmsr_safe(s->from_msr, old | ((old & (3ull << 59)) << 2)));
}

/*
 * Rule 24: a profile without model-specific LBR (a KVM guest without lbr-fmt, architectural LBR
 * only, AMD): every legacy LBR MSR raises #GP and DEBUGCTL.LBR is dropped: it reads 0 (with
 * architectural LBR "writes are discarded and it reads 0").
 */
TEST(emulator, rule_24_lbr_msrs_raise_gp_without_model_specific_lbr)
{
	static const uint32_t msrs[] = { MSR_LBR_SELECT,   MSR_LBR_TOS,	     MSR_LBR_CORE2_FROM,
					 MSR_LBR_CORE2_TO, MSR_LBR_NHM_FROM, MSR_LBR_NHM_TO,
					 MSR_LBR_INFO_0 };
	uint64_t value = 0, debugctl = ~0ull;

	require_emulator();
	if (lbr_support()->present && !lbr_support()->architectural && !lbr_support()->amd)
		test_skip("the profile has a model-specific LBR stack (format %u, %u entries)",
			  lbr_support()->format, lbr_support()->depth);
	for (unsigned int i = 0; i < sizeof(msrs) / sizeof(msrs[0]); i++) {
		check(rdmsr_safe(msrs[i], &value) == GP, "RDMSR 0x%x did not raise #GP", msrs[i]);
		check(wrmsr_safe(msrs[i], 0) == GP, "WRMSR 0x%x did not raise #GP", msrs[i]);
	}
	check_eq(0, wrmsr_safe(MSR_IA32_DEBUGCTL, DEBUGCTL_LBR));
	check_eq(0, rdmsr_safe(MSR_IA32_DEBUGCTL, &debugctl));
	check_eq(0, wrmsr_safe(MSR_IA32_DEBUGCTL, 0));
	check_eq(0, debugctl & DEBUGCTL_LBR);
}

/*
 * Rule 24: the stack's entries come from the same observed branches as BTS records. With both
 * on over probe_branches(), its two jumps are BTS records n and n+1 and, newest first, LBR
 * entries k+1 and k: the same from and to. 22,800 to 26,700 steps on the LBR profiles in make
 * check (the read's MSR accesses, then the search with BTS still on): under KVM-PVM that is
 * over the time limit, with interrupts off, so the runner's pace skips it there.
 */
TEST_OBSERVING(emulator, rule_24_lbr_entries_are_the_branches_bts_records, 27000)
{
	struct ds_bts_config bts = { .records = BTS_RECORDS, .circular = true };
	struct lbr_config config = { .kernel = true, .branches = LBR_BRANCH_NEAR_REL_JMP };
	struct ds_target target = { false, sched_current()->index };
	struct lbr_entry entries[LBR_LEGACY_MAX_DEPTH];
	struct bts_record jumps[2] = { { 0 } };
	const struct bts_record *records;
	unsigned int count = 0, k;
	unsigned long flags;
	long used, i;

	require_emulated_lbr();
	require_bts();
	if (!lbr_support()->select)
		test_skip("no MSR_LBR_SELECT: the read's own branches fill the %u-deep stack",
			  lbr_support()->depth);
	check_eq(LBR_OK, lbr_attach(target.index, &config));
	if (ds_attach_bts(&target, &bts) != DS_OK)
		test_abort("ds_attach_bts failed");
	flags = local_irq_save();
	probe_branches();
	check_eq(LBR_OK, lbr_read(target.index, entries, LBR_LEGACY_MAX_DEPTH, &count));
	/* BTS is still on: the newest probe record, found from the index back, copied at once. */
	records = (const struct bts_record *)ds_area_get(&target)->bts_base;
	used = (long)((ds_area_get(&target)->bts_index - ds_area_get(&target)->bts_base) /
		      BTS_RECORD_SIZE);
	for (i = used - 1; i > 0 && records[i].from != (uint64_t)probe_branch_2; i--)
		;
	if (i > 0) {
		jumps[0] = records[i - 1];
		jumps[1] = records[i];
	}
	local_irq_restore(flags);
	check_eq(DS_OK, ds_detach(&target, DS_USER_BTS));
	check_eq(LBR_OK, lbr_detach(target.index));
	check(jumps[0].from == (uint64_t)probe_branch_1 &&
		      jumps[1].from == (uint64_t)probe_branch_2,
	      "probe_branches()'s jumps not the BTS records 0x%llx, 0x%llx of %ld",
	      (unsigned long long)jumps[0].from, (unsigned long long)jumps[1].from, used);
	for (k = 0; k + 1 < count && entries[k].from != (uint64_t)probe_branch_2; k++)
		;
	if (!check(k + 1 < count, "probe_branch_2 not in %u LBR entries", count))
		return;
	check_eq(jumps[1].to, entries[k].to);
	check_eq(jumps[0].from, entries[k + 1].from);
	check_eq(jumps[0].to, entries[k + 1].to);
}

#define ARCH_LBR_CTL_RESERVED_BIT (1ull << 4)
#define ARCH_ENTRY_FROM 0xffffffff81234567ull

/*
 * Rule 24, architectural: IA32_LBR_CTL's undefined bits (4-15, 23 and up) raise #GP; DEPTH takes
 * only a depth leaf 1CH enumerates (bit n of EAX[7:0]: 8 (n + 1)), and a write of it zeroes
 * every record (Linux's reset is that one write); the deepest is its reset value.
 */
TEST(emulator, rule_24_architectural_lbr_ctl_and_depth_take_only_defined_values)
{
	const struct lbr_support *s = require_emulated_arch_lbr();
	uint32_t depths = cpuid(CPUID_LEAF_ARCH_LBR, 0).eax & CPUID_1C_EAX_DEPTHS;
	uint64_t ctl = 0, depth = 0, from = ~0ull;

	check_eq(0, rdmsr_safe(MSR_ARCH_LBR_CTL, &ctl));
	check_eq(GP, wrmsr_safe(MSR_ARCH_LBR_CTL, ARCH_LBR_CTL_RESERVED_BIT));
	check_eq(GP, wrmsr_safe(MSR_ARCH_LBR_CTL, 1ull << 23));
	check_eq(0, rdmsr_safe(MSR_ARCH_LBR_DEPTH, &depth));
	check_eq(s->depth, depth);
	check_eq(GP, wrmsr_safe(MSR_ARCH_LBR_DEPTH, 0));
	check_eq(GP, wrmsr_safe(MSR_ARCH_LBR_DEPTH, 12));
	check_eq(GP, wrmsr_safe(MSR_ARCH_LBR_DEPTH, s->depth + 8));
	for (unsigned int n = 0; n < 8; n++)
		if (!(depths & (1u << n)))
			check_eq(GP, wrmsr_safe(MSR_ARCH_LBR_DEPTH, 8 * (n + 1)));
	check_eq(GP, rdmsr_safe(s->from_msr + s->depth, &from));
	check_eq(0, wrmsr_safe(s->from_msr + 1, ARCH_ENTRY_FROM));
	check_eq(0, rdmsr_safe(s->from_msr + 1, &from));
	check_eq(ARCH_ENTRY_FROM, from);
	check_eq(0, wrmsr_safe(MSR_ARCH_LBR_DEPTH, s->depth));
	check_eq(0, rdmsr_safe(s->from_msr + 1, &from));
	check_eq(0, from);
	check_eq(0, wrmsr_safe(MSR_ARCH_LBR_CTL, ctl));
}

/* A compacted XSAVE area for component 15 alone, and its parts. */
static struct {
	uint8_t bytes[XSAVE_ARCH_LBR_OFFSET + XSAVE_ARCH_LBR_SIZE(LBR_LEGACY_MAX_DEPTH) +
		      XSAVE_ALIGNMENT];
} __attribute__((aligned(XSAVE_ALIGNMENT))) area;

#define AREA_FILL 0xa5 /* bytes XSAVES must not write */
#define AREA_FILL_QUAD 0xa5a5a5a5a5a5a5a5ull
#define XSAVE_DEPTH 16 /* a supported depth below the deepest */
#define XSAVE_CTL (ARCH_LBR_CTL_USR | ARCH_LBR_CTL_NEAR_REL_CALL | ARCH_LBR_CTL_NEAR_RET)
#define NON_CANONICAL 0x0000800000000000ull

static struct xsave_header *area_header(void)
{
	return (struct xsave_header *)(area.bytes + XSAVE_LEGACY_SIZE);
}

static struct xsave_arch_lbr *area_lbr(void)
{
	return (struct xsave_arch_lbr *)(area.bytes + XSAVE_ARCH_LBR_OFFSET);
}

static uint64_t entry_from(unsigned int i)
{
	return ARCH_ENTRY_FROM + 0x10 * i;
}

static uint64_t entry_to(unsigned int i)
{
	return ARCH_ENTRY_FROM + 0x1000 + 0x10 * i;
}

/* Every field INFO defines, told apart per entry: cycles i + 1, mispredict on odd entries. */
static uint64_t entry_info(unsigned int i)
{
	return (i + 1) | (i % 2 ? LBR_INFO_MISPREDICT : 0);
}

/* The state the tests start from: XSS bit 15, DEPTH, filters, every entry within DEPTH set. */
static void load_known_state(unsigned int depth)
{
	check_eq(0, wrmsr_safe(MSR_IA32_XSS, XSS_ARCH_LBR));
	check_eq(0, wrmsr_safe(MSR_ARCH_LBR_DEPTH, depth));
	check_eq(0, wrmsr_safe(MSR_ARCH_LBR_CTL, XSAVE_CTL));
	for (unsigned int i = 0; i < depth; i++) {
		check_eq(0, wrmsr_safe(MSR_ARCH_LBR_FROM_0 + i, entry_from(i)));
		check_eq(0, wrmsr_safe(MSR_ARCH_LBR_TO_0 + i, entry_to(i)));
		check_eq(0, wrmsr_safe(MSR_ARCH_LBR_INFO_0 + i, entry_info(i)));
	}
}

/* The component as RDMSR reads it, into the area's layout: the MSR loop's view. */
static void read_by_msrs(struct xsave_arch_lbr *out, unsigned int max_depth)
{
	check_eq(0, rdmsr_safe(MSR_ARCH_LBR_CTL, &out->lbr_ctl));
	check_eq(0, rdmsr_safe(MSR_ARCH_LBR_DEPTH, &out->lbr_depth));
	out->ler_from = out->ler_to = out->ler_info = 0;
	for (unsigned int i = 0; i < max_depth; i++) {
		check_eq(0, rdmsr_safe(MSR_ARCH_LBR_FROM_0 + i, &out->entries[i].from));
		check_eq(0, rdmsr_safe(MSR_ARCH_LBR_TO_0 + i, &out->entries[i].to));
		check_eq(0, rdmsr_safe(MSR_ARCH_LBR_INFO_0 + i, &out->entries[i].info));
	}
}

/* What lbr/ expects back: DEPTH as the deepest, LBR_CTL as found, XSS as found. */
static void put_back(const struct lbr_support *s, uint64_t ctl, uint64_t xss)
{
	check_eq(0, wrmsr_safe(MSR_ARCH_LBR_DEPTH, s->depth));
	check_eq(0, wrmsr_safe(MSR_ARCH_LBR_CTL, ctl));
	check_eq(0, wrmsr_safe(MSR_IA32_XSS, xss));
}

/*
 * Rule 24: leaf 0DH enumerates XSAVES and IA32_XSS bit 15 (sub-leaf 1), component 15 as a
 * supervisor component of 40 + 24 x the deepest depth bytes, not 64-byte aligned (sub-leaf 15:
 * Linux struct arch_lbr_state); IA32_XSS takes bit 15 only, and reads back what was written.
 */
TEST(emulator, rule_24_xss_and_leaf_0d_enumerate_component_15)
{
	const struct lbr_support *s = require_emulated_arch_lbr();
	struct cpuid_result sub1 = cpuid(CPUID_LEAF_XSTATE, 1);
	struct cpuid_result sub15 = cpuid(CPUID_LEAF_XSTATE, XSS_ARCH_LBR_COMPONENT);
	uint64_t xss = ~0ull, old = 0;

	check_eq(CPUID_D1_EAX_XSAVES, sub1.eax & CPUID_D1_EAX_XSAVES);
	check_eq(XSS_ARCH_LBR, sub1.ecx);
	check_eq(40 + 24 * s->depth, sub15.eax);
	check_eq(0, sub15.ebx);
	check_eq(CPUID_D_ECX_SUPERVISOR, sub15.ecx);
	check_eq(0, rdmsr_safe(MSR_IA32_XSS, &old));
	check_eq(GP, wrmsr_safe(MSR_IA32_XSS, XSS_ARCH_LBR >> 1));
	check_eq(GP, wrmsr_safe(MSR_IA32_XSS, XSS_ARCH_LBR << 1));
	check_eq(0, wrmsr_safe(MSR_IA32_XSS, XSS_ARCH_LBR));
	check_eq(0, rdmsr_safe(MSR_IA32_XSS, &xss));
	check_eq(XSS_ARCH_LBR, xss);
	check_eq(0, wrmsr_safe(MSR_IA32_XSS, old));
	check(s->xsaves, "lbr/ found no XSAVES: %s", s->xsaves_reason);
}

/* Rule 24: without architectural LBR the model's CPU has no XSAVES: IA32_XSS raises #GP. */
TEST(emulator, rule_24_no_xsaves_without_architectural_lbr)
{
	uint64_t xss = 0;

	if (require_emulated_lbr()->architectural)
		test_skip("architectural LBR: this profile has XSAVES "
			  "(emulator.rule_24_xss_and_leaf_0d_enumerate_component_15)");
	check_eq(0, cpuid(CPUID_LEAF_XSTATE, 1).eax & CPUID_D1_EAX_XSAVES);
	check_eq(0, cpuid(CPUID_LEAF_XSTATE, 1).ecx);
	check_eq(GP, rdmsr_safe(MSR_IA32_XSS, &xss));
	check_eq(GP, wrmsr_safe(MSR_IA32_XSS, XSS_ARCH_LBR));
	check(!lbr_support()->xsaves, "lbr/ would use XSAVES");
}

/*
 * Rule 24: XSAVES of component 15 writes exactly what the MSRs hold, at the layout Linux's
 * struct arch_lbr_state gives (LBR_CTL, DEPTH, the LER MSRs, then DEPTH entries of FROM, TO,
 * INFO), nothing past DEPTH entries, XSTATE_BV = bit 15 and XCOMP_BV = bit 63 | bit 15. With
 * IA32_XSS bit 15 clear it saves nothing (RFBM is empty): both header words lose bit 15.
 */
TEST(emulator, rule_24_xsaves_writes_component_15_as_the_msrs_hold_it)
{
	const struct lbr_support *s = require_emulated_arch_lbr();
	uint64_t ctl = 0, xss = 0;
	struct xsave_arch_lbr *x = area_lbr();
	unsigned int bad = 0;

	check_eq(0, rdmsr_safe(MSR_ARCH_LBR_CTL, &ctl));
	check_eq(0, rdmsr_safe(MSR_IA32_XSS, &xss));
	load_known_state(XSAVE_DEPTH);
	memset(area.bytes, AREA_FILL, sizeof(area.bytes));
	check_eq(0, xsaves_safe(&area, XSS_ARCH_LBR));
	check_eq(XSS_ARCH_LBR, area_header()->xstate_bv);
	check_eq(XCOMP_BV_COMPACTED | XSS_ARCH_LBR, area_header()->xcomp_bv);
	check_eq(XSAVE_CTL, x->lbr_ctl);
	check_eq(XSAVE_DEPTH, x->lbr_depth);
	check_eq(0, x->ler_from);
	check_eq(0, x->ler_to);
	check_eq(0, x->ler_info);
	for (unsigned int i = 0; i < XSAVE_DEPTH; i++)
		if ((x->entries[i].from != entry_from(i) || x->entries[i].to != entry_to(i) ||
		     x->entries[i].info != entry_info(i)) &&
		    bad++ == 0)
			test_diag("entry %u: 0x%llx -> 0x%llx info 0x%llx", i,
				  (unsigned long long)x->entries[i].from,
				  (unsigned long long)x->entries[i].to,
				  (unsigned long long)x->entries[i].info);
	check_eq(0, bad);
	check_eq(AREA_FILL_QUAD, x->entries[XSAVE_DEPTH].from);
	check_eq(AREA_FILL_QUAD, *(uint64_t *)area.bytes); /* the legacy region: not in RFBM */

	check_eq(0, wrmsr_safe(MSR_IA32_XSS, 0));
	memset(area.bytes, AREA_FILL, sizeof(area.bytes));
	check_eq(0, xsaves_safe(&area, XSS_ARCH_LBR));
	check_eq(0, area_header()->xstate_bv);
	check_eq(XCOMP_BV_COMPACTED, area_header()->xcomp_bv);
	check_eq(AREA_FILL_QUAD, x->lbr_ctl);
	put_back(s, ctl, xss);
}

/*
 * Rule 24: XSAVES then XRSTORS give back the state the MSR loop reads: a full stack saved,
 * the records zeroed (a DEPTH write), restored by XRSTORS, reads by RDMSR exactly as before
 * the save, LBR_CTL and DEPTH included. An XRSTORS with XSTATE_BV[15] clear loads the initial
 * configuration: LBR_CTL 0, DEPTH the deepest, every record 0.
 */
TEST(emulator, rule_24_xrstors_restores_what_the_msr_loop_reads)
{
	const struct lbr_support *s = require_emulated_arch_lbr();
	static uint64_t before_quads[XSAVE_ARCH_LBR_SIZE(LBR_LEGACY_MAX_DEPTH) / 8];
	static uint64_t after_quads[XSAVE_ARCH_LBR_SIZE(LBR_LEGACY_MAX_DEPTH) / 8];
	struct xsave_arch_lbr *before = (struct xsave_arch_lbr *)before_quads;
	struct xsave_arch_lbr *after = (struct xsave_arch_lbr *)after_quads;
	uint64_t ctl = 0, xss = 0, value = ~0ull;
	unsigned int differ = 0;

	check_eq(0, rdmsr_safe(MSR_ARCH_LBR_CTL, &ctl));
	check_eq(0, rdmsr_safe(MSR_IA32_XSS, &xss));
	load_known_state(s->depth);
	read_by_msrs(before, s->depth);
	memset(area.bytes, 0, sizeof(area.bytes));
	check_eq(0, xsaves_safe(&area, XSS_ARCH_LBR));
	check_eq(0, wrmsr_safe(MSR_ARCH_LBR_DEPTH, s->depth));
	check_eq(0, wrmsr_safe(MSR_ARCH_LBR_CTL, 0));
	check_eq(0, rdmsr_safe(MSR_ARCH_LBR_FROM_0, &value));
	check_eq(0, value);
	check_eq(0, xrstors_safe(&area, XSS_ARCH_LBR));
	read_by_msrs(after, s->depth);
	check_eq(XSAVE_CTL, after->lbr_ctl);
	check_eq(s->depth, after->lbr_depth);
	for (unsigned int i = 0; i < s->depth; i++)
		if (memcmp(&before->entries[i], &after->entries[i], sizeof(before->entries[i])) &&
		    differ++ == 0)
			test_diag("entry %u: 0x%llx -> 0x%llx before, 0x%llx -> 0x%llx after", i,
				  (unsigned long long)before->entries[i].from,
				  (unsigned long long)before->entries[i].to,
				  (unsigned long long)after->entries[i].from,
				  (unsigned long long)after->entries[i].to);
	check_eq(0, differ);
	check_eq(entry_from(s->depth - 1), after->entries[s->depth - 1].from);

	area_header()->xstate_bv = 0;
	check_eq(0, xrstors_safe(&area, XSS_ARCH_LBR));
	read_by_msrs(after, s->depth);
	check_eq(0, after->lbr_ctl);
	check_eq(s->depth, after->lbr_depth);
	check_eq(0, after->entries[0].from);
	check_eq(0, after->entries[s->depth - 1].info);
	put_back(s, ctl, xss);
}

/*
 * Rule 24, XRSTORS's refusals (#GP, nothing loaded): a depth the CPU does not support (0, not a
 * multiple of 8, past the deepest), LBR_CTL's undefined bits, a non-canonical FROM, INFO's
 * undefined bits, XCOMP_BV[63] clear, XCOMP_BV with a component other than 15, XSTATE_BV with a
 * bit outside XCOMP_BV, a reserved header word set, an area not 64-byte aligned; XSAVES to such
 * an area too. After each, the state is the one before (entry 0's FROM, DEPTH).
 */
TEST(emulator, rule_24_xrstors_refuses_what_the_msrs_would)
{
	const struct lbr_support *s = require_emulated_arch_lbr();
	struct xsave_arch_lbr *x = area_lbr();
	uint64_t ctl = 0, xss = 0, value = 0;
	static const uint64_t bad_depths[] = { 0, 12, LBR_LEGACY_MAX_DEPTH + 8 };

	check_eq(0, rdmsr_safe(MSR_ARCH_LBR_CTL, &ctl));
	check_eq(0, rdmsr_safe(MSR_IA32_XSS, &xss));
	load_known_state(XSAVE_DEPTH);
	check_eq(0, xsaves_safe(&area, XSS_ARCH_LBR));
	check_eq(0, wrmsr_safe(MSR_ARCH_LBR_FROM_0, entry_from(7)));
	for (unsigned int i = 0; i < sizeof(bad_depths) / sizeof(bad_depths[0]); i++) {
		x->lbr_depth = bad_depths[i];
		check_eq(GP, xrstors_safe(&area, XSS_ARCH_LBR));
	}
	x->lbr_depth = XSAVE_DEPTH;
	x->lbr_ctl = XSAVE_CTL | ARCH_LBR_CTL_RESERVED_BIT;
	check_eq(GP, xrstors_safe(&area, XSS_ARCH_LBR));
	x->lbr_ctl = XSAVE_CTL;
	x->entries[XSAVE_DEPTH - 1].from = NON_CANONICAL;
	check_eq(GP, xrstors_safe(&area, XSS_ARCH_LBR));
	x->entries[XSAVE_DEPTH - 1].from = entry_from(XSAVE_DEPTH - 1);
	x->entries[0].info = ~ARCH_LBR_INFO_DEFINED;
	check_eq(GP, xrstors_safe(&area, XSS_ARCH_LBR));
	x->entries[0].info = entry_info(0);
	area_header()->xcomp_bv = XSS_ARCH_LBR;
	check_eq(GP, xrstors_safe(&area, XSS_ARCH_LBR));
	area_header()->xcomp_bv = XCOMP_BV_COMPACTED | XSS_ARCH_LBR | (XSS_ARCH_LBR >> 1);
	check_eq(GP, xrstors_safe(&area, XSS_ARCH_LBR));
	area_header()->xcomp_bv = XCOMP_BV_COMPACTED | XSS_ARCH_LBR;
	area_header()->xstate_bv = XSS_ARCH_LBR | 1;
	check_eq(GP, xrstors_safe(&area, XSS_ARCH_LBR));
	area_header()->xstate_bv = XSS_ARCH_LBR;
	area_header()->reserved[5] = 1;
	check_eq(GP, xrstors_safe(&area, XSS_ARCH_LBR));
	area_header()->reserved[5] = 0;
	check_eq(GP, xrstors_safe(area.bytes + 8, XSS_ARCH_LBR));
	check_eq(GP, xsaves_safe(area.bytes + 8, XSS_ARCH_LBR));
	check_eq(0, rdmsr_safe(MSR_ARCH_LBR_FROM_0, &value));
	check_eq(entry_from(7), value);
	check_eq(0, rdmsr_safe(MSR_ARCH_LBR_DEPTH, &value));
	check_eq(XSAVE_DEPTH, value);
	/* The same area, repaired, loads: the refusals were each for its one fault. */
	check_eq(0, xrstors_safe(&area, XSS_ARCH_LBR));
	check_eq(0, rdmsr_safe(MSR_ARCH_LBR_FROM_0, &value));
	check_eq(entry_from(0), value);
	put_back(s, ctl, xss);
}
