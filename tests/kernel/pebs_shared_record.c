/* SPDX-License-Identifier: MIT */
/* pebs suite: counters that overflow at the same instruction share one PEBS record. */
#include "arch/x86/msr.h"
#include "tests/kernel/lib/ds_util.h"

#define PERIOD 400 /* instructions a record */
#define RECORDS 8 /* the buffer's size */
#define THRESHOLD 3 /* the DS interrupt's, in records */
#define TOGETHER_ITERATIONS (5 * PERIOD / 4) /* 2.5 periods: 2 overflows of each counter */

/*
 * Rule 23. Two PEBS counters that count the same instructions from the same value overflow at
 * the same instruction: the CPU takes one assist for both, one record whose status names both
 * (SDM: the status field "may indicate multiple PEBS-enabled counters have overflowed"). ds/
 * hands it out as Linux's intel_pmu_drain_pebs_nhm() does: from format 3 a sample to each
 * counter; before it a collision, dropped. The counters are programmed here, PEBS_ENABLE and
 * the area are ds/'s.
 */
TEST_OBSERVING(pebs, counters_overflowing_together_share_one_record_and_each_gets_a_sample, 1200)
{
	struct ds_target target = self_target();
	uint64_t evtsel = INST_RETIRED | PERFEVTSEL_OS | PERFEVTSEL_EN, records;
	struct ds_pebs_config config;
	struct ds_credit credit;
	unsigned long flags;

	require_pebs();
	if ((ds_support()->pebs_enable_valid & 0x3) != 0x3)
		test_skip("PEBS on one GP counter only here (PEBS_ENABLE bits 0x%llx)",
			  (unsigned long long)ds_support()->pebs_enable_valid);
	config = pebs_config(RECORDS, THRESHOLD, PERIOD);
	config.enable = 0x3;
	ds_credit_reset(target.index);
	check_attached(ds_attach_pebs(&target, &config));
	flags = local_irq_save();
	for (unsigned int counter = 0; counter < 2; counter++) {
		wrmsr(MSR_IA32_PMC0 + counter, config.reset_value & UINT32_MAX);
		wrmsr(MSR_IA32_PERFEVTSEL0 + counter, evtsel);
	}
	wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 0x3);
	probe_instruction_loop(TOGETHER_ITERATIONS);
	wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 0);
	for (unsigned int counter = 0; counter < 2; counter++) {
		wrmsr(MSR_IA32_PERFEVTSEL0 + counter, 0);
		wrmsr(MSR_IA32_PMC0 + counter, 0);
	}
	wrmsr(MSR_IA32_PERF_GLOBAL_OVF_CTRL, rdmsr(MSR_IA32_PERF_GLOBAL_STATUS));
	local_irq_restore(flags);
	check_eq(DS_OK, ds_detach(&target, DS_USER_PEBS));
	credit = ds_credit(target.index);
	records = credit.pebs_records;
	test_diag("format %u: %llu records, %llu samples, %llu dropped", ds_support()->pebs_format,
		  (unsigned long long)records, (unsigned long long)credit.pebs_samples,
		  (unsigned long long)credit.pebs_dropped);
	check(records >= 2 * TOGETHER_ITERATIONS / PERIOD, "%llu records in 2.5 periods",
	      (unsigned long long)records);
	if (ds_support()->pebs_format >= PEBS_FORMAT_3) {
		check_eq(2 * records, credit.pebs_samples);
		check_eq(0, credit.pebs_dropped);
	} else {
		check_eq(0, credit.pebs_samples);
		check_eq(records, credit.pebs_dropped);
	}
}
