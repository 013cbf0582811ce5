/* SPDX-License-Identifier: MIT */
/* Where a 16550 console is and how it is set up: what console= and ACPI SPCR describe. Pure. */
#ifndef LIB_UART_H
#define LIB_UART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How the UART's eight registers are reached (docs/consoles.md). */
enum uart_io {
	UART_IO_PORT, /* I/O ports port .. port + 7: console=ttyS0, console=0xPORT */
	UART_IO_MMIO8, /* bytes at physical mmio + reg: Linux earlycon's "mmio" */
	UART_IO_MMIO32, /* 32-bit registers at mmio + 4 * reg: earlycon's "mmio32" */
};

#define UART_REGISTERS 8 /* RBR/THR .. SCR */

/* Register offsets, in registers (PC16550D data sheet, Table II). */
#define UART_DATA 0 /* RBR/THR, DLAB=0 */
#define UART_INTERRUPT_ENABLE 1 /* IER, DLAB=0 */
#define UART_DIVISOR_LOW 0 /* DLL, DLAB=1 */
#define UART_DIVISOR_HIGH 1 /* DLM, DLAB=1 */
#define UART_FIFO_CONTROL 2
#define UART_LINE_CONTROL 3
#define UART_MODEM_CONTROL 4
#define UART_LINE_STATUS 5
#define UART_SCRATCH 7

#define IER_RESERVED 0x70 /* bits 6:4 always read 0 (bit 7 is PTIME on DesignWare UARTs) */
#define FCR_ENABLE 0x01
#define FCR_CLEAR_RX 0x02
#define FCR_CLEAR_TX 0x04
#define LCR_8N1 0x03
#define LCR_DLAB 0x80 /* divisor latch access: registers 0 and 1 become DLL and DLM */
#define MCR_DTR 0x01
#define MCR_RTS 0x02
#define LSR_DATA_READY 0x01
#define LSR_TX_HOLDING_EMPTY 0x20
#define LSR_NOTHING_THERE 0xff /* what a read of an undecoded ISA port returns */
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

/* How lib/uart.c reaches a UART's registers: the caller's accessors (platform/pc/serial.c). */
struct uart_access {
	uint8_t (*in)(void *context, unsigned int reg);
	void (*out)(void *context, unsigned int reg, uint8_t value);
	void *context;
};

/*
 * Whether a 16550 answers at uart, leaving its registers as they were:
 *  - its line status register does not read as an empty bus (0xff);
 *  - its scratch register keeps two patterns (as Linux's 8250 autoconfig writes them);
 *  - its divisor latch is banked behind LCR.DLAB: a pattern written to DLM is read back there,
 *    and not through IER with DLAB clear, where bits 6:4 read 0 (PC16550D data sheet). Memory
 *    that keeps what is written passes the first two and never this one.
 * On false writes why to why (one line, without the address).
 */
bool uart_probe(const struct uart_access *uart, char *why, size_t size);

/*
 * The transmitter wait of a console UART, bounded in total: each wait polls LSR.THRE until
 * now() passes a deadline timeout later; a UART that missed one deadline is stalled, and later
 * waits read LSR once, without polling, until it reports THRE again. So a UART that never
 * drains costs one timeout, not one per byte. now() counts in the caller's unit (TSC cycles),
 * or returns 0 where no clock runs yet: then spins polls stand in for the deadline.
 */
struct uart_transmit {
	uint64_t timeout; /* in now()'s unit */
	uint32_t spins; /* polls per wait while now() returns 0 */
	bool stalled;
};
/* True when THRE was seen, false when the wait gave up (or the UART is stalled). */
bool uart_wait_transmit_empty(const struct uart_access *uart, struct uart_transmit *transmit,
			      uint64_t (*now)(void));

#endif
