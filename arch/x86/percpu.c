/* SPDX-License-Identifier: MIT */
/* Per-CPU structs, one per possible CPU. */
#include "arch/x86/percpu.h"
#include "arch/x86/msr.h"

#include <stddef.h>

_Static_assert(offsetof(struct cpu, kernel_stack_top) == CPU_KERNEL_STACK_TOP, "syscall entry");
_Static_assert(offsetof(struct cpu, user_rsp) == CPU_USER_RSP, "syscall entry");
_Static_assert(offsetof(struct cpu, index) == CPU_INDEX, "this_cpu_index()");

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
