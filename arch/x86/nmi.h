/* SPDX-License-Identifier: MIT */
/* NMI: the handlers that may claim one, and the one for an NMI that none claims. */
#ifndef ARCH_X86_NMI_H
#define ARCH_X86_NMI_H

#include <stdbool.h>

#include "arch/x86/regs.h"

#define NMI_HANDLERS_MAX 4

/* A handler returns true when the NMI was its own. Called in NMI context, in registration order. */
typedef bool (*nmi_handler)(struct cpu_regs *regs);
void nmi_register(nmi_handler handler);

/*
 * The handler of an NMI no registered handler claims (platform/pc/nmi_timer.c's), or NULL: such
 * an NMI is then unexpected. Called in NMI context.
 */
void nmi_set_unclaimed(void (*handler)(struct cpu_regs *regs));

#endif
