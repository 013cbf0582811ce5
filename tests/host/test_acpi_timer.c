/* SPDX-License-Identifier: MIT */
/* Host tests of lib/acpi_timer.c: the FADT's PM timer, the HPET table and counter arithmetic. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/acpi_timer.h"
#include "tests/host/acpi_builder.h"
#include "tests/host/host_test.h"

#define FADT_BODY_V1 (ACPI_FADT_V1_SIZE - ACPI_HEADER_SIZE)
#define FADT_BODY_V5 (276 - ACPI_HEADER_SIZE) /* ACPI 6.x FADT Length */
#define HPET_BODY (ACPI_HPET_SIZE - ACPI_HEADER_SIZE)

/* Field offsets are the table's; the body starts after the header. */
static uint8_t *body_at(uint8_t *body, size_t table_offset)
{
	return body + table_offset - ACPI_HEADER_SIZE;
}

static void fadt_set_legacy(uint8_t *body, uint32_t port, uint8_t length, uint32_t flags)
{
	put_u32(body_at(body, ACPI_FADT_OFF_PM_TMR_BLK), port);
	*body_at(body, ACPI_FADT_OFF_PM_TMR_LEN) = length;
	put_u32(body_at(body, ACPI_FADT_OFF_FLAGS), flags);
}

static void gas_set(uint8_t *gas, uint8_t space, uint8_t width, uint64_t address)
{
	gas[ACPI_GAS_OFF_SPACE_ID] = space;
	gas[ACPI_GAS_OFF_BIT_WIDTH] = width;
	put_u64(gas + ACPI_GAS_OFF_ADDRESS, address);
}

/* Build the FADT with body into an exact heap copy and parse it. */
static enum acpi_timer_error fadt_parse(const uint8_t *body, size_t body_length,
					struct acpi_pm_timer *timer)
{
	uint8_t bytes[512];
	size_t length = build_table(bytes, ACPI_FADT_SIGNATURE, 6, body, body_length);
	uint8_t *table = exact_copy(bytes, length);
	enum acpi_timer_error error = acpi_fadt_pm_timer(table, length, timer);

	free(table);
	return error;
}

HOST_TEST(acpi_fadt_pm_timer_takes_the_v1_block_with_its_width)
{
	uint8_t body[FADT_BODY_V1] = { 0 };
	struct acpi_pm_timer timer = { 0 };

	fadt_set_legacy(body, 0xb008, ACPI_FADT_PM_TMR_LEN, 0);
	host_check_eq_u64(ACPI_TIMER_OK, fadt_parse(body, sizeof(body), &timer));
	host_check_eq_u64(0xb008, timer.port);
	host_check_eq_u64(24, timer.bits);
	host_check(!timer.extended);

	fadt_set_legacy(body, 0x608, ACPI_FADT_PM_TMR_LEN, ACPI_FADT_FLAG_TMR_VAL_EXT);
	host_check_eq_u64(ACPI_TIMER_OK, fadt_parse(body, sizeof(body), &timer));
	host_check_eq_u64(0x608, timer.port);
	host_check_eq_u64(32, timer.bits);
}

HOST_TEST(acpi_fadt_pm_timer_prefers_x_pm_tmr_blk_and_falls_back_when_it_is_zero)
{
	uint8_t body[FADT_BODY_V5] = { 0 };
	struct acpi_pm_timer timer = { 0 };

	fadt_set_legacy(body, 0xb008, ACPI_FADT_PM_TMR_LEN, 0);
	gas_set(body_at(body, ACPI_FADT_OFF_X_PM_TMR_BLK), ACPI_GAS_SPACE_IO, 32, 0x1808);
	host_check_eq_u64(ACPI_TIMER_OK, fadt_parse(body, sizeof(body), &timer));
	host_check_eq_u64(0x1808, timer.port);
	host_check(timer.extended);

	gas_set(body_at(body, ACPI_FADT_OFF_X_PM_TMR_BLK), ACPI_GAS_SPACE_IO, 0, 0);
	host_check_eq_u64(ACPI_TIMER_OK, fadt_parse(body, sizeof(body), &timer));
	host_check_eq_u64(0xb008, timer.port);
	host_check(!timer.extended);

	/* A table too short to hold X_PM_TMR_BLK: its bytes are not read. */
	gas_set(body_at(body, ACPI_FADT_OFF_X_PM_TMR_BLK), ACPI_GAS_SPACE_IO, 32, 0x1808);
	host_check_eq_u64(ACPI_TIMER_OK,
			  fadt_parse(body, ACPI_FADT_X_PM_TMR_END - ACPI_HEADER_SIZE - 1, &timer));
	host_check_eq_u64(0xb008, timer.port);
}

