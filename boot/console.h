/* SPDX-License-Identifier: MIT */
/* The boot console: console=, else the UART the ACPI SPCR names, else COM1; and why. */
#ifndef BOOT_CONSOLE_H
#define BOOT_CONSOLE_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/uart.h"

/*
 * Start the console (docs/consoles.md), in this order:
 * 1. console= (given->given) on a valid command line, when the kernel can reach it and a 16550
 *    answers there; when not, write "option 'console': ..." to error and go on;
 * 2. the UART of the firmware's SPCR (through rsdp, rsdp_length: the loader's RSDP or NULL),
 *    when it parses, is a 16550 the kernel can reach, and answers;
 * 3. COM1, port 0x3f8 at 115200 baud, unprobed.
 * Returns false when step 1 refused console= (the line then does not stand).
 */
bool boot_console_start(const struct console_config *given, bool valid, const void *rsdp,
			size_t rsdp_length, char *error, size_t size);

/*
 * Print "# console: ..." naming the console and why it was chosen. Nothing may precede
 * "KTAP version 1" (docs/output.md), so the choice is told after the banner.
 */
void boot_console_report(void);

#endif
