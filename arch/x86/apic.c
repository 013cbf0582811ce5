/* SPDX-License-Identifier: MIT */
/* Local APIC, xAPIC MMIO mode (SDM Vol. 3 §11.4-11.5). */
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/apic.h"
#include "arch/x86/cpu.h"
#include "arch/x86/cpuid.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/io.h"
#include "arch/x86/msr.h"
#include "arch/x86/paging.h"
#include "arch/x86/percpu.h"
#include "arch/x86/traps.h"
#include "arch/x86/tsc.h"

#define APIC_ID 0x020
#define APIC_INTERRUPT_COMMAND_LOW 0x300
#define APIC_INTERRUPT_COMMAND_HIGH 0x310
/* ICR fields (SDM Vol. 3 §11.6.1). */
#define APIC_ICR_SHORTHAND_SELF (1u << 18) /* destination shorthand 01: self */
#define APIC_ICR_DELIVERY_PENDING (1u << 12)
#define APIC_ICR_LEVEL_ASSERT (1u << 14)
#define APIC_ICR_MODE_FIXED (0u << 8)
#define APIC_ICR_MODE_NMI (4u << 8)
#define APIC_ICR_MODE_INIT (5u << 8)
#define APIC_ICR_MODE_STARTUP (6u << 8)
#define APIC_ICR_DESTINATION_SHIFT 24 /* in the high half */
#define APIC_ERROR_STATUS 0x280
#define APIC_EOI 0x0b0
#define APIC_SPURIOUS 0x0f0
#define APIC_LVT_TIMER 0x320
#define APIC_LVT_PERFORMANCE 0x340
#define APIC_LVT_LINT0 0x350
#define APIC_LVT_LINT1 0x360
#define APIC_LVT_ERROR 0x370
#define APIC_TIMER_INITIAL 0x380
#define APIC_TIMER_CURRENT 0x390
#define APIC_TIMER_DIVIDE 0x3e0

#define APIC_ID_SHIFT 24
#define APIC_SPURIOUS_ENABLE (1u << 8)
#define APIC_LVT_TIMER_PERIODIC (1u << 17)
#define APIC_TIMER_DIVIDE_BY_16 0x3

#define TIMER_CALIBRATION_MS 10

/* The legacy 8259 pair: masked, so that it never delivers IRQ0-15 at exception vectors. */
#define PIC_MASTER_DATA 0x21
#define PIC_SLAVE_DATA 0xa1
#define PIC_MASK_ALL 0xff

static volatile uint32_t *apic_registers;
static const struct pmi_hooks *pmi_hooks[PMI_HOOKS];
static timer_hook hooks[TIMER_HOOKS];
static unsigned int tick_hz;
static uint32_t counts_per_second;

static uint32_t apic_read(uint32_t offset)
{
	return apic_registers[offset / 4];
}

static void apic_write(uint32_t offset, uint32_t value)
{
	apic_registers[offset / 4] = value;
}

bool apic_init(void)
{
	uint64_t base;

	outb(PIC_MASTER_DATA, PIC_MASK_ALL);
	outb(PIC_SLAVE_DATA, PIC_MASK_ALL);
	if (!(cpuid(1, 0).edx & CPUID_1_EDX_APIC))
		return false;
	base = rdmsr(MSR_IA32_APIC_BASE);
	if (base & APIC_BASE_X2APIC_ENABLE)
		return false;
	apic_registers = phys_to_virt(base & APIC_BASE_ADDRESS_MASK);
	apic_init_cpu();
	return true;
}

/* Every CPU's APIC sits at the same address (the BSP's IA32_APIC_BASE, left as reset set it). */
void apic_init_cpu(void)
{
	apic_write(APIC_LVT_LINT0, APIC_LVT_MASKED);
	apic_write(APIC_LVT_LINT1, APIC_LVT_MASKED);
	apic_write(APIC_LVT_ERROR, APIC_LVT_MASKED);
	apic_write(APIC_LVT_TIMER, APIC_LVT_MASKED);
	apic_write(APIC_SPURIOUS, APIC_SPURIOUS_ENABLE | VECTOR_SPURIOUS);
	if (pmi_hooks[0])
		apic_write(APIC_LVT_PERFORMANCE, VECTOR_PMI);
	this_cpu()->apic_id = apic_id();
}

uint32_t apic_id(void)
{
	return apic_read(APIC_ID) >> APIC_ID_SHIFT;
}

void apic_end_of_interrupt(void)
{
	apic_write(APIC_EOI, 0);
}

static void timer_interrupt(struct cpu_regs *regs)
{
	this_cpu()->ticks++;
	for (unsigned int i = 0; i < TIMER_HOOKS && hooks[i]; i++)
		hooks[i](regs);
}

void timer_register_hook(timer_hook hook)
{
	for (unsigned int i = 0; i < TIMER_HOOKS; i++) {
		if (!hooks[i]) {
			hooks[i] = hook;
			return;
		}
	}
}

