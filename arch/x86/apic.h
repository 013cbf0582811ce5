/* SPDX-License-Identifier: MIT */
/* Local APIC in xAPIC or x2APIC mode, and its timer as the periodic tick. */
#ifndef ARCH_X86_APIC_H
#define ARCH_X86_APIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/apic_mode.h"
#include "arch/x86/regs.h"

enum apic_init_result {
	APIC_INIT_OK,
	APIC_INIT_NO_APIC, /* CPUID.1:EDX.APIC is 0: a bail out */
	APIC_INIT_USAGE_ERROR, /* apic=x2apic or selftest.firmware_x2apic without an x2APIC */
};

/*
 * Mask the legacy 8259 pair, choose the mode (apic_mode_choose(): x2APIC wherever CPUID has it,
 * unless apic=xapic; an x2APIC that firmware enabled is always kept) and enable the boot CPU's
 * local APIC in it, printing the "# apic:" line (docs/output.md). On an error the message is in
 * error and the APIC is left as it was (the 8259 stays masked). With selftest.firmware_x2apic it
 * first turns the boot CPU's x2APIC on itself, as firmware on large servers hands over.
 */
enum apic_init_result apic_init(char *error, size_t size);
/* Enable the calling CPU's local APIC as apic_init() did the boot CPU's (application CPUs). */
void apic_init_cpu(void);
/* The mode apic_init() chose (every CPU's), what apic= asked, and whether firmware chose it. */
enum apic_mode apic_mode(void);
enum apic_request apic_requested(void);
bool apic_x2apic_by_firmware(void);
/* The calling CPU's APIC id: 8 bits in xAPIC mode, 32 in x2APIC mode. */
uint32_t apic_id(void);
void apic_end_of_interrupt(void);
/* Whether vector is in service on this CPU (its ISR bit: delivered, and no EOI yet). */
bool apic_in_service(unsigned int vector);
/* Whether vector waits on this CPU to be delivered (its IRR bit: accepted, not yet taken). */
bool apic_pending(unsigned int vector);

/*
 * The calling CPU's register at xAPIC offset (apic_mode.h's APIC_*), in either mode: MMIO, or
 * MSR 0x800 + offset / 16. Not for the ICR (use the senders below). In x2APIC mode a register
 * that mode lacks, or a read of a write-only one, is #GP(0).
 */
uint32_t apic_read(uint32_t offset);
void apic_write(uint32_t offset, uint32_t value);

/* A fixed interrupt at vector to this CPU itself (x2APIC: SELF IPI; xAPIC: ICR shorthand "self").
 */
void apic_send_self_ipi(unsigned int vector);
/* Inter-processor interrupts to the CPU with APIC id destination (physical destination mode):
 * a fixed interrupt, an NMI, and the INIT and STARTUP of the MP start-up protocol (SDM Vol. 3
 * §9.4.4.1); start_phys is page-aligned and below 1 MiB. Each returns once the ICR is idle
 * (xAPIC); an x2APIC has no delivery status, and its ICR write is fenced after earlier stores. */
void apic_send_ipi(uint32_t destination, unsigned int vector);
void apic_send_nmi(uint32_t destination);
void apic_send_init(uint32_t destination);
void apic_send_startup(uint32_t destination, uint64_t start_phys);

/*
 * The PMI: the LVT performance-counter entry, fixed delivery at VECTOR_PMI. On every PMI
 * (interrupt context) each registration's enter runs, in the order they registered, then each
 * exit in the reverse order, then LVTPC is unmasked: Intel CPUs set its mask bit when they
 * deliver a PMI (SDM Vol. 3 §19.6.1; AMD does not), and without the unmask no PMI follows.
 * The kernel registers one handler that runs a PMI's steps in their order (debugstate/); tests
 * may register more around it. Either may be NULL.
 */
#define PMI_HOOKS 4
struct pmi_hooks {
	void (*enter)(struct cpu_regs *regs);
	void (*exit)(struct cpu_regs *regs);
};
void pmi_register(const struct pmi_hooks *hooks);
/* Remove a registration (every slot holding it); LVTPC stays as it is. */
void pmi_unregister(const struct pmi_hooks *hooks);
/* The registration in slot (0..PMI_HOOKS-1), or NULL; put one back in its slot (the runner
 * restores what a test changed). Slots keep their order; empty ones are skipped. */
const struct pmi_hooks *pmi_hooks_at(unsigned int slot);
void pmi_hooks_set(unsigned int slot, const struct pmi_hooks *hooks);
void apic_pmi_unmask(void);
bool apic_pmi_masked(void);

/* LVT entry fields (SDM Vol. 3 §11.5.1). */
#define APIC_LVT_VECTOR_MASK 0xffu
#define APIC_LVT_DELIVERY_MODE_MASK (7u << 8)
#define APIC_LVT_DELIVERY_NMI (4u << 8)
#define APIC_LVT_DELIVERY_PENDING (1u << 12) /* read-only delivery status: send pending */
#define APIC_LVT_MASKED (1u << 16)

/*
 * LVTPC as switchyard programs it on every CPU: VECTOR_PMI, fixed delivery, unmasked, once a
 * subsystem registered for PMIs; before that its reset value, APIC_LVT_MASKED alone (SDM Vol. 3
 * §11.5.1: the mask bit is set at reset). What a PMI handler that never returned leaves masked.
 */
uint32_t apic_lvtpc_configured(void);

/* The raw LVT performance-counter entry, for a CPU model that delivers PMIs as the APIC does. */
uint32_t apic_read_lvtpc(void);
void apic_write_lvtpc(uint32_t value);

/* Calibrate the APIC timer against the TSC, then tick periodically at hz. Needs tsc_hz(). */
void timer_start(unsigned int hz);
unsigned int timer_hz(void);
/* Start (or restart) the calling CPU's tick at the boot CPU's calibration and rate; stop it. */
void timer_start_cpu(void);
void timer_stop_cpu(void);
/* Change the tick rate (benchmarks of preemption); the next period starts now. */
void timer_set_hz(unsigned int hz);

/* Tick hooks run in interrupt context, interrupts off, after the EOI; at most TIMER_HOOKS. */
#define TIMER_HOOKS 4
typedef void (*timer_hook)(struct cpu_regs *regs);
void timer_register_hook(timer_hook hook);
void timer_unregister_hook(timer_hook hook);
/* The hook in slot (0..TIMER_HOOKS-1), or NULL; put one back in its slot. Hooks run in slot
 * order, empty slots skipped. */
timer_hook timer_hook_at(unsigned int slot);
void timer_hook_set(unsigned int slot, timer_hook hook);

#endif
