/* SPDX-License-Identifier: MIT */
/* ds suite: architectural PEBS per counter through ds/: every PEBS counter, refusals, a full
 * buffer. */
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/cpuid.h"
#include "arch/x86/msr.h"
#include "lib/format.h"
#include "lib/string.h"
#include "tests/kernel/lib/ds_util.h"
#include "tests/kernel/lib/handler_margin.h"
#include "tests/kernel/lib/nmi_margin.h"

/*
 * Typed here from the Linux arch-PEBS series (msr-index.h, perf_event.h, core.c
 * update_pmu_cap()), apart from arch/x86/arch-pebs.h: IA32_PMC_GPx_CFG_C 0x1903 + 4x and
 * IA32_PMC_FXx_CFG_C 0x1983 + 4x (EN bit 63, reload value bits 31:0); IA32_PEBS_INDEX 0x3F5
 * (WR bits 26:4 in 16-byte units, FULL bit 31, EN bit 32); leaf 23H sub-leaf 5 EAX/ECX the
 * GP/fixed counters that can PEBS, EBX/EDX those with precise distribution; sub-leaf 1 EAX/EBX
 * the counters that exist. Counter bitmaps: GP i at bit i, fixed i at bit 32 + i. A record of
 * the basic group alone is 64 bytes (a 16-byte header and 48 bytes). Runs unchanged on
 * silicon; skips on parts without architectural PEBS.
 */
#define T_FORMAT_ARCH 0xfu
#define T_GP_CFG_C 0x1903u
#define T_FX_CFG_C 0x1983u
#define T_CFG_C_STRIDE 4
#define T_CFG_C_EN (1ull << 63)
#define T_PEBS_INDEX 0x3f5u
#define T_INDEX_WR(index) (((index) >> 4) & 0x7fffffull)
#define T_INDEX_FULL (1ull << 31)
#define T_INDEX_EN (1ull << 32)
#define T_LEAF 0x23u
#define T_FIXED_SHIFT 32
#define T_COUNTER_BITS 48
#define T_BASIC_RECORD 64
#define T_BUFFER_BYTES 4096 /* size code 0: what 16 records of 64 bytes get */

#define PERIOD 400
#define TWO_AND_A_QUARTER_PERIODS (9 * PERIOD / 8) /* iterations of two instructions */
#define CYCLES_PERIOD (PERIOD / 4)
#define FIXED_INSTRUCTIONS 0 /* fixed counter 0 counts instructions retired (SDM §20.2.2) */
#define REASON 160

static void require_arch_pebs(void)
{
	if (!ds_support()->arch_pebs.usable)
		test_skip("no architectural PEBS: %s", ds_support()->arch_pebs.reason);
	if (!pmu_usable())
		test_skip("%s", pmu_info()->reason);
}

/* Leaf 23H read here: the counters that exist and those that can PEBS, and PDIST ones. */
struct leaf_23 {
	uint64_t exist, pebs, pdist;
	uint32_t pebs_gp, pebs_fixed, pdist_gp, pdist_fixed;
};

static struct leaf_23 read_leaf_23(void)
{
	struct cpuid_result sub1 = cpuid(T_LEAF, 1), sub5 = cpuid(T_LEAF, 5);

	return (struct leaf_23){
		.exist = (uint64_t)sub1.ebx << T_FIXED_SHIFT | sub1.eax,
		.pebs = (uint64_t)sub5.ecx << T_FIXED_SHIFT | sub5.eax,
		.pdist = (uint64_t)sub5.edx << T_FIXED_SHIFT | sub5.ebx,
		.pebs_gp = sub5.eax,
		.pebs_fixed = sub5.ecx,
		.pdist_gp = sub5.ebx,
		.pdist_fixed = sub5.edx,
	};
}

static uint32_t t_cfg_c(unsigned int bit)
{
	return bit >= T_FIXED_SHIFT ? T_FX_CFG_C + T_CFG_C_STRIDE * (bit - T_FIXED_SHIFT)
				    : T_GP_CFG_C + T_CFG_C_STRIDE * bit;
}

