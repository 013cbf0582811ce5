/* SPDX-License-Identifier: MIT */
/* Host-test builders for ACPI tables (tests/host/acpi_builder.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/acpi.h"
#include "tests/host/acpi_builder.h"
#include "tests/host/host_test.h"

/* Field writers, byte by byte so that they do not share the parser's memcpy loads. */
void put_u16(uint8_t *at, uint16_t value)
{
	at[0] = (uint8_t)value;
	at[1] = (uint8_t)(value >> 8);
}

void put_u32(uint8_t *at, uint32_t value)
{
	for (int i = 0; i < 4; i++)
		at[i] = (uint8_t)(value >> (8 * i));
}

void put_u64(uint8_t *at, uint64_t value)
{
	for (int i = 0; i < 8; i++)
		at[i] = (uint8_t)(value >> (8 * i));
}

/* Set the byte at checksum_offset so that bytes[0, length) sums to zero. */
void fix_checksum(uint8_t *bytes, size_t length, size_t checksum_offset)
{
	uint8_t sum = 0;

	bytes[checksum_offset] = 0;
	for (size_t i = 0; i < length; i++)
		sum = (uint8_t)(sum + bytes[i]);
	bytes[checksum_offset] = (uint8_t)(0u - sum);
}

/* A heap copy of exactly length bytes, so that ASan reports any read past the end. */
uint8_t *exact_copy(const void *bytes, size_t length)
{
	uint8_t *copy = malloc(length);

	memcpy(copy, bytes, length);
	return copy;
}

/* Write an RSDP: revision 0 fills the 20 v1 bytes, revision 2 all 36. */
void build_rsdp(uint8_t *at, uint8_t revision, uint32_t rsdt, uint64_t xsdt)
{
	memset(at, 0, revision >= 2 ? ACPI_RSDP_V2_SIZE : ACPI_RSDP_V1_SIZE);
	memcpy(at, "RSD PTR ", 8);
	memcpy(at + 9, "SWYARD", 6);
	at[15] = revision;
	put_u32(at + 16, rsdt);
	fix_checksum(at, ACPI_RSDP_V1_SIZE, 8);
	if (revision >= 2) {
		put_u32(at + 20, ACPI_RSDP_V2_SIZE);
		put_u64(at + 24, xsdt);
		fix_checksum(at, ACPI_RSDP_V2_SIZE, 32);
	}
}

/* Write a table header and body, then the checksum; returns the table's Length. */
size_t build_table(uint8_t *at, const char signature[4], uint8_t revision, const void *body,
		   size_t body_length)
{
	size_t length = ACPI_HEADER_SIZE + body_length;

	memset(at, 0, ACPI_HEADER_SIZE);
	memcpy(at, signature, 4);
	put_u32(at + 4, (uint32_t)length);
	at[8] = revision;
	memcpy(at + 10, "SWYARD", 6);
	memcpy(at + 16, "SWITCHYD", 8);
	memcpy(at + ACPI_HEADER_SIZE, body, body_length);
	fix_checksum(at, length, 9);
	return length;
}

void madt_begin(struct madt_builder *b, uint32_t local_apic_address, uint32_t flags)
{
	memset(b, 0, sizeof(*b));
	put_u32(b->body, local_apic_address);
	put_u32(b->body + 4, flags);
	b->length = 8;
}

/* Append an entry of the given type and length; returns it for the caller to fill. */
uint8_t *madt_add_raw(struct madt_builder *b, uint8_t type, uint8_t length)
{
	uint8_t *entry = b->body + b->length;

	if (b->length + (length < 2 ? 2 : length) > sizeof(b->body))
		abort(); /* a test that builds more than the builder holds is wrong */
	entry[0] = type;
	entry[1] = length;
	b->length += length < 2 ? 2 : length;
	return entry;
}

void madt_add_local_apic(struct madt_builder *b, uint8_t uid, uint8_t apic_id, uint32_t flags)
{
	uint8_t *entry = madt_add_raw(b, 0, 8);

	entry[2] = uid;
	entry[3] = apic_id;
	put_u32(entry + 4, flags);
}

void madt_add_x2apic(struct madt_builder *b, uint32_t x2apic_id, uint32_t flags, uint32_t uid)
{
	uint8_t *entry = madt_add_raw(b, 9, 16);

	put_u16(entry + 2, 0);
	put_u32(entry + 4, x2apic_id);
	put_u32(entry + 8, flags);
	put_u32(entry + 12, uid);
}

void madt_add_override(struct madt_builder *b, uint64_t address)
{
	put_u64(madt_add_raw(b, 5, 12) + 4, address);
}

