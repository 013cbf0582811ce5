/* SPDX-License-Identifier: MIT */
/* The PIT-through-I/O-APIC NMI timer (platform/pc/nmi_timer.h). */
#include "platform/pc/nmi_timer.h"
#include "arch/x86/cpu.h"
#include "arch/x86/nmi.h"
#include "arch/x86/percpu.h"
#include "arch/x86/tsc.h"
#include "lib/format.h"
#include "platform/pc/ioapic.h"
#include "platform/pc/pit.h"

#define PIT_RELOAD_MAX 65536u
#define NMI_TIMER_CHECK_HZ 1000 /* while checking that the NMIs come */
#define NMI_TIMER_CHECK_MS 100 /* KVM-PVM on a loaded host missed 20 (docs/platforms.md) */
#define NMI_TIMER_FALLBACK_INPUT 2
/* A redirection entry's physical destination is 8 bits (82093AA datasheet §3.2.4): x2APIC ids
 * above it need interrupt remapping, which switchyard does not set up (Linux's
 * try_to_enable_x2apic() keeps such ids out of use without it). */
#define NMI_TIMER_DESTINATION_MAX 0xffu

static void (*volatile timer_tick)(struct cpu_regs *regs);
static volatile unsigned long timer_ticks;
static volatile uint64_t timer_last_tsc;
static uint64_t timer_io_apic;
static unsigned int timer_input;

/* An NMI no handler claimed: the timer's. */
static void nmi_timer_fired(struct cpu_regs *regs)
{
	void (*tick)(struct cpu_regs * regs) = timer_tick;

	if (!tick)
		return;
	timer_ticks++;
	timer_last_tsc = rdtsc_ordered();
	tick(regs);
}

/* Route input as the timer's NMI, and wait up to NMI_TIMER_CHECK_MS for one at a fast rate. */
static bool nmi_timer_arrives(uint64_t address, unsigned int input)
{
	unsigned long before = timer_ticks;
	uint64_t end = rdtsc_ordered() + tsc_cycles_from_ms(NMI_TIMER_CHECK_MS);

	pit_start(PIT_MODE_RATE, (uint16_t)(PIT_INPUT_HZ / NMI_TIMER_CHECK_HZ));
	ioapic_route(address, input, IOAPIC_DELIVERY_NMI, this_cpu()->apic_id);
	while (timer_ticks == before && rdtsc_ordered() < end)
		cpu_relax();
	if (timer_ticks != before)
		return true;
	ioapic_route(address, input, IOAPIC_MASKED, 0);
	return false;
}

bool nmi_timer_start(const struct acpi_madt *madt, unsigned int hz,
		     void (*tick)(struct cpu_regs *regs), char *reason, size_t size)
{
	uint32_t gsi = acpi_madt_isa_gsi(madt, PIT_ISA_IRQ);
	const struct acpi_io_apic *io_apic;
	unsigned int input = 0, inputs;
	const char *note = "";

	if (hz == 0 || PIT_INPUT_HZ / hz > PIT_RELOAD_MAX || PIT_INPUT_HZ / hz < 2) {
		format(reason, size, "%u Hz is beyond the PIT's range", hz);
		return false;
	}
	if (this_cpu()->apic_id > NMI_TIMER_DESTINATION_MAX) {
		format(reason, size,
		       "APIC id %u is beyond the I/O APIC's 8-bit destination (no interrupt "
		       "remapping)",
		       this_cpu()->apic_id);
		return false;
	}
	io_apic = acpi_madt_io_apic_of(madt, gsi, &input);
	if (!io_apic) {
		format(reason, size, "the MADT lists no I/O APIC for the PIT's GSI %u", gsi);
		return false;
	}
	inputs = ioapic_inputs(io_apic->address);
	if (input >= inputs) {
		format(reason, size, "GSI %u is past I/O APIC %u's %u inputs", gsi, io_apic->id,
		       inputs);
		return false;
	}
	timer_tick = tick;
	nmi_set_unclaimed(nmi_timer_fired);
	if (!nmi_timer_arrives(io_apic->address, input)) {
		/*
		 * Without an override, IRQ 0 may still be wired to input 2, as on most PCs: Linux's
		 * check_timer() (arch/x86/kernel/apic/io_apic.c) tries that input next. QEMU's
		 * microvm lists no override, and its I/O APIC moves IRQ 0 to input 2.
		 */
		if (gsi != PIT_ISA_IRQ || io_apic->gsi_base != 0 ||
		    inputs <= NMI_TIMER_FALLBACK_INPUT ||
		    !nmi_timer_arrives(io_apic->address, NMI_TIMER_FALLBACK_INPUT)) {
			nmi_set_unclaimed(NULL);
			timer_tick = NULL;
			format(reason, size, "no NMI came from I/O APIC %u input %u in %u ms",
			       io_apic->id, input, NMI_TIMER_CHECK_MS);
			return false;
		}
		input = NMI_TIMER_FALLBACK_INPUT;
		note = " (no NMI came from GSI 0 as the MADT has it: input 2, as Linux tries next)";
	}
	timer_io_apic = io_apic->address;
	timer_input = input;
	pit_start(PIT_MODE_RATE, (uint16_t)(PIT_INPUT_HZ / hz)); /* 65536 is written as 0 */
	format(reason, size, "PIT at %u Hz, ISA IRQ 0 on GSI %u, I/O APIC %u input %u%s", hz, gsi,
	       io_apic->id, input, note);
	return true;
}

void nmi_timer_stop(void)
{
	if (!timer_tick)
		return;
	ioapic_route(timer_io_apic, timer_input, IOAPIC_MASKED, 0);
	nmi_set_unclaimed(NULL);
	timer_tick = NULL;
}

unsigned long nmi_timer_ticks(void)
{
	return timer_ticks;
}

uint64_t nmi_timer_last_tsc(void)
{
	return timer_last_tsc;
}
