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

/* The CPU cleared the bits of mask itself (BTF, when it delivers #DB): the shadow follows,
 * nothing is written. */
void debugctl_cleared(uint64_t mask);

/*
 * Start the calling CPU's shadow from the MSR, once as the CPU comes up: firmware may have set
 * bits, and a shadow that starts at 0 would write them away. Returns RDMSR's exinfo: 0 when it
 * read, with the value in *value and the shadow; otherwise *value and the shadow are 0.
 */
uint32_t debugctl_init_cpu(uint64_t *value);
/* Write the shadow to the MSR, whatever the MSR holds: after a write behind the shadow. */
void debugctl_rewrite(void);
/*
 * The same with the bits of mask clear in the MSR (the shadow keeps them): an owner turns its
 * bits off before it rewrites what they depend on, then calls debugctl_rewrite().
 */
void debugctl_rewrite_without(uint64_t mask);

#endif
