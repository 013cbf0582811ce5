/* SPDX-License-Identifier: MIT */
/* Single instructions: interrupts, halting, the TSC, control registers. */
#ifndef ARCH_X86_CPU_H
#define ARCH_X86_CPU_H

#include <stdint.h>

#include "arch/x86/processor-flags.h"

static inline void local_irq_enable(void)
{
	asm volatile("sti" : : : "memory");
}

static inline void local_irq_disable(void)
{
	asm volatile("cli" : : : "memory");
}

/* Disable interrupts and return the previous RFLAGS, for local_irq_restore(). */
static inline unsigned long local_irq_save(void)
{
	unsigned long flags;

	asm volatile("pushfq; popq %0; cli" : "=r"(flags) : : "memory");
	return flags;
}

static inline void local_irq_restore(unsigned long flags)
{
	if (flags & (1ul << 9)) /* RFLAGS.IF */
		local_irq_enable();
}

/* Enable interrupts and halt as one step: STI delays interrupts by one instruction, so an
 * interrupt that is already pending wakes the HLT instead of slipping in before it. */
static inline void safe_halt(void)
{
	asm volatile("sti; hlt" : : : "memory");
}

static inline unsigned long read_rflags(void)
{
	unsigned long flags;

	asm volatile("pushfq; popq %0" : "=r"(flags) : : "memory");
	return flags;
}

/* Set RFLAGS.TF in the running flow: a single-step #DB follows the instruction after the POPF. */
static inline void set_trap_flag(void)
{
	asm volatile("pushfq; orq %0, (%%rsp); popfq" : : "i"(RFLAGS_TF) : "memory", "cc");
}

/*
 * Clear RFLAGS.TF in the running flow. A single step traps on the TF an instruction starts
 * with, so one more #DB follows the POPF itself (SDM Vol. 3B "Single-Step Exception Condition").
 */
static inline void clear_trap_flag(void)
{
	asm volatile("pushfq; andq %0, (%%rsp); popfq" : : "i"(~RFLAGS_TF) : "memory", "cc");
}

/* Waits for the next interrupt; with interrupts off it waits for an NMI or for ever. */
static inline void halt(void)
{
	asm volatile("hlt" : : : "memory");
}

static inline void cpu_relax(void)
{
	asm volatile("pause" : : : "memory");
}

/* Raises #UD: for tests that need an exception nobody expects. */
static inline void __attribute__((noreturn)) ud2(void)
{
	asm volatile("ud2");
	__builtin_unreachable();
}

/* RDTSC ordered after earlier loads (LFENCE: SDM Vol. 2B RDTSC). Never faults while CR4.TSD=0. */
static inline uint64_t rdtsc_ordered(void)
{
	uint32_t low, high;

	asm volatile("lfence; rdtsc" : "=a"(low), "=d"(high) : : "memory");
	return ((uint64_t)high << 32) | low;
}

/* Drop the TLB entry of one page. Never faults. */
static inline void invlpg(uint64_t virt)
{
	asm volatile("invlpg (%0)" : : "r"(virt) : "memory");
}

static inline unsigned long read_cr0(void)
{
	unsigned long value;

	asm volatile("mov %%cr0, %0" : "=r"(value));
	return value;
}

static inline unsigned long read_cr2(void)
{
	unsigned long value;

	asm volatile("mov %%cr2, %0" : "=r"(value));
	return value;
}

static inline unsigned long read_cr3(void)
{
	unsigned long value;

	asm volatile("mov %%cr3, %0" : "=r"(value));
	return value;
}

/* May #GP on a reserved bit or a bad PCID; the caller passes a valid root. */
static inline void write_cr3(unsigned long value)
{
	asm volatile("mov %0, %%cr3" : : "r"(value) : "memory");
}

static inline unsigned long read_cr4(void)
{
	unsigned long value;

	asm volatile("mov %%cr4, %0" : "=r"(value));
	return value;
}

/* #GP on a reserved or unsupported bit; use write_cr4_safe() to probe. */
static inline void write_cr4(unsigned long value)
{
	asm volatile("mov %0, %%cr4" : : "r"(value) : "memory");
}

static inline void write_cr0(unsigned long value)
{
	asm volatile("mov %0, %%cr0" : : "r"(value) : "memory");
}

#endif
