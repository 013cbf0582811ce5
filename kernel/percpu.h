/* SPDX-License-Identifier: MIT */
/* Per-CPU data for the CPUs to start (arch/x86/percpu.h addresses it). */
#ifndef KERNEL_PERCPU_H
#define KERNEL_PERCPU_H

/*
 * Give CPUs 1 to count - 1 their zeroed copies (arch/x86/percpu.h); once, before any of them
 * starts. Returns how many CPUs have one, CPU 0 included: fewer than count when memory ran out.
 */
unsigned int percpu_setup(unsigned int count);

#endif
