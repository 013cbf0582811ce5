/* SPDX-License-Identifier: MIT */
/* IA32_DEBUGCTL through one per-CPU shadow, since dr/ (BTF) and ds/ (TR, BTS...) share it. */
#ifndef ARCH_X86_DEBUGCTL_H
#define ARCH_X86_DEBUGCTL_H

#include <stdint.h>

/*
 * Set the bits of mask to value (other bits keep their shadowed value) and write the MSR only
 * when the result differs from what the shadow says it holds. May #GP for bits the CPU does not
 * support: callers only pass bits they found supported.
 */
void debugctl_update(uint64_t mask, uint64_t value);
uint64_t debugctl_shadow(void);

#endif
