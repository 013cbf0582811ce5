/* SPDX-License-Identifier: MIT */
/* ACPI table parsing: RSDP, RSDT/XSDT lookup and the MADT's CPU list. No hardware access. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/acpi.h"
#include "lib/load.h"
#include "lib/string.h"

/* Whether the table at base starts with the 4-character signature. */
static bool signature_is(const void *base, const char *signature)
{
	return memcmp((const uint8_t *)base + ACPI_HEADER_OFF_SIGNATURE, signature,
		      ACPI_SIGNATURE_SIZE) == 0;
}

uint8_t acpi_checksum(const void *base, size_t length)
{
	const uint8_t *bytes = base;
	uint8_t sum = 0;

	for (size_t i = 0; i < length; i++)
		sum = (uint8_t)(sum + bytes[i]);
	return sum;
}

static bool checksum_ok(const void *base, size_t length)
{
	return acpi_checksum(base, length) == 0;
}

const char *acpi_error_name(enum acpi_error error)
{
	switch (error) {
	case ACPI_OK:
		return "ok";
	case ACPI_ERROR_NO_RSDP:
		return "no RSDP signature";
	case ACPI_ERROR_RSDP_CHECKSUM:
		return "RSDP checksum mismatch";
	case ACPI_ERROR_RSDP_LENGTH:
		return "RSDP length out of range";
	case ACPI_ERROR_TABLE_SIGNATURE:
		return "unexpected table signature";
	case ACPI_ERROR_TABLE_LENGTH:
		return "table length out of range";
	case ACPI_ERROR_TABLE_CHECKSUM:
		return "table checksum mismatch";
	case ACPI_ERROR_NOT_FOUND:
		return "table not found";
	case ACPI_ERROR_ENTRY_LENGTH:
		return "bad MADT entry length";
	case ACPI_ERROR_MAP:
		return "cannot map table";
	}
	return "unknown ACPI error";
}

/* The v1 part: signature and checksum over the first ACPI_RSDP_V1_SIZE bytes. */
static enum acpi_error rsdp_check_v1(const void *rsdp)
{
	if (memcmp(rsdp, ACPI_RSDP_SIGNATURE, ACPI_RSDP_SIGNATURE_SIZE) != 0)
		return ACPI_ERROR_NO_RSDP;
	if (!checksum_ok(rsdp, ACPI_RSDP_V1_SIZE))
		return ACPI_ERROR_RSDP_CHECKSUM;
	return ACPI_OK;
}

const void *acpi_rsdp_find(const void *start, size_t length)
{
	const uint8_t *bytes = start;

	if (!start || length < ACPI_RSDP_V1_SIZE)
		return NULL;
	for (size_t offset = 0; offset <= length - ACPI_RSDP_V1_SIZE; offset += ACPI_RSDP_ALIGN) {
		if (rsdp_check_v1(bytes + offset) == ACPI_OK)
			return bytes + offset;
	}
	return NULL;
}

enum acpi_error acpi_rsdp_parse(const void *rsdp, size_t length, uint64_t *root, bool *extended)
{
	enum acpi_error error;

	if (length < ACPI_RSDP_V1_SIZE)
		return ACPI_ERROR_RSDP_LENGTH;
	error = rsdp_check_v1(rsdp);
	if (error != ACPI_OK)
		return error;
	if (load_u8(rsdp, ACPI_RSDP_OFF_REVISION) >= ACPI_RSDP_REVISION_EXTENDED) {
		uint32_t rsdp_length;
		uint64_t xsdt;

		if (length < ACPI_RSDP_V2_SIZE)
			return ACPI_ERROR_RSDP_LENGTH;
		rsdp_length = load_u32(rsdp, ACPI_RSDP_OFF_LENGTH);
		if (rsdp_length < ACPI_RSDP_V2_SIZE || rsdp_length > length)
			return ACPI_ERROR_RSDP_LENGTH;
		if (!checksum_ok(rsdp, rsdp_length))
			return ACPI_ERROR_RSDP_CHECKSUM;
		xsdt = load_u64(rsdp, ACPI_RSDP_OFF_XSDT_ADDRESS);
		if (xsdt != 0) {
			*root = xsdt;
			*extended = true;
			return ACPI_OK;
		}
	}
	*root = load_u32(rsdp, ACPI_RSDP_OFF_RSDT_ADDRESS);
	*extended = false;
	return ACPI_OK;
}

/*
 * Check a mapped table of buffer_length bytes: signature, a Length field in
 * [min_length, buffer_length], and the checksum over Length. Sets *table_length.
 */
static enum acpi_error table_check(const void *table, size_t buffer_length, const char *signature,
				   size_t min_length, size_t *table_length)
{
	uint32_t length;

	if (buffer_length < ACPI_HEADER_SIZE)
		return ACPI_ERROR_TABLE_LENGTH;
	if (!signature_is(table, signature))
		return ACPI_ERROR_TABLE_SIGNATURE;
	length = load_u32(table, ACPI_HEADER_OFF_LENGTH);
	if (length < min_length || length > buffer_length)
		return ACPI_ERROR_TABLE_LENGTH;
	if (!checksum_ok(table, length))
		return ACPI_ERROR_TABLE_CHECKSUM;
	*table_length = length;
	return ACPI_OK;
}

