/* SPDX-License-Identifier: MIT */
/* DR6 and DR7 bits (SDM Vol. 3 §18.2), and the DR accessors; DR writes are counted. */
#ifndef ARCH_X86_DEBUGREG_H
#define ARCH_X86_DEBUGREG_H

#include <stdint.h>

#include "arch/x86/extable.h"
#include "arch/x86/percpu.h"

#define DR_SLOTS 4

/* DR6: the CPU sets status bits and never clears them; the handler writes DR6_RESET back. */
#define DR6_B0 (1ul << 0) /* slot i fired: DR6_B0 << i */
#define DR6_BLD (1ul << 11) /* bus lock detected: active low */
#define DR6_BD (1ul << 13) /* general detect */
#define DR6_BS (1ul << 14) /* single step */
#define DR6_BT (1ul << 15) /* task switch */
#define DR6_RTM (1ul << 16) /* active low */
#define DR6_RESET 0xffff0ff0ul

/* DR7: two enable bits per slot, then a 4-bit R/W+LEN field per slot from bit 16. */
#define DR7_L0 (1ul << 0) /* local enable, slot i: DR7_L0 << (2 * i) */
#define DR7_G0 (1ul << 1) /* global enable, slot i: DR7_G0 << (2 * i) */
#define DR7_ENABLE_SIZE 2
#define DR7_LE (1ul << 8)
#define DR7_GE (1ul << 9)
#define DR7_RESERVED_ONE (1ul << 10)
#define DR7_RTM (1ul << 11)
#define DR7_GD (1ul << 13) /* general detect: next MOV DR raises #DB */
#define DR7_CONTROL_SHIFT 16
#define DR7_CONTROL_SIZE 4
#define DR7_RESET DR7_RESERVED_ONE

/* R/W field values (two bits). I/O needs CR4.DE. */
#define DR7_RW_EXECUTE 0x0ul
#define DR7_RW_WRITE 0x1ul
#define DR7_RW_IO 0x2ul
#define DR7_RW_READ_WRITE 0x3ul
/* LEN field values (two bits, above R/W). 8 bytes is long mode only. */
#define DR7_LEN_1 0x0ul
#define DR7_LEN_2 0x1ul
#define DR7_LEN_8 0x2ul
#define DR7_LEN_4 0x3ul

/*
 * Reads never fault in ring 0 unless DR7.GD is set (then #DB, DR6.BD) or, for DR4/DR5, CR4.DE
 * is set (#UD); switchyard never names DR4/DR5. Writes also #GP for 1s in bits 63:32 of
 * DR6/DR7. Each write is counted in this_cpu()->writes.dr.
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
