/* SPDX-License-Identifier: MIT */
/* Instructions that tests use to provoke a fault on purpose, reported as an exinfo. */
#ifndef ARCH_X86_PROBE_H
#define ARCH_X86_PROBE_H

#include <stdint.h>

#include "arch/x86/extable.h"
#include "arch/x86/processor-flags.h"

/* UD2: always #UD. Returns the exinfo. */
static inline uint32_t probe_invalid_opcode_safe(void)
{
	uint64_t fault = 0;

	asm volatile("1: ud2\n2:\n" _ASM_EXTABLE(1b, 2b) : "+D"(fault));
	return (uint32_t)fault;
}

/* DIV: #DE when divisor is 0. Returns 0 or the exinfo; *quotient is written only without one. */
static inline uint32_t probe_divide_safe(uint64_t dividend, uint64_t divisor, uint64_t *quotient)
{
	uint64_t fault = 0, high = 0, low = dividend;

	asm volatile("1: divq %[divisor]\n2:\n" _ASM_EXTABLE(1b, 2b)
		     : "+D"(fault), "+a"(low), "+d"(high)
		     : [divisor] "r"(divisor));
	if (!fault)
		*quotient = low;
	return (uint32_t)fault;
}

/* One-byte load: #PF for an unmapped address, #GP(0) for a non-canonical one. */
static inline uint32_t probe_read_safe(const volatile void *address, uint8_t *value)
{
	uint64_t fault = 0;
	uint8_t result = 0;

	asm volatile("1: movb (%[address]), %[result]\n2:\n" _ASM_EXTABLE(1b, 2b)
		     : "+D"(fault), [result] "+q"(result)
		     : [address] "r"(address)
		     : "memory");
	*value = result;
	return (uint32_t)fault;
}

/* One-byte store, faulting as probe_read_safe() does. */
static inline uint32_t probe_write_safe(volatile void *address, uint8_t value)
{
	uint64_t fault = 0;

	asm volatile("1: movb %[value], (%[address])\n2:\n" _ASM_EXTABLE(1b, 2b)
		     : "+D"(fault)
		     : [address] "r"(address), [value] "q"(value)
		     : "memory");
	return (uint32_t)fault;
}

/*
 * Set RFLAGS.TF around one NOP: a single-step #DB (DR6.BS) follows each instruction until TF is
 * clear again. Returns only if every #DB is handled and resumed.
 */
static inline void probe_single_step(void)
{
	asm volatile("pushfq\n\t"
		     "orq %0, (%%rsp)\n\t"
		     "popfq\n\t"
		     "nop\n\t"
		     "pushfq\n\t"
		     "andq %1, (%%rsp)\n\t"
		     "popfq"
		     :
		     : "i"(RFLAGS_TF), "i"(~RFLAGS_TF)
		     : "memory", "cc");
}

/*
 * Retire a known number of instructions, for counter tests: 2 per iteration (DEC, JNZ), plus the
 * few the compiler puts around the loop to load iterations. iterations must be at least 1.
 */
#define PROBE_LOOP_INSTRUCTIONS_PER_ITERATION 2
static inline void probe_instruction_loop(uint64_t iterations)
{
	asm volatile("1: dec %0\n\t"
		     "jnz 1b"
		     : "+r"(iterations)
		     :
		     : "cc");
}

/* Two labelled taken jumps, for BTS (arch/x86/probe.asm); the labels are their addresses. */
void probe_branches(void);
extern const char probe_branch_1[], probe_branch_1_target[];
extern const char probe_branch_2[], probe_branch_2_target[];

/*
 * Point RSP at an unmapped page and push: the #PF cannot be delivered on that stack, so the CPU
 * raises #DF, which runs on its IST stack. Never returns: run it isolated (runner_isolate()).
 */
void __attribute__((noreturn)) probe_double_fault(void);

#endif
