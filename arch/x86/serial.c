/* SPDX-License-Identifier: MIT */
/* 16550 UART console (National Semiconductor PC16550D data sheet). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/cpu.h"
#include "arch/x86/io.h"
#include "arch/x86/percpu.h"
#include "arch/x86/serial.h"
#include "arch/x86/spinlock.h"
#include "arch/x86/tsc.h"
#include "lib/console.h"

#define UART_DATA 0 /* DLAB=0 */
#define UART_INTERRUPT_ENABLE 1 /* DLAB=0 */
#define UART_DIVISOR_LOW 0 /* DLAB=1 */
#define UART_DIVISOR_HIGH 1 /* DLAB=1 */
#define UART_FIFO_CONTROL 2
#define UART_LINE_CONTROL 3
#define UART_MODEM_CONTROL 4
#define UART_LINE_STATUS 5
#define UART_SCRATCH 7

#define FCR_ENABLE 0x01
#define FCR_CLEAR_RX 0x02
#define FCR_CLEAR_TX 0x04
#define LCR_8N1 0x03
#define LCR_DLAB 0x80
#define MCR_DTR 0x01
#define MCR_RTS 0x02
#define LSR_TX_HOLDING_EMPTY 0x20
#define LSR_NOTHING_THERE 0xff /* what a read of an undecoded ISA port returns */
/* Scratch patterns with every bit both ways, as Linux's 8250 autoconfig writes them. */
#define SCRATCH_PATTERN_A 0xa5
#define SCRATCH_PATTERN_B 0x5a

#define UART_CLOCK_DIVIDEND 115200
#define UART_FIFO_SIZE 16
/* About 10 s at 115200 baud: a UART that never drains must not hang the kernel. */
#define UART_WAIT_LIMIT 100000000u

static uint16_t uart_port;

/* Wait until the transmit FIFO is empty, then it takes UART_FIFO_SIZE bytes without polling. */
static void uart_wait_transmit_empty(void)
{
	for (uint32_t spins = 0; spins < UART_WAIT_LIMIT; spins++)
		if (inb(uart_port + UART_LINE_STATUS) & LSR_TX_HOLDING_EMPTY)
			return;
}

static void uart_put(char c, unsigned int *room)
{
	if (*room == 0) {
		uart_wait_transmit_empty();
		*room = UART_FIFO_SIZE;
	}
	outb(uart_port + UART_DATA, (uint8_t)c);
	(*room)--;
}

/* The console sink: "\n" goes out as "\r\n". */
static void serial_write(const char *text, size_t length)
{
	unsigned int room = 0;

	for (size_t i = 0; i < length; i++) {
		if (text[i] == '\n')
			uart_put('\r', &room);
		uart_put(text[i], &room);
	}
}

/*
 * One line at a time from any CPU. A CPU may print while it holds the lock (an exception
 * report in the middle of a line), so the lock nests per CPU; a holder that never lets go (it
 * faulted, or was stopped by platform_exit()) loses the lock after CONSOLE_STEAL_MS rather
 * than silence the run.
 */
#define CONSOLE_STEAL_MS 1000
static struct spinlock console_lock = SPINLOCK_INIT("console");
static unsigned int console_depth;

static unsigned long serial_guard_enter(void)
{
	unsigned long flags = local_irq_save();
	uint64_t start;

	if (spin_is_held(&console_lock)) {
		console_depth++;
		return flags;
	}
	start = rdtsc_ordered();
	while (!spin_trylock(&console_lock)) {
		cpu_relax();
		if (tsc_hz() && rdtsc_ordered() - start > tsc_cycles_from_ms(CONSOLE_STEAL_MS)) {
			console_lock.holder = this_cpu_index();
			break;
		}
	}
	console_depth = 1;
	return flags;
}

static void serial_guard_leave(unsigned long flags)
{
	if (--console_depth == 0)
		spin_unlock(&console_lock);
	local_irq_restore(flags);
}

bool serial_probe(uint16_t port)
{
	uint8_t saved = inb(port + UART_SCRATCH);
	bool found;

	/* Only reads and the scratch register, which holds no state of the UART's: a port that
	 * is something else (isa-debug-exit at 0xf4 ends the run on any write to its first
	 * registers) is not written where it would act. */
	if (inb(port + UART_LINE_STATUS) == LSR_NOTHING_THERE)
		return false;
	outb(port + UART_SCRATCH, SCRATCH_PATTERN_A);
	found = inb(port + UART_SCRATCH) == SCRATCH_PATTERN_A;
	outb(port + UART_SCRATCH, SCRATCH_PATTERN_B);
	found = found && inb(port + UART_SCRATCH) == SCRATCH_PATTERN_B;
	outb(port + UART_SCRATCH, saved);
	return found;
}

void serial_init(uint16_t port, uint32_t baud)
{
	uint16_t divisor = (uint16_t)(UART_CLOCK_DIVIDEND / baud);

	uart_port = port;
	outb(port + UART_INTERRUPT_ENABLE, 0);
	outb(port + UART_LINE_CONTROL, LCR_DLAB);
	outb(port + UART_DIVISOR_LOW, (uint8_t)divisor);
	outb(port + UART_DIVISOR_HIGH, (uint8_t)(divisor >> 8));
	outb(port + UART_LINE_CONTROL, LCR_8N1);
	outb(port + UART_FIFO_CONTROL, FCR_ENABLE | FCR_CLEAR_RX | FCR_CLEAR_TX);
	outb(port + UART_MODEM_CONTROL, MCR_DTR | MCR_RTS);
	console_set_sink(serial_write);
	console_set_guard(serial_guard_enter, serial_guard_leave);
}
