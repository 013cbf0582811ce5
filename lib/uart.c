/* SPDX-License-Identifier: MIT */
/* The 16550 probe and the bounded transmitter wait, over the caller's register accessors. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/format.h"
#include "lib/uart.h"

/* Patterns with every bit both ways; PATTERN_B has IER_RESERVED bits set. */
#define PATTERN_A 0xa5
#define PATTERN_B 0x5a

static uint8_t uart_read(const struct uart_access *uart, unsigned int reg)
{
	return uart->in(uart->context, reg);
}

static void uart_write(const struct uart_access *uart, unsigned int reg, uint8_t value)
{
	uart->out(uart->context, reg, value);
}

static bool scratch_keeps(const struct uart_access *uart)
{
	uint8_t saved = uart_read(uart, UART_SCRATCH);
	bool kept;

	uart_write(uart, UART_SCRATCH, PATTERN_A);
	kept = uart_read(uart, UART_SCRATCH) == PATTERN_A;
	uart_write(uart, UART_SCRATCH, PATTERN_B);
	kept = kept && uart_read(uart, UART_SCRATCH) == PATTERN_B;
	uart_write(uart, UART_SCRATCH, saved);
	return kept;
}

/* DLM written with DLAB set, then read through IER (DLAB clear) and DLM again; all restored. */
static bool divisor_latch_banked(const struct uart_access *uart, uint8_t *ier_seen)
{
	uint8_t lcr = uart_read(uart, UART_LINE_CONTROL), dlm;
	bool kept;

	uart_write(uart, UART_LINE_CONTROL, lcr | LCR_DLAB);
	dlm = uart_read(uart, UART_DIVISOR_HIGH);
	uart_write(uart, UART_DIVISOR_HIGH, PATTERN_B);
	uart_write(uart, UART_LINE_CONTROL, lcr & (uint8_t)~LCR_DLAB);
	*ier_seen = uart_read(uart, UART_INTERRUPT_ENABLE);
	uart_write(uart, UART_LINE_CONTROL, lcr | LCR_DLAB);
	kept = uart_read(uart, UART_DIVISOR_HIGH) == PATTERN_B;
	uart_write(uart, UART_DIVISOR_HIGH, dlm);
	uart_write(uart, UART_LINE_CONTROL, lcr);
	return kept && !(*ier_seen & IER_RESERVED);
}

bool uart_probe(const struct uart_access *uart, char *why, size_t size)
{
	uint8_t ier_seen;

	if (uart_read(uart, UART_LINE_STATUS) == LSR_NOTHING_THERE) {
		format(why, size, "no 16550 UART answers: its line status reads 0xff");
		return false;
	}
	if (!scratch_keeps(uart)) {
		format(why, size,
		       "no 16550 UART answers: its scratch register does not keep a value");
		return false;
	}
	if (!divisor_latch_banked(uart, &ier_seen)) {
		format(why, size,
		       "no 16550 UART answers: its divisor latch is not banked behind LCR.DLAB "
		       "(0x%02x written to DLM, IER read 0x%02x): memory, not a UART?",
		       PATTERN_B, ier_seen);
		return false;
	}
	return true;
}

bool uart_wait_transmit_empty(const struct uart_access *uart, struct uart_transmit *transmit,
			      uint64_t (*now)(void))
{
	uint64_t start;

	if (uart_read(uart, UART_LINE_STATUS) & LSR_TX_HOLDING_EMPTY) {
		transmit->stalled = false;
		return true;
	}
	if (transmit->stalled)
		return false;
	start = now();
	for (uint32_t spins = 0;
	     start ? now() - start < transmit->timeout : spins < transmit->spins; spins++)
		if (uart_read(uart, UART_LINE_STATUS) & LSR_TX_HOLDING_EMPTY)
			return true;
	transmit->stalled = true;
	return false;
}
