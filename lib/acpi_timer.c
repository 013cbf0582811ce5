/* SPDX-License-Identifier: MIT */
/* The FADT's PM timer and the HPET table, parsed from bytes (lib/acpi_timer.h). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/acpi.h"
#include "lib/acpi_timer.h"
#include "lib/load.h"
#include "lib/string.h"

/* The header's signature, a Length in [minimum, length], and a zero byte sum over Length. */
static bool table_ok(const void *table, size_t length, const char signature[4], size_t minimum)
{
	uint32_t table_length;

	if (length < ACPI_HEADER_SIZE || memcmp(table, signature, ACPI_SIGNATURE_SIZE) != 0)
		return false;
	table_length = load_u32(table, ACPI_HEADER_OFF_LENGTH);
	if (table_length < minimum || table_length > length)
		return false;
	return acpi_checksum(table, table_length) == 0;
}

const char *acpi_timer_error_name(enum acpi_timer_error error)
{
	switch (error) {
	case ACPI_TIMER_OK:
		return "ok";
	case ACPI_TIMER_BAD_TABLE:
		return "bad table (signature, length or checksum)";
	case ACPI_TIMER_HW_REDUCED:
		return "the FADT says HW_REDUCED_ACPI (no fixed hardware, no PM timer)";
	case ACPI_TIMER_NONE:
		return "no timer address in the table";
	case ACPI_TIMER_NOT_IO:
		return "the PM timer is not in system I/O space";
	case ACPI_TIMER_NOT_MEMORY:
		return "the HPET is not in system memory";
	}
	return "unknown error";
}

enum acpi_timer_error acpi_fadt_pm_timer(const void *table, size_t length,
					 struct acpi_pm_timer *timer)
{
	uint32_t flags, table_length, port;
	uint64_t x_address = 0;
	bool extended = false;

	if (!table_ok(table, length, ACPI_FADT_SIGNATURE, ACPI_FADT_V1_SIZE))
		return ACPI_TIMER_BAD_TABLE;
	flags = load_u32(table, ACPI_FADT_OFF_FLAGS);
	if (flags & ACPI_FADT_FLAG_HW_REDUCED_ACPI)
		return ACPI_TIMER_HW_REDUCED;
	table_length = load_u32(table, ACPI_HEADER_OFF_LENGTH);
	if (table_length >= ACPI_FADT_X_PM_TMR_END)
		x_address = load_u64(table, ACPI_FADT_OFF_X_PM_TMR_BLK + ACPI_GAS_OFF_ADDRESS);
	if (x_address) {
		/* Linux acpi_parse_fadt(): an X_PM_TMR_BLK outside I/O space means no PM timer. */
		if (load_u8(table, ACPI_FADT_OFF_X_PM_TMR_BLK + ACPI_GAS_OFF_SPACE_ID) !=
			    ACPI_GAS_SPACE_IO ||
		    x_address > UINT16_MAX)
			return ACPI_TIMER_NOT_IO;
		port = (uint32_t)x_address;
		extended = true;
	} else {
		port = load_u32(table, ACPI_FADT_OFF_PM_TMR_BLK);
		if (load_u8(table, ACPI_FADT_OFF_PM_TMR_LEN) != ACPI_FADT_PM_TMR_LEN)
			port = 0;
		if (port > UINT16_MAX)
			return ACPI_TIMER_NOT_IO;
	}
	if (port == 0)
		return ACPI_TIMER_NONE;
	timer->port = (uint16_t)port;
	timer->bits = flags & ACPI_FADT_FLAG_TMR_VAL_EXT ? 32 : 24;
	timer->extended = extended;
	return ACPI_TIMER_OK;
}

enum acpi_timer_error acpi_hpet_parse(const void *table, size_t length, struct acpi_hpet *hpet)
{
	uint64_t address;

	if (!table_ok(table, length, ACPI_HPET_SIGNATURE, ACPI_HPET_SIZE))
		return ACPI_TIMER_BAD_TABLE;
	if (load_u8(table, ACPI_HPET_OFF_BASE_ADDRESS + ACPI_GAS_OFF_SPACE_ID) !=
	    ACPI_GAS_SPACE_MEMORY)
		return ACPI_TIMER_NOT_MEMORY;
	address = load_u64(table, ACPI_HPET_OFF_BASE_ADDRESS + ACPI_GAS_OFF_ADDRESS);
	if (address == 0)
		return ACPI_TIMER_NONE;
	hpet->address = address;
	hpet->number = load_u8(table, ACPI_HPET_OFF_NUMBER);
	return ACPI_TIMER_OK;
}

uint64_t hpet_hz(uint64_t capabilities)
{
	uint64_t period = capabilities >> HPET_CAPABILITIES_PERIOD_SHIFT;

	if (period == 0 || period > HPET_PERIOD_MAX_FS)
		return 0;
	return (FEMTOSECONDS_PER_SECOND + period / 2) / period;
}
