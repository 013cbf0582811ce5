/* SPDX-License-Identifier: MIT */
/* The I/O APIC's redirection table, by MMIO (Intel 82093AA I/O APIC datasheet, §3.2). */
#ifndef PLATFORM_PC_IOAPIC_H
#define PLATFORM_PC_IOAPIC_H

#include <stdint.h>

#define IOAPIC_REGISTER_SELECT 0x00 /* IOREGSEL: which register IOWIN reaches */
#define IOAPIC_REGISTER_WINDOW 0x10 /* IOWIN */
#define IOAPIC_VERSION 0x01
#define IOAPIC_VERSION_MAX_ENTRY(value) (((value) >> 16) & 0xff) /* inputs - 1 */
#define IOAPIC_REDIRECTION(input) (0x10 + 2 * (input)) /* low dword; the high one follows */

/* A redirection entry's low dword, and its destination in the high one. */
#define IOAPIC_DELIVERY_NMI (4u << 8) /* the vector is ignored; edge only */
#define IOAPIC_DESTINATION_LOGICAL (1u << 11) /* clear: physical, an APIC id */
#define IOAPIC_ACTIVE_LOW (1u << 13)
#define IOAPIC_LEVEL_TRIGGERED (1u << 15)
#define IOAPIC_MASKED (1u << 16)
#define IOAPIC_DESTINATION_SHIFT 24 /* high dword: the APIC id, physical mode */

/* address: the I/O APIC's physical address (the MADT's), reached through the direct map. */
uint32_t ioapic_read(uint64_t address, uint32_t reg);
void ioapic_write(uint64_t address, uint32_t reg, uint32_t value);

/* How many inputs it has: its version register's maximum redirection entry, plus one. */
unsigned int ioapic_inputs(uint64_t address);

/* Write input's entry: masked first, then the destination, then the low dword. */
void ioapic_route(uint64_t address, unsigned int input, uint32_t low, uint32_t apic_id);

#endif
