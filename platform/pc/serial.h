/* SPDX-License-Identifier: MIT */
/* 16550 UART console. */
#ifndef PLATFORM_PC_SERIAL_H
#define PLATFORM_PC_SERIAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/uart.h"

/*
 * Whether a 16550 answers where config says (uart_probe(), lib/uart.h: line status, scratch, and
 * the divisor latch behind DLAB, which memory cannot imitate); its registers are left as they
 * were. An MMIO UART must lie in the uncached window of the direct map (DIRECT_MAP_UNCACHED to
 * DIRECT_MAP_LIMIT, paging.h) and is not touched otherwise. On false writes why to why (one line,
 * without the address).
 */
bool serial_probe(const struct console_config *config, char *why, size_t size);

/*
 * Make the UART at config the console sink: interrupts off, FIFOs on, DTR and RTS; the divisor
 * for config->baud and 8N1, or, for UART_BAUD_KEEP, the firmware's divisor and line settings.
 * config is one serial_probe() accepted, or an I/O port.
 */
void serial_init(const struct console_config *config);

/* A byte the console UART received, if one waits (LSR data ready): true and *byte, else false. */
bool serial_read_byte(uint8_t *byte);

#endif
