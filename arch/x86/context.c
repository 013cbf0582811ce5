/* SPDX-License-Identifier: MIT */
/* The first context of a new kernel stack. */
#include <stdint.h>

#include "arch/x86/context.h"

extern const char context_trampoline[];

struct context *context_init(uint64_t stack_top, void (*entry)(void *), void *arg)
{
	/* 16-byte aligned at the trampoline's call, as the SysV ABI wants at a call site. */
	struct context *context = (struct context *)((stack_top & ~0xful) - 16 - sizeof(*context));

	*context = (struct context){
		.r12 = (uint64_t)entry,
		.r13 = (uint64_t)arg,
		.rip = (uint64_t)context_trampoline,
	};
	return context;
}