static struct ds_pebs_config one_counter(unsigned int bit, size_t records, size_t threshold,
					 uint64_t period)
{
	return (struct ds_pebs_config){
		.format = T_FORMAT_ARCH,
		.record_size = T_BASIC_RECORD,
		.records = records,
		.threshold_records = threshold,
		.enable = 1ull << bit,
		.reset_value = (0 - period) & UINT32_MAX,
	};
}

/* The counter's event: instructions retired in the kernel; a fixed counter counts its own. */
static struct pmu_event counter_event(void)
{
	return instructions_retired();
}

struct counter_run {
	uint64_t cfg_c_attached, cfg_c_detached;
	struct ds_credit credit;
	struct loop_span loop;
	int added;
	unsigned long nmis; /* while the counter counted (tests/kernel/lib/nmi_margin.h) */
	uint64_t ticks; /* likewise (tests/kernel/lib/handler_margin.h) */
};

static void run_on(unsigned int bit, uint64_t period, struct counter_run *out)
{
	struct ds_target target = self_target();
	struct ds_pebs_config config = one_counter(bit, 16, 12, period);
	struct pmu_event event = counter_event();

	ds_credit_reset(target.index);
	check_attached(ds_attach_pebs(&target, &config));
	out->cfg_c_attached = rdmsr(t_cfg_c(bit));
	out->nmis = nmi_count();
	out->ticks = tick_count();
	out->added = pmu_add_sampling_event_on(target.index, bit, &event, period);
	counted_loop(TWO_AND_A_QUARTER_PERIODS, &out->loop);
	pmu_release(target.index);
	out->nmis = nmi_count() - out->nmis;
	out->ticks = tick_count() - out->ticks;
	check_eq(DS_OK, ds_detach(&target, DS_USER_PEBS));
	out->cfg_c_detached = rdmsr(t_cfg_c(bit));
	out->credit = ds_credit(target.index);
}

/*
 * One PEBS user at a time on each counter leaf 23H.5 lists, its event counting through pmu/
 * on that counter: CFG_C holds EN and the reload value while attached and is cleared at the
 * detach; 2.25 periods of instructions give 2 records (as ds.arch_pebs_partial_* has it),
 * each naming that counter alone, the last one's IP in the loop. Fixed counters 1 and 2 count
 * cycles: a quarter of the period, so that the loop, at most about two instructions a cycle,
 * and reference cycles at most about half as many again, gives at least one record.
 */
TEST_OBSERVING(ds, arch_pebs_records_on_each_gp_and_fixed_counter_that_can_pebs, 11000)
{
	struct leaf_23 leaf;
	unsigned int counters = 0;

	require_arch_pebs();
	leaf = read_leaf_23();
	for (unsigned int bit = 0; bit < T_COUNTER_BITS; bit++) {
		bool fixed = bit >= T_FIXED_SHIFT;
		bool instructions = !fixed || bit - T_FIXED_SHIFT == FIXED_INSTRUCTIONS;
		uint64_t records, period;
		struct counter_run run = { 0 };

		if (!(leaf.pebs & leaf.exist & (1ull << bit)))
			continue;
		if (fixed && bit - T_FIXED_SHIFT >= pmu_info()->fixed_counters) {
			test_diag("fixed counter %u: beyond the %u pmu/ drives",
				  bit - T_FIXED_SHIFT, pmu_info()->fixed_counters);
			continue;
		}
		period = instructions ? PERIOD : CYCLES_PERIOD;
		counters++;
		run_on(bit, period, &run);
		records = run.credit.pebs_records;
		test_diag("%s counter %u: CFG_C 0x%llx attached, 0x%llx detached; %llu records, "
			  "last naming 0x%llx at 0x%llx",
			  fixed ? "fixed" : "GP", fixed ? bit - T_FIXED_SHIFT : bit,
			  (unsigned long long)run.cfg_c_attached,
			  (unsigned long long)run.cfg_c_detached, (unsigned long long)records,
			  (unsigned long long)run.credit.last_pebs_counters,
			  (unsigned long long)run.credit.last_pebs_ip);
		check(run.added >= 0, "pmu/ refused a PEBS event on counter bit %u", bit);
		check_eq(T_CFG_C_EN | ((0 - period) & UINT32_MAX), run.cfg_c_attached);
		check_eq(0, run.cfg_c_detached);
		if (instructions)
			check_eq(2, records);
		else
			check(records >= 1, "counter bit %u: no record", bit);
		check_eq(records, run.credit.pebs_samples);
		check_eq(0, run.credit.pebs_dropped);
		check_eq(1ull << bit, run.credit.last_pebs_counters);
		/* An NMI's handler (silicon) or IRETQ (the model) may take the last record. */
		if (instructions) {
			char what[32];

			format(what, sizeof(what), "counter bit %u", bit);
			check_last_pebs_ip(run.credit.last_pebs_ip, &run.loop, run.nmis, run.ticks,
					   what);
		}
	}
	test_diag("%u counters", counters);
	check(counters > 0, "leaf 23H.5 lists no counter pmu/ drives");
}