HOST_TEST(acpi_fadt_pm_timer_refuses_what_is_not_a_pm_timer)
{
	uint8_t body[FADT_BODY_V5] = { 0 };
	struct acpi_pm_timer timer = { .port = 0x1234 };

	host_check_eq_u64(ACPI_TIMER_NONE, fadt_parse(body, sizeof(body), &timer));
	fadt_set_legacy(body, 0xb008, 0, 0); /* PM_TMR_LEN 0: not supported */
	host_check_eq_u64(ACPI_TIMER_NONE, fadt_parse(body, sizeof(body), &timer));
	fadt_set_legacy(body, 0xb008, ACPI_FADT_PM_TMR_LEN, ACPI_FADT_FLAG_HW_REDUCED_ACPI);
	host_check_eq_u64(ACPI_TIMER_HW_REDUCED, fadt_parse(body, sizeof(body), &timer));
	fadt_set_legacy(body, 0xb008, ACPI_FADT_PM_TMR_LEN, 0);
	gas_set(body_at(body, ACPI_FADT_OFF_X_PM_TMR_BLK), ACPI_GAS_SPACE_MEMORY, 32, 0xfed00000);
	host_check_eq_u64(ACPI_TIMER_NOT_IO, fadt_parse(body, sizeof(body), &timer));
	gas_set(body_at(body, ACPI_FADT_OFF_X_PM_TMR_BLK), ACPI_GAS_SPACE_IO, 32, 0x10000);
	host_check_eq_u64(ACPI_TIMER_NOT_IO, fadt_parse(body, sizeof(body), &timer));
	host_check_eq_u64(0x1234, timer.port); /* untouched on error */
	/* Shorter than ACPI 1.0's FADT. */
	host_check_eq_u64(ACPI_TIMER_BAD_TABLE, fadt_parse(body, FADT_BODY_V1 - 1, &timer));
}

HOST_TEST(acpi_fadt_pm_timer_checks_signature_length_and_checksum)
{
	uint8_t body[FADT_BODY_V1] = { 0 }, bytes[256];
	struct acpi_pm_timer timer;
	size_t length;

	fadt_set_legacy(body, 0xb008, ACPI_FADT_PM_TMR_LEN, 0);
	length = build_table(bytes, ACPI_FADT_SIGNATURE, 1, body, sizeof(body));
	host_check_eq_u64(ACPI_TIMER_OK, acpi_fadt_pm_timer(bytes, length, &timer));
	host_check_eq_u64(ACPI_TIMER_BAD_TABLE, acpi_fadt_pm_timer(bytes, length - 1, &timer));
	bytes[ACPI_FADT_OFF_PM_TMR_BLK]++;
	host_check_eq_u64(ACPI_TIMER_BAD_TABLE, acpi_fadt_pm_timer(bytes, length, &timer));
	length = build_table(bytes, ACPI_HPET_SIGNATURE, 1, body, sizeof(body));
	host_check_eq_u64(ACPI_TIMER_BAD_TABLE, acpi_fadt_pm_timer(bytes, length, &timer));
	host_check_eq_u64(ACPI_TIMER_BAD_TABLE, acpi_fadt_pm_timer(bytes, 10, &timer));
}

