/* SPDX-License-Identifier: MIT */
/* ds_synth suite: PEBS buffers of fixed and adaptive records, and the reset-value slots. */
#include "lib/string.h"
#include "tests/kernel/ds_synth_util.h"

#define SYNTH_IP 0x405000ull
#define FIXED_FORMAT 3
#define ADAPTIVE_FORMAT 4

/* A format-3 record: only the fields the drain reads are set. */
static void fixed_record(uint8_t record[200], uint64_t ip)
{
	memset(record, 0, 200);
	memcpy(record + PEBS_REC_IP, &ip, sizeof(ip));
}

/* An adaptive record with the basic group only (PEBS_DATA_CFG 0). */
static void basic_record(uint8_t record[PEBS_BASIC_GROUP_SIZE], uint64_t ip)
{
	uint64_t format_size = (uint64_t)PEBS_BASIC_GROUP_SIZE << PEBS_BASIC_SIZE_SHIFT;

	memset(record, 0, PEBS_BASIC_GROUP_SIZE);
	memcpy(record + PEBS_BASIC_FORMAT_SIZE, &format_size, sizeof(format_size));
	memcpy(record + PEBS_BASIC_IP, &ip, sizeof(ip));
}

TEST(ds_synth, pebs_fixed_format_records_are_drained_at_each_threshold)
{
	struct ds_pebs_config config = { .format = FIXED_FORMAT,
					 .record_size = 200,
					 .records = 10,
					 .threshold_records = 5,
					 .enable = 1 };
	struct ds_target target = self_target();
	uint64_t pmis = ds_pmi_count();
	uint8_t record[200];

	require_synthetic_backend();
	ds_credit_reset(target.index);
	check_attached(ds_attach_pebs(&target, &config));
	for (unsigned int i = 0; i < 10; i++) {
		fixed_record(record, SYNTH_IP + i);
		check(ds_synth_pebs(record, sizeof(record)), "record %u dropped", i);
	}
	check_eq(pmis + 2, ds_pmi_count());
	check_eq(10, ds_credit(target.index).pebs_records);
	check_eq(SYNTH_IP + 9, ds_credit(target.index).last_pebs_ip);
	check(ds_canary_intact(&target, DS_USER_PEBS), "written past the absolute maximum");
	ds_detach(&target, DS_USER_PEBS);
}

TEST(ds_synth, partial_adaptive_buffer_is_drained_when_its_user_detaches)
{
	struct ds_pebs_config config = { .format = ADAPTIVE_FORMAT,
					 .record_size = PEBS_BASIC_GROUP_SIZE,
					 .records = 16,
					 .threshold_records = 16,
					 .enable = 1 };
	struct ds_target target = self_target();
	uint8_t record[PEBS_BASIC_GROUP_SIZE];

	require_synthetic_backend();
	ds_credit_reset(target.index);
	check_attached(ds_attach_pebs(&target, &config));
	for (unsigned int i = 0; i < 3; i++) {
		basic_record(record, SYNTH_IP + i);
		ds_synth_pebs(record, sizeof(record));
	}
	check_eq(0, ds_credit(target.index).pebs_records); /* below the threshold: still there */
	ds_detach(&target, DS_USER_PEBS);
	check_eq(3, ds_credit(target.index).pebs_records);
	check_eq(SYNTH_IP + 2, ds_credit(target.index).last_pebs_ip);
}

TEST(ds_synth, pebs_reset_values_sit_in_the_format_dependent_slot)
{
	/* GP counter 0 and fixed counter 0 (PEBS_ENABLE bits 0 and 32). */
	struct ds_pebs_config config = { .record_size = 200,
					 .records = 4,
					 .threshold_records = 1,
					 .enable = 1 | (1ull << 32),
					 .reset_value = 0x1234 };
	struct ds_target target = self_target();

	for (unsigned int format = 3; format <= 5; format++) {
		unsigned int fixed_slot = format < 5 ? 8 : 32; /* hardware.md A2 */
		struct ds_area *area;

		config.format = format;
		check_attached(ds_attach_pebs(&target, &config));
		area = ds_area_get(&target);
		check(area->pebs_reset[0] == 0x1234 && area->pebs_reset[fixed_slot] == 0x1234,
		      "format %u: GP slot 0x%llx, fixed slot %u 0x%llx", format,
		      (unsigned long long)area->pebs_reset[0], fixed_slot,
		      (unsigned long long)area->pebs_reset[fixed_slot]);
		ds_detach(&target, DS_USER_PEBS);
	}
}
