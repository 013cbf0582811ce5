/* SPDX-License-Identifier: MIT */
/* Host shim of arch/x86/cpu.h: the interrupt flag as a variable, a TSC the shim advances. */
#ifndef SHIM_ARCH_X86_CPU_H
#define SHIM_ARCH_X86_CPU_H

#include <stdint.h>

/* RFLAGS.IF, as the real local_irq_save() returns it. */
#define SHIM_RFLAGS_IF (1ul << 9)

/* Interrupts are one flag of the shim (tests/host/shim/shim.c); on at power-on, as for tests. */
void local_irq_enable(void);
void local_irq_disable(void);
unsigned long local_irq_save(void);
void local_irq_restore(unsigned long flags);

/* Each read advances the TSC by 1000 cycles (shim.c): time moves, deterministically. */
uint64_t rdtsc_ordered(void);

/* CR4 as a variable of the shim (shim.c): pmu/selfmon.c sets and clears PCE. */
unsigned long read_cr4(void);
void write_cr4(unsigned long value);

static inline void cpu_relax(void)
{
}

#endif
