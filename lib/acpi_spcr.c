/* SPDX-License-Identifier: MIT */
/* The SPCR parser: which 16550 the firmware redirects its console to, and at what baud. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/acpi.h"
#include "lib/acpi_spcr.h"
#include "lib/format.h"
#include "lib/load.h"
#include "lib/string.h"

#define IO_PORT_LIMIT 0x10000u /* x86 I/O space is 64 KiB */

const char *acpi_spcr_type_name(uint8_t interface_type)
{
	switch (interface_type) {
	case ACPI_SPCR_TYPE_16550:
		return "16550";
	case ACPI_SPCR_TYPE_16550_SUBSET:
		return "16550 subset";
	case ACPI_SPCR_TYPE_16550_NVIDIA:
		return "NVIDIA 16550";
	case ACPI_SPCR_TYPE_16550_GAS:
		return "16550 described by the GAS";
	case 0x03:
		return "ARM PL011";
	case 0x0d:
		return "ARM SBSA 32-bit";
	case 0x0e:
		return "ARM SBSA generic";
	case 0x0f:
		return "ARM DCC";
	case 0x10:
		return "BCM2835";
	case 0x14:
		return "Intel LPSS";
	default:
		return "unknown";
	}
}

static bool is_16550(uint8_t interface_type)
{
	return interface_type == ACPI_SPCR_TYPE_16550 ||
	       interface_type == ACPI_SPCR_TYPE_16550_SUBSET ||
	       interface_type == ACPI_SPCR_TYPE_16550_NVIDIA ||
	       interface_type == ACPI_SPCR_TYPE_16550_GAS;
}

/* The register width in bits: the GAS access size when defined, else its bit width. */
static unsigned int register_bits(const struct acpi_spcr *spcr)
{
	if (spcr->access_size == ACPI_GAS_ACCESS_UNDEFINED)
		return spcr->bit_width;
	if (spcr->access_size > ACPI_GAS_ACCESS_QWORD)
		return 0;
	return 4u << spcr->access_size; /* 1: 8 bits, 2: 16, 3: 32, 4: 64 */
}

/* The base address: an I/O port or a memory UART with byte or 32-bit registers. */
static bool parse_address(const void *table, struct acpi_spcr *spcr, char *reason, size_t size)
{
	uint64_t address = load_u64(table, ACPI_SPCR_OFF_BASE_ADDRESS + ACPI_GAS_OFF_ADDRESS);
	unsigned int bits = register_bits(spcr);

	if (address == 0) {
		format(reason, size, "base address 0: console redirection is disabled");
		return false;
	}
	if (spcr->space_id == ACPI_GAS_SPACE_IO) {
		/* I/O ports are byte registers, whatever the widths say (as Linux reads them). */
		if (address > IO_PORT_LIMIT - UART_REGISTERS) {
			format(reason, size, "I/O port 0x%llx leaves no room for 8 registers",
			       (unsigned long long)address);
			return false;
		}
		spcr->console.io = UART_IO_PORT;
		spcr->console.port = (uint16_t)address;
		return true;
	}
	if (spcr->space_id != ACPI_GAS_SPACE_MEMORY) {
		format(reason, size,
		       "address space %u is neither system memory (0) nor system I/O (1)",
		       spcr->space_id);
		return false;
	}
	if (bits != 8 && bits != 32) {
		format(reason, size,
		       "memory registers of %u bits (access size %u, bit width %u); only 8 and 32 "
		       "are "
		       "supported",
		       bits, spcr->access_size, spcr->bit_width);
		return false;
	}
	if (bits == 32 && address % UART_MMIO32_STRIDE != 0) {
		format(reason, size, "32-bit registers at unaligned address 0x%llx",
		       (unsigned long long)address);
		return false;
	}
	spcr->console.io = bits == 8 ? UART_IO_MMIO8 : UART_IO_MMIO32;
	spcr->console.mmio = address;
	return true;
}

