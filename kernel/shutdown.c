/* SPDX-License-Identifier: MIT */
/* Ending a run: stop the other CPUs, the final line, then the exit port or a halt. */
#include <stdbool.h>

#include "arch/x86/cpu.h"
#include "arch/x86/percpu.h"
#include "kernel/shutdown.h"
#include "kernel/smp.h"
#include "lib/ktap.h"
#include "lib/panic.h"
#include "platform/pc/exit_port.h"

static bool isa_debug_exit;
static unsigned int exiting_cpu; /* 1 + the index of the CPU that ends the run; 0 until then */

void shutdown_set_isa_debug_exit(bool enable)
{
	isa_debug_exit = enable;
}

void shutdown_exit(enum exit_code code)
{
	local_irq_disable();
	/* One CPU prints the final line, once: a fault while printing it, or a second CPU that
	 * ends the run too, halts here. The others are stopped first, so nothing follows it. */
	unsigned int self = this_cpu_index() + 1, first = 0;

	if (__atomic_compare_exchange_n(&exiting_cpu, &first, self, false, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE)) {
		smp_stop_others();
		ktap_end();
	} else if (first != self) {
		for (;;)
			halt();
	}
	if (isa_debug_exit)
		exit_port_write(code);
	for (;;)
		halt();
}

/* The panic handler (lib/panic.h): "Bail out! reason" unless the run is ending already, then
 * shutdown_exit(EXIT_BAIL_OUT). */
static void __attribute__((noreturn)) shutdown_panic(const char *reason)
{
	if (!__atomic_load_n(&exiting_cpu, __ATOMIC_ACQUIRE))
		ktap_bail_out(reason);
	shutdown_exit(EXIT_BAIL_OUT);
}

void shutdown_init(void)
{
	panic_set_handler(shutdown_panic);
}
