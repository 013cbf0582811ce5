/* SPDX-License-Identifier: MIT */
/* Host tests of lib/acpi.c: parsing the MADT. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/acpi.h"
#include "tests/host/acpi_builder.h"
#include "tests/host/host_test.h"

/* Read up to max CPU entries of madt through acpi_madt_next_cpu(); returns how many it gave. */
static unsigned int read_cpus(const struct acpi_madt *madt, struct acpi_cpu *cpus, unsigned int max)
{
	struct acpi_cpu cpu;
	size_t cursor = 0;
	unsigned int count = 0;

	while (acpi_madt_next_cpu(madt, &cursor, &cpu)) {
		if (count < max)
			cpus[count] = cpu;
		count++;
	}
	return count;
}

static bool cpu_equal(const struct acpi_cpu *a, const struct acpi_cpu *b)
{
	return a->apic_id == b->apic_id && a->processor_uid == b->processor_uid &&
	       a->enabled == b->enabled && a->online_capable == b->online_capable &&
	       a->x2apic == b->x2apic;
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
	if (!host_check_eq_u64(5, madt.cpu_count))
		return;

	static const struct acpi_cpu expected[] = {
		{ .apic_id = 0, .processor_uid = 0, .enabled = true },
		{ .apic_id = 2, .processor_uid = 1, .enabled = true },
		{ .apic_id = 4, .processor_uid = 2 },
		{ .apic_id = 6, .processor_uid = 3, .online_capable = true },
		{ .apic_id = 0x100, .processor_uid = 0x12345678, .enabled = true, .x2apic = true },
	};
	struct acpi_cpu cpus[5];

	if (!host_check_eq_u64(5, read_cpus(&madt, cpus, 5)))
		return;
	for (unsigned int i = 0; i < 5; i++) {
		const struct acpi_cpu *cpu = &cpus[i];

		host_checkf(cpu_equal(cpu, &expected[i]),
			    "cpu %u: apic %#x uid %#x enabled %d online %d x2apic %d", i,
			    cpu->apic_id, cpu->processor_uid, cpu->enabled, cpu->online_capable,
			    cpu->x2apic);
	}
}

