/* SPDX-License-Identifier: MIT */
/* Host tests of lib/acpi.c: finding the RSDP and tables through the RSDT and XSDT. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/acpi.h"
#include "tests/host/acpi_builder.h"
#include "tests/host/host_test.h"

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
