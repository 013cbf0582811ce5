/* SPDX-License-Identifier: MIT */
/* Host shim of arch/x86/percpu.h: the current CPU from the shim instead of %gs. */
/*
 * struct cpu comes from the real header; the CPU is 0 unless shim_set_cpu() says. Per-CPU variables
 * are plain arrays of SHIM_CPUS here, the shim's own bound (the kernel sizes them at boot).
 */
#ifndef SHIM_ARCH_X86_PERCPU_H
#define SHIM_ARCH_X86_PERCPU_H

/* The real accessors read %gs: renamed out of the way, never called. */
#define this_cpu shim_unused_gs_this_cpu
#define this_cpu_index shim_unused_gs_this_cpu_index
#include_next "arch/x86/percpu.h"
#undef this_cpu
#undef this_cpu_index
#undef DEFINE_PER_CPU
#undef per_cpu_ptr
#undef this_cpu_ptr

#define SHIM_CPUS 8
#define DEFINE_PER_CPU(type, name) __typeof__(type) name[SHIM_CPUS]
#define per_cpu_ptr(var, cpu) (&(var)[shim_cpu_checked(cpu)])
#define this_cpu_ptr(var) (&(var)[this_cpu_index()])

struct cpu *this_cpu(void);
unsigned int this_cpu_index(void);
/* cpu, or the test fails when cpu >= SHIM_CPUS. */
unsigned int shim_cpu_checked(unsigned int cpu);

#endif
