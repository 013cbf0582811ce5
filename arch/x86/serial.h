/* SPDX-License-Identifier: MIT */
/* 16550 UART console. */
#ifndef ARCH_X86_SERIAL_H
#define ARCH_X86_SERIAL_H

#include <stdint.h>

/* Program the UART at port for baud 8N1 with FIFOs, and make it the console sink. */
void serial_init(uint16_t port, uint32_t baud);

#endif
