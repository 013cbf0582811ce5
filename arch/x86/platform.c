/* SPDX-License-Identifier: MIT */
/* Ending a run. */
#include <stdarg.h>
#include <stdbool.h>

#include "arch/x86/cpu.h"
#include "arch/x86/io.h"
#include "arch/x86/platform.h"
#include "lib/format.h"
#include "lib/ktap.h"

static bool isa_debug_exit;
static bool exiting;

void platform_set_isa_debug_exit(bool enable)
{
	isa_debug_exit = enable;
}

void platform_exit(enum platform_exit_code code)
{
	local_irq_disable();
	/* A fault while printing the final line must not print a second one. */
	if (!exiting) {
		exiting = true;
		ktap_end();
	}
	if (isa_debug_exit)
		outl(ISA_DEBUG_EXIT_PORT, code);
	for (;;)
		halt();
}

void platform_bail_out(const char *fmt, ...)
{
	char reason[160];
	va_list args;

	va_start(args, fmt);
	vformat(reason, sizeof(reason), fmt, args);
	va_end(args);
	if (!exiting)
		ktap_bail_out(reason);
	platform_exit(EXIT_BAIL_OUT);
}