/*
 * Map the table at phys: its header, then, only when the signature matches (a Length is not
 * trusted before that), the whole table by its Length; then check it. Sets *table and *length on
 * ACPI_OK.
 */
static enum acpi_error table_map(uint64_t phys, const char *signature, acpi_map map, void *context,
				 const void **table, size_t *length)
{
	const void *header = map(phys, ACPI_HEADER_SIZE, context);
	uint32_t header_length;
	const void *whole;
	enum acpi_error error;

	if (!header)
		return ACPI_ERROR_MAP;
	if (!signature_is(header, signature))
		return ACPI_ERROR_TABLE_SIGNATURE;
	header_length = load_u32(header, ACPI_HEADER_OFF_LENGTH);
	whole = map(phys, header_length, context);
	if (!whole)
		return ACPI_ERROR_MAP;
	error = table_check(whole, header_length, signature, ACPI_HEADER_SIZE, length);
	if (error == ACPI_OK)
		*table = whole;
	return error;
}

enum acpi_error acpi_table_find(uint64_t root, bool extended, const char signature[4], acpi_map map,
				void *context, const void **table, size_t *length)
{
	size_t entry_size = extended ? ACPI_XSDT_ENTRY_SIZE : ACPI_RSDT_ENTRY_SIZE;
	const void *root_table;
	size_t root_length;
	enum acpi_error error;

	error = table_map(root, extended ? ACPI_XSDT_SIGNATURE : ACPI_RSDT_SIGNATURE, map, context,
			  &root_table, &root_length);
	if (error != ACPI_OK)
		return error;
	for (size_t offset = ACPI_HEADER_SIZE; offset + entry_size <= root_length;
	     offset += entry_size) {
		uint64_t phys =
			extended ? load_u64(root_table, offset) : load_u32(root_table, offset);
		const void *header, *found;
		size_t found_length;

		if (phys == 0)
			continue;
		header = map(phys, ACPI_HEADER_SIZE, context);
		if (!header || !signature_is(header, signature))
			continue;
		error = table_map(phys, signature, map, context, &found, &found_length);
		if (error != ACPI_OK)
			return error;
		*table = found;
		*length = found_length;
		return ACPI_OK;
	}
	return ACPI_ERROR_NOT_FOUND;
}

/* The size of the entry types parsed here, 0 for the types skipped by their length. */
static size_t madt_entry_min_size(uint8_t type)
{
	switch (type) {
	case ACPI_MADT_TYPE_LOCAL_APIC:
		return ACPI_LOCAL_APIC_SIZE;
	case ACPI_MADT_TYPE_IO_APIC:
		return ACPI_IO_APIC_SIZE;
	case ACPI_MADT_TYPE_INTERRUPT_OVERRIDE:
		return ACPI_INTERRUPT_OVERRIDE_SIZE;
	case ACPI_MADT_TYPE_LOCAL_APIC_OVERRIDE:
		return ACPI_LOCAL_APIC_OVERRIDE_SIZE;
	case ACPI_MADT_TYPE_LOCAL_X2APIC:
		return ACPI_LOCAL_X2APIC_SIZE;
	}
	return 0;
}

/* Decode a type-0 or type-9 entry whose length was checked; false for other types. */
static bool madt_cpu_entry(const uint8_t *entry, struct acpi_cpu *cpu)
{
	uint32_t flags;

	switch (load_u8(entry, ACPI_MADT_ENTRY_OFF_TYPE)) {
	case ACPI_MADT_TYPE_LOCAL_APIC:
		cpu->apic_id = load_u8(entry, ACPI_LOCAL_APIC_OFF_APIC_ID);
		cpu->processor_uid = load_u8(entry, ACPI_LOCAL_APIC_OFF_PROCESSOR_UID);
		flags = load_u32(entry, ACPI_LOCAL_APIC_OFF_FLAGS);
		cpu->x2apic = false;
		break;
	case ACPI_MADT_TYPE_LOCAL_X2APIC:
		cpu->apic_id = load_u32(entry, ACPI_LOCAL_X2APIC_OFF_X2APIC_ID);
		cpu->processor_uid = load_u32(entry, ACPI_LOCAL_X2APIC_OFF_PROCESSOR_UID);
		flags = load_u32(entry, ACPI_LOCAL_X2APIC_OFF_FLAGS);
		cpu->x2apic = true;
		break;
	default:
		return false;
	}
	cpu->enabled = (flags & ACPI_LOCAL_APIC_FLAG_ENABLED) != 0;
	cpu->online_capable = (flags & ACPI_LOCAL_APIC_FLAG_ONLINE_CAPABLE) != 0;
	return true;
}

