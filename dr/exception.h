/* SPDX-License-Identifier: MIT */
/* #DB: which condition fired, who owns it, and the hit it records. */
#ifndef DR_EXCEPTION_H
#define DR_EXCEPTION_H

#include <stdbool.h>

#include "arch/x86/regs.h"

/*
 * The #DB handler (arch/x86/exceptions.h's exception_register()), inside arch's debug bracket
 * (DR7 clear): dispatch each enabled slot that fired, a single step and a general detect to
 * their owners and hit rings. Returns whether it was dr/'s; an unexpected #DB keeps its DR6.
 */
bool dr_debug_exception(struct cpu_regs *regs);

#endif
