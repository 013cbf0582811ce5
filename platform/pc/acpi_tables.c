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

/* The RSDP in the first KiB of the EBDA, else in 0xE0000-0xFFFFF (ACPI 6.5 §5.2.5.1). */
static const void *rsdp_scan(size_t *length, const char **source)
{
	uint16_t ebda_segment;
	const void *found = NULL;

	memcpy(&ebda_segment, phys_to_virt(BDA_EBDA_SEGMENT), sizeof(ebda_segment));
	*length = ACPI_RSDP_V2_SIZE;
	*source = "EBDA";
	if (ebda_segment)
		found = acpi_rsdp_find(phys_to_virt((uint64_t)ebda_segment << 4),
				       EBDA_SEARCH_LENGTH);
	if (found)
		return found;
	*source = "BIOS area scan";
	return acpi_rsdp_find(phys_to_virt(BIOS_AREA_START), BIOS_AREA_LENGTH);
}

enum acpi_error acpi_tables_root(const void *rsdp, size_t rsdp_length, struct acpi_root *root)
{
	root->source = "multiboot2";
	if (!rsdp_length)
		rsdp = rsdp_scan(&rsdp_length, &root->source);
	if (!rsdp)
		return ACPI_ERROR_NO_RSDP;
	return acpi_rsdp_parse(rsdp, rsdp_length, &root->address, &root->extended);
}

enum acpi_error acpi_tables_find_in(const struct acpi_root *root, const char signature[4],
				    const void **table, size_t *length)
{
	return acpi_table_find(root->address, root->extended, signature, map_direct, NULL, table,
			       length);
}

enum acpi_error acpi_tables_find(const void *rsdp, size_t rsdp_length, const char signature[4],
				 const void **table, size_t *length)
{
	struct acpi_root root;
	enum acpi_error error = acpi_tables_root(rsdp, rsdp_length, &root);

	return error ? error : acpi_tables_find_in(&root, signature, table, length);
}