/* The baud and clock; the precise baud rate, when given, overrides the code (SPCR rev 4). */
static bool parse_baud(const void *table, size_t length, struct acpi_spcr *spcr, char *reason,
		       size_t size)
{
	static const uint32_t bauds[] = {
		[ACPI_SPCR_BAUD_AS_IS] = UART_BAUD_KEEP, [ACPI_SPCR_BAUD_9600] = 9600,
		[ACPI_SPCR_BAUD_19200] = 19200,		 [ACPI_SPCR_BAUD_57600] = 57600,
		[ACPI_SPCR_BAUD_115200] = 115200,
	};
	uint32_t precise = 0, divisor;

	if (spcr->revision >= ACPI_SPCR_REVISION_CLOCK)
		spcr->console.clock_hz = load_u32(table, ACPI_SPCR_OFF_CLOCK);
	if (spcr->revision >= ACPI_SPCR_REVISION_PRECISE_BAUD &&
	    length >= ACPI_SPCR_OFF_PRECISE_BAUD + sizeof(uint32_t))
		precise = load_u32(table, ACPI_SPCR_OFF_PRECISE_BAUD);
	if (precise != 0) {
		spcr->console.baud = precise;
	} else if (spcr->baud_code < sizeof(bauds) / sizeof(bauds[0]) &&
		   (spcr->baud_code == ACPI_SPCR_BAUD_AS_IS || bauds[spcr->baud_code] != 0)) {
		spcr->console.baud = bauds[spcr->baud_code];
	} else {
		format(reason, size,
		       "baud rate code %u is reserved (0 as is, 3 9600, 4 19200, 6 57600, 7 "
		       "115200)",
		       spcr->baud_code);
		return false;
	}
	divisor = uart_divisor(spcr->console.clock_hz, spcr->console.baud);
	if (spcr->console.baud != UART_BAUD_KEEP && (divisor == 0 || divisor > UART_DIVISOR_MAX)) {
		format(reason, size, "baud %u with a %u Hz clock needs divisor %u, outside 1..%u",
		       spcr->console.baud,
		       spcr->console.clock_hz ? spcr->console.clock_hz : UART_CLOCK_PC_HZ, divisor,
		       UART_DIVISOR_MAX);
		return false;
	}
	return true;
}

bool acpi_spcr_parse(const void *table, size_t length, struct acpi_spcr *spcr, char *reason,
		     size_t reason_size)
{
	const uint8_t *bytes = table;
	uint32_t table_length;
	uint8_t sum;

	*spcr = (struct acpi_spcr){ 0 };
	if (length < ACPI_SPCR_MIN_LENGTH ||
	    memcmp(bytes + ACPI_HEADER_OFF_SIGNATURE, ACPI_SPCR_SIGNATURE, ACPI_SIGNATURE_SIZE)) {
		format(reason, reason_size, "not an SPCR of at least %u bytes",
		       ACPI_SPCR_MIN_LENGTH);
		return false;
	}
	table_length = load_u32(table, ACPI_HEADER_OFF_LENGTH);
	if (table_length < ACPI_SPCR_MIN_LENGTH || table_length > length) {
		format(reason, reason_size, "Length %u is outside %u..%zu", table_length,
		       ACPI_SPCR_MIN_LENGTH, length);
		return false;
	}
	sum = acpi_checksum(table, table_length);
	if (sum != 0) {
		format(reason, reason_size, "checksum mismatch (the bytes sum to 0x%02x)", sum);
		return false;
	}
	spcr->revision = load_u8(table, ACPI_HEADER_OFF_REVISION);
	spcr->interface_type = load_u8(table, ACPI_SPCR_OFF_INTERFACE_TYPE);
	spcr->space_id = load_u8(table, ACPI_SPCR_OFF_BASE_ADDRESS + ACPI_GAS_OFF_SPACE_ID);
	spcr->bit_width = load_u8(table, ACPI_SPCR_OFF_BASE_ADDRESS + ACPI_GAS_OFF_BIT_WIDTH);
	spcr->access_size = load_u8(table, ACPI_SPCR_OFF_BASE_ADDRESS + ACPI_GAS_OFF_ACCESS_SIZE);
	spcr->baud_code = load_u8(table, ACPI_SPCR_OFF_BAUD_RATE);
	if (!is_16550(spcr->interface_type)) {
		format(reason, reason_size, "interface type 0x%02x (%s) is not a 16550",
		       spcr->interface_type, acpi_spcr_type_name(spcr->interface_type));
		return false;
	}
	return parse_address(table, spcr, reason, reason_size) &&
	       parse_baud(table, table_length, spcr, reason, reason_size);
}
