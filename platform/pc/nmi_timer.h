/* SPDX-License-Identifier: MIT */
/* A periodic NMI to the boot CPU, for a watchdog: the PIT through the I/O APIC. */
#ifndef PLATFORM_PC_NMI_TIMER_H
#define PLATFORM_PC_NMI_TIMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/regs.h"
#include "lib/acpi.h"

/*
 * An NMI to the calling CPU hz times a second: PIT channel 0 in rate mode, its ISA IRQ 0 routed by
 * the I/O APIC (the MADT's override says which input) as an edge-triggered NMI. An NMI that no
 * handler claims (arch/x86/nmi.h) is then the timer's: tick(regs) runs. The legacy 8259 stays
 * masked. The NMIs are seen to come before it returns true, with what it set up in reason.
 * Returns false, with
 * the reason, where the MADT lists no I/O APIC for IRQ 0, hz is out of the PIT's range, or no
 * NMI comes; the input is masked again then.
 */
bool nmi_timer_start(const struct acpi_madt *madt, unsigned int hz,
		     void (*tick)(struct cpu_regs *regs), char *reason, size_t size);
/* Mask the timer's input: no more ticks. */
void nmi_timer_stop(void);
/* The timer's NMIs so far (those no handler claimed while it ran). */
unsigned long nmi_timer_ticks(void);
/* The TSC when the timer's last NMI came; 0 before the first. */
uint64_t nmi_timer_last_tsc(void);

#endif
