/* SPDX-License-Identifier: MIT */
/* The I/O APIC's registers through IOREGSEL and IOWIN (platform/pc/ioapic.h). */
#include "platform/pc/ioapic.h"
#include "arch/x86/paging.h"

static volatile uint32_t *ioapic_window(uint64_t address, uint32_t offset)
{
	return (volatile uint32_t *)((uint8_t *)phys_to_virt(address) + offset);
}

uint32_t ioapic_read(uint64_t address, uint32_t reg)
{
	*ioapic_window(address, IOAPIC_REGISTER_SELECT) = reg;
	return *ioapic_window(address, IOAPIC_REGISTER_WINDOW);
}

void ioapic_write(uint64_t address, uint32_t reg, uint32_t value)
{
	*ioapic_window(address, IOAPIC_REGISTER_SELECT) = reg;
	*ioapic_window(address, IOAPIC_REGISTER_WINDOW) = value;
}

unsigned int ioapic_inputs(uint64_t address)
{
	return IOAPIC_VERSION_MAX_ENTRY(ioapic_read(address, IOAPIC_VERSION)) + 1;
}

void ioapic_route(uint64_t address, unsigned int input, uint32_t low, uint32_t apic_id)
{
	ioapic_write(address, IOAPIC_REDIRECTION(input), IOAPIC_MASKED);
	ioapic_write(address, IOAPIC_REDIRECTION(input) + 1, apic_id << IOAPIC_DESTINATION_SHIFT);
	ioapic_write(address, IOAPIC_REDIRECTION(input), low);
}
