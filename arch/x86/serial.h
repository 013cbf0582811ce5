/* SPDX-License-Identifier: MIT */
/* 16550 UART console. */
#ifndef ARCH_X86_SERIAL_H
#define ARCH_X86_SERIAL_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Whether a 16550 answers at port: its line status register reads as something other than an
 * empty bus (0xff), and its scratch register keeps two patterns written to it (restored after).
 * Writes nothing but the scratch register, port + 7. The caller keeps port + 7 below 0x10000.
 */
bool serial_probe(uint16_t port);

/* Program the UART at port for baud 8N1 with FIFOs, and make it the console sink. */
void serial_init(uint16_t port, uint32_t baud);

#endif
