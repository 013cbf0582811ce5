/* SPDX-License-Identifier: MIT */
/* Host tests of lib/uart.c: the probe against a 16550 model and memory; the transmitter wait. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "lib/uart.h"
#include "tests/host/host_test.h"

/* A PC16550D as the data sheet describes the registers the probe touches. */
struct model_16550 {
	uint8_t ier, lcr, mcr, lsr, scratch, dll, dlm;
	unsigned int lsr_reads;
};

static uint8_t model_in(void *context, unsigned int reg)
{
	struct model_16550 *uart = context;
	bool dlab = uart->lcr & LCR_DLAB;

	switch (reg) {
	case UART_DATA:
		return dlab ? uart->dll : 0;
	case UART_INTERRUPT_ENABLE:
		return dlab ? uart->dlm : uart->ier;
	case UART_LINE_CONTROL:
		return uart->lcr;
	case UART_MODEM_CONTROL:
		return uart->mcr;
	case UART_LINE_STATUS:
		uart->lsr_reads++;
		return uart->lsr;
	case UART_SCRATCH:
		return uart->scratch;
	default:
		return 0x01; /* IIR: no interrupt pending; MSR */
	}
}

static void model_out(void *context, unsigned int reg, uint8_t value)
{
	struct model_16550 *uart = context;
	bool dlab = uart->lcr & LCR_DLAB;

	switch (reg) {
	case UART_DATA:
		if (dlab)
			uart->dll = value;
		return;
	case UART_INTERRUPT_ENABLE:
		if (dlab)
			uart->dlm = value;
		else
			uart->ier = value & 0x0f; /* bits 7:4 are always 0 */
		return;
	case UART_LINE_CONTROL:
		uart->lcr = value;
		return;
	case UART_MODEM_CONTROL:
		uart->mcr = value;
		return;
	case UART_SCRATCH:
		uart->scratch = value;
		return;
	default:
		return;
	}
}

/* Plain memory: every register keeps what is written, as RAM behind console=mmio does. */
static uint8_t memory_in(void *context, unsigned int reg)
{
	return ((uint8_t *)context)[reg];
}

static void memory_out(void *context, unsigned int reg, uint8_t value)
{
	((uint8_t *)context)[reg] = value;
}

HOST_TEST(uart_probe_takes_a_16550_and_leaves_its_registers_as_they_were)
{
	struct model_16550 uart = {
		.ier = 0x05, .lcr = LCR_8N1, .lsr = 0x60, .scratch = 0x33, .dll = 0x01, .dlm = 0x00
	};
	struct model_16550 before = uart;
	struct uart_access access = { model_in, model_out, &uart };
	char why[160] = "";

	host_checkf(uart_probe(&access, why, sizeof(why)), "refused: %s", why);
	uart.lsr_reads = before.lsr_reads;
	host_check(memcmp(&before, &uart, sizeof(uart)) == 0);
}

HOST_TEST(uart_probe_refuses_memory_that_keeps_what_is_written_and_restores_it)
{
	uint8_t memory[UART_REGISTERS] = { 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88 };
	uint8_t before[UART_REGISTERS];
	struct uart_access access = { memory_in, memory_out, memory };
	char why[160] = "";

	memcpy(before, memory, sizeof(memory));
	host_check(!uart_probe(&access, why, sizeof(why)));
	host_check_str("no 16550 UART answers: its divisor latch is not banked behind LCR.DLAB "
		       "(0x5a written to DLM, IER read 0x5a): memory, not a UART?",
		       why);
	host_check(memcmp(before, memory, sizeof(memory)) == 0);
}

static uint8_t forgetful_in(void *context, unsigned int reg)
{
	(void)context;
	(void)reg;
	return 0;
}

static void forgetful_out(void *context, unsigned int reg, uint8_t value)
{
	(void)context;
	(void)reg;
	(void)value;
}

HOST_TEST(uart_probe_refuses_an_empty_bus_and_registers_that_forget)
{
	uint8_t bus[UART_REGISTERS];
	struct uart_access access = { memory_in, memory_out, bus };
	struct uart_access forgetful = { forgetful_in, forgetful_out, NULL };
	char why[160] = "";

	memset(bus, LSR_NOTHING_THERE, sizeof(bus));
	host_check(!uart_probe(&access, why, sizeof(why)));
	host_check_str("no 16550 UART answers: its line status reads 0xff", why);
	host_check(!uart_probe(&forgetful, why, sizeof(why)));
	host_check_str("no 16550 UART answers: its scratch register does not keep a value", why);
}

static uint64_t fake_time;

static uint64_t fake_clock(void)
{
	return ++fake_time; /* one tick a poll */
}

static uint64_t no_clock(void)
{
	return 0;
}

HOST_TEST(uart_transmit_wait_on_a_uart_that_never_drains_costs_one_timeout_in_all)
{
	struct model_16550 uart = { .lsr = 0 };
	struct uart_access access = { model_in, model_out, &uart };
	struct uart_transmit transmit = { .timeout = 1000, .spins = 500 };
	unsigned int waits = 10000;

	fake_time = 1;
	for (unsigned int i = 0; i < waits; i++)
		host_check(!uart_wait_transmit_empty(&access, &transmit, fake_clock));
	host_check(transmit.stalled);
	/* One wait of at most 1000 ticks of polls, then one read of LSR per wait. */
	host_checkf(uart.lsr_reads <= 1000 + waits + 1, "%u reads of LSR", uart.lsr_reads);
	uart.lsr = LSR_TX_HOLDING_EMPTY;
	host_check(uart_wait_transmit_empty(&access, &transmit, fake_clock));
	host_check(!transmit.stalled);
}

HOST_TEST(uart_transmit_wait_before_the_clock_runs_polls_spins_times)
{
	struct model_16550 uart = { .lsr = 0 };
	struct uart_access access = { model_in, model_out, &uart };
	struct uart_transmit transmit = { .timeout = 1000, .spins = 500 };

	host_check(!uart_wait_transmit_empty(&access, &transmit, no_clock));
	host_check_eq_u64(1 + 500, uart.lsr_reads);
	host_check(!uart_wait_transmit_empty(&access, &transmit, no_clock));
	host_check_eq_u64(1 + 500 + 1, uart.lsr_reads);
}
