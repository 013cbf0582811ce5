/* SPDX-License-Identifier: MIT */
/* Host shim of arch/x86/msr.h: RDMSR and WRMSR served by the emulated CPU's register file. */
/*
 * The MSR numbers come from the real header (msr-index.h); the accessors go to
 * emulator/registers.c with the shim's profile. Every write is counted in
 * this_cpu()->writes.msr as the real one is, and logged (tests/host/shim/shim.h).
 */
#ifndef SHIM_ARCH_X86_MSR_H
#define SHIM_ARCH_X86_MSR_H

#include <stdint.h>

/* The real accessors are instructions: renamed out of the way, never called. */
#define rdmsr shim_unused_asm_rdmsr
#define rdmsr_safe shim_unused_asm_rdmsr_safe
#define wrmsr shim_unused_asm_wrmsr
#define wrmsr_safe shim_unused_asm_wrmsr_safe
#define write_gs_base_uncounted shim_unused_asm_write_gs_base_uncounted
#include_next "arch/x86/msr.h"
#undef rdmsr
#undef rdmsr_safe
#undef wrmsr
#undef wrmsr_safe
#undef write_gs_base_uncounted

/*
 * As on the CPU: an MSR the model does not own, or an access it answers with #GP(0), ends the
 * running host test as a failure (the kernel would take the #GP); the _safe variants return
 * EXINFO(X86_EXC_GP, 0) instead, and *value is then 0.
 */
uint64_t rdmsr(uint32_t index);
uint32_t rdmsr_safe(uint32_t index, uint64_t *value);
void wrmsr(uint32_t index, uint64_t value);
uint32_t wrmsr_safe(uint32_t index, uint64_t value);

#endif
