/* SPDX-License-Identifier: MIT */
/* Starting an application processor: INIT-SIPI-SIPI into the trampoline, given a stack and tables.
 */
#ifndef ARCH_X86_AP_START_H
#define ARCH_X86_AP_START_H

#include <stdbool.h>
#include <stdint.h>

/* The real-mode start-up page (arch/x86/trampoline.asm assembles for it). */
#define TRAMPOLINE_BASE 0x8000ul

/* How long a started CPU may take to finish its own set-up (ring-0 code is slow under nested
 * virtualization), from INIT to ap_start_ready(). */
#define AP_READY_TIMEOUT_MS 5000

/*
 * Fill the page at pml4 as the trampoline's PML4: the kernel's upper half, and the direct map's
 * PDPT also at entry 0, an identity map of the low 4 GiB where the trampoline turns paging on.
 */
void ap_start_tables(uint64_t *pml4);

/*
 * Copy the trampoline to TRAMPOLINE_BASE (free memory the caller checked) with the page tables
 * ap_start_tables() filled at page_tables (below 4 GiB), and record the boot CPU's CR0 and CR4
 * (CR4.UMIP aside: each CPU sets it where its own CPUID has it) for the others. ap_main runs on
 * each started CPU once it is set up (GDT, IDT, CR0/CR4, CR3, APIC, SYSCALL MSRs, per-CPU data),
 * interrupts off; it must call ap_start_ready() once the CPU can take work, then never return.
 */
void ap_start_prepare(uint64_t page_tables, void (*ap_main)(void));

/*
 * Start the CPU with APIC id apic_id as CPU index (its per-CPU data exists), on the stack below
 * stack_top: INIT, then STARTUP until it shows life (SDM Vol. 3 §9.4.4.1), then wait up to
 * AP_READY_TIMEOUT_MS until it is ready. True when it is; *cycles is the TSC time it took.
 * One CPU at a time.
 */
bool ap_start(unsigned int index, uint32_t apic_id, uint64_t stack_top, uint64_t *cycles);
/* Whether CPU index ran its first C code: after a false ap_start(), started but not ready. */
bool ap_start_alive(unsigned int index);
/* Called by ap_main() on its CPU: the CPU is ready, ap_start() returns. */
void ap_start_ready(void);

#endif
