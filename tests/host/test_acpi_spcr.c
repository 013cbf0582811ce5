/* SPDX-License-Identifier: MIT */
/* Host tests of the SPCR parser: good tables, damaged ones, and every 16550 and address space. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/acpi_spcr.h"
#include "tests/host/acpi_builder.h"
#include "tests/host/host_test.h"

#define SPCR_BODY_V2 (ACPI_SPCR_MIN_LENGTH - ACPI_HEADER_SIZE)
#define SPCR_BODY_V4 (96 - ACPI_HEADER_SIZE) /* the precise baud, and a namespace string "." */
#define BODY(offset) ((offset)-ACPI_HEADER_SIZE)

/* An SPCR body: a 16550 at gas_space:address, with the GAS widths and the baud code given. */
struct spcr_fields {
	uint8_t type, space, bit_width, access_size;
	uint64_t address;
	uint8_t baud_code;
	uint32_t clock_hz, precise_baud;
};

static size_t build_spcr(uint8_t *table, uint8_t revision, const struct spcr_fields *f)
{
	uint8_t body[SPCR_BODY_V4] = { 0 };
	size_t body_length =
		revision >= ACPI_SPCR_REVISION_PRECISE_BAUD ? SPCR_BODY_V4 : SPCR_BODY_V2;

	body[BODY(ACPI_SPCR_OFF_INTERFACE_TYPE)] = f->type;
	body[BODY(ACPI_SPCR_OFF_BASE_ADDRESS + ACPI_GAS_OFF_SPACE_ID)] = f->space;
	body[BODY(ACPI_SPCR_OFF_BASE_ADDRESS + ACPI_GAS_OFF_BIT_WIDTH)] = f->bit_width;
	body[BODY(ACPI_SPCR_OFF_BASE_ADDRESS + ACPI_GAS_OFF_ACCESS_SIZE)] = f->access_size;
	put_u64(body + BODY(ACPI_SPCR_OFF_BASE_ADDRESS + ACPI_GAS_OFF_ADDRESS), f->address);
	body[BODY(ACPI_SPCR_OFF_BAUD_RATE)] = f->baud_code;
	body[BODY(60)] = 1; /* stop bits: 1 */
	put_u16(body + BODY(64), 0xffff); /* PCI device id: not a PCI device */
	put_u16(body + BODY(66), 0xffff); /* PCI vendor id */
	put_u32(body + BODY(ACPI_SPCR_OFF_CLOCK), f->clock_hz);
	if (revision >= ACPI_SPCR_REVISION_PRECISE_BAUD) {
		put_u32(body + BODY(ACPI_SPCR_OFF_PRECISE_BAUD), f->precise_baud);
		put_u16(body + BODY(84), 2); /* namespace string length, "." and its NUL */
		put_u16(body + BODY(86), 88); /* namespace string offset */
		body[BODY(88)] = '.';
	}
	return build_table(table, ACPI_SPCR_SIGNATURE, revision, body, body_length);
}

/* Parse table[0, length) from a heap copy of exactly that length (ASan sees overreads). */
static bool parse_exact(const uint8_t *table, size_t length, struct acpi_spcr *spcr, char *reason,
			size_t size)
{
	uint8_t *copy = exact_copy(table, length);
	bool parsed = acpi_spcr_parse(copy, length, spcr, reason, size);

	free(copy);
	return parsed;
}

static const struct spcr_fields com2 = {
	.type = ACPI_SPCR_TYPE_16550,
	.space = ACPI_GAS_SPACE_IO,
	.bit_width = 8,
	.access_size = ACPI_GAS_ACCESS_BYTE,
	.address = 0x2f8,
	.baud_code = ACPI_SPCR_BAUD_115200,
};

