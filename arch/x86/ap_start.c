/* SPDX-License-Identifier: MIT */
/* Application-processor start-up: the trampoline, INIT-SIPI-SIPI, and each CPU's own set-up. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/ap_start.h"
#include "arch/x86/apic.h"
#include "arch/x86/cpu.h"
#include "arch/x86/gdt.h"
#include "arch/x86/msr-index.h"
#include "arch/x86/msr.h"
#include "arch/x86/paging.h"
#include "arch/x86/percpu.h"
#include "arch/x86/processor-flags.h"
#include "arch/x86/syscall.h"
#include "arch/x86/traps.h"
#include "arch/x86/tsc.h"
#include "lib/panic.h"
#include "lib/string.h"

/* The MP start-up protocol's delays (SDM Vol. 3 §9.4.4.1). */
#define INIT_DELAY_US 10000
#define STARTUP_DELAY_US 200

/* As laid out at trampoline_parameters in arch/x86/trampoline.asm. */
struct trampoline_parameters {
	uint32_t cr3;
	uint32_t efer;
	uint64_t stack;
	uint64_t entry;
	uint32_t index;
	uint32_t reserved;
};

extern const char trampoline_start[], trampoline_end[], trampoline_parameters[];

static DEFINE_PER_CPU(volatile bool, alive); /* its first C code ran */
static DEFINE_PER_CPU(volatile bool, ready); /* ap_start_ready() */
static unsigned long boot_cr0, boot_cr4;
static void (*ap_main)(void);
static struct trampoline_parameters *parameters;

static void delay_us(uint64_t us)
{
	uint64_t start = rdtsc_ordered(), wait = tsc_hz() / 1000000 * us;

	while (rdtsc_ordered() - start < wait)
		cpu_relax();
}

void ap_start_ready(void)
{
	*this_cpu_ptr(ready) = true;
}

bool ap_start_alive(unsigned int index)
{
	return *per_cpu_ptr(alive, index);
}

/* The first C code of an application processor, on the stack ap_start() gave it. */
static void __attribute__((noreturn)) ap_entry(unsigned int index)
{
	percpu_init(index);
	*this_cpu_ptr(alive) = true;
	write_cr3(paging_kernel_root());
	gdt_init();
	idt_load();
	write_cr0(boot_cr0);
	write_cr4(boot_cr4);
	gdt_umip_enable();
	syscall_init_cpu();
	apic_init_cpu();
	ap_main();
	panic("CPU %u: ap_main() returned", index);
}

void ap_start_tables(uint64_t *pml4)
{
	const uint64_t *kernel = phys_to_virt(paging_kernel_root());

	memcpy(pml4, kernel, PAGE_SIZE);
	pml4[0] = kernel[PML4_FIRST_KERNEL_ENTRY]; /* the direct map's PDPT */
}

void ap_start_prepare(uint64_t page_tables, void (*main)(void))
{
	boot_cr0 = read_cr0();
	boot_cr4 = read_cr4() & ~CR4_UMIP; /* each CPU sets it where its own CPUID has it */
	ap_main = main;
	memcpy(phys_to_virt(TRAMPOLINE_BASE), trampoline_start,
	       (size_t)(trampoline_end - trampoline_start));
	parameters = phys_to_virt(TRAMPOLINE_BASE +
				  (uint64_t)(trampoline_parameters - trampoline_start));
	parameters->cr3 = (uint32_t)page_tables;
	parameters->efer = (uint32_t)(rdmsr(MSR_EFER) & (EFER_LME | EFER_NXE | EFER_SCE));
	parameters->entry = (uint64_t)ap_entry;
}

bool ap_start(unsigned int index, uint32_t apic_id, uint64_t stack_top, uint64_t *cycles)
{
	uint64_t start = rdtsc_ordered(), limit = tsc_cycles_from_ms(AP_READY_TIMEOUT_MS);

	parameters->stack = stack_top;
	parameters->index = index;

	apic_send_init(apic_id);
	delay_us(INIT_DELAY_US);
	for (unsigned int attempt = 0; attempt < 2 && !*per_cpu_ptr(alive, index); attempt++) {
		apic_send_startup(apic_id, TRAMPOLINE_BASE);
		delay_us(STARTUP_DELAY_US);
	}
	while (!*per_cpu_ptr(ready, index) && rdtsc_ordered() - start < limit)
		cpu_relax();
	*cycles = rdtsc_ordered() - start;
	return *per_cpu_ptr(ready, index);
}
