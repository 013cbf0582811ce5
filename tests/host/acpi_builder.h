/* SPDX-License-Identifier: MIT */
/* Host-test builders for ACPI tables, and a fake physical address space to find them in. */
#ifndef TESTS_HOST_ACPI_BUILDER_H
#define TESTS_HOST_ACPI_BUILDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/acpi.h"

/* A MADT body: the two header fields, then entries appended by the madt_add_* helpers. */
struct madt_builder {
	uint8_t body[8192]; /* 300 x2APIC entries and then some */
	size_t length;
};

#define FAKE_MAPS_LOGGED 32

/* A fake physical address space: [base, base + sizeof(bytes)) is mappable, nothing else. */
struct fake_phys {
	uint64_t base;
	size_t used; /* bytes handed out by phys_add_table() */
	uint8_t bytes[8192];
	unsigned int maps; /* map calls, the first FAKE_MAPS_LOGGED logged below */
	struct {
		uint64_t phys;
		size_t length;
	} map_log[FAKE_MAPS_LOGGED];
};

/* The tables of a small machine; the MADT is the fifth of the root's seven entries. */
struct machine {
	uint64_t facp, hpet, madt, ssdt, root;
	size_t madt_length;
	uint64_t entries[7];
};

/* Field writers, byte by byte so that they do not share the parser's memcpy loads. */
void put_u16(uint8_t *at, uint16_t value);
void put_u32(uint8_t *at, uint32_t value);
void put_u64(uint8_t *at, uint64_t value);
/* Set the byte at checksum_offset so that bytes[0, length) sums to zero. */
void fix_checksum(uint8_t *bytes, size_t length, size_t checksum_offset);
/* A heap copy of exactly length bytes, so that ASan reports any read past the end. */
uint8_t *exact_copy(const void *bytes, size_t length);
/* Write an RSDP: revision 0 fills the 20 v1 bytes, revision 2 all 36. */
void build_rsdp(uint8_t *at, uint8_t revision, uint32_t rsdt, uint64_t xsdt);
/* Write a table header and body, then the checksum; returns the table's Length. */
size_t build_table(uint8_t *at, const char signature[4], uint8_t revision, const void *body,
		   size_t body_length);
void madt_begin(struct madt_builder *b, uint32_t local_apic_address, uint32_t flags);
/* Append an entry of the given type and length; returns it for the caller to fill. Aborts when
 * body[] has no room. */
uint8_t *madt_add_raw(struct madt_builder *b, uint8_t type, uint8_t length);
void madt_add_local_apic(struct madt_builder *b, uint8_t uid, uint8_t apic_id, uint32_t flags);
void madt_add_x2apic(struct madt_builder *b, uint32_t x2apic_id, uint32_t flags, uint32_t uid);
void madt_add_override(struct madt_builder *b, uint64_t address);
/*
 * Parse the MADT built from b, from a heap buffer of exactly its length. The buffer stays
 * allocated until the next call, for acpi_madt_next_cpu().
 */
enum acpi_error madt_parse_built(const struct madt_builder *b, uint8_t revision,
				 struct acpi_madt *madt);
const void *fake_map(uint64_t phys, size_t length, void *context);
void fake_phys_init(struct fake_phys *p, uint64_t base);
/* Place a table with body as its body; returns its physical address. */
uint64_t phys_add_table(struct fake_phys *p, const char signature[4], const void *body,
			size_t body_length);
/* Place an RSDT (extended false) or XSDT (extended true) listing entries. */
uint64_t phys_add_root(struct fake_phys *p, bool extended, const uint64_t *entries, size_t count);
void build_machine(struct fake_phys *p, bool extended, struct machine *m);
/*
 * Check the map calls logged since p->maps was reset: only the root and nonzero root entries
 * are mapped, only the root and found are mapped beyond their header, and the last call maps
 * found whole.
 */
void check_maps(const struct fake_phys *p, const struct machine *m, uint64_t found,
		size_t found_length);

#endif