HOST_TEST(acpi_spcr_com2_at_115200_is_an_io_port_uart)
{
	uint8_t table[128];
	struct acpi_spcr spcr;
	char reason[160] = "";
	size_t length = build_spcr(table, 2, &com2);

	host_check(parse_exact(table, length, &spcr, reason, sizeof(reason)));
	host_check_str("", reason);
	host_check_eq_u64(2, spcr.revision);
	host_check_eq_u64(ACPI_SPCR_TYPE_16550, spcr.interface_type);
	host_check_eq_u64(UART_IO_PORT, spcr.console.io);
	host_check_eq_u64(0x2f8, spcr.console.port);
	host_check_eq_u64(115200, spcr.console.baud);
	host_check_eq_u64(0, spcr.console.clock_hz);
	host_check(!spcr.console.given);
}

HOST_TEST(acpi_spcr_takes_every_16550_type_and_refuses_the_others_with_a_reason)
{
	static const struct {
		uint8_t type;
		const char *reason; /* NULL: accepted */
	} cases[] = {
		{ ACPI_SPCR_TYPE_16550, NULL },
		{ ACPI_SPCR_TYPE_16550_SUBSET, NULL },
		{ ACPI_SPCR_TYPE_16550_NVIDIA, NULL },
		{ ACPI_SPCR_TYPE_16550_GAS, NULL },
		{ 0x02, "interface type 0x02 (unknown) is not a 16550" },
		{ 0x03, "interface type 0x03 (ARM PL011) is not a 16550" },
		{ 0x0d, "interface type 0x0d (ARM SBSA 32-bit) is not a 16550" },
		{ 0x0e, "interface type 0x0e (ARM SBSA generic) is not a 16550" },
		{ 0x10, "interface type 0x10 (BCM2835) is not a 16550" },
		{ 0x14, "interface type 0x14 (Intel LPSS) is not a 16550" },
		{ 0xff, "interface type 0xff (unknown) is not a 16550" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct spcr_fields fields = com2;
		uint8_t table[128];
		struct acpi_spcr spcr;
		char reason[160] = "";
		size_t length;
		bool parsed;

		fields.type = cases[i].type;
		length = build_spcr(table, 2, &fields);
		parsed = parse_exact(table, length, &spcr, reason, sizeof(reason));
		host_checkf(parsed == (cases[i].reason == NULL), "type 0x%02x: %s", cases[i].type,
			    reason);
		host_check_eq_u64(cases[i].type, spcr.interface_type);
		if (cases[i].reason)
			host_check_str(cases[i].reason, reason);
	}
}

HOST_TEST(acpi_spcr_address_space_and_register_width_choose_the_access)
{
	static const struct {
		uint8_t space, bit_width, access_size;
		uint64_t address;
		enum uart_io io;
		const char *reason; /* NULL: accepted as io */
	} cases[] = {
		/* I/O ports are byte registers whatever the widths say, as Linux takes them. */
		{ ACPI_GAS_SPACE_IO, 8, ACPI_GAS_ACCESS_BYTE, 0x3f8, UART_IO_PORT, NULL },
		{ ACPI_GAS_SPACE_IO, 8, ACPI_GAS_ACCESS_UNDEFINED, 0x2f8, UART_IO_PORT, NULL },
		{ ACPI_GAS_SPACE_IO, 32, ACPI_GAS_ACCESS_DWORD, 0xe000, UART_IO_PORT, NULL },
		{ ACPI_GAS_SPACE_IO, 8, ACPI_GAS_ACCESS_BYTE, 0xfff8, UART_IO_PORT, NULL },
		{ ACPI_GAS_SPACE_IO, 8, ACPI_GAS_ACCESS_BYTE, 0xfff9, UART_IO_PORT,
		  "I/O port 0xfff9 leaves no room for 8 registers" },
		/* Memory: the access size decides, else (legacy, undefined) the bit width. */
		{ ACPI_GAS_SPACE_MEMORY, 8, ACPI_GAS_ACCESS_BYTE, 0xfe030000, UART_IO_MMIO8, NULL },
		{ ACPI_GAS_SPACE_MEMORY, 32, ACPI_GAS_ACCESS_DWORD, 0xfe032000, UART_IO_MMIO32,
		  NULL },
		{ ACPI_GAS_SPACE_MEMORY, 8, ACPI_GAS_ACCESS_UNDEFINED, 0xfe030000, UART_IO_MMIO8,
		  NULL },
		{ ACPI_GAS_SPACE_MEMORY, 32, ACPI_GAS_ACCESS_UNDEFINED, 0x4010002000,
		  UART_IO_MMIO32, NULL },
		{ ACPI_GAS_SPACE_MEMORY, 32, ACPI_GAS_ACCESS_BYTE, 0xfe030000, UART_IO_MMIO8,
		  NULL },
		{ ACPI_GAS_SPACE_MEMORY, 16, ACPI_GAS_ACCESS_WORD, 0xfe030000, UART_IO_MMIO8,
		  "memory registers of 16 bits (access size 2, bit width 16); only 8 and 32 are "
		  "supported" },
		{ ACPI_GAS_SPACE_MEMORY, 64, ACPI_GAS_ACCESS_QWORD, 0xfe030000, UART_IO_MMIO8,
		  "memory registers of 64 bits (access size 4, bit width 64); only 8 and 32 are "
		  "supported" },
		{ ACPI_GAS_SPACE_MEMORY, 32, 5, 0xfe030000, UART_IO_MMIO8,
		  "memory registers of 0 bits (access size 5, bit width 32); only 8 and 32 are "
		  "supported" },
		{ ACPI_GAS_SPACE_MEMORY, 0, ACPI_GAS_ACCESS_UNDEFINED, 0xfe030000, UART_IO_MMIO8,
		  "memory registers of 0 bits (access size 0, bit width 0); only 8 and 32 are "
		  "supported" },
		{ ACPI_GAS_SPACE_MEMORY, 32, ACPI_GAS_ACCESS_DWORD, 0xfe030002, UART_IO_MMIO8,
		  "32-bit registers at unaligned address 0xfe030002" },
		{ 2, 8, ACPI_GAS_ACCESS_BYTE, 0x3f8, UART_IO_PORT,
		  "address space 2 is neither system memory (0) nor system I/O (1)" },
		{ 0x7f, 8, ACPI_GAS_ACCESS_BYTE, 0x3f8, UART_IO_PORT,
		  "address space 127 is neither system memory (0) nor system I/O (1)" },
		{ ACPI_GAS_SPACE_IO, 8, ACPI_GAS_ACCESS_BYTE, 0, UART_IO_PORT,
		  "base address 0: console redirection is disabled" },
		{ ACPI_GAS_SPACE_MEMORY, 8, ACPI_GAS_ACCESS_BYTE, 0, UART_IO_PORT,
		  "base address 0: console redirection is disabled" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct spcr_fields fields = {
			.type = ACPI_SPCR_TYPE_16550_GAS,
			.space = cases[i].space,
			.bit_width = cases[i].bit_width,
			.access_size = cases[i].access_size,
			.address = cases[i].address,
			.baud_code = ACPI_SPCR_BAUD_115200,
		};
		uint8_t table[128];
		struct acpi_spcr spcr;
		char reason[160] = "";
		size_t length = build_spcr(table, 2, &fields);
		bool parsed = parse_exact(table, length, &spcr, reason, sizeof(reason));

		host_checkf(parsed == (cases[i].reason == NULL), "case %zu: %s", i, reason);
		if (cases[i].reason) {
			host_check_str(cases[i].reason, reason);
			continue;
		}
		host_checkf(spcr.console.io == cases[i].io, "case %zu: io %d", i, spcr.console.io);
		if (cases[i].io == UART_IO_PORT) {
			host_check_eq_u64(cases[i].address, spcr.console.port);
			host_check_eq_u64(0, spcr.console.mmio);
		} else {
			host_check_eq_u64(cases[i].address, spcr.console.mmio);
			host_check_eq_u64(0, spcr.console.port);
		}
		host_check_eq_u64(cases[i].space, spcr.space_id);
		host_check_eq_u64(cases[i].bit_width, spcr.bit_width);
		host_check_eq_u64(cases[i].access_size, spcr.access_size);
	}
}

HOST_TEST(acpi_spcr_baud_codes_as_is_keeps_the_firmware_setting)
{
	static const struct {
		uint8_t code;
		uint32_t baud;
		const char *reason;
	} cases[] = {
		{ ACPI_SPCR_BAUD_AS_IS, UART_BAUD_KEEP, NULL },
		{ ACPI_SPCR_BAUD_9600, 9600, NULL },
		{ ACPI_SPCR_BAUD_19200, 19200, NULL },
		{ ACPI_SPCR_BAUD_57600, 57600, NULL },
		{ ACPI_SPCR_BAUD_115200, 115200, NULL },
		{ 1, 0,
		  "baud rate code 1 is reserved (0 as is, 3 9600, 4 19200, 6 57600, 7 115200)" },
		{ 2, 0,
		  "baud rate code 2 is reserved (0 as is, 3 9600, 4 19200, 6 57600, 7 115200)" },
		{ 5, 0,
		  "baud rate code 5 is reserved (0 as is, 3 9600, 4 19200, 6 57600, 7 115200)" },
		{ 8, 0,
		  "baud rate code 8 is reserved (0 as is, 3 9600, 4 19200, 6 57600, 7 115200)" },
		{ 0xff, 0,
		  "baud rate code 255 is reserved (0 as is, 3 9600, 4 19200, 6 57600, 7 115200)" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct spcr_fields fields = com2;
		uint8_t table[128];
		struct acpi_spcr spcr;
		char reason[160] = "";
		size_t length;
		bool parsed;

		fields.baud_code = cases[i].code;
		length = build_spcr(table, 2, &fields);
		parsed = parse_exact(table, length, &spcr, reason, sizeof(reason));
		host_checkf(parsed == (cases[i].reason == NULL), "code %u: %s", cases[i].code,
			    reason);
		host_check_eq_u64(cases[i].code, spcr.baud_code);
		if (parsed)
			host_check_eq_u64(cases[i].baud, spcr.console.baud);
		else
			host_check_str(cases[i].reason, reason);
	}
}

HOST_TEST(acpi_spcr_revision_4_precise_baud_and_revision_3_clock)
{
	struct spcr_fields fields = { ACPI_SPCR_TYPE_16550_GAS,
				      ACPI_GAS_SPACE_MEMORY,
				      32,
				      ACPI_GAS_ACCESS_DWORD,
				      0xfe032000,
				      ACPI_SPCR_BAUD_9600,
				      48000000,
				      1500000 };
	uint8_t table[128];
	struct acpi_spcr spcr;
	char reason[160] = "";
	size_t length = build_spcr(table, 4, &fields);

	/* Revision 4: the precise baud overrides code 3; 48 MHz / (16 * 1.5 M) = divisor 2. */
	host_check(parse_exact(table, length, &spcr, reason, sizeof(reason)));
	host_check_eq_u64(1500000, spcr.console.baud);
	host_check_eq_u64(48000000, spcr.console.clock_hz);
	host_check_eq_u64(2, uart_divisor(spcr.console.clock_hz, spcr.console.baud));
	/* A precise baud of 0 leaves the code in charge. */
	fields.precise_baud = 0;
	length = build_spcr(table, 4, &fields);
	host_check(parse_exact(table, length, &spcr, reason, sizeof(reason)));
	host_check_eq_u64(9600, spcr.console.baud);
	/* Revision 2: offset 76 is reserved, offset 80 is past the table; both ignored. */
	fields.precise_baud = 1500000;
	length = build_spcr(table, 2, &fields);
	host_check(parse_exact(table, length, &spcr, reason, sizeof(reason)));
	host_check_eq_u64(9600, spcr.console.baud);
	host_check_eq_u64(0, spcr.console.clock_hz);
	/* Revision 3 with bytes past 80 (a longer table): they are not a precise baud yet. */
	fields.precise_baud = 1500000;
	length = build_spcr(table, 4, &fields);
	table[8] = 3;
	fix_checksum(table, length, 9);
	host_check(parse_exact(table, length, &spcr, reason, sizeof(reason)));
	host_check_eq_u64(9600, spcr.console.baud);
	host_check_eq_u64(48000000, spcr.console.clock_hz);
	/* A revision-4 table cut to the 80 bytes of revision 2 has no precise baud to read. */
	length = build_spcr(table, 4, &fields);
	table[8] = 4;
	put_u32(table + 4, ACPI_SPCR_MIN_LENGTH);
	fix_checksum(table, ACPI_SPCR_MIN_LENGTH, 9);
	host_check(parse_exact(table, ACPI_SPCR_MIN_LENGTH, &spcr, reason, sizeof(reason)));
	host_check_eq_u64(9600, spcr.console.baud);
	host_check_eq_u64(48000000, spcr.console.clock_hz);
}

HOST_TEST(acpi_spcr_a_baud_the_clock_cannot_divide_to_is_refused)
{
	struct spcr_fields fields = com2;
	uint8_t table[128];
	struct acpi_spcr spcr;
	char reason[160] = "";
	size_t length;

	fields.clock_hz = 1000; /* 1000 / (16 * 115200) rounds to 0 */
	length = build_spcr(table, 3, &fields);
	host_check(!parse_exact(table, length, &spcr, reason, sizeof(reason)));
	host_check_str("baud 115200 with a 1000 Hz clock needs divisor 0, outside 1..65535",
		       reason);
	fields.clock_hz = 0xffffffff; /* 4.29 GHz / (16 * 9600) = 27962 fits */
	fields.baud_code = ACPI_SPCR_BAUD_9600;
	length = build_spcr(table, 3, &fields);
	host_check(parse_exact(table, length, &spcr, reason, sizeof(reason)));
	host_check_eq_u64(27962, uart_divisor(spcr.console.clock_hz, spcr.console.baud));
	fields.precise_baud = 0;
	fields.baud_code = ACPI_SPCR_BAUD_AS_IS; /* keep: no divisor to compute */
	fields.clock_hz = 1000;
	length = build_spcr(table, 3, &fields);
	host_check(parse_exact(table, length, &spcr, reason, sizeof(reason)));
	host_check_eq_u64(UART_BAUD_KEEP, spcr.console.baud);
}

HOST_TEST(acpi_spcr_damaged_tables_are_refused_with_a_reason)
{
	uint8_t table[128];
	struct acpi_spcr spcr;
	char reason[160] = "";
	size_t length = build_spcr(table, 2, &com2);

	table[ACPI_SPCR_OFF_BAUD_RATE] ^= 1; /* code 7 becomes 6: the bytes sum to -1 */
	host_check(!parse_exact(table, length, &spcr, reason, sizeof(reason)));
	host_check_str("checksum mismatch (the bytes sum to 0xff)", reason);

	length = build_spcr(table, 2, &com2);
	host_check(!parse_exact(table, length - 1, &spcr, reason, sizeof(reason)));
	host_check_str("not an SPCR of at least 80 bytes", reason);

	put_u32(table + 4, 79); /* Length below the table's fields */
	fix_checksum(table, 79, 9);
	host_check(!parse_exact(table, length, &spcr, reason, sizeof(reason)));
	host_check_str("Length 79 is outside 80..80", reason);

	length = build_spcr(table, 2, &com2);
	put_u32(table + 4, 81); /* Length past the buffer */
	host_check(!parse_exact(table, length, &spcr, reason, sizeof(reason)));
	host_check_str("Length 81 is outside 80..80", reason);

	length = build_spcr(table, 2, &com2);
	memcpy(table, "SPCX", 4);
	fix_checksum(table, length, 9);
	host_check(!parse_exact(table, length, &spcr, reason, sizeof(reason)));
	host_check_str("not an SPCR of at least 80 bytes", reason);

	/* A longer buffer than Length is fine: the checksum covers Length bytes only. */
	length = build_spcr(table, 2, &com2);
	table[length] = 0x55;
	host_check(parse_exact(table, length + 1, &spcr, reason, sizeof(reason)));
}
