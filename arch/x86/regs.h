/* SPDX-License-Identifier: MIT */
/* The register frame that arch/x86/entry.asm builds for every exception and interrupt. */
#ifndef ARCH_X86_REGS_H
#define ARCH_X86_REGS_H

#include <stdint.h>

/*
 * Lowest address first. The general registers are pushed by entry_common in the reverse of
 * this order (rax first); vector and error_code by the per-vector stub (a 0 error code for the
 * vectors where the CPU pushes none); rip to ss by the CPU.
 */
struct cpu_regs { /* 22 quadwords: CPU_REGS_SIZE in arch/x86/entry.asm */
	uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
	uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
	uint64_t vector;
	uint64_t error_code;
	uint64_t rip, cs, rflags, rsp, ss;
};
_Static_assert(sizeof(struct cpu_regs) == 22 * 8, "CPU_REGS_SIZE in arch/x86/entry.asm");

static inline int regs_from_user(const struct cpu_regs *regs)
{
	return (regs->cs & 3) == 3;
}

#endif