/* Counts of the timer (divided by 16) in one second, measured against the TSC. */
static uint32_t timer_counts_per_second(void)
{
	uint64_t start, wait = tsc_cycles_from_ms(TIMER_CALIBRATION_MS);
	uint32_t elapsed;

	apic_write(APIC_TIMER_DIVIDE, APIC_TIMER_DIVIDE_BY_16);
	apic_write(APIC_LVT_TIMER, APIC_LVT_MASKED);
	apic_write(APIC_TIMER_INITIAL, UINT32_MAX);
	start = rdtsc_ordered();
	while (rdtsc_ordered() - start < wait)
		cpu_relax();
	elapsed = UINT32_MAX - apic_read(APIC_TIMER_CURRENT);
	apic_write(APIC_TIMER_INITIAL, 0);
	return elapsed * (1000 / TIMER_CALIBRATION_MS);
}

void timer_start(unsigned int hz)
{
	counts_per_second = timer_counts_per_second();
	interrupt_register(VECTOR_TIMER, timer_interrupt);
	apic_write(APIC_TIMER_DIVIDE, APIC_TIMER_DIVIDE_BY_16);
	apic_write(APIC_LVT_TIMER, APIC_LVT_TIMER_PERIODIC | VECTOR_TIMER);
	timer_set_hz(hz);
}

void timer_start_cpu(void)
{
	apic_write(APIC_TIMER_DIVIDE, APIC_TIMER_DIVIDE_BY_16);
	apic_write(APIC_LVT_TIMER, APIC_LVT_TIMER_PERIODIC | VECTOR_TIMER);
	apic_write(APIC_TIMER_INITIAL,
		   counts_per_second / tick_hz ? counts_per_second / tick_hz : 1);
}

void timer_stop_cpu(void)
{
	apic_write(APIC_TIMER_INITIAL, 0); /* a zero initial count stops the timer (§11.5.4) */
}

void timer_set_hz(unsigned int hz)
{
	tick_hz = hz;
	apic_write(APIC_TIMER_INITIAL, counts_per_second / hz ? counts_per_second / hz : 1);
}

unsigned int timer_hz(void)
{
	return tick_hz;
}

static void apic_wait_idle(void)
{
	while (apic_read(APIC_INTERRUPT_COMMAND_LOW) & APIC_ICR_DELIVERY_PENDING)
		cpu_relax();
}

/* The high half names the destination; writing the low half sends (SDM Vol. 3 §11.6.1). */
static void apic_send(uint32_t destination, uint32_t command)
{
	unsigned long flags = local_irq_save();

	apic_wait_idle();
	apic_write(APIC_INTERRUPT_COMMAND_HIGH, destination << APIC_ICR_DESTINATION_SHIFT);
	apic_write(APIC_INTERRUPT_COMMAND_LOW, command);
	apic_wait_idle();
	local_irq_restore(flags);
}

void apic_send_self_ipi(unsigned int vector)
{
	apic_send(0, APIC_ICR_SHORTHAND_SELF | vector); /* the shorthand ignores the destination */
}

void apic_send_ipi(uint32_t destination, unsigned int vector)
{
	apic_send(destination, APIC_ICR_MODE_FIXED | APIC_ICR_LEVEL_ASSERT | vector);
}

void apic_send_nmi(uint32_t destination)
{
	apic_send(destination, APIC_ICR_MODE_NMI | APIC_ICR_LEVEL_ASSERT);
}

void apic_send_init(uint32_t destination)
{
	apic_write(APIC_ERROR_STATUS, 0);
	apic_send(destination, APIC_ICR_MODE_INIT | APIC_ICR_LEVEL_ASSERT);
}

void apic_send_startup(uint32_t destination, uint64_t start_phys)
{
	apic_send(destination, APIC_ICR_MODE_STARTUP | (uint32_t)(start_phys >> 12));
}

/* Every subsystem that enables PMIs (ds/, pmu/) looks at its own status; then LVTPC is unmasked. */
static void pmi_interrupt(struct cpu_regs *regs)
{
	unsigned int count = 0;

	while (count < PMI_HOOKS && pmi_hooks[count])
		count++;
	for (unsigned int i = 0; i < count; i++)
		if (pmi_hooks[i]->enter)
			pmi_hooks[i]->enter(regs);
	for (unsigned int i = count; i-- > 0;)
		if (pmi_hooks[i]->exit)
			pmi_hooks[i]->exit(regs);
	apic_pmi_unmask();
}

void pmi_register(const struct pmi_hooks *hook)
{
	for (unsigned int i = 0; i < PMI_HOOKS; i++) {
		if (!pmi_hooks[i]) {
			pmi_hooks[i] = hook;
			break;
		}
	}
	interrupt_register(VECTOR_PMI, pmi_interrupt);
	apic_write(APIC_LVT_PERFORMANCE, VECTOR_PMI);
}

void apic_pmi_unmask(void)
{
	apic_write(APIC_LVT_PERFORMANCE, apic_read(APIC_LVT_PERFORMANCE) & ~APIC_LVT_MASKED);
}

uint32_t apic_read_lvtpc(void)
{
	return apic_read(APIC_LVT_PERFORMANCE);
}

void apic_write_lvtpc(uint32_t value)
{
	apic_write(APIC_LVT_PERFORMANCE, value);
}

bool apic_pmi_masked(void)
{
	return apic_read(APIC_LVT_PERFORMANCE) & APIC_LVT_MASKED;
}
