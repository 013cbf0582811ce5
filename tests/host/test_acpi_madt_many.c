/* SPDX-License-Identifier: MIT */
/* Host tests of lib/acpi.c: a MADT of 300 CPUs, Local APIC and x2APIC entries mixed. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "lib/acpi.h"
#include "tests/host/acpi_builder.h"
#include "tests/host/host_test.h"

#define MANY_CPUS 300

/*
 * CPU i of the table: a Local APIC entry (type 0, 8-bit APIC id i) for i < 250 when i % 3 != 2,
 * else a Local x2APIC entry (type 9) with APIC id 255 + i, so that ids 257-549 are beyond xAPIC
 * reach; the last one is 0xfffffffe, the largest an x2APIC id can be besides the broadcast.
 * Every 7th is disabled, every 11th (when not disabled) online-capable only; the rest enabled.
 */
static struct acpi_cpu many_cpu(unsigned int i)
{
	bool x2apic = i >= 250 || i % 3 == 2;
	struct acpi_cpu cpu = {
		.apic_id = x2apic ? 255 + i : i,
		.processor_uid = x2apic ? 0x10000 + i : i,
		.enabled = i % 7 != 3 && i % 11 != 5,
		.online_capable = i % 7 != 3 && i % 11 == 5,
		.x2apic = x2apic,
	};

	if (i == MANY_CPUS - 1)
		cpu.apic_id = 0xfffffffe;
	return cpu;
}

/*
 * The table: every CPU of many_cpu(), with an I/O APIC, an NMI source (type 3, 8 bytes) and an
 * entry of an unknown type and odd length (misaligning what follows) after every 50th.
 */
static void build_many(struct madt_builder *b)
{
	madt_begin(b, 0xfee00000, ACPI_MADT_FLAG_PCAT_COMPAT);
	for (unsigned int i = 0; i < MANY_CPUS; i++) {
		struct acpi_cpu cpu = many_cpu(i);
		uint32_t flags = (cpu.enabled ? ACPI_LOCAL_APIC_FLAG_ENABLED : 0) |
				 (cpu.online_capable ? ACPI_LOCAL_APIC_FLAG_ONLINE_CAPABLE : 0);

		if (cpu.x2apic)
			madt_add_x2apic(b, cpu.apic_id, flags, cpu.processor_uid);
		else
			madt_add_local_apic(b, (uint8_t)cpu.processor_uid, (uint8_t)cpu.apic_id,
					    flags);
		if (i % 50 == 49) {
			uint8_t *io_apic = madt_add_raw(b, ACPI_MADT_TYPE_IO_APIC, 12);

			io_apic[2] = (uint8_t)(i / 50);
			put_u32(io_apic + 4, 0xfec00000 + (i / 50) * 0x1000);
			put_u32(io_apic + 8, (i / 50) * 24);
			madt_add_raw(b, 3, 8);
			madt_add_raw(b, 0x7f, 5);
		}
	}
}

