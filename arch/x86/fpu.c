/* SPDX-License-Identifier: MIT */
/* Turning SSE on, and the initial FXSAVE image. */
#include "arch/x86/fpu.h"
#include "arch/x86/cpu.h"
#include "arch/x86/processor-flags.h"
#include "lib/string.h"

/* FXSAVE layout (SDM Vol. 1 Table 10-2): FCW at byte 0, MXCSR at byte 24. */
#define FXSAVE_FCW_OFFSET 0
#define FXSAVE_MXCSR_OFFSET 24
#define FCW_DEFAULT 0x037f /* all x87 exceptions masked, 64-bit precision */
#define MXCSR_DEFAULT 0x1f80u /* all SSE exceptions masked, round to nearest */

void fpu_init(void)
{
	write_cr0((read_cr0() & ~(CR0_EM | CR0_TS)) | CR0_MP | CR0_NE);
	write_cr4(read_cr4() | CR4_OSFXSR | CR4_OSXMMEXCPT);
}

void fpu_state_init(struct fpu_state *state)
{
	uint16_t fcw = FCW_DEFAULT;
	uint32_t mxcsr = MXCSR_DEFAULT;

	memset(state, 0, sizeof(*state));
	memcpy(&state->area[FXSAVE_FCW_OFFSET], &fcw, sizeof(fcw));
	memcpy(&state->area[FXSAVE_MXCSR_OFFSET], &mxcsr, sizeof(mxcsr));
}