/* Parse the MADT built from b, from a heap buffer of exactly its length, kept until the next call.
 */
enum acpi_error madt_parse_built(const struct madt_builder *b, uint8_t revision,
				 struct acpi_madt *madt)
{
	static uint8_t staging[ACPI_HEADER_SIZE + sizeof(b->body)];
	static uint8_t *table;
	size_t length = build_table(staging, "APIC", revision, b->body, b->length);

	free(table);
	table = exact_copy(staging, length);
	return acpi_madt_parse(table, length, madt);
}

const void *fake_map(uint64_t phys, size_t length, void *context)
{
	struct fake_phys *p = context;

	if (p->maps < FAKE_MAPS_LOGGED) {
		p->map_log[p->maps].phys = phys;
		p->map_log[p->maps].length = length;
	}
	p->maps++;
	if (phys < p->base || phys - p->base > sizeof(p->bytes) ||
	    length > sizeof(p->bytes) - (phys - p->base))
		return NULL;
	return p->bytes + (phys - p->base);
}

void fake_phys_init(struct fake_phys *p, uint64_t base)
{
	memset(p, 0, sizeof(*p));
	p->base = base;
	p->used = 3; /* tables start misaligned */
}

/* Place a table with body as its body; returns its physical address. */
uint64_t phys_add_table(struct fake_phys *p, const char signature[4], const void *body,
			size_t body_length)
{
	uint64_t phys = p->base + p->used;

	p->used += build_table(p->bytes + p->used, signature, 1, body, body_length) + 5;
	return phys;
}

/* Place an RSDT (extended false) or XSDT (extended true) listing entries. */
uint64_t phys_add_root(struct fake_phys *p, bool extended, const uint64_t *entries, size_t count)
{
	uint8_t body[64 * 8];
	size_t entry_size = extended ? 8 : 4;

	for (size_t i = 0; i < count; i++) {
		if (extended)
			put_u64(body + i * 8, entries[i]);
		else
			put_u32(body + i * 4, (uint32_t)entries[i]);
	}
	return phys_add_table(p, extended ? "XSDT" : "RSDT", body, count * entry_size);
}

void build_machine(struct fake_phys *p, bool extended, struct machine *m)
{
	static const uint8_t filler[20] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
	struct madt_builder b;

	m->facp = phys_add_table(p, "FACP", filler, sizeof(filler));
	m->hpet = phys_add_table(p, "HPET", filler, 4);
	madt_begin(&b, 0xfee00000, ACPI_MADT_FLAG_PCAT_COMPAT);
	madt_add_local_apic(&b, 0, 0, ACPI_LOCAL_APIC_FLAG_ENABLED);
	m->madt = phys_add_table(p, "APIC", b.body, b.length);
	m->madt_length = ACPI_HEADER_SIZE + b.length;
	m->ssdt = phys_add_table(p, "SSDT", filler, 7);
	/* An unmappable entry and a null entry come first; both are skipped. */
	m->entries[0] = p->base + sizeof(p->bytes) + 0x1000;
	m->entries[1] = 0;
	m->entries[2] = m->facp;
	m->entries[3] = m->hpet;
	m->entries[4] = m->madt;
	m->entries[5] = m->ssdt;
	m->entries[6] = m->facp;
	m->root = phys_add_root(p, extended, m->entries, 7);
}

/*
 * Check the map calls logged since p->maps was reset: only the root and nonzero root entries
 * are mapped, only the root and found are mapped beyond their header, and the last call maps
 * found whole.
 */
void check_maps(const struct fake_phys *p, const struct machine *m, uint64_t found,
		size_t found_length)
{
	if (!host_check(p->maps > 0 && p->maps <= FAKE_MAPS_LOGGED))
		return;
	for (unsigned int i = 0; i < p->maps; i++) {
		uint64_t phys = p->map_log[i].phys;
		bool listed = phys == m->root;

		for (size_t e = 0; e < 7; e++)
			listed = listed || (m->entries[e] != 0 && phys == m->entries[e]);
		host_checkf(listed, "map %u: phys %#llx is not the root or a root entry", i,
			    (unsigned long long)phys);
		host_checkf(p->map_log[i].length == ACPI_HEADER_SIZE || phys == m->root ||
				    phys == found,
			    "map %u: %zu bytes at %#llx", i, p->map_log[i].length,
			    (unsigned long long)phys);
	}
	host_check_eq_u64(found, p->map_log[p->maps - 1].phys);
	host_check_eq_u64(found_length, p->map_log[p->maps - 1].length);
}
