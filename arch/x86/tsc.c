/* SPDX-License-Identifier: MIT */
/*
 * TSC frequency from CPUID leaf 0x15 or the hypervisor leaf 0x40000010, else measured against PIT
 * channel 0 (Intel 8254 data sheet).
 */
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/cpu.h"
#include "arch/x86/cpuid.h"
#include "arch/x86/io.h"
#include "arch/x86/tsc.h"

#define PIT_HZ 1193182u
#define PIT_CHANNEL0_DATA 0x40
#define PIT_COMMAND 0x43
#define PIT_COMMAND_CHANNEL0_RATE 0x34 /* channel 0, low then high byte, mode 2, binary */
#define PIT_COMMAND_CHANNEL0_LATCH 0x00
#define PIT_RELOAD 0xffffu

#define PIT_CALIBRATION_MS 20
#define PIT_SPIN_LIMIT 50000000u
/* Below this the PIT did not count: no TSC runs under 10 MHz. */
#define TSC_HZ_MINIMUM 10000000ull

static uint64_t hz;
static const char *source = "none";

static uint64_t tsc_hz_from_cpuid(void)
{
	struct cpuid_result max = cpuid(0, 0), leaf;

	if (max.eax < CPUID_LEAF_TSC)
		return 0;
	leaf = cpuid(CPUID_LEAF_TSC, 0);
	if (leaf.eax == 0 || leaf.ebx == 0 || leaf.ecx == 0)
		return 0;
	return (uint64_t)leaf.ecx * leaf.ebx / leaf.eax;
}

static uint64_t tsc_hz_from_hypervisor(void)
{
	if (!(cpuid(1, 0).ecx & CPUID_1_ECX_HYPERVISOR))
		return 0;
	if (cpuid(CPUID_LEAF_HYPERVISOR, 0).eax < CPUID_LEAF_HYPERVISOR_TIMING)
		return 0;
	return (uint64_t)cpuid(CPUID_LEAF_HYPERVISOR_TIMING, 0).eax * 1000;
}

static uint16_t pit_channel0_read(void)
{
	uint8_t low, high;

	outb(PIT_COMMAND, PIT_COMMAND_CHANNEL0_LATCH);
	low = inb(PIT_CHANNEL0_DATA);
	high = inb(PIT_CHANNEL0_DATA);
	return (uint16_t)(high << 8 | low);
}

/*
 * Count TSC cycles while PIT channel 0 counts PIT_CALIBRATION_MS. Channel 0 is polled through
 * latch commands: unlike channel 2 it needs no port 0x61, which QEMU's microvm lacks. The 8259
 * must be masked (apic_init() does it), or IRQ0 would arrive once interrupts are on.
 */
static uint64_t tsc_hz_from_pit(void)
{
	uint32_t target = PIT_HZ / 1000 * PIT_CALIBRATION_MS, elapsed = 0, spins = 0;
	uint16_t previous, now;
	uint64_t start, end;

	outb(PIT_COMMAND, PIT_COMMAND_CHANNEL0_RATE);
	outb(PIT_CHANNEL0_DATA, (uint8_t)PIT_RELOAD);
	outb(PIT_CHANNEL0_DATA, (uint8_t)(PIT_RELOAD >> 8));
	previous = pit_channel0_read();
	start = rdtsc_ordered();
	while (elapsed < target) {
		if (++spins == PIT_SPIN_LIMIT)
			return 0;
		now = pit_channel0_read();
		/* Mode 2 counts down from PIT_RELOAD to 1, then reloads. */
		elapsed +=
			now <= previous ? (uint32_t)(previous - now) : previous + PIT_RELOAD - now;
		previous = now;
	}
	end = rdtsc_ordered();
	return (end - start) * PIT_HZ / elapsed;
}

bool tsc_calibrate(void)
{
	if ((hz = tsc_hz_from_cpuid()) != 0)
		source = "cpuid-0x15";
	else if ((hz = tsc_hz_from_hypervisor()) != 0)
		source = "hypervisor-leaf";
	else if ((hz = tsc_hz_from_pit()) >= TSC_HZ_MINIMUM)
		source = "pit";
	else
		hz = 0;
	return hz != 0;
}

uint64_t tsc_hz(void)
{
	return hz;
}

const char *tsc_source(void)
{
	return source;
}
