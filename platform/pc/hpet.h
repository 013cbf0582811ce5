/* SPDX-License-Identifier: MIT */
/* HPET register accessors (IA-PC HPET spec 1.0a §2.3). None of them fault once base is mapped. */
#ifndef PLATFORM_PC_HPET_H
#define PLATFORM_PC_HPET_H

#include <stdint.h>

/*
 * base: the HPET's register block in the uncached direct map; reg: an HPET_REG_* offset
 * (lib/acpi_timer.h). The spec allows 32- and 64-bit accesses to every register.
 */
static inline uint64_t hpet_read64(volatile void *base, unsigned int reg)
{
	return *(volatile uint64_t *)((volatile uint8_t *)base + reg);
}

static inline uint32_t hpet_read32(volatile void *base, unsigned int reg)
{
	return *(volatile uint32_t *)((volatile uint8_t *)base + reg);
}

static inline void hpet_write64(volatile void *base, unsigned int reg, uint64_t value)
{
	*(volatile uint64_t *)((volatile uint8_t *)base + reg) = value;
}

#endif
