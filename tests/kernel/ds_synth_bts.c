/* SPDX-License-Identifier: MIT */
/* ds_synth suite: BTS buffers filled by the synthetic producer, by the SDM's rules. */
#include "arch/x86/apic.h"
#include "arch/x86/cpu.h"
#include "arch/x86/tsc.h"
#include "tests/kernel/ds_synth_util.h"

#define RECORDS 8
#define PMI_WAIT_MS 100

TEST(ds_synth, bts_circular_buffer_wraps_and_raises_no_pmi)
{
	struct ds_bts_config config = { .records = RECORDS, .circular = true };
	struct ds_target target = self_target();
	uint64_t pmis = ds_pmi_count();
	const struct bts_record *records;
	struct ds_area *area;

	require_synthetic_backend();
	check_attached(ds_attach_bts(&target, &config));
	for (unsigned int i = 0; i < 20; i++)
		check(ds_synth_branch(SYNTH_FROM + i, SYNTH_TO + i), "record %u dropped", i);
	area = ds_area_get(&target);
	records = (const struct bts_record *)area->bts_base;
	check_eq(area->bts_base + (20 % RECORDS) * BTS_RECORD_SIZE, area->bts_index);
	/* Slot j holds the newest record i with i % 8 == j: 16-19 in 0-3, 12-15 in 4-7. */
	for (unsigned int j = 0; j < RECORDS; j++) {
		unsigned int i = j < 4 ? 16 + j : 8 + j;

		check(records[j].from == SYNTH_FROM + i && records[j].to == SYNTH_TO + i,
		      "slot %u: from 0x%llx, expected record %u", j,
		      (unsigned long long)records[j].from, i);
	}
	check_eq(pmis, ds_pmi_count());
	check(ds_canary_intact(&target, DS_USER_BTS), "written past the absolute maximum");
	check_eq(DS_OK, ds_detach(&target, DS_USER_BTS));
	check(ds_area_get(&target) == NULL, "the area outlived its last user");
}

TEST(ds_synth, bts_interrupt_mode_raises_one_pmi_per_threshold_and_drains)
{
	struct ds_bts_config config = { .records = 16, .threshold_records = 4 };
	struct ds_target target = self_target();
	uint64_t pmis = ds_pmi_count();
	struct ds_credit credit;

	require_synthetic_backend();
	ds_credit_reset(target.index);
	check_attached(ds_attach_bts(&target, &config));
	for (unsigned int i = 0; i < 12; i++)
		ds_synth_branch(SYNTH_FROM + i, SYNTH_TO + i);
	credit = ds_credit(target.index);
	check_eq(pmis + 3, ds_pmi_count());
	check_eq(12, credit.bts_records);
	check_eq(SYNTH_FROM + 11, credit.last_from);
	check_eq(SYNTH_TO + 11, credit.last_to);
	check_eq(ds_area_get(&target)->bts_base, ds_area_get(&target)->bts_index);
	check(!apic_pmi_masked(), "LVTPC left masked after a PMI");
	ds_detach(&target, DS_USER_BTS);
}

TEST(ds_synth, bts_buffer_never_writes_past_its_absolute_maximum)
{
	struct ds_bts_config config = { .records = RECORDS, .threshold_records = RECORDS };
	struct ds_target target = self_target();
	unsigned int stored = 0;
	uint64_t pmis = ds_pmi_count(), deadline;

	require_synthetic_backend();
	ds_credit_reset(target.index);
	check_attached(ds_attach_bts(&target, &config));
	local_irq_disable(); /* hold the PMI back: the buffer fills and the producer must stop */
	for (unsigned int i = 0; i < RECORDS + 4; i++)
		stored += ds_synth_branch(SYNTH_FROM + i, SYNTH_TO + i);
	check_eq(RECORDS, stored);
	check_eq(ds_area_get(&target)->bts_max, ds_area_get(&target)->bts_index);
	check(ds_canary_intact(&target, DS_USER_BTS), "written past the absolute maximum");
	local_irq_enable(); /* now the PMI drains the full buffer */
	/* Some emulators (KVM-PVM here) deliver a pending interrupt only at a later exit. */
	deadline = rdtsc_ordered() + tsc_cycles_from_ms(PMI_WAIT_MS);
	while (ds_pmi_count() == pmis && rdtsc_ordered() < deadline)
		cpu_relax();
	check_eq(pmis + 1, ds_pmi_count());
	check_eq(RECORDS, ds_credit(target.index).bts_records);
	ds_detach(&target, DS_USER_BTS);
}

TEST(ds_synth, nothing_is_recorded_without_an_active_area)
{
	require_synthetic_backend();
	check(!ds_synth_branch(SYNTH_FROM, SYNTH_TO), "a record with tracing off");
}
