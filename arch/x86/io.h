/* SPDX-License-Identifier: MIT */
/* Port I/O accessors. None of them fault in ring 0. */
#ifndef ARCH_X86_IO_H
#define ARCH_X86_IO_H

#include <stdint.h>

static inline uint8_t inb(uint16_t port)
{
	uint8_t value;

	asm volatile("inb %1, %0" : "=a"(value) : "Nd"(port));
	return value;
}

static inline void outb(uint16_t port, uint8_t value)
{
	asm volatile("outb %0, %1" : : "a"(value), "Nd"(port));
}

/* count bytes to one port with one string instruction (a single exit under KVM); DF is clear. */
static inline void outsb(uint16_t port, const void *bytes, unsigned long count)
{
	asm volatile("rep outsb" : "+S"(bytes), "+c"(count) : "d"(port) : "memory");
}

static inline uint32_t inl(uint16_t port)
{
	uint32_t value;

	asm volatile("inl %1, %0" : "=a"(value) : "Nd"(port));
	return value;
}

static inline void outl(uint16_t port, uint32_t value)
{
	asm volatile("outl %0, %1" : : "a"(value), "Nd"(port));
}

#endif
