/* SPDX-License-Identifier: MIT */
/* dr/'s start: each CPU's registers and shadow, the state, the #DB handler and the syscalls. */
#include <stdint.h>

#include "arch/x86/cpu.h"
#include "arch/x86/debugctl.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/percpu.h"
#include "arch/x86/processor-flags.h"
#include "arch/x86/traps.h"
#include "dr/dr.h"
#include "dr/exception.h"
#include "dr/state.h"
#include "dr/switch.h"
#include "dr/syscall.h"
#include "lib/report.h"

/* arch runs it around every #DB (arch/x86/traps.h): first and last. */
static const struct debug_bracket dr_bracket = {
	.enter = dr_debug_enter,
	.exit = dr_debug_exit,
};

/* Firmware may leave DEBUGCTL bits set (SDM Vol. 4 gives 0 only at reset): keep them. */
static void dr_init_debugctl(void)
{
	uint64_t value = 0;

	if (debugctl_init_cpu(&value))
		report_diag("CPU %u: IA32_DEBUGCTL faults on RDMSR; its shadow starts at 0",
			    this_cpu_index());
	else if (value)
		report_diag("CPU %u: IA32_DEBUGCTL=0x%llx at start; its shadow starts there",
			    this_cpu_index(), (unsigned long long)value);
}

void dr_init_cpu(void)
{
	dr_init_debugctl();
	write_cr4(read_cr4() | CR4_DE);
	dr_state_init_cpu();
	/* System-wide breakpoints installed before this CPU came up. */
	dr_sync_current();
}

void dr_init(void)
{
	dr_init_cpu();
	dr_state_init();
	exception_set_debug_bracket(&dr_bracket);
	exception_register(X86_EXC_DB, dr_debug_exception);
	dr_syscalls_init();
}
