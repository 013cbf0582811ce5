/* SPDX-License-Identifier: MIT */
/* Application processors: MADT discovery, INIT-SIPI-SIPI start-up, calls and IPIs between CPUs. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/apic.h"
#include "arch/x86/cpu.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/gdt.h"
#include "arch/x86/msr-index.h"
#include "arch/x86/msr.h"
#include "arch/x86/nmi.h"
#include "arch/x86/paging.h"
#include "arch/x86/percpu.h"
#include "arch/x86/processor-flags.h"
#include "arch/x86/smp.h"
#include "arch/x86/syscall.h"
#include "arch/x86/traps.h"
#include "arch/x86/tsc.h"
#include "kernel/percpu.h"
#include "kernel/pfa.h"
#include "lib/acpi.h"
#include "lib/cmdline.h"
#include "lib/format.h"
#include "lib/ktap.h"
#include "lib/panic.h"
#include "lib/string.h"

/* The BIOS areas where an RSDP may be (ACPI 6.5 §5.2.5.1). */
#define BDA_EBDA_SEGMENT 0x40e
#define EBDA_SEARCH_LENGTH 1024
#define BIOS_AREA_START 0xe0000ul
#define BIOS_AREA_LENGTH 0x20000ul

/* The MP start-up protocol's delays (SDM Vol. 3 §9.4.4.1), and how long a CPU may take to
 * finish its own set-up: ring-0 code is slow under KVM-PVM. */
#define INIT_DELAY_US 10000
#define STARTUP_DELAY_US 200
#define READY_TIMEOUT_MS 5000
#define AP_STACK_PAGES 4

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

enum call_state { CALL_EMPTY, CALL_QUEUED, CALL_RUNNING, CALL_DONE };

/*
 * The calling CPU's call in flight (one at most, so no lock is needed): the caller fills fn, arg
 * and target, then sets state to CALL_QUEUED; the target takes it (CALL_RUNNING) and ends it.
 */
struct call {
	void (*fn)(void *);
	void *arg;
	unsigned int target;
	volatile uint32_t state;
};

static DEFINE_PER_CPU(struct call, calls);
static DEFINE_PER_CPU(volatile bool, alive); /* its first C code ran */
static DEFINE_PER_CPU(volatile bool, ready); /* smp_cpu_ready() */
static uint64_t slowest_call;
static unsigned int online_count = 1;
static volatile bool stopping;
static unsigned int stopper; /* the CPU that set stopping */
static unsigned long boot_cr0, boot_cr4;
static void (*ap_main)(void);
static char single_reason[96] = "not started";
static uint64_t max_cpus = SMP_CPUS_MAX;

CMDLINE_OPTION(option_cpus, .name = "smp.cpus", .syntax = "N", .parse = cmdline_parse_u64,
	       .dest = &max_cpus, .min = 1, .max = SMP_CPUS_MAX);

unsigned int smp_cpus(void)
{
	return online_count;
}

const char *smp_single_reason(void)
{
	return online_count > 1 ? "" : single_reason;
}

static void delay_us(uint64_t us)
{
	uint64_t start = rdtsc_ordered(), wait = tsc_hz() / 1000000 * us;

	while (rdtsc_ordered() - start < wait)
		cpu_relax();
}

