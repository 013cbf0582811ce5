/* SPDX-License-Identifier: MIT */
/* ACPI SPCR, the Serial Port Console Redirection table: the firmware's console UART. Pure. */
#ifndef LIB_ACPI_SPCR_H
#define LIB_ACPI_SPCR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/uart.h"

/*
 * Offsets in bytes from the table's start (Microsoft, "Serial Port Console Redirection Table",
 * SPCR revisions 2 to 4; docs/consoles.md). Multi-byte fields are little endian, unaligned.
 */
#define ACPI_SPCR_SIGNATURE "SPCR"
#define ACPI_SPCR_OFF_INTERFACE_TYPE 36 /* u8, a DBG2 serial subtype (ACPI_SPCR_TYPE_*) */
#define ACPI_SPCR_OFF_BASE_ADDRESS 40 /* Generic Address Structure; address 0: no redirection */
#define ACPI_SPCR_OFF_BAUD_RATE 58 /* u8, ACPI_SPCR_BAUD_* code */
#define ACPI_SPCR_OFF_CLOCK 76 /* u32 Hz, revision >= 3 (reserved before); 0: not given */
#define ACPI_SPCR_OFF_PRECISE_BAUD 80 /* u32, revision >= 4; nonzero overrides the code */
#define ACPI_SPCR_MIN_LENGTH 80 /* the whole table in revisions 1 to 3 */
#define ACPI_SPCR_REVISION_CLOCK 3
#define ACPI_SPCR_REVISION_PRECISE_BAUD 4

/* Generic Address Structure (ACPI 6.5 §5.2.3.2), offsets within it. */
#define ACPI_GAS_OFF_SPACE_ID 0 /* u8, ACPI_GAS_SPACE_* */
#define ACPI_GAS_OFF_BIT_WIDTH 1 /* u8, the register's width in bits */
#define ACPI_GAS_OFF_BIT_OFFSET 2 /* u8 */
#define ACPI_GAS_OFF_ACCESS_SIZE 3 /* u8, ACPI_GAS_ACCESS_* */
#define ACPI_GAS_OFF_ADDRESS 4 /* u64 */
#define ACPI_GAS_SPACE_MEMORY 0
#define ACPI_GAS_SPACE_IO 1
#define ACPI_GAS_ACCESS_UNDEFINED 0 /* legacy: the bit width says it */
#define ACPI_GAS_ACCESS_BYTE 1
#define ACPI_GAS_ACCESS_WORD 2
#define ACPI_GAS_ACCESS_DWORD 3
#define ACPI_GAS_ACCESS_QWORD 4

/*
 * Interface types that are a 16550: the ones Linux's drivers/acpi/spcr.c hands to its 8250
 * driver ("uart"). Values are Microsoft's DBG2 serial port subtypes.
 */
#define ACPI_SPCR_TYPE_16550 0x00 /* fully 16550-compatible */
#define ACPI_SPCR_TYPE_16550_SUBSET 0x01 /* 16450, or the 16550 subset of DBGP revision 1 */
#define ACPI_SPCR_TYPE_16550_NVIDIA 0x05 /* NVIDIA 16550 UART */
#define ACPI_SPCR_TYPE_16550_GAS 0x12 /* 16550-compatible, width and stride from the GAS */

/* Configured Baud Rate codes; the others are reserved. */
#define ACPI_SPCR_BAUD_AS_IS 0 /* the OS keeps the UART as the firmware configured it */
#define ACPI_SPCR_BAUD_9600 3
#define ACPI_SPCR_BAUD_19200 4
#define ACPI_SPCR_BAUD_57600 6
#define ACPI_SPCR_BAUD_115200 7

/* The table as stored, for the log, and the UART it describes. */
struct acpi_spcr {
	uint8_t revision;
	uint8_t interface_type;
	uint8_t space_id, bit_width, access_size; /* the base address's GAS */
	uint8_t baud_code;
	struct console_config console; /* .given false; valid when acpi_spcr_parse() succeeds */
};

/* A short name for an interface type ("16550", "ARM PL011"), or "unknown"; never NULL. */
const char *acpi_spcr_type_name(uint8_t interface_type);

/*
 * Parse the SPCR in table[0, length): signature, a Length in [ACPI_SPCR_MIN_LENGTH, length],
 * checksum; a 16550 interface type; the base address in system I/O space (a port whose eight
 * registers lie below 0x10000; byte registers) or system memory (byte registers, or 32-bit
 * registers 4 bytes apart, by the GAS access size, or by its bit width when the access size is
 * undefined); the baud from the precise baud rate (revision 4) or the code, ACPI_SPCR_BAUD_AS_IS
 * giving UART_BAUD_KEEP; the UART clock (revision 3). The divisor must fit 16 bits. Fills
 * *spcr's stored fields as far as it got and returns true when the UART can be used; else
 * writes why not to reason (one line, no table name) and returns false.
 */
bool acpi_spcr_parse(const void *table, size_t length, struct acpi_spcr *spcr, char *reason,
		     size_t reason_size);

#endif
