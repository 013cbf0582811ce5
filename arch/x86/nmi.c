/* SPDX-License-Identifier: MIT */
/* NMI dispatch: the handlers that may claim an NMI, then the one for NMIs nobody claims. */
#include "arch/x86/nmi.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/traps.h"

static nmi_handler handlers[NMI_HANDLERS_MAX];
static unsigned int handler_count;
static void (*volatile unclaimed)(struct cpu_regs *regs);

static bool nmi_dispatch(struct cpu_regs *regs)
{
	void (*fallback)(struct cpu_regs * regs) = unclaimed;

	for (unsigned int i = 0; i < handler_count; i++)
		if (handlers[i](regs))
			return true;
	if (!fallback)
		return false; /* nobody's: an unexpected NMI */
	fallback(regs);
	return true;
}

void nmi_register(nmi_handler handler)
{
	if (handler_count == NMI_HANDLERS_MAX)
		return;
	handlers[handler_count++] = handler;
	exception_register(X86_EXC_NMI, nmi_dispatch);
}

void nmi_set_unclaimed(void (*handler)(struct cpu_regs *regs))
{
	unclaimed = handler;
	exception_register(X86_EXC_NMI, nmi_dispatch);
}
