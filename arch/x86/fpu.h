/* SPDX-License-Identifier: MIT */
/* x87/SSE state of user tasks: FXSAVE and FXRSTOR (SDM Vol. 1 §10.5). The kernel uses none. */
#ifndef ARCH_X86_FPU_H
#define ARCH_X86_FPU_H

#include <stdint.h>

struct fpu_state {
	uint8_t area[512];
} __attribute__((aligned(16)));

/* Enable SSE for user code: CR0.MP=1, EM=0, TS=0; CR4.OSFXSR and OSXMMEXCPT. */
void fpu_init(void);

/* The state FNINIT and a reset MXCSR give: FCW 0x37f, MXCSR 0x1f80, all registers 0. */
void fpu_state_init(struct fpu_state *state);

/* Never fault: state is 16-byte aligned and SSE is on after fpu_init(). */
static inline void fxsave(struct fpu_state *state)
{
	asm volatile("fxsave64 %0" : "=m"(*state));
}

static inline void fxrstor(const struct fpu_state *state)
{
	asm volatile("fxrstor64 %0" : : "m"(*state));
}

#endif
