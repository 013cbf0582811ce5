/* SPDX-License-Identifier: MIT */
/* Host tests of lib/acpi.c over tables built in memory and a fake physical address space. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/acpi.h"
#include "tests/host/host_test.h"

/* Field writers, byte by byte so that they do not share the parser's memcpy loads. */
static void put_u16(uint8_t *at, uint16_t value)
{
	at[0] = (uint8_t)value;
	at[1] = (uint8_t)(value >> 8);
}

static void put_u32(uint8_t *at, uint32_t value)
{
	for (int i = 0; i < 4; i++)
		at[i] = (uint8_t)(value >> (8 * i));
}

static void put_u64(uint8_t *at, uint64_t value)
{
	for (int i = 0; i < 8; i++)
		at[i] = (uint8_t)(value >> (8 * i));
}

/* Set the byte at checksum_offset so that bytes[0, length) sums to zero. */
static void fix_checksum(uint8_t *bytes, size_t length, size_t checksum_offset)
{
	uint8_t sum = 0;

	bytes[checksum_offset] = 0;
	for (size_t i = 0; i < length; i++)
		sum = (uint8_t)(sum + bytes[i]);
	bytes[checksum_offset] = (uint8_t)(0u - sum);
}

/* A heap copy of exactly length bytes, so that ASan reports any read past the end. */
static uint8_t *exact_copy(const void *bytes, size_t length)
{
	uint8_t *copy = malloc(length);

	memcpy(copy, bytes, length);
	return copy;
}