HOST_TEST(acpi_hpet_parse_takes_the_base_address_in_memory)
{
	uint8_t body[HPET_BODY] = { 0 }, bytes[128], *table;
	struct acpi_hpet hpet = { 0 };
	size_t length;

	put_u32(body_at(body, ACPI_HPET_OFF_BLOCK_ID), 0x8086a201);
	gas_set(body_at(body, ACPI_HPET_OFF_BASE_ADDRESS), ACPI_GAS_SPACE_MEMORY, 64, 0xfed00000);
	*body_at(body, ACPI_HPET_OFF_NUMBER) = 2;
	length = build_table(bytes, ACPI_HPET_SIGNATURE, 1, body, sizeof(body));
	table = exact_copy(bytes, length);
	host_check_eq_u64(ACPI_TIMER_OK, acpi_hpet_parse(table, length, &hpet));
	host_check_eq_u64(0xfed00000, hpet.address);
	host_check_eq_u64(2, hpet.number);
	host_check_eq_u64(ACPI_TIMER_BAD_TABLE, acpi_hpet_parse(table, length - 1, &hpet));
	free(table);

	gas_set(body_at(body, ACPI_HPET_OFF_BASE_ADDRESS), ACPI_GAS_SPACE_IO, 64, 0xfed00000);
	length = build_table(bytes, ACPI_HPET_SIGNATURE, 1, body, sizeof(body));
	host_check_eq_u64(ACPI_TIMER_NOT_MEMORY, acpi_hpet_parse(bytes, length, &hpet));
	gas_set(body_at(body, ACPI_HPET_OFF_BASE_ADDRESS), ACPI_GAS_SPACE_MEMORY, 64, 0);
	length = build_table(bytes, ACPI_HPET_SIGNATURE, 1, body, sizeof(body));
	host_check_eq_u64(ACPI_TIMER_NONE, acpi_hpet_parse(bytes, length, &hpet));
	/* A table cut before the base address. */
	length = build_table(bytes, ACPI_HPET_SIGNATURE, 1, body, 8);
	host_check_eq_u64(ACPI_TIMER_BAD_TABLE, acpi_hpet_parse(bytes, length, &hpet));
}

HOST_TEST(hpet_hz_is_the_period_in_femtoseconds_inverted)
{
	/* QEMU's HPET: 10 ns. The ICH's: 69.841279 ns, 14.318180 MHz. */
	host_check_eq_u64(100000000,
			  hpet_hz(10000000ull << HPET_CAPABILITIES_PERIOD_SHIFT | 0xa201));
	host_check_eq_u64(14318180, hpet_hz(69841279ull << HPET_CAPABILITIES_PERIOD_SHIFT));
	host_check_eq_u64(10000000,
			  hpet_hz((uint64_t)HPET_PERIOD_MAX_FS << HPET_CAPABILITIES_PERIOD_SHIFT));
	host_check_eq_u64(
		0, hpet_hz((uint64_t)(HPET_PERIOD_MAX_FS + 1) << HPET_CAPABILITIES_PERIOD_SHIFT));
	host_check_eq_u64(0, hpet_hz(0x8086a201)); /* period 0 */
	host_check_eq_u64(0, hpet_hz(UINT64_MAX)); /* no device: all ones */
}

HOST_TEST(counter_delta_wraps_at_the_counter_width)
{
	host_check_eq_u64(5, counter_delta(10, 15, 24));
	host_check_eq_u64(0x20, counter_delta(0xfffff0, 0x10, 24));
	host_check_eq_u64(0x20, counter_delta(0xfffffff0, 0x10, 32));
	/* A 24-bit timer read through a 32-bit port: bits above 23 are ignored. */
	host_check_eq_u64(0x20, counter_delta(0xaafffff0, 0x55000010, 24));
	host_check_eq_u64(3, counter_delta(UINT64_MAX - 1, 1, 64));
	host_check_eq_u64(0, counter_delta(7, 7, 32));
	/* Deltas that need the counter's top bit: all but one tick of a wrap. */
	host_check_eq_u64(0xffffff, counter_delta(1, 0, 24));
	host_check_eq_u64(0xc0000000, counter_delta(0x10, 0xc0000010, 32));
}