HOST_TEST(acpi_madt_of_300_cpus_gives_every_entry_in_table_order)
{
	struct madt_builder b;
	static struct acpi_madt madt;
	struct acpi_cpu cpu;
	size_t cursor = 0;
	unsigned int count = 0, mismatches = 0, enabled = 0, x2apic = 0, beyond_xapic = 0;

	build_many(&b);
	if (!host_check_eq_u64(ACPI_OK, madt_parse_built(&b, 5, &madt)))
		return;
	host_check_eq_u64(MANY_CPUS, madt.cpu_count);
	host_check_eq_u64(6, madt.io_apic_count);
	host_check_eq_u64(0xfec05000, madt.io_apics[5].address);
	host_check_eq_u64(120, madt.io_apics[5].gsi_base);
	while (acpi_madt_next_cpu(&madt, &cursor, &cpu)) {
		struct acpi_cpu want = many_cpu(count);

		if (cpu.apic_id != want.apic_id || cpu.processor_uid != want.processor_uid ||
		    cpu.enabled != want.enabled || cpu.online_capable != want.online_capable ||
		    cpu.x2apic != want.x2apic)
			host_checkf(mismatches++ > 5, /* the first few are shown */
				    "cpu %u: apic %#x uid %#x enabled %d online %d x2apic %d, "
				    "expected apic %#x uid %#x enabled %d online %d x2apic %d",
				    count, cpu.apic_id, cpu.processor_uid, cpu.enabled,
				    cpu.online_capable, cpu.x2apic, want.apic_id,
				    want.processor_uid, want.enabled, want.online_capable,
				    want.x2apic);
		enabled += cpu.enabled;
		x2apic += cpu.x2apic;
		beyond_xapic += cpu.apic_id > 0xfe;
		count++;
	}
	host_check_eq_u64(0, mismatches);
	host_check_eq_u64(MANY_CPUS, count);
	/* From many_cpu()'s rules, counted apart: 43 disabled, 23 online-capable only. */
	host_check_eq_u64(234, enabled);
	host_check_eq_u64(133, x2apic);
	host_check_eq_u64(133, beyond_xapic);
	/* The end is sticky, and a zero cursor starts again. */
	host_check(!acpi_madt_next_cpu(&madt, &cursor, &cpu));
	cursor = 0;
	host_check(acpi_madt_next_cpu(&madt, &cursor, &cpu) && cpu.apic_id == 0 && !cpu.x2apic);
	host_check(acpi_madt_next_cpu(&madt, &cursor, &cpu) && cpu.apic_id == 1);
	host_check(acpi_madt_next_cpu(&madt, &cursor, &cpu) && cpu.apic_id == 257 && cpu.x2apic &&
		   cpu.processor_uid == 0x10002);
}

HOST_TEST(acpi_madt_of_300_cpus_with_one_malformed_entry_is_rejected_whole)
{
	/*
	 * Where the bad entry goes (before CPU `before`, or at the end), its type, its length
	 * field, and how many of its bytes the table holds (0: as many as the length says).
	 */
	static const struct {
		const char *name;
		unsigned int before;
		uint8_t type, length, present;
	} bad[] = {
		{ "short x2APIC in the middle", 150, ACPI_MADT_TYPE_LOCAL_X2APIC, 15, 0 },
		{ "short local APIC in the middle", 151, ACPI_MADT_TYPE_LOCAL_APIC, 7, 0 },
		{ "zero length after the first CPU", 1, 0x7f, 0, 0 },
		{ "short x2APIC at the end", MANY_CPUS, ACPI_MADT_TYPE_LOCAL_X2APIC, 15, 0 },
		{ "x2APIC past the end", MANY_CPUS, ACPI_MADT_TYPE_LOCAL_X2APIC, 200, 16 },
	};
	static struct madt_builder whole, b;
	static struct acpi_madt madt;

	build_many(&whole);
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		size_t split = 8; /* after the Local APIC Address and Flags */
		enum acpi_error error;

		for (unsigned int cpus = 0; split < whole.length;) {
			uint8_t type = whole.body[split];

			if ((type == ACPI_MADT_TYPE_LOCAL_APIC ||
			     type == ACPI_MADT_TYPE_LOCAL_X2APIC) &&
			    cpus++ == bad[i].before)
				break;
			split += whole.body[split + 1];
		}
		b = whole;
		b.length = split;
		madt_add_raw(&b, bad[i].type, bad[i].length);
		if (bad[i].present)
			b.length = split + bad[i].present;
		memcpy(b.body + b.length, whole.body + split, whole.length - split);
		b.length += whole.length - split;
		error = madt_parse_built(&b, 5, &madt);
		host_checkf(error == ACPI_ERROR_ENTRY_LENGTH, "%s: got %s", bad[i].name,
			    acpi_error_name(error));
	}
}