/* Write an RSDP: revision 0 fills the 20 v1 bytes, revision 2 all 36. */
static void build_rsdp(uint8_t *at, uint8_t revision, uint32_t rsdt, uint64_t xsdt)
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
static size_t build_table(uint8_t *at, const char signature[4], uint8_t revision, const void *body,
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

/* A MADT body: the two header fields, then entries appended by the madt_add_* helpers. */
struct madt_builder {
	uint8_t body[2048];
	size_t length;
};

static void madt_begin(struct madt_builder *b, uint32_t local_apic_address, uint32_t flags)
{
	memset(b, 0, sizeof(*b));
	put_u32(b->body, local_apic_address);
	put_u32(b->body + 4, flags);
	b->length = 8;
}

/* Append an entry of the given type and length; returns it for the caller to fill. */
static uint8_t *madt_add_raw(struct madt_builder *b, uint8_t type, uint8_t length)
{
	uint8_t *entry = b->body + b->length;

	entry[0] = type;
	entry[1] = length;
	b->length += length < 2 ? 2 : length;
	return entry;
}

static void madt_add_local_apic(struct madt_builder *b, uint8_t uid, uint8_t apic_id,
				uint32_t flags)
{
	uint8_t *entry = madt_add_raw(b, 0, 8);

	entry[2] = uid;
	entry[3] = apic_id;
	put_u32(entry + 4, flags);
}

static void madt_add_x2apic(struct madt_builder *b, uint32_t x2apic_id, uint32_t flags,
			    uint32_t uid)
{
	uint8_t *entry = madt_add_raw(b, 9, 16);

	put_u16(entry + 2, 0);
	put_u32(entry + 4, x2apic_id);
	put_u32(entry + 8, flags);
	put_u32(entry + 12, uid);
}

static void madt_add_override(struct madt_builder *b, uint64_t address)
{
	put_u64(madt_add_raw(b, 5, 12) + 4, address);
}

/* Parse the MADT built from b, from a heap buffer of exactly its length. */
static enum acpi_error madt_parse_built(const struct madt_builder *b, uint8_t revision,
					struct acpi_madt *madt)
{
	static uint8_t staging[ACPI_HEADER_SIZE + sizeof(b->body)];
	size_t length = build_table(staging, "APIC", revision, b->body, b->length);
	uint8_t *table = exact_copy(staging, length);
	enum acpi_error error = acpi_madt_parse(table, length, madt);

	free(table);
	return error;
}

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

static const void *fake_map(uint64_t phys, size_t length, void *context)
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

static void fake_phys_init(struct fake_phys *p, uint64_t base)
{
	memset(p, 0, sizeof(*p));
	p->base = base;
	p->used = 3; /* tables start misaligned */
}

/* Place a table with body as its body; returns its physical address. */
static uint64_t phys_add_table(struct fake_phys *p, const char signature[4], const void *body,
			       size_t body_length)
{
	uint64_t phys = p->base + p->used;

	p->used += build_table(p->bytes + p->used, signature, 1, body, body_length) + 5;
	return phys;
}

/* Place an RSDT (extended false) or XSDT (extended true) listing entries. */
static uint64_t phys_add_root(struct fake_phys *p, bool extended, const uint64_t *entries,
			      size_t count)
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

/* The tables of a small machine; the MADT is the fifth of the root's seven entries. */
struct machine {
	uint64_t facp, hpet, madt, ssdt, root;
	size_t madt_length;
	uint64_t entries[7];
};

static void build_machine(struct fake_phys *p, bool extended, struct machine *m)
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
static void check_maps(const struct fake_phys *p, const struct machine *m, uint64_t found,
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

HOST_TEST(acpi_rsdp_find_returns_the_rsdp_at_a_16_byte_boundary)
{
	_Alignas(16) uint8_t area[256] = { 0 };

	build_rsdp(area + 48, 0, 0x7ffe0000, 0);
	host_check(acpi_rsdp_find(area, sizeof(area)) == area + 48);
	/* A valid RSDP whose last byte is the range's last byte, and one a byte short. */
	memset(area, 0, sizeof(area));
	build_rsdp(area + 224, 0, 0x7ffe0000, 0);
	host_check(acpi_rsdp_find(area, 224 + ACPI_RSDP_V1_SIZE) == area + 224);
	host_check(acpi_rsdp_find(area, 224 + ACPI_RSDP_V1_SIZE - 1) == NULL);
	host_check(acpi_rsdp_find(area, 0) == NULL);
}

HOST_TEST(acpi_rsdp_find_ignores_misaligned_and_bad_checksum_candidates)
{
	_Alignas(16) uint8_t area[256] = { 0 };

	build_rsdp(area + 40, 0, 0x7ffe0000, 0);
	host_check(acpi_rsdp_find(area, sizeof(area)) == NULL);

	memset(area, 0, sizeof(area));
	build_rsdp(area + 32, 0, 0x7ffe0000, 0);
	area[16 + 32]++; /* RsdtAddress, under the checksum */
	host_check(acpi_rsdp_find(area, sizeof(area)) == NULL);
	/* The scan goes on past a bad candidate. */
	build_rsdp(area + 96, 0, 0x7ffe0000, 0);
	host_check(acpi_rsdp_find(area, sizeof(area)) == area + 96);
}

HOST_TEST(acpi_rsdp_parse_v1_returns_the_rsdt)
{
	uint8_t bytes[ACPI_RSDP_V2_SIZE];
	uint8_t *rsdp;
	uint64_t root = 0;
	bool extended = true;

	build_rsdp(bytes, 0, 0x7ffe1234, 0);
	rsdp = exact_copy(bytes, ACPI_RSDP_V1_SIZE); /* a v1 RSDP has only 20 bytes */
	host_check_eq_u64(ACPI_OK, acpi_rsdp_parse(rsdp, ACPI_RSDP_V1_SIZE, &root, &extended));
	host_check_eq_u64(0x7ffe1234, root);
	host_check(!extended);
	free(rsdp);
}

HOST_TEST(acpi_rsdp_parse_v2_prefers_the_xsdt)
{
	uint8_t bytes[ACPI_RSDP_V2_SIZE];
	uint64_t root = 0;
	bool extended = false;

	build_rsdp(bytes, 2, 0x7ffe1234, 0x123456789abcull);
	host_check_eq_u64(ACPI_OK, acpi_rsdp_parse(bytes, sizeof(bytes), &root, &extended));
	host_check_eq_u64(0x123456789abcull, root);
	host_check(extended);

	build_rsdp(bytes, 2, 0x7ffe1234, 0);
	host_check_eq_u64(ACPI_OK, acpi_rsdp_parse(bytes, sizeof(bytes), &root, &extended));
	host_check_eq_u64(0x7ffe1234, root);
	host_check(!extended);
}

HOST_TEST(acpi_rsdp_parse_rejects_bad_checksums_and_lengths)
{
	uint8_t bytes[ACPI_RSDP_V2_SIZE + 4] = { 0 };
	uint64_t root = 0xdead;
	bool extended = true;

	/* Only the extended checksum covers XsdtAddress. */
	build_rsdp(bytes, 2, 0x7ffe1234, 0x123456789abcull);
	bytes[24]++;
	host_check_eq_u64(ACPI_ERROR_RSDP_CHECKSUM,
			  acpi_rsdp_parse(bytes, ACPI_RSDP_V2_SIZE, &root, &extended));
	host_check_eq_u64(0xdead, root);
	host_check(extended);

	build_rsdp(bytes, 0, 0x7ffe1234, 0);
	bytes[16]++;
	host_check_eq_u64(ACPI_ERROR_RSDP_CHECKSUM,
			  acpi_rsdp_parse(bytes, ACPI_RSDP_V2_SIZE, &root, &extended));

	build_rsdp(bytes, 0, 0x7ffe1234, 0);
	bytes[0] = 'X';
	host_check_eq_u64(ACPI_ERROR_NO_RSDP,
			  acpi_rsdp_parse(bytes, ACPI_RSDP_V2_SIZE, &root, &extended));

	build_rsdp(bytes, 2, 0x7ffe1234, 0x1000);
	host_check_eq_u64(ACPI_ERROR_RSDP_LENGTH,
			  acpi_rsdp_parse(bytes, ACPI_RSDP_V2_SIZE - 1, &root, &extended));
	host_check_eq_u64(ACPI_ERROR_RSDP_LENGTH,
			  acpi_rsdp_parse(bytes, ACPI_RSDP_V1_SIZE - 1, &root, &extended));
	/* A revision-2 RSDP cut to the v1 size: its Length field is past the buffer. */
	uint8_t *cut = exact_copy(bytes, ACPI_RSDP_V1_SIZE);

	host_check_eq_u64(ACPI_ERROR_RSDP_LENGTH,
			  acpi_rsdp_parse(cut, ACPI_RSDP_V1_SIZE, &root, &extended));
	free(cut);
	/* A Length field past the buffer, and one below the v2 size. */
	put_u32(bytes + 20, ACPI_RSDP_V2_SIZE + 4);
	fix_checksum(bytes, ACPI_RSDP_V1_SIZE, 8);
	fix_checksum(bytes, ACPI_RSDP_V2_SIZE + 4, 32);
	host_check_eq_u64(ACPI_ERROR_RSDP_LENGTH,
			  acpi_rsdp_parse(bytes, ACPI_RSDP_V2_SIZE, &root, &extended));
	host_check_eq_u64(ACPI_OK, acpi_rsdp_parse(bytes, sizeof(bytes), &root, &extended));
	put_u32(bytes + 20, ACPI_RSDP_V1_SIZE);
	fix_checksum(bytes, ACPI_RSDP_V1_SIZE, 8);
	host_check_eq_u64(ACPI_ERROR_RSDP_LENGTH,
			  acpi_rsdp_parse(bytes, sizeof(bytes), &root, &extended));
	host_check_eq_u64(0x1000, root);
}

HOST_TEST(acpi_table_find_through_the_rsdt_finds_the_madt)
{
	static struct fake_phys p;
	struct machine m;
	const void *table = NULL;
	size_t length = 0;

	fake_phys_init(&p, 0x7ff00000);
	build_machine(&p, false, &m);
	host_check_eq_u64(ACPI_OK,
			  acpi_table_find(m.root, false, "APIC", fake_map, &p, &table, &length));
	host_check(table == p.bytes + (m.madt - p.base));
	host_check_eq_u64(m.madt_length, length);
	check_maps(&p, &m, m.madt, m.madt_length);

	p.maps = 0;
	host_check_eq_u64(ACPI_OK,
			  acpi_table_find(m.root, false, "SSDT", fake_map, &p, &table, &length));
	host_check(table == p.bytes + (m.ssdt - p.base));
	check_maps(&p, &m, m.ssdt, ACPI_HEADER_SIZE + 7);
	host_check_eq_u64(ACPI_ERROR_NOT_FOUND,
			  acpi_table_find(m.root, false, "BERT", fake_map, &p, &table, &length));
}

HOST_TEST(acpi_table_find_through_the_xsdt_uses_64_bit_entries)
{
	static struct fake_phys p;
	struct machine m;
	const void *table = NULL;
	size_t length = 0;

	/* Above 4 GiB: an entry truncated to 32 bits would not map. */
	fake_phys_init(&p, 0x100000000ull);
	build_machine(&p, true, &m);
	host_check_eq_u64(ACPI_OK,
			  acpi_table_find(m.root, true, "APIC", fake_map, &p, &table, &length));
	host_check(table == p.bytes + (m.madt - p.base));
	host_check_eq_u64(m.madt_length, length);
	check_maps(&p, &m, m.madt, m.madt_length);
	p.maps = 0;
	host_check_eq_u64(ACPI_OK,
			  acpi_table_find(m.root, true, "SSDT", fake_map, &p, &table, &length));
	host_check(table == p.bytes + (m.ssdt - p.base));
	check_maps(&p, &m, m.ssdt, ACPI_HEADER_SIZE + 7);
	/* An XSDT read as an RSDT. */
	host_check_eq_u64(ACPI_ERROR_TABLE_SIGNATURE,
			  acpi_table_find(m.root, false, "APIC", fake_map, &p, &table, &length));
}

HOST_TEST(acpi_table_find_rejects_a_bad_root)
{
	static struct fake_phys p;
	struct machine m;
	const void *table = NULL;
	size_t length = 0;
	uint8_t *root;

	fake_phys_init(&p, 0x7ff00000);
	build_machine(&p, false, &m);
	root = p.bytes + (m.root - p.base);

	root[ACPI_HEADER_SIZE]++; /* the first entry */
	host_check_eq_u64(ACPI_ERROR_TABLE_CHECKSUM,
			  acpi_table_find(m.root, false, "APIC", fake_map, &p, &table, &length));
	root[ACPI_HEADER_SIZE]--;
	/* A bad signature wins over a Length that cannot be mapped: that Length is not used. */
	root[0] = 'X';
	put_u32(root + 4, sizeof(p.bytes));
	host_check_eq_u64(ACPI_ERROR_TABLE_SIGNATURE,
			  acpi_table_find(m.root, false, "APIC", fake_map, &p, &table, &length));
	root[0] = 'R';
	put_u32(root + 4, ACPI_HEADER_SIZE - 1);
	host_check_eq_u64(ACPI_ERROR_TABLE_LENGTH,
			  acpi_table_find(m.root, false, "APIC", fake_map, &p, &table, &length));
	put_u32(root + 4, sizeof(p.bytes)); /* runs past the mappable range */
	host_check_eq_u64(ACPI_ERROR_MAP,
			  acpi_table_find(m.root, false, "APIC", fake_map, &p, &table, &length));
	host_check_eq_u64(ACPI_ERROR_MAP,
			  acpi_table_find(0x1000, false, "APIC", fake_map, &p, &table, &length));
	host_check(table == NULL);
}

HOST_TEST(acpi_table_find_rejects_a_found_table_with_a_bad_checksum)
{
	static struct fake_phys p;
	struct machine m;
	const void *table = NULL;
	size_t length = 0;
	uint8_t *madt;

	fake_phys_init(&p, 0x7ff00000);
	build_machine(&p, false, &m);
	madt = p.bytes + (m.madt - p.base);
	madt[m.madt_length - 1]++;
	host_check_eq_u64(ACPI_ERROR_TABLE_CHECKSUM,
			  acpi_table_find(m.root, false, "APIC", fake_map, &p, &table, &length));
	madt[m.madt_length - 1]--;
	put_u32(madt + 4, 8);
	host_check_eq_u64(ACPI_ERROR_TABLE_LENGTH,
			  acpi_table_find(m.root, false, "APIC", fake_map, &p, &table, &length));
	host_check(table == NULL);
}

HOST_TEST(acpi_madt_parse_reads_local_apic_x2apic_and_override_entries)
{
	struct madt_builder b;
	static struct acpi_madt madt;

	madt_begin(&b, 0xfee00000, ACPI_MADT_FLAG_PCAT_COMPAT);
	madt_add_local_apic(&b, 0, 0, ACPI_LOCAL_APIC_FLAG_ENABLED);
	madt_add_local_apic(&b, 1, 2, ACPI_LOCAL_APIC_FLAG_ENABLED);
	put_u32(madt_add_raw(&b, 1, 12) + 4, 0xfec00000); /* an I/O APIC, skipped */
	madt_add_raw(&b, 0x7f, 3); /* unknown, odd length: what follows is misaligned */
	madt_add_local_apic(&b, 2, 4, 0);
	madt_add_local_apic(&b, 3, 6, ACPI_LOCAL_APIC_FLAG_ONLINE_CAPABLE);
	madt_add_x2apic(&b, 0x100, ACPI_LOCAL_APIC_FLAG_ENABLED, 0x12345678);
	madt_add_override(&b, 0xfedcba98fee00000ull);
	madt_add_raw(&b, 0x80, 2);

	if (!host_check_eq_u64(ACPI_OK, madt_parse_built(&b, 5, &madt)))
		return;
	host_check_eq_u64(0xfedcba98fee00000ull, madt.local_apic_address);
	host_check_eq_u64(ACPI_MADT_FLAG_PCAT_COMPAT, madt.flags);
	host_check_eq_u64(5, madt.revision);
	host_check_eq_u64(0, madt.cpus_dropped);
	if (!host_check_eq_u64(5, madt.cpu_count))
		return;

	static const struct acpi_cpu expected[] = {
		{ .apic_id = 0, .processor_uid = 0, .enabled = true },
		{ .apic_id = 2, .processor_uid = 1, .enabled = true },
		{ .apic_id = 4, .processor_uid = 2 },
		{ .apic_id = 6, .processor_uid = 3, .online_capable = true },
		{ .apic_id = 0x100, .processor_uid = 0x12345678, .enabled = true, .x2apic = true },
	};
	for (unsigned int i = 0; i < madt.cpu_count; i++) {
		const struct acpi_cpu *cpu = &madt.cpus[i];

		host_checkf(cpu->apic_id == expected[i].apic_id &&
				    cpu->processor_uid == expected[i].processor_uid &&
				    cpu->enabled == expected[i].enabled &&
				    cpu->online_capable == expected[i].online_capable &&
				    cpu->x2apic == expected[i].x2apic,
			    "cpu %u: apic %#x uid %#x enabled %d online %d x2apic %d", i,
			    cpu->apic_id, cpu->processor_uid, cpu->enabled, cpu->online_capable,
			    cpu->x2apic);
	}
}

HOST_TEST(acpi_madt_parse_keeps_the_header_address_without_an_override)
{
	struct madt_builder b;
	static struct acpi_madt madt;

	madt_begin(&b, 0xfee00000, 0);
	madt_add_x2apic(&b, 7, 0, 9);
	host_check_eq_u64(ACPI_OK, madt_parse_built(&b, 3, &madt));
	host_check_eq_u64(0xfee00000, madt.local_apic_address);
	host_check_eq_u64(0, madt.flags);
	host_check_eq_u64(1, madt.cpu_count);
	host_check(madt.cpus[0].x2apic && !madt.cpus[0].enabled);

	madt_begin(&b, 0xfee00000, 0); /* no entries at all */
	host_check_eq_u64(ACPI_OK, madt_parse_built(&b, 3, &madt));
	host_check_eq_u64(0, madt.cpu_count);
}

/* A MADT spelled out byte by byte from ACPI 6.5 §5.2.12, independent of lib/acpi.h's offsets. */
HOST_TEST(acpi_madt_parse_reads_a_literal_table)
{
	uint8_t table[] = {
		'A',  'P',  'I',  'C',	80,   0,    0,	  0, /* Signature, Length */
		5,    0,    'S',  'W',	'Y',  'A',  'R',  'D', /* Revision, Checksum, OEMID */
		'S',  'W',  'I',  'T',	'C',  'H',  'Y',  'D', /* OEM Table ID */
		1,    0,    0,	  0,	'S',  'W',  'Y',  'D',	1,
		0,    0,    0, /* OEM/Creator ID/Revision */
		0x00, 0x00, 0xe0, 0xfe, 1,    0,    0,	  0, /* Local APIC address, Flags */
		0,    8,    7,	  3,	1,    0,    0,	  0, /* Local APIC: UID 7, APIC ID 3,
								Enabled */
		9,    16,   0,	  0,	0x34, 0x12, 0,	  0, /* x2APIC: ID 0x1234 */
		2,    0,    0,	  0,	0x21, 0x43, 0x65, 0x87, /* Online Capable, UID 0x87654321 */
		5,    12,   0,	  0,	0,    0,    0xd0, 0xfe, 0,
		0,    0,    0, /* Override: 0xfed00000 */
	};
	static struct acpi_madt madt;

	host_check_eq_u64(sizeof(table), table[4]);
	fix_checksum(table, sizeof(table), 9);
	if (!host_check_eq_u64(ACPI_OK, acpi_madt_parse(table, sizeof(table), &madt)))
		return;
	host_check_eq_u64(0xfed00000, madt.local_apic_address);
	host_check_eq_u64(1, madt.flags);
	if (!host_check_eq_u64(2, madt.cpu_count))
		return;
	host_check_eq_u64(3, madt.cpus[0].apic_id);
	host_check_eq_u64(7, madt.cpus[0].processor_uid);
	host_check(madt.cpus[0].enabled && !madt.cpus[0].online_capable && !madt.cpus[0].x2apic);
	host_check_eq_u64(0x1234, madt.cpus[1].apic_id);
	host_check_eq_u64(0x87654321, madt.cpus[1].processor_uid);
	host_check(!madt.cpus[1].enabled && madt.cpus[1].online_capable && madt.cpus[1].x2apic);
}

HOST_TEST(acpi_madt_parse_rejects_bad_entry_lengths)
{
	/*
	 * The bad entry: its type, its length field, the bytes of it that the table holds, and
	 * whether an 8-byte entry follows, so that reading a short entry by its type's size stays
	 * inside the table.
	 */
	static const struct {
		const char *name;
		uint8_t type, length, present;
		bool followed;
	} bad_entries[] = {
		{ "zero length", 0x7f, 0, 2, true },
		{ "length 1", 0x7f, 1, 2, true },
		{ "short local APIC", 0, 7, 7, true },
		{ "short override", 5, 11, 11, true },
		{ "short x2APIC", 9, 15, 15, true },
		{ "short x2APIC at the end", 9, 15, 15, false },
		{ "unknown type past the end", 0x7f, 40, 16, false },
		{ "local APIC past the end", 0, 8, 7, false },
	};
	struct madt_builder b;
	static struct acpi_madt madt;

	for (size_t i = 0; i < sizeof(bad_entries) / sizeof(bad_entries[0]); i++) {
		size_t entry_offset;
		enum acpi_error error;

		madt_begin(&b, 0xfee00000, 0);
		madt_add_local_apic(&b, 0, 0, ACPI_LOCAL_APIC_FLAG_ENABLED);
		entry_offset = b.length;
		madt_add_raw(&b, bad_entries[i].type, bad_entries[i].length);
		b.length = entry_offset + bad_entries[i].present;
		if (bad_entries[i].followed)
			madt_add_raw(&b, 0x7f, 8);
		error = madt_parse_built(&b, 5, &madt);
		host_checkf(error == ACPI_ERROR_ENTRY_LENGTH, "%s: got %s", bad_entries[i].name,
			    acpi_error_name(error));
	}

	/* One byte left after the last entry: a type without a length. */
	madt_begin(&b, 0xfee00000, 0);
	madt_add_local_apic(&b, 0, 0, ACPI_LOCAL_APIC_FLAG_ENABLED);
	b.body[b.length++] = 0;
	host_check_eq_u64(ACPI_ERROR_ENTRY_LENGTH, madt_parse_built(&b, 5, &madt));
}

HOST_TEST(acpi_madt_parse_checks_the_table_header)
{
	struct madt_builder b;
	static struct acpi_madt madt;
	static uint8_t table[ACPI_HEADER_SIZE + 64];
	size_t length;

	madt_begin(&b, 0xfee00000, 0);
	madt_add_local_apic(&b, 0, 0, ACPI_LOCAL_APIC_FLAG_ENABLED);
	length = build_table(table, "APIC", 5, b.body, b.length);
	host_check_eq_u64(ACPI_OK, acpi_madt_parse(table, length, &madt));
	/* Bytes past Length are not entries. */
	host_check_eq_u64(ACPI_OK, acpi_madt_parse(table, sizeof(table), &madt));
	host_check_eq_u64(1, madt.cpu_count);
	host_check_eq_u64(ACPI_ERROR_TABLE_LENGTH, acpi_madt_parse(table, length - 1, &madt));
	host_check_eq_u64(ACPI_ERROR_TABLE_LENGTH, acpi_madt_parse(table, 20, &madt));
	table[length - 1]++;
	host_check_eq_u64(ACPI_ERROR_TABLE_CHECKSUM, acpi_madt_parse(table, length, &madt));

	length = build_table(table, "FACP", 5, b.body, b.length);
	host_check_eq_u64(ACPI_ERROR_TABLE_SIGNATURE, acpi_madt_parse(table, length, &madt));
	/* Length below the Flags field. */
	length = build_table(table, "APIC", 5, b.body, 4);
	host_check_eq_u64(ACPI_ERROR_TABLE_LENGTH, acpi_madt_parse(table, length, &madt));
}

HOST_TEST(acpi_madt_parse_counts_cpus_beyond_the_maximum)
{
	struct madt_builder b;
	static struct acpi_madt madt;

	madt_begin(&b, 0xfee00000, 0);
	for (unsigned int i = 0; i < ACPI_CPUS_MAX + 4; i++)
		madt_add_local_apic(&b, (uint8_t)i, (uint8_t)i, ACPI_LOCAL_APIC_FLAG_ENABLED);
	madt_add_x2apic(&b, 0x200, ACPI_LOCAL_APIC_FLAG_ENABLED, 0x200);
	madt_add_override(&b, 0xfee10000); /* still read after the array is full */
	host_check_eq_u64(ACPI_OK, madt_parse_built(&b, 5, &madt));
	host_check_eq_u64(ACPI_CPUS_MAX, madt.cpu_count);
	host_check_eq_u64(5, madt.cpus_dropped);
	host_check_eq_u64(ACPI_CPUS_MAX - 1, madt.cpus[ACPI_CPUS_MAX - 1].apic_id);
	host_check_eq_u64(0xfee10000, madt.local_apic_address);
}

HOST_TEST(acpi_finds_and_parses_the_madt_from_the_rsdp)
{
	static struct fake_phys p;
	static struct acpi_madt madt;
	struct machine m;
	_Alignas(16) uint8_t bios_area[512] = { 0 };
	const void *rsdp, *table;
	size_t length;
	uint64_t root;
	bool extended;

	fake_phys_init(&p, 0x100000000ull);
	build_machine(&p, true, &m);
	build_rsdp(bios_area + 0x130, 2, 0, m.root);
	rsdp = acpi_rsdp_find(bios_area, sizeof(bios_area));
	if (!host_check(rsdp == bios_area + 0x130))
		return;
	host_check_eq_u64(ACPI_OK,
			  acpi_rsdp_parse(rsdp, sizeof(bios_area) - 0x130, &root, &extended));
	host_check_eq_u64(m.root, root);
	if (!host_check_eq_u64(ACPI_OK, acpi_table_find(root, extended, "APIC", fake_map, &p,
							&table, &length)))
		return;
	host_check_eq_u64(ACPI_OK, acpi_madt_parse(table, length, &madt));
	host_check_eq_u64(1, madt.cpu_count);
	host_check_eq_u64(0xfee00000, madt.local_apic_address);
}

HOST_TEST(acpi_error_names_are_distinct)
{
	host_check_str("RSDP checksum mismatch", acpi_error_name(ACPI_ERROR_RSDP_CHECKSUM));
	for (int i = ACPI_OK; i <= ACPI_ERROR_MAP; i++) {
		const char *name = acpi_error_name((enum acpi_error)i);

		if (!host_checkf(name != NULL && name[0] != '\0', "error %d has no name", i))
			continue;
		for (int j = ACPI_OK; j < i; j++)
			host_checkf(strcmp(name, acpi_error_name((enum acpi_error)j)) != 0,
				    "errors %d and %d share the name \"%s\"", j, i, name);
	}
	host_check(acpi_error_name((enum acpi_error)99) != NULL);
}
