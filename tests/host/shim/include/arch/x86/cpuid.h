/* SPDX-License-Identifier: MIT */
/* Host shim of arch/x86/cpuid.h: cpuid() answered by the emulated CPU's profile. */
/* The leaves and bits come from the real header; a leaf the model does not own reads 0. */
#ifndef SHIM_ARCH_X86_CPUID_H
#define SHIM_ARCH_X86_CPUID_H

#include <stdint.h>

/* The real accessors are instructions: renamed out of the way, never called. */
#define cpuid shim_unused_asm_cpuid
#define cpuid_silicon shim_unused_asm_cpuid_silicon
#include_next "arch/x86/cpuid.h"
#undef cpuid
#undef cpuid_silicon

struct cpuid_result cpuid(uint32_t leaf, uint32_t subleaf);

#endif
