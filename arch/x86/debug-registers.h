/* SPDX-License-Identifier: MIT */
/* MOV to and from DR0-DR7; every write is counted in this_cpu()->writes.dr. */
#ifndef ARCH_X86_DEBUG_REGISTERS_H
#define ARCH_X86_DEBUG_REGISTERS_H

#include <stdint.h>

#include "arch/x86/debugreg.h"
#include "arch/x86/extable.h"
#include "arch/x86/percpu.h"

/*
 * Reads never fault in ring 0 unless DR7.GD is set (then #DB, DR6.BD) or, for DR4/DR5, CR4.DE
 * is set (#UD); only the tests of that alias and that #UD name DR4/DR5. Writes also #GP for 1s in
 * bits 63:32 of DR6/DR7. Each write is counted in this_cpu()->writes.dr.
 */
#define DEFINE_DR_ACCESSORS(n)                                                  \
	static inline unsigned long read_dr##n(void)                            \
	{                                                                       \
		unsigned long value;                                            \
		asm volatile("mov %%dr" #n ", %0" : "=r"(value));               \
		return value;                                                   \
	}                                                                       \
	static inline void write_dr##n(unsigned long value)                     \
	{                                                                       \
		this_cpu()->writes.dr++;                                        \
		asm volatile("mov %0, %%dr" #n : : "r"(value) : "memory");      \
	}                                                                       \
	static inline uint32_t write_dr##n##_safe(unsigned long value)          \
	{                                                                       \
		uint64_t fault = 0;                                             \
		this_cpu()->writes.dr++;                                        \
		asm volatile("1: mov %1, %%dr" #n "\n2:\n" _ASM_EXTABLE(1b, 2b) \
			     : "+D"(fault)                                      \
			     : "r"(value)                                       \
			     : "memory");                                       \
		return (uint32_t)fault;                                         \
	}                                                                       \
	static inline uint32_t read_dr##n##_safe(unsigned long *value)          \
	{                                                                       \
		uint64_t fault = 0;                                             \
		unsigned long result = 0;                                       \
		asm volatile("1: mov %%dr" #n ", %1\n2:\n" _ASM_EXTABLE(1b, 2b) \
			     : "+D"(fault), "+r"(result));                      \
		*value = result;                                                \
		return (uint32_t)fault;                                         \
	}

DEFINE_DR_ACCESSORS(0)
DEFINE_DR_ACCESSORS(1)
DEFINE_DR_ACCESSORS(2)
DEFINE_DR_ACCESSORS(3)
DEFINE_DR_ACCESSORS(4) /* DR6 while CR4.DE is clear, else #UD (SDM Vol. 3 §18.2.2) */
DEFINE_DR_ACCESSORS(5) /* DR7 while CR4.DE is clear, else #UD */
DEFINE_DR_ACCESSORS(6)
DEFINE_DR_ACCESSORS(7)

/* For loops over slots: slot is 0-3. */
static inline void write_dr_address(unsigned int slot, unsigned long address)
{
	switch (slot) {
	case 0:
		write_dr0(address);
		break;
	case 1:
		write_dr1(address);
		break;
	case 2:
		write_dr2(address);
		break;
	case 3:
		write_dr3(address);
		break;
	}
}

static inline unsigned long read_dr_address(unsigned int slot)
{
	switch (slot) {
	case 0:
		return read_dr0();
	case 1:
		return read_dr1();
	case 2:
		return read_dr2();
	default:
		return read_dr3();
	}
}

#endif
