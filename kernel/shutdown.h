/* SPDX-License-Identifier: MIT */
/* Ending a run: the final KTAP line, then QEMU's isa-debug-exit or a halt. */
#ifndef KERNEL_SHUTDOWN_H
#define KERNEL_SHUTDOWN_H

#include <stdbool.h>

/* Codes written to isa-debug-exit (platform/pc/exit_port.h); QEMU exits with (code << 1) | 1. */
enum exit_code {
	EXIT_PASS = 0x10,
	EXIT_FAIL = 0x11,
	EXIT_USAGE = 0x12,
	EXIT_BAIL_OUT = 0x13,
};

/* Off by default, so that real hardware halts instead of writing to a port it may not have. */
void shutdown_set_isa_debug_exit(bool enable);

/* Stop the other CPUs, print the final line, then exit through isa-debug-exit if enabled, else
 * halt for ever. */
void __attribute__((noreturn)) shutdown_exit(enum exit_code code);

/* Register the panic handler (lib/panic.h): "Bail out! reason" at the top level, then
 * shutdown_exit(EXIT_BAIL_OUT). First thing at boot, so that every panic() ends the run. */
void shutdown_init(void);

#endif
