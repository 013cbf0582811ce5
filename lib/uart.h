/* SPDX-License-Identifier: MIT */
/* Where a 16550 console is and how it is set up: what console= and ACPI SPCR describe. Pure. */
#ifndef LIB_UART_H
#define LIB_UART_H

#include <stdbool.h>
#include <stdint.h>

/* How the UART's eight registers are reached (docs/consoles.md). */
enum uart_io {
	UART_IO_PORT, /* I/O ports port .. port + 7: console=ttyS0, console=0xPORT */
	UART_IO_MMIO8, /* bytes at physical mmio + reg: Linux earlycon's "mmio" */
	UART_IO_MMIO32, /* 32-bit registers at mmio + 4 * reg: earlycon's "mmio32" */
};

#define UART_REGISTERS 8 /* RBR/THR .. SCR */
#define UART_MMIO32_STRIDE 4 /* bytes between registers of a UART_IO_MMIO32 UART */
#define UART_BAUD_KEEP 0 /* keep the divisor and line settings the firmware left ("as is") */
/* The PC's UART clock: 1.8432 MHz, so the divisor latch counts periods of 115200 baud. */
#define UART_CLOCK_PC_HZ 1843200u
#define UART_DIVISOR_MAX 0xffffu /* the latch is 16 bits (DLL, DLM) */

struct console_config {
	uint16_t port; /* UART_IO_PORT: the first register's port */
	uint32_t baud; /* bits per second, or UART_BAUD_KEEP */
	enum uart_io io;
	uint64_t mmio; /* UART_IO_MMIO*: the first register's physical address */
	uint32_t clock_hz; /* the UART's input clock; 0 for UART_CLOCK_PC_HZ */
	bool given; /* written by console= (cmdline_parse_console); false for any default */
};

/*
 * The divisor latch value for baud with an input clock of clock_hz (0: UART_CLOCK_PC_HZ):
 * clock / (16 * baud), rounded to the nearest, as the 16550 divides its clock by 16 (PC16550D
 * data sheet, "Programmable Baud Generator"). 0 when baud is 0 or the divisor rounds to 0.
 */
static inline uint32_t uart_divisor(uint32_t clock_hz, uint32_t baud)
{
	uint64_t sixteen_baud = 16ull * baud;

	if (baud == 0)
		return 0;
	if (clock_hz == 0)
		clock_hz = UART_CLOCK_PC_HZ;
	return (uint32_t)((clock_hz + sixteen_baud / 2) / sixteen_baud);
}

#endif
