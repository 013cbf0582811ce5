/* SPDX-License-Identifier: MIT */
/* pebs suite: PERF_CAPABILITIES.PEBSSaveArchRegs, and the registers a record holds. */
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/msr-index.h"
#include "arch/x86/msr.h"
#include "ds/buffer.h"
#include "ds/ds.h"
#include "ds/records.h"
#include "pmu/pmu.h"
#include "runner/test.h"
#include "sched/sched.h"
#include "tests/kernel/lib/ds_util.h"

/* tests/kernel/lib/pebs_marked_loop.asm: r12 and r13 hold these from its first iteration on. */
#define PEBS_MARK_R12 0x5eb512a1c0de0012ull
#define PEBS_MARK_R13 0x5eb513a1c0de0013ull

void pebs_marked_loop(uint64_t iterations);
extern const char pebs_marked_loop_body[], pebs_marked_loop_end[];

/*
 * 600 loop instructions at a period of 100: 5 records whose registers were saved inside the loop
 * (a record every 101 events: the assist's event reloads the counter). What
 * pmu_add_sampling_event() and pmu_release() count around it may add a record or two outside it.
 * About 750 steps where the CPU is emulated.
 */
#define PERIOD 100ull
#define ITERATIONS 300ull
#define RECORDS 16 /* 16 x 200 bytes at most: under the page a format 0 buffer may take */
#define RECORDS_IN_LOOP_MIN 5

/*
 * PERF_CAPABILITIES bit 7, PEBSSaveArchRegs (SDM Vol. 4 Table 2-2), and what it promises: a
 * record's registers are the CPU's at the assist. Every PEBS part Linux drives has it: its
 * setup_pebs_fixed_sample_data() takes RFLAGS, RIP and RAX-R15 from every format 0-3 record
 * without asking, and KVM passes the host's bit to a PEBS guest. So each record taken inside
 * the marked loop (its saved RIP between the loop's first instruction and the one after it)
 * holds the loop's r12 and r13. Adaptive records hold the registers only in the GPR group
 * PEBS_DATA_CFG selects, for an event that asks for adaptive records (SDM "Adaptive PEBS").
 */
TEST_OBSERVING(pebs, records_hold_the_registers_as_perf_capabilities_promises, 750)
{
	struct pmu_event event = instructions_retired();
	struct ds_target target = self_target();
	enum pebs_format format;
	struct ds_pebs_config config;
	const struct ds_area *area;
	unsigned int records = 0, in_loop = 0;
	struct pebs_sample sample;
	uint64_t capabilities = 0, at;
	size_t size;

	require_pebs();
	format = (enum pebs_format)ds_support()->pebs_format;
	check_eq(0, rdmsr_safe(MSR_IA32_PERF_CAPABILITIES, &capabilities));
	check(capabilities & PERF_CAP_PEBS_ARCH_REGS,
	      "PERF_CAPABILITIES 0x%llx: PEBS format %u without PEBSSaveArchRegs (bit 7)",
	      (unsigned long long)capabilities, format);
	check_eq(!!(capabilities & PERF_CAP_PEBS_ARCH_REGS), ds_support()->pebs_arch_regs);
	if (pebs_format_is_adaptive(format) && !ds_support()->pebs_baseline)
		test_skip("PEBS format %u without baseline: records hold the basic group only",
			  format);
	config = pebs_config(RECORDS, RECORDS - ds_threshold_room(RECORDS), PERIOD);
	if (pebs_format_is_adaptive(format)) {
		event.pebs_adaptive = true;
		config.data_cfg = PEBS_DATA_CFG_GPRS;
		config.record_size = pebs_adaptive_record_size(config.data_cfg);
	}
	check_attached(ds_attach_pebs(&target, &config));
	if (pmu_add_sampling_event(target.index, &event, PERIOD) != 0)
		test_abort("pmu_add_sampling_event did not get counter 0");
	pebs_marked_loop(ITERATIONS);
	pmu_release(target.index);
	area = ds_area_get(&target);
	for (at = area->pebs_base; at < area->pebs_index; at += size, records++) {
		if (!check(pebs_decode(format, (const void *)at, area->pebs_index - at,
				       config.data_cfg, &sample, &size),
			   "record %u does not decode", records))
			break;
		if (!check(sample.has_gprs, "record %u: no registers", records))
			continue;
		if (sample.register_ip < (uint64_t)pebs_marked_loop_body ||
		    sample.register_ip > (uint64_t)pebs_marked_loop_end)
			continue;
		in_loop++;
		check(sample.gprs[PEBS_GPR_R12] == PEBS_MARK_R12 &&
			      sample.gprs[PEBS_GPR_R13] == PEBS_MARK_R13,
		      "record %u at 0x%llx: r12 0x%llx r13 0x%llx, expected 0x%llx 0x%llx", records,
		      (unsigned long long)sample.register_ip,
		      (unsigned long long)sample.gprs[PEBS_GPR_R12],
		      (unsigned long long)sample.gprs[PEBS_GPR_R13], PEBS_MARK_R12, PEBS_MARK_R13);
	}
	test_diag("PERF_CAPABILITIES 0x%llx: %u records, %u taken inside the loop",
		  (unsigned long long)capabilities, records, in_loop);
	check(in_loop >= RECORDS_IN_LOOP_MIN, "%u records inside the loop, expected at least %u",
	      in_loop, RECORDS_IN_LOOP_MIN);
	check_eq(DS_OK, ds_detach(&target, DS_USER_PEBS));
}
