/* SPDX-License-Identifier: MIT */
/* The per-CPU shadow of IA32_DEBUGCTL, started from what each CPU holds (SDM Vol. 4 Table 2-2). */
#include <stdint.h>

#include "arch/x86/debugctl.h"
#include "arch/x86/msr-index.h"
#include "arch/x86/msr.h"
#include "arch/x86/percpu.h"

static DEFINE_PER_CPU(uint64_t, shadow);

void debugctl_update(uint64_t mask, uint64_t value)
{
	uint64_t *held = this_cpu_ptr(shadow);
	uint64_t wanted = (*held & ~mask) | (value & mask);

	if (wanted != *held) {
		wrmsr(MSR_IA32_DEBUGCTL, wanted);
		*held = wanted;
	}
}

uint64_t debugctl_shadow(void)
{
	return *this_cpu_ptr(shadow);
}

void debugctl_cleared(uint64_t mask)
{
	*this_cpu_ptr(shadow) &= ~mask;
}

void debugctl_rewrite(void)
{
	wrmsr(MSR_IA32_DEBUGCTL, *this_cpu_ptr(shadow));
}

void debugctl_rewrite_without(uint64_t mask)
{
	wrmsr(MSR_IA32_DEBUGCTL, *this_cpu_ptr(shadow) & ~mask);
}

uint32_t debugctl_init_cpu(uint64_t *value)
{
	uint64_t found = 0;
	uint32_t fault = rdmsr_safe(MSR_IA32_DEBUGCTL, &found);

	*this_cpu_ptr(shadow) = fault ? 0 : found;
	*value = fault ? 0 : found;
	return fault;
}
