/* SPDX-License-Identifier: MIT */
/* Ending a run: the final KTAP line, then QEMU's isa-debug-exit or a halt. */
#ifndef ARCH_X86_PLATFORM_H
#define ARCH_X86_PLATFORM_H

#include <stdbool.h>

/* Codes written to isa-debug-exit; QEMU exits with (code << 1) | 1 (docs/output.md). */
enum platform_exit_code {
	EXIT_PASS = 0x10,
	EXIT_FAIL = 0x11,
	EXIT_USAGE = 0x12,
	EXIT_BAIL_OUT = 0x13,
};

#define ISA_DEBUG_EXIT_PORT 0xf4

/* Off by default, so that real hardware halts instead of writing to a port it may not have. */
void platform_set_isa_debug_exit(bool enable);

/* Print the final line, then exit through isa-debug-exit if enabled, else halt for ever. */
void __attribute__((noreturn)) platform_exit(enum platform_exit_code code);

/* Register the panic handler (lib/panic.h): "Bail out! reason" at the top level, then
 * platform_exit(EXIT_BAIL_OUT). First thing at boot, so that every panic() ends the run. */
void platform_init(void);

#endif
