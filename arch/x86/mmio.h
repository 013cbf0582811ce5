/* SPDX-License-Identifier: MIT */
/* Memory-mapped I/O accessors: one load or store of the named width, never merged or split. */
#ifndef ARCH_X86_MMIO_H
#define ARCH_X86_MMIO_H

#include <stdint.h>

/*
 * addr is a virtual address of device registers, mapped uncached (paging.h's
 * DIRECT_MAP_UNCACHED window): a cached mapping would let the CPU keep and combine register
 * reads. Each accessor is one MOV, as Linux's readb()/writel(), with a memory clobber so that
 * the compiler keeps them in program order with other memory accesses. They fault (#PF) only
 * where addr is not mapped.
 */
static inline uint8_t mmio_read8(const volatile void *addr)
{
	uint8_t value;

	asm volatile("movb %1, %0" : "=q"(value) : "m"(*(const volatile uint8_t *)addr) : "memory");
	return value;
}

static inline void mmio_write8(volatile void *addr, uint8_t value)
{
	asm volatile("movb %0, %1" : : "q"(value), "m"(*(volatile uint8_t *)addr) : "memory");
}

static inline uint32_t mmio_read32(const volatile void *addr)
{
	uint32_t value;

	asm volatile("movl %1, %0"
		     : "=r"(value)
		     : "m"(*(const volatile uint32_t *)addr)
		     : "memory");
	return value;
}

static inline void mmio_write32(volatile void *addr, uint32_t value)
{
	asm volatile("movl %0, %1" : : "r"(value), "m"(*(volatile uint32_t *)addr) : "memory");
}

#endif
