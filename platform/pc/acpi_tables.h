/* SPDX-License-Identifier: MIT */
/* The firmware's ACPI tables, found through the loader's RSDP or the BIOS areas (lib/acpi.h). */
#ifndef PLATFORM_PC_ACPI_TABLES_H
#define PLATFORM_PC_ACPI_TABLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/acpi.h"

/*
 * Find the table with signature: through rsdp[0, rsdp_length) when the loader gave one
 * (rsdp_length > 0), else through the RSDP in the first KiB of the EBDA or in 0xE0000-0xFFFFF
 * (ACPI 6.5 §5.2.5.1). Tables are read through the direct map, below 4 GiB. On ACPI_OK sets
 * *table and *length; the table stays mapped for good.
 */
enum acpi_error acpi_tables_find(const void *rsdp, size_t rsdp_length, const char signature[4],
				 const void **table, size_t *length);

/* The root table the RSDP names, and where the RSDP was found. */
struct acpi_root {
	const char *source; /* "multiboot2" (the loader's copy), "EBDA" or "BIOS area scan" */
	uint64_t address; /* the RSDT's or XSDT's physical address */
	bool extended; /* an XSDT: 64-bit entries */
};

/* acpi_tables_find() in two steps: the RSDP (the one search there is) and its root table... */
enum acpi_error acpi_tables_root(const void *rsdp, size_t rsdp_length, struct acpi_root *root);
/* ...then the table with signature among the root's entries. */
enum acpi_error acpi_tables_find_in(const struct acpi_root *root, const char signature[4],
				    const void **table, size_t *length);

#endif
