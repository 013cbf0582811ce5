/* SPDX-License-Identifier: MIT */
/* The CPUs: found through the ACPI MADT, started (arch/x86/ap_start.h), and calls between them. */
#ifndef KERNEL_SMP_H
#define KERNEL_SMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/pfa.h"
#include "lib/acpi.h"

struct smp_start_info {
	const void *rsdp; /* from multiboot2, or NULL: then the BIOS areas are scanned */
	size_t rsdp_length;
	const struct memory_region *regions; /* the boot memory map */
	size_t region_count;
	/*
	 * Runs on each application processor once arch/x86/ap_start.c set it up (GDT, IDT, CR0/CR4
	 * as the boot CPU has them, CR3, APIC, SYSCALL MSRs, per-CPU data), interrupts off. It must
	 * call smp_cpu_ready() once the CPU can take work, then never return.
	 */
	void (*ap_main)(void);
};

/*
 * The most CPUs smp.cpus=N allows, the boot CPU included: a generous bound, not a size. Per-CPU
 * data is sized at boot (arch/x86/percpu.h); the bound keeps every table sized per CPU inside
 * one pfa_alloc_pages() of 64 pages (the largest, dr/'s #DB regions at 72 bytes a CPU, takes 19
 * pages at 1024 CPUs).
 */
#define SMP_CPUS_MAX 1024

/*
 * Find the MADT and give per-CPU data (percpu_setup()) to the boot CPU and each enabled CPU it
 * lists, smp.cpus=N in all at most. Once, after the page allocator and the boot CPU's local APIC
 * are set up, and before any subsystem's init. Returns percpu_count(); the MADT line (and why
 * only CPU 0 will run, when there is no MADT) is printed as a KTAP diagnostic.
 */
unsigned int smp_prepare(const struct smp_start_info *info);

/*
 * After smp_prepare(): start every enabled CPU the MADT lists that has per-CPU data, one at a
 * time, and return how many CPUs are online (1 when there are no others, or no MADT: the reason
 * is printed as a KTAP diagnostic, as is each CPU's APIC id and start-up time). CPU indices are
 * 0 (the boot CPU) to smp_cpus() - 1.
 */
unsigned int smp_start(const struct smp_start_info *info);
/* The MADT smp_start() parsed: no CPUs and no I/O APICs when it found none. */
const struct acpi_madt *smp_madt(void);
unsigned int smp_cpus(void);
/* Why no other CPU is online ("" when some are): for the reason of a skipped test. */
const char *smp_single_reason(void);

/* Called by ap_main() on its CPU: the CPU is ready, smp_start() goes on to the next. */
void smp_cpu_ready(void);

/*
 * Run fn(arg) on CPU cpu, in interrupt context with interrupts off, and wait for it to return:
 * on the caller's CPU it runs at once. fn must not call smp_call() itself. While it waits, the
 * caller runs calls that other CPUs make to it, so two CPUs calling each other do not deadlock.
 * False when cpu is not online, or did not take the call within SMP_CALL_TIMEOUT_MS (fn then
 * never runs). The limit is well above the longest call measured (docs/platforms.md, "What the
 * time limits were sized by").
 */
#define SMP_CALL_TIMEOUT_MS 5000
bool smp_call(unsigned int cpu, void (*fn)(void *), void *arg);
/* smp_call() on every online CPU, the caller's included; returns how many ran fn. */
unsigned int smp_call_all(void (*fn)(void *), void *arg);
/* The longest a call to another CPU has taken so far, in TSC cycles. */
uint64_t smp_call_slowest(void);

/* A reschedule IPI (VECTOR_RESCHEDULE) to CPU cpu; nothing when cpu is the caller. */
void smp_reschedule(unsigned int cpu);

/* Stop every other CPU with an NMI, for the end of the run: they halt for good. */
void smp_stop_others(void);

#endif