bool acpi_madt_next_cpu(const struct acpi_madt *madt, size_t *cursor, struct acpi_cpu *cpu)
{
	size_t offset = *cursor ? *cursor : ACPI_MADT_OFF_ENTRIES;

	if (!madt->table)
		return false;
	while (offset < madt->length) {
		const uint8_t *entry = (const uint8_t *)madt->table + offset;

		offset += load_u8(entry, ACPI_MADT_ENTRY_OFF_LENGTH);
		if (madt_cpu_entry(entry, cpu)) {
			*cursor = offset;
			return true;
		}
	}
	*cursor = offset;
	return false;
}

static void madt_add_io_apic(struct acpi_madt *madt, const uint8_t *entry)
{
	if (madt->io_apic_count == ACPI_IO_APICS_MAX)
		return;
	madt->io_apics[madt->io_apic_count++] = (struct acpi_io_apic){
		.id = load_u8(entry, ACPI_IO_APIC_OFF_ID),
		.address = load_u32(entry, ACPI_IO_APIC_OFF_ADDRESS),
		.gsi_base = load_u32(entry, ACPI_IO_APIC_OFF_GSI_BASE),
	};
}

static void madt_add_override(struct acpi_madt *madt, const uint8_t *entry)
{
	if (load_u8(entry, ACPI_INTERRUPT_OVERRIDE_OFF_BUS) != 0 ||
	    madt->override_count == ACPI_INTERRUPT_OVERRIDES_MAX)
		return;
	madt->overrides[madt->override_count++] = (struct acpi_interrupt_override){
		.source = load_u8(entry, ACPI_INTERRUPT_OVERRIDE_OFF_SOURCE),
		.gsi = load_u32(entry, ACPI_INTERRUPT_OVERRIDE_OFF_GSI),
		.flags = load_u16(entry, ACPI_INTERRUPT_OVERRIDE_OFF_FLAGS),
	};
}

uint32_t acpi_madt_isa_gsi(const struct acpi_madt *madt, uint8_t irq)
{
	for (unsigned int i = 0; i < madt->override_count; i++)
		if (madt->overrides[i].source == irq)
			return madt->overrides[i].gsi;
	return irq;
}

const struct acpi_io_apic *acpi_madt_io_apic_of(const struct acpi_madt *madt, uint32_t gsi,
						unsigned int *input)
{
	const struct acpi_io_apic *found = NULL;

	for (unsigned int i = 0; i < madt->io_apic_count; i++) {
		const struct acpi_io_apic *io_apic = &madt->io_apics[i];

		if (io_apic->gsi_base <= gsi && (!found || io_apic->gsi_base > found->gsi_base))
			found = io_apic;
	}
	if (found)
		*input = gsi - found->gsi_base;
	return found;
}

enum acpi_error acpi_madt_parse(const void *table, size_t length, struct acpi_madt *madt)
{
	size_t table_length;
	enum acpi_error error;

	error = table_check(table, length, ACPI_MADT_SIGNATURE, ACPI_MADT_OFF_ENTRIES,
			    &table_length);
	if (error != ACPI_OK)
		return error;
	memset(madt, 0, sizeof(*madt));
	madt->table = table;
	madt->length = table_length;
	madt->local_apic_address = load_u32(table, ACPI_MADT_OFF_LOCAL_APIC_ADDRESS);
	madt->flags = load_u32(table, ACPI_MADT_OFF_FLAGS);
	madt->revision = load_u8(table, ACPI_HEADER_OFF_REVISION);

	for (size_t offset = ACPI_MADT_OFF_ENTRIES; offset < table_length;) {
		const uint8_t *entry = (const uint8_t *)table + offset;
		uint8_t type, entry_length;

		if (table_length - offset < ACPI_MADT_ENTRY_HEADER_SIZE)
			return ACPI_ERROR_ENTRY_LENGTH;
		type = load_u8(entry, ACPI_MADT_ENTRY_OFF_TYPE);
		entry_length = load_u8(entry, ACPI_MADT_ENTRY_OFF_LENGTH);
		if (entry_length < ACPI_MADT_ENTRY_HEADER_SIZE ||
		    entry_length > table_length - offset ||
		    entry_length < madt_entry_min_size(type))
			return ACPI_ERROR_ENTRY_LENGTH;

		switch (type) {
		case ACPI_MADT_TYPE_LOCAL_APIC:
		case ACPI_MADT_TYPE_LOCAL_X2APIC:
			madt->cpu_count++;
			break;
		case ACPI_MADT_TYPE_IO_APIC:
			madt_add_io_apic(madt, entry);
			break;
		case ACPI_MADT_TYPE_INTERRUPT_OVERRIDE:
			madt_add_override(madt, entry);
			break;
		case ACPI_MADT_TYPE_LOCAL_APIC_OVERRIDE:
			madt->local_apic_address =
				load_u64(entry, ACPI_LOCAL_APIC_OVERRIDE_OFF_ADDRESS);
			break;
		}
		offset += entry_length;
	}
	return ACPI_OK;
}
