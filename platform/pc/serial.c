/* SPDX-License-Identifier: MIT */
/* 16550 UART console at I/O ports or in memory (National Semiconductor PC16550D data sheet). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/io.h"
#include "arch/x86/mmio.h"
#include "arch/x86/paging.h"
#include "arch/x86/tsc.h"
#include "lib/console.h"
#include "lib/format.h"
#include "platform/pc/serial.h"

#define UART_FIFO_SIZE 16
/*
 * A FIFO of 16 bytes drains in 1 s at 160 baud and above. A UART that never drains (or memory
 * taken for one) costs one such wait in all, not one per byte (lib/uart.h); before the TSC is
 * calibrated, polls stand in for the time.
 */
#define UART_TRANSMIT_TIMEOUT_MS 1000
#define UART_TRANSMIT_SPINS 1000000u

/* A UART's registers, reached as config said: ports, or bytes or 32-bit words in memory. */
struct uart {
	enum uart_io io;
	uint16_t port; /* UART_IO_PORT */
	volatile uint8_t *mmio; /* UART_IO_MMIO*: register 0 in the direct map's uncached window */
};

static struct uart console_uart;
static struct uart_transmit console_transmit = { .spins = UART_TRANSMIT_SPINS };

static uint8_t uart_in(const struct uart *uart, unsigned int reg)
{
	switch (uart->io) {
	case UART_IO_MMIO8:
		return mmio_read8(uart->mmio + reg);
	case UART_IO_MMIO32:
		return (uint8_t)mmio_read32(uart->mmio + reg * UART_MMIO32_STRIDE);
	case UART_IO_PORT:
		break;
	}
	return inb((uint16_t)(uart->port + reg));
}

static void uart_out(const struct uart *uart, unsigned int reg, uint8_t value)
{
	switch (uart->io) {
	case UART_IO_MMIO8:
		mmio_write8(uart->mmio + reg, value);
		return;
	case UART_IO_MMIO32:
		mmio_write32(uart->mmio + reg * UART_MMIO32_STRIDE, value);
		return;
	case UART_IO_PORT:
		break;
	}
	outb((uint16_t)(uart->port + reg), value);
}

static uint8_t uart_access_in(void *context, unsigned int reg)
{
	return uart_in(context, reg);
}

static void uart_access_out(void *context, unsigned int reg, uint8_t value)
{
	uart_out(context, reg, value);
}

static struct uart_access uart_access(struct uart *uart)
{
	return (struct uart_access){ uart_access_in, uart_access_out, uart };
}

/* TSC cycles, or 0 while the TSC's rate is unknown. */
static uint64_t uart_clock(void)
{
	return tsc_hz() ? rdtsc_ordered() : 0;
}

/*
 * The registers config names, if the kernel can reach them: an MMIO UART must lie in the direct
 * map's uncached window (paging.h), where its registers are mapped PCD|PWT.
 */
static bool uart_reach(const struct console_config *config, struct uart *uart, char *why,
		       size_t size)
{
	uint64_t span = UART_REGISTERS * (config->io == UART_IO_MMIO32 ? UART_MMIO32_STRIDE : 1);

	*uart = (struct uart){ .io = config->io, .port = config->port };
	if (config->io == UART_IO_PORT)
		return true;
	if (config->mmio < DIRECT_MAP_UNCACHED || config->mmio > DIRECT_MAP_LIMIT - span) {
		format(why, size,
		       "MMIO address 0x%llx is outside 0x%lx-0x%lx, the uncached window the kernel "
		       "maps for devices",
		       (unsigned long long)config->mmio, DIRECT_MAP_UNCACHED, DIRECT_MAP_LIMIT - 1);
		return false;
	}
	uart->mmio = phys_to_virt(config->mmio);
	return true;
}

/* Wait until the transmit FIFO is empty, then it takes UART_FIFO_SIZE bytes without polling. */
static void uart_wait_transmit_empty_console(void)
{
	struct uart_access access = uart_access(&console_uart);

	if (!console_transmit.timeout && tsc_hz())
		console_transmit.timeout = tsc_cycles_from_ms(UART_TRANSMIT_TIMEOUT_MS);
	uart_wait_transmit_empty(&access, &console_transmit, uart_clock);
}

/* A FIFO's worth, after the wait: a port UART takes it in one string instruction (one exit in a
 * guest, not one a byte), an MMIO one byte by byte. */
static void uart_send(const uint8_t *bytes, size_t count)
{
	uart_wait_transmit_empty_console();
	if (console_uart.io == UART_IO_PORT) {
		outsb(console_uart.port + UART_DATA, bytes, count);
		return;
	}
	for (size_t i = 0; i < count; i++)
		uart_out(&console_uart, UART_DATA, bytes[i]);
}

/* The console sink: "\n" goes out as "\r\n", UART_FIFO_SIZE bytes per wait for an empty FIFO. */
static void serial_write(const char *text, size_t length)
{
	uint8_t chunk[UART_FIFO_SIZE];
	size_t used = 0;

	for (size_t i = 0; i < length; i++) {
		if (text[i] == '\n') {
			chunk[used++] = '\r';
			if (used == UART_FIFO_SIZE) {
				uart_send(chunk, used);
				used = 0;
			}
		}
		chunk[used++] = (uint8_t)text[i];
		if (used == UART_FIFO_SIZE) {
			uart_send(chunk, used);
			used = 0;
		}
	}
	if (used)
		uart_send(chunk, used);
}

bool serial_probe(const struct console_config *config, char *why, size_t size)
{
	struct uart uart;
	struct uart_access access;

	if (!uart_reach(config, &uart, why, size))
		return false;
	access = uart_access(&uart);
	return uart_probe(&access, why, size);
}

void serial_init(const struct console_config *config)
{
	uint32_t divisor = uart_divisor(config->clock_hz, config->baud);
	char unused[1];

	/* The caller probed config, or it is the PC's COM1: an I/O port, always reachable. */
	if (!uart_reach(config, &console_uart, unused, sizeof(unused)))
		return;
	uart_out(&console_uart, UART_INTERRUPT_ENABLE, 0);
	if (config->baud != UART_BAUD_KEEP) {
		/* The divisor, then 8N1; "as is" keeps both as the firmware set them. */
		uart_out(&console_uart, UART_LINE_CONTROL, LCR_DLAB);
		uart_out(&console_uart, UART_DIVISOR_LOW, (uint8_t)divisor);
		uart_out(&console_uart, UART_DIVISOR_HIGH, (uint8_t)(divisor >> 8));
		uart_out(&console_uart, UART_LINE_CONTROL, LCR_8N1);
	}
	uart_out(&console_uart, UART_FIFO_CONTROL, FCR_ENABLE | FCR_CLEAR_RX | FCR_CLEAR_TX);
	uart_out(&console_uart, UART_MODEM_CONTROL, MCR_DTR | MCR_RTS);
	console_set_sink(serial_write);
}

bool serial_read_byte(uint8_t *byte)
{
	if (!(uart_in(&console_uart, UART_LINE_STATUS) & LSR_DATA_READY))
		return false;
	*byte = uart_in(&console_uart, UART_DATA);
	return true;
}