HOST_TEST(acpi_madt_parse_keeps_the_header_address_without_an_override)
{
	struct madt_builder b;
	static struct acpi_madt madt;
	struct acpi_cpu cpu;

	madt_begin(&b, 0xfee00000, 0);
	madt_add_x2apic(&b, 7, 0, 9);
	host_check_eq_u64(ACPI_OK, madt_parse_built(&b, 3, &madt));
	host_check_eq_u64(0xfee00000, madt.local_apic_address);
	host_check_eq_u64(0, madt.flags);
	host_check_eq_u64(1, madt.cpu_count);
	host_check_eq_u64(1, read_cpus(&madt, &cpu, 1));
	host_check(cpu.x2apic && !cpu.enabled && cpu.apic_id == 7 && cpu.processor_uid == 9);

	madt_begin(&b, 0xfee00000, 0); /* no entries at all */
	host_check_eq_u64(ACPI_OK, madt_parse_built(&b, 3, &madt));
	host_check_eq_u64(0, madt.cpu_count);
	host_check_eq_u64(0, read_cpus(&madt, &cpu, 1));
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
	struct acpi_cpu cpus[2];

	host_check_eq_u64(sizeof(table), table[4]);
	fix_checksum(table, sizeof(table), 9);
	if (!host_check_eq_u64(ACPI_OK, acpi_madt_parse(table, sizeof(table), &madt)))
		return;
	host_check_eq_u64(0xfed00000, madt.local_apic_address);
	host_check_eq_u64(1, madt.flags);
	if (!host_check_eq_u64(2, madt.cpu_count) ||
	    !host_check_eq_u64(2, read_cpus(&madt, cpus, 2)))
		return;
	host_check_eq_u64(3, cpus[0].apic_id);
	host_check_eq_u64(7, cpus[0].processor_uid);
	host_check(cpus[0].enabled && !cpus[0].online_capable && !cpus[0].x2apic);
	host_check_eq_u64(0x1234, cpus[1].apic_id);
	host_check_eq_u64(0x87654321, cpus[1].processor_uid);
	host_check(!cpus[1].enabled && cpus[1].online_capable && cpus[1].x2apic);
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

static void add_io_apic(struct madt_builder *b, uint8_t id, uint32_t address, uint32_t gsi_base)
{
	uint8_t *entry = madt_add_raw(b, ACPI_MADT_TYPE_IO_APIC, ACPI_IO_APIC_SIZE);

	entry[ACPI_IO_APIC_OFF_ID] = id;
	put_u32(entry + ACPI_IO_APIC_OFF_ADDRESS, address);
	put_u32(entry + ACPI_IO_APIC_OFF_GSI_BASE, gsi_base);
}

static void add_interrupt_override(struct madt_builder *b, uint8_t bus, uint8_t irq, uint32_t gsi,
				   uint16_t flags)
{
	uint8_t *entry =
		madt_add_raw(b, ACPI_MADT_TYPE_INTERRUPT_OVERRIDE, ACPI_INTERRUPT_OVERRIDE_SIZE);

	entry[ACPI_INTERRUPT_OVERRIDE_OFF_BUS] = bus;
	entry[ACPI_INTERRUPT_OVERRIDE_OFF_SOURCE] = irq;
	put_u32(entry + ACPI_INTERRUPT_OVERRIDE_OFF_GSI, gsi);
	put_u16(entry + ACPI_INTERRUPT_OVERRIDE_OFF_FLAGS, flags);
}

/* QEMU's MADT: one I/O APIC at GSI 0, IRQ0 (the PIT) on GSI 2, IRQ9 level high. */
HOST_TEST(acpi_madt_parse_reads_io_apics_and_isa_overrides)
{
	struct madt_builder b;
	static struct acpi_madt madt;
	const struct acpi_io_apic *io_apic;
	unsigned int input = 0;

	madt_begin(&b, 0xfee00000, ACPI_MADT_FLAG_PCAT_COMPAT);
	madt_add_local_apic(&b, 0, 0, ACPI_LOCAL_APIC_FLAG_ENABLED);
	add_io_apic(&b, 0, 0xfec00000, 0);
	add_io_apic(&b, 1, 0xfec01000, 24);
	add_interrupt_override(&b, 0, 0, 2, 0);
	add_interrupt_override(&b, 0, 9, 9, 0xd);
	add_interrupt_override(&b, 1, 5, 40, 0); /* not ISA: ignored */
	if (!host_check_eq_u64(ACPI_OK, madt_parse_built(&b, 5, &madt)))
		return;
	host_check_eq_u64(2, madt.io_apic_count);
	host_check_eq_u64(0xfec01000, madt.io_apics[1].address);
	host_check_eq_u64(24, madt.io_apics[1].gsi_base);
	host_check_eq_u64(2, madt.override_count);
	host_check_eq_u64(0xd, madt.overrides[1].flags);
	host_check_eq_u64(2, acpi_madt_isa_gsi(&madt, 0));
	host_check_eq_u64(1, acpi_madt_isa_gsi(&madt, 1)); /* identity without an override */
	host_check_eq_u64(5, acpi_madt_isa_gsi(&madt, 5)); /* the bus-1 entry does not count */
	io_apic = acpi_madt_io_apic_of(&madt, 2, &input);
	host_check(io_apic == &madt.io_apics[0]);
	host_check_eq_u64(2, input);
	io_apic = acpi_madt_io_apic_of(&madt, 30, &input); /* the highest base not above 30 */
	host_check(io_apic == &madt.io_apics[1]);
	host_check_eq_u64(6, input);
}

HOST_TEST(acpi_madt_parse_refuses_a_short_io_apic_entry)
{
	struct madt_builder b;
	static struct acpi_madt madt;

	madt_begin(&b, 0xfee00000, 0);
	madt_add_raw(&b, ACPI_MADT_TYPE_IO_APIC, ACPI_IO_APIC_SIZE - 1);
	host_check_eq_u64(ACPI_ERROR_ENTRY_LENGTH, madt_parse_built(&b, 5, &madt));
	madt_begin(&b, 0xfee00000, 0);
	madt_add_raw(&b, ACPI_MADT_TYPE_INTERRUPT_OVERRIDE, ACPI_INTERRUPT_OVERRIDE_SIZE - 1);
	host_check_eq_u64(ACPI_ERROR_ENTRY_LENGTH, madt_parse_built(&b, 5, &madt));
}
