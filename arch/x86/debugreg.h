/* SPDX-License-Identifier: MIT */
/* DR6 and DR7 bits (SDM Vol. 3 §18.2). The accessors are in arch/x86/debug-registers.h. */
#ifndef ARCH_X86_DEBUGREG_H
#define ARCH_X86_DEBUGREG_H

#define DR_SLOTS 4

/* DR6: the CPU sets status bits and never clears them; the handler writes DR6_RESET back. */
#define DR6_B0 (1ul << 0) /* slot i fired: DR6_B0 << i */
#define DR6_BREAKPOINTS 0xful /* B0-B3 */
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
#define DR7_LEN_SHIFT 2 /* within a slot's control field, above R/W */
#define DR7_RW_MASK 0x3ul

/* Slot i's global and local enable bits. */
#define DR7_ENABLE_MASK(slot) ((DR7_L0 | DR7_G0) << (DR7_ENABLE_SIZE * (slot)))
/* Slot i's control field (R/W and LEN) in DR7, and its R/W read back. */
#define DR7_CONTROL(slot, rw, len) \
	(((rw) | ((len) << DR7_LEN_SHIFT)) << (DR7_CONTROL_SHIFT + DR7_CONTROL_SIZE * (slot)))
#define DR7_RW_OF(dr7, slot) \
	(((dr7) >> (DR7_CONTROL_SHIFT + DR7_CONTROL_SIZE * (slot))) & DR7_RW_MASK)

/*
 * The DR6 B0-B3 bits of the slots dr7 does not enable. The CPU may set them when such a slot's
 * condition matches (SDM Vol. 3 §18.2.3: "a debug handler should check only those B0-B3 bits
 * which correspond to an enabled breakpoint"); QEMU does, for an address left in DRn.
 */
static inline unsigned long dr6_disabled_breakpoints(unsigned long dr7)
{
	unsigned long bits = 0;

	for (unsigned int slot = 0; slot < DR_SLOTS; slot++)
		if (!(dr7 & DR7_ENABLE_MASK(slot)))
			bits |= DR6_B0 << slot;
	return bits;
}

#endif
