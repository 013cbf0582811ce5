/* SPDX-License-Identifier: MIT */
/* Host shim of arch/x86/percpu.h: the current CPU from the shim instead of %gs. */
/* struct cpu and MAX_CPUS come from the real header; the CPU is 0 unless shim_set_cpu() says. */
#ifndef SHIM_ARCH_X86_PERCPU_H
#define SHIM_ARCH_X86_PERCPU_H

/* The real accessors read %gs: renamed out of the way, never called. */
#define this_cpu shim_unused_gs_this_cpu
#define this_cpu_index shim_unused_gs_this_cpu_index
#include_next "arch/x86/percpu.h"
#undef this_cpu
#undef this_cpu_index

struct cpu *this_cpu(void);
unsigned int this_cpu_index(void);

#endif
