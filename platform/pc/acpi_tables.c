/* SPDX-License-Identifier: MIT */
/* Finding the firmware's ACPI tables in physical memory, for the parsers of lib/. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/paging.h"
#include "lib/acpi.h"
#include "lib/string.h"
#include "platform/pc/acpi_tables.h"

#define BDA_EBDA_SEGMENT 0x40e /* u16: the EBDA's real-mode segment */
#define EBDA_SEARCH_LENGTH 1024
#define BIOS_AREA_START 0xe0000ul
#define BIOS_AREA_LENGTH 0x20000ul

static const void *map_direct(uint64_t phys, size_t length, void *context)
{
	(void)context;
	if (phys >= DIRECT_MAP_LIMIT || length > DIRECT_MAP_LIMIT - phys)
		return NULL;
	return phys_to_virt(phys);
}

static const void *rsdp_scan(size_t *length)
{
	uint16_t ebda_segment;
	const void *found = NULL;

	memcpy(&ebda_segment, phys_to_virt(BDA_EBDA_SEGMENT), sizeof(ebda_segment));
	*length = ACPI_RSDP_V2_SIZE;
	if (ebda_segment)
		found = acpi_rsdp_find(phys_to_virt((uint64_t)ebda_segment << 4),
				       EBDA_SEARCH_LENGTH);
	return found ? found : acpi_rsdp_find(phys_to_virt(BIOS_AREA_START), BIOS_AREA_LENGTH);
}

enum acpi_error acpi_tables_find(const void *rsdp, size_t rsdp_length, const char signature[4],
				 const void **table, size_t *length)
{
	enum acpi_error error;
	uint64_t root;
	bool extended;

	if (!rsdp_length)
		rsdp = rsdp_scan(&rsdp_length);
	if (!rsdp)
		return ACPI_ERROR_NO_RSDP;
	error = acpi_rsdp_parse(rsdp, rsdp_length, &root, &extended);
	if (error)
		return error;
	return acpi_table_find(root, extended, signature, map_direct, NULL, table, length);
}