/* Run the calls queued for the calling CPU. Interrupts off. */
static void smp_call_poll(void)
{
	unsigned int self = this_cpu_index();

	for (unsigned int source = 0; source < percpu_count(); source++) {
		struct call *call = per_cpu_ptr(calls, source);
		uint32_t queued = CALL_QUEUED;

		if (call->state != CALL_QUEUED || call->target != self ||
		    !__atomic_compare_exchange_n(&call->state, &queued, CALL_RUNNING, false,
						 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			continue;
		call->fn(call->arg);
		__atomic_store_n(&call->state, CALL_DONE, __ATOMIC_RELEASE);
	}
}

static void call_interrupt(struct cpu_regs *regs)
{
	(void)regs;
	smp_call_poll();
}

bool smp_call(unsigned int cpu, void (*fn)(void *), void *arg)
{
	unsigned long flags = local_irq_save();
	unsigned int self = this_cpu_index();
	struct call *call = this_cpu_ptr(calls);
	uint64_t start, limit = tsc_cycles_from_ms(SMP_CALL_TIMEOUT_MS);
	uint32_t queued = CALL_QUEUED;

	if (cpu == self) {
		fn(arg);
		local_irq_restore(flags);
		return true;
	}
	if (cpu >= online_count) {
		local_irq_restore(flags);
		return false;
	}
	call->fn = fn;
	call->arg = arg;
	call->target = cpu;
	__atomic_store_n(&call->state, CALL_QUEUED, __ATOMIC_RELEASE);
	apic_send_ipi(percpu_get(cpu)->apic_id, VECTOR_CALL_FUNCTION);
	start = rdtsc_ordered();
	while (call->state != CALL_DONE) {
		smp_call_poll();
		cpu_relax();
		if (rdtsc_ordered() - start < limit)
			continue;
		/* Withdraw it, unless the target began running it: then it finishes. */
		if (__atomic_compare_exchange_n(&call->state, &queued, CALL_EMPTY, false,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
			local_irq_restore(flags);
			return false;
		}
		if (rdtsc_ordered() - start > 4 * limit)
			panic("smp_call: CPU %u runs a call for over %u ms", cpu,
			      4 * SMP_CALL_TIMEOUT_MS);
	}
	__atomic_store_n(&call->state, CALL_EMPTY, __ATOMIC_RELAXED);
	if (rdtsc_ordered() - start > slowest_call)
		slowest_call = rdtsc_ordered() - start; /* racy, for a report only */
	local_irq_restore(flags);
	return true;
}

uint64_t smp_call_slowest(void)
{
	return slowest_call;
}

unsigned int smp_call_all(void (*fn)(void *), void *arg)
{
	unsigned int ran = 0;

	for (unsigned int cpu = 0; cpu < online_count; cpu++)
		ran += smp_call(cpu, fn, arg);
	return ran;
}

void smp_reschedule(unsigned int cpu)
{
	if (cpu != this_cpu_index() && cpu < online_count)
		apic_send_ipi(percpu_get(cpu)->apic_id, VECTOR_RESCHEDULE);
}

/*
 * The CPU that stops the others goes on to print the final line: an NMI it takes meanwhile (the
 * NMI watchdog's, which still runs) is not its stop, and goes on to the next handler.
 */
static bool stop_nmi(struct cpu_regs *regs)
{
	(void)regs;
	if (!stopping || this_cpu_index() == stopper)
		return false;
	for (;;)
		halt(); /* NMIs stay blocked: there is no IRET */
}

void smp_stop_others(void)
{
	stopper = this_cpu_index();
	__atomic_store_n(&stopping, true, __ATOMIC_RELEASE);
	for (unsigned int cpu = 0; cpu < online_count; cpu++)
		if (cpu != this_cpu_index())
			apic_send_nmi(percpu_get(cpu)->apic_id);
}

void smp_cpu_ready(void)
{
	*this_cpu_ptr(ready) = true;
}

/* The first C code of an application processor, on the stack smp_start() gave it. */
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

static const void *acpi_map_direct(uint64_t phys, size_t length, void *context)
{
	(void)context;
	if (phys >= DIRECT_MAP_LIMIT || length > DIRECT_MAP_LIMIT - phys)
		return NULL;
	return phys_to_virt(phys);
}

/* The RSDP: from the loader, else the first KiB of the EBDA, else 0xE0000-0xFFFFF. */
static const void *find_rsdp(const struct smp_start_info *info, size_t *length, const char **source)
{
	uint16_t ebda_segment;
	const void *found;

	if (info->rsdp && info->rsdp_length) {
		*length = info->rsdp_length;
		*source = "multiboot2";
		return info->rsdp;
	}
	memcpy(&ebda_segment, phys_to_virt(BDA_EBDA_SEGMENT), sizeof(ebda_segment));
	*length = ACPI_RSDP_V2_SIZE;
	*source = "EBDA";
	if (ebda_segment &&
	    (found = acpi_rsdp_find(phys_to_virt((uint64_t)ebda_segment << 4), EBDA_SEARCH_LENGTH)))
		return found;
	*source = "BIOS area scan";
	return acpi_rsdp_find(phys_to_virt(BIOS_AREA_START), BIOS_AREA_LENGTH);
}

static bool page_is_available(const struct smp_start_info *info, uint64_t phys)
{
	for (size_t i = 0; i < info->region_count; i++) {
		const struct memory_region *region = &info->regions[i];

		if (region->type == MEMORY_AVAILABLE && region->base <= phys &&
		    phys + PAGE_SIZE <= region->base + region->length)
			return true;
	}
	return false;
}

/* Page tables for the trampoline: the kernel's, plus an identity map of the low 4 GiB. */
static uint64_t trampoline_page_tables(void)
{
	uint64_t root = pfa_alloc();
	uint64_t *entries = phys_to_virt(root);
	const uint64_t *kernel = phys_to_virt(paging_kernel_root());

	if (!root)
		return 0;
	memcpy(entries, kernel, PAGE_SIZE);
	entries[0] = kernel[PML4_FIRST_KERNEL_ENTRY]; /* the direct map's PDPT */
	return root;
}

/* INIT, then STARTUP until the CPU shows life (SDM Vol. 3 §9.4.4.1); then wait until ready. */
static bool start_cpu(unsigned int index, uint32_t apic_id, uint64_t *cycles)
{
	uint64_t start = rdtsc_ordered(), limit = tsc_cycles_from_ms(READY_TIMEOUT_MS);

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

static void __attribute__((format(printf, 1, 2))) set_single_reason(const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	vformat(single_reason, sizeof(single_reason), fmt, args);
	va_end(args);
	ktap_diag(0, "smp: %s: running on CPU 0 only", single_reason);
}

/* The MADT smp_start() found, for the I/O APIC's users; empty when it found none. */
static struct acpi_madt madt;

const struct acpi_madt *smp_madt(void)
{
	return &madt;
}

unsigned int smp_prepare(const struct smp_start_info *info)
{
	struct acpi_cpu entry;
	const char *source;
	size_t rsdp_length, table_length;
	const void *rsdp, *table;
	uint64_t root;
	unsigned int wanted = 1, given;
	bool extended;
	enum acpi_error error;

	rsdp = find_rsdp(info, &rsdp_length, &source);
	if (!rsdp) {
		set_single_reason("no ACPI RSDP (none from the loader, the EBDA or the BIOS area)");
		return percpu_count();
	}
	error = acpi_rsdp_parse(rsdp, rsdp_length, &root, &extended);
	if (!error)
		error = acpi_table_find(root, extended, "APIC", acpi_map_direct, NULL, &table,
					&table_length);
	if (!error)
		error = acpi_madt_parse(table, table_length, &madt);
	if (error) {
		memset(&madt, 0, sizeof(madt)); /* a parse error leaves it unspecified */
		set_single_reason("no usable MADT: %s", acpi_error_name(error));
		return percpu_count();
	}
	/* Every enabled CPU but the boot CPU that an IPI can reach in this APIC mode may start
	 * (smp_start() says why one does not). */
	for (size_t cursor = 0; acpi_madt_next_cpu(&madt, &cursor, &entry);)
		if (entry.enabled && entry.apic_id != this_cpu()->apic_id &&
		    apic_id_reachable(apic_mode(), entry.apic_id) && wanted < max_cpus)
			wanted++;
	given = percpu_setup(wanted);
	ktap_diag(0,
		  "smp: MADT via %s RSDP (%s): %u CPUs listed, boot CPU APIC id %u; per-CPU data "
		  "for %u CPUs, %lu bytes each",
		  source, extended ? "XSDT" : "RSDT", madt.cpu_count, this_cpu()->apic_id, given,
		  (unsigned long)percpu_size());
	if (given < wanted)
		ktap_diag(0, "smp: no memory for the per-CPU data of %u CPUs: %u start at most",
			  wanted, given);
	return given;
}

unsigned int smp_start(const struct smp_start_info *info)
{
	struct trampoline_parameters *parameters;
	struct acpi_cpu entry;
	uint64_t stack, page_tables;

	nmi_register(stop_nmi);
	interrupt_register(VECTOR_CALL_FUNCTION, call_interrupt);
	if (!madt.table)
		return online_count; /* smp_prepare() gave the reason */
	if (!page_is_available(info, TRAMPOLINE_BASE)) {
		set_single_reason("the start-up page at 0x%lx is not free memory", TRAMPOLINE_BASE);
		return online_count;
	}
	page_tables = trampoline_page_tables();
	if (!page_tables) {
		set_single_reason("no page for the start-up page tables");
		return online_count;
	}
	boot_cr0 = read_cr0();
	boot_cr4 = read_cr4() & ~CR4_UMIP; /* each CPU sets it where its own CPUID has it */
	ap_main = info->ap_main;
	memcpy(phys_to_virt(TRAMPOLINE_BASE), trampoline_start,
	       (size_t)(trampoline_end - trampoline_start));
	parameters = phys_to_virt(TRAMPOLINE_BASE +
				  (uint64_t)(trampoline_parameters - trampoline_start));
	parameters->cr3 = (uint32_t)page_tables;
	parameters->efer = (uint32_t)(rdmsr(MSR_EFER) & (EFER_LME | EFER_NXE | EFER_SCE));
	parameters->entry = (uint64_t)ap_entry;
	for (size_t cursor = 0; acpi_madt_next_cpu(&madt, &cursor, &entry);) {
		const struct acpi_cpu *cpu = &entry;
		unsigned int index = online_count;
		uint64_t cycles;

		if (cpu->apic_id == this_cpu()->apic_id)
			continue;
		if (!cpu->enabled) {
			ktap_diag(0, "smp: APIC id %u: disabled in the MADT%s", cpu->apic_id,
				  cpu->online_capable ? " (online-capable)" : "");
			continue;
		}
		if (!apic_id_reachable(apic_mode(), cpu->apic_id)) {
			ktap_diag(0, "smp: APIC id %u: %s, not started", cpu->apic_id,
				  apic_mode() == APIC_MODE_XAPIC
					  ? "beyond xAPIC reach (ids above 254 need x2APIC mode)"
					  : "the x2APIC broadcast id");
			continue;
		}
		if (index >= max_cpus) {
			ktap_diag(0, "smp: APIC id %u: not started (smp.cpus=%u)", cpu->apic_id,
				  (unsigned int)max_cpus);
			continue;
		}
		if (index >= percpu_count()) {
			ktap_diag(0, "smp: APIC id %u: not started (no per-CPU data)",
				  cpu->apic_id);
			continue;
		}
		stack = pfa_alloc_pages(AP_STACK_PAGES);
		if (!stack) {
			ktap_diag(0, "smp: APIC id %u: no memory for a stack", cpu->apic_id);
			break;
		}
		parameters->stack = (uint64_t)phys_to_virt(stack) + AP_STACK_PAGES * PAGE_SIZE;
		parameters->index = index;
		percpu_get(index)->apic_id = cpu->apic_id;
		if (!start_cpu(index, cpu->apic_id, &cycles)) {
			ktap_diag(0, "smp: APIC id %u: %s within %u ms", cpu->apic_id,
				  *per_cpu_ptr(alive, index) ? "started but not ready"
							     : "did not start",
				  READY_TIMEOUT_MS);
			if (*per_cpu_ptr(alive, index))
				panic("CPU %u (APIC id %u) is stuck in its set-up", index,
				      cpu->apic_id);
			pfa_free_pages(stack, AP_STACK_PAGES);
			continue;
		}
		online_count++;
		ktap_diag(0, "smp: CPU %u: APIC id %u online after %llu us", index, cpu->apic_id,
			  (unsigned long long)(cycles / (tsc_hz() / 1000000)));
	}
	pfa_free(page_tables);
	if (online_count == 1)
		set_single_reason("%s", madt.cpu_count > 1 ? "no other CPU started"
							   : "the MADT lists one CPU");
	return online_count;
}
