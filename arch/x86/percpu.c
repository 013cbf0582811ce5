/* SPDX-License-Identifier: MIT */
/* Per-CPU structs, one per possible CPU. */
#include "arch/x86/percpu.h"
#include "arch/x86/msr.h"

static struct cpu cpus[MAX_CPUS];

void percpu_init(unsigned int index)
{
	struct cpu *cpu = &cpus[index];

	cpu->self = cpu;
	cpu->index = index;
	write_gs_base_uncounted((uint64_t)cpu);
}

struct cpu *percpu_get(unsigned int index)
{
	return &cpus[index];
}
