/* SPDX-License-Identifier: MIT */
/* The per-CPU shadow of IA32_DEBUGCTL, started from what each CPU holds (SDM Vol. 4 Table 2-2). */
#include <stdint.h>

#include "arch/x86/debugctl.h"
#include "arch/x86/msr-index.h"
#include "arch/x86/msr.h"
#include "arch/x86/percpu.h"

static uint64_t shadow[MAX_CPUS];

void debugctl_update(uint64_t mask, uint64_t value)
{
	uint64_t *held = &shadow[this_cpu_index()];
	uint64_t wanted = (*held & ~mask) | (value & mask);

	if (wanted != *held) {
		wrmsr(MSR_IA32_DEBUGCTL, wanted);
		*held = wanted;
	}
}

uint64_t debugctl_shadow(void)
{
	return shadow[this_cpu_index()];
}

void debugctl_cleared(uint64_t mask)
{
	shadow[this_cpu_index()] &= ~mask;
}

void debugctl_rewrite(void)
{
	wrmsr(MSR_IA32_DEBUGCTL, shadow[this_cpu_index()]);
}

uint32_t debugctl_init_cpu(uint64_t *value)
{
	uint64_t found = 0;
	uint32_t fault = rdmsr_safe(MSR_IA32_DEBUGCTL, &found);

	shadow[this_cpu_index()] = fault ? 0 : found;
	*value = fault ? 0 : found;
	return fault;
}