/* The lowest counter of bits, as a one-bit mask; 0 for none. */
static uint64_t lowest(uint64_t bits)
{
	return bits & -bits;
}

static void expect_refusal(const struct ds_pebs_config *config, const char *expected)
{
	struct ds_target target = self_target();
	char reason[REASON];

	check_eq(DS_ERROR_CONFIG, ds_pebs_check(config, reason, sizeof(reason)));
	test_diag("refused: %s", reason);
	check(strcmp(reason, expected) == 0, "reason '%s', expected '%s'", reason, expected);
	check_eq(DS_ERROR_CONFIG, ds_attach_pebs(&target, config));
	check_eq(DS_ERROR_NOT_ATTACHED, ds_detach(&target, DS_USER_PEBS));
}

/*
 * A counter that exists but that leaf 23H.5 does not list is refused, with the register that
 * says so; a fixed one first (on the model fixed counter 3), else a GP one. A listed counter
 * passes the same check. Silicon that lists every counter it has skips the refusal.
 */
TEST(ds, arch_pebs_refuses_a_counter_leaf_23_does_not_list_with_its_reason)
{
	struct leaf_23 leaf;
	uint64_t refused;
	struct ds_pebs_config config;
	char reason[REASON], expected[REASON];

	require_arch_pebs();
	leaf = read_leaf_23();
	config = one_counter((unsigned int)__builtin_ctzll(leaf.pebs & leaf.exist), 16, 12, PERIOD);
	check_eq(DS_OK, ds_pebs_check(&config, reason, sizeof(reason)));
	check_eq(0, strlen(reason));
	refused = lowest(leaf.exist & ~leaf.pebs & ~0xffffffffull);
	if (refused)
		format(expected, sizeof(expected),
		       "fixed counters 0x%x cannot PEBS: CPUID.23H.5:ECX is 0x%x",
		       (uint32_t)(refused >> T_FIXED_SHIFT), leaf.pebs_fixed);
	else if ((refused = lowest(leaf.exist & ~leaf.pebs)))
		format(expected, sizeof(expected),
		       "GP counters 0x%x cannot PEBS: CPUID.23H.5:EAX is 0x%x", (uint32_t)refused,
		       leaf.pebs_gp);
	else
		test_skip("CPUID.23H.5 lists every counter 23H.1 does (0x%llx)",
			  (unsigned long long)leaf.exist);
	config = one_counter((unsigned int)__builtin_ctzll(refused), 16, 12, PERIOD);
	expect_refusal(&config, expected);
}

/*
 * Precise distribution (Linux: precise_ip 3 confines an event to pebs_cap.pdists, leaf
 * 23H.5 EBX/EDX): asked on a PEBS counter that lacks it, refused with its reason; asked on one
 * that has it, attached. The model gives GP counters 0-1 and fixed counter 0 PDIST.
 */
TEST(ds, arch_pebs_pdist_on_a_counter_without_it_is_refused_with_its_reason)
{
	struct ds_target target = self_target();
	struct ds_pebs_config config;
	struct leaf_23 leaf;
	uint64_t without, with;
	char expected[REASON];

	require_arch_pebs();
	leaf = read_leaf_23();
	with = lowest(leaf.pebs & leaf.pdist & leaf.exist);
	without = lowest(leaf.pebs & ~leaf.pdist & leaf.exist);
	if (with) {
		config = one_counter((unsigned int)__builtin_ctzll(with), 16, 12, PERIOD);
		config.pdist = with;
		check_eq(DS_OK, ds_attach_pebs(&target, &config));
		check_eq(DS_OK, ds_detach(&target, DS_USER_PEBS));
	}
	if (!without)
		test_skip("every PEBS counter has precise distribution (CPUID.23H.5 0x%llx)",
			  (unsigned long long)leaf.pdist);
	if (without >> T_FIXED_SHIFT)
		format(expected, sizeof(expected),
		       "fixed counters 0x%x lack precise distribution: CPUID.23H.5:EDX is 0x%x",
		       (uint32_t)(without >> T_FIXED_SHIFT), leaf.pdist_fixed);
	else
		format(expected, sizeof(expected),
		       "GP counters 0x%x lack precise distribution: CPUID.23H.5:EBX is 0x%x",
		       (uint32_t)without, leaf.pdist_gp);
	config = one_counter((unsigned int)__builtin_ctzll(without), 16, 12, PERIOD);
	config.pdist = without;
	expect_refusal(&config, expected);
}

/*
 * A buffer that fills: PEBS on the lowest PEBS counter counts 70 periods of instructions with
 * interrupts off, so the threshold PMI (8 records) waits. The 4 KiB buffer (size code 0, the
 * least ds/ gives 16 records of 64 bytes) takes exactly 64 records: WR stops at 4096 bytes
 * (256 units), never past the end, and FULL is set. The counter stops before interrupts come
 * back; the PMI then drains all 64 and ds/ reports the loss: one full drain. The CPU counts
 * no lost record (Linux clears FULL and counts none), so neither does ds/. 7,000 instructions.
 */
#define FULL_PERIOD 100
#define FULL_PERIODS 70

TEST_OBSERVING(ds, arch_pebs_full_buffer_is_drained_and_reported_as_a_loss, 7500)
{
	struct ds_target target = self_target();
	struct pmu_event event = counter_event();
	struct ds_pebs_config config;
	struct leaf_23 leaf;
	struct loop_span loop;
	struct ds_credit credit;
	uint64_t index, pmis;
	unsigned long flags;
	unsigned int bit;
	int added;

	require_arch_pebs();
	leaf = read_leaf_23();
	bit = (unsigned int)__builtin_ctzll(leaf.pebs & leaf.exist);
	config = one_counter(bit, 16, 8, FULL_PERIOD);
	ds_credit_reset(target.index);
	check_attached(ds_attach_pebs(&target, &config));
	pmis = ds_pmi_count();
	flags = local_irq_save();
	added = pmu_add_sampling_event_on(target.index, bit, &event, FULL_PERIOD);
	counted_loop(FULL_PERIODS * FULL_PERIOD / 2, &loop);
	pmu_release(target.index);
	index = rdmsr(T_PEBS_INDEX);
	local_irq_restore(flags);
	wait_for_pmis(pmis + 1);
	pmis = ds_pmi_count() - pmis;
	check_eq(DS_OK, ds_detach(&target, DS_USER_PEBS));
	credit = ds_credit(target.index);
	test_diag("INDEX 0x%llx (WR %llu units), %llu PMIs, %llu records, %llu full drains",
		  (unsigned long long)index, (unsigned long long)T_INDEX_WR(index),
		  (unsigned long long)pmis, (unsigned long long)credit.pebs_records,
		  (unsigned long long)credit.pebs_full);
	check(added >= 0, "pmu/ refused a PEBS event on counter bit %u", bit);
	check_eq(T_BUFFER_BYTES / 16, T_INDEX_WR(index));
	check_eq(T_INDEX_FULL | T_INDEX_EN, index & (T_INDEX_FULL | T_INDEX_EN));
	check_eq(1, pmis);
	check_eq(T_BUFFER_BYTES / T_BASIC_RECORD, credit.pebs_records);
	check_eq(1, credit.pebs_full);
	check_eq(0, credit.pebs_dropped);
}
