/* SPDX-License-Identifier: MIT */
/* The CPUs: which to start (the MADT), their per-CPU data and stacks; calls and IPIs between them.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/ap_start.h"
#include "arch/x86/apic.h"
#include "arch/x86/cpu.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/nmi.h"
#include "arch/x86/paging.h"
#include "arch/x86/percpu.h"
#include "arch/x86/traps.h"
#include "arch/x86/tsc.h"
#include "kernel/percpu.h"
#include "kernel/pfa.h"
#include "kernel/smp.h"
#include "lib/acpi.h"
#include "lib/cmdline.h"
#include "lib/format.h"
#include "lib/ktap.h"
#include "lib/panic.h"
#include "lib/string.h"
#include "platform/pc/acpi_tables.h"

#define AP_STACK_PAGES 4

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
static uint64_t slowest_call;
static unsigned int online_count = 1;
static volatile bool stopping;
static unsigned int stopper; /* the CPU that set stopping */
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
	ap_start_ready();
}

/* The trampoline's PML4 (arch/x86/ap_start.h): 0 when out of memory. */
static uint64_t trampoline_page_tables(void)
{
	uint64_t root = pfa_alloc();

	if (root)
		ap_start_tables(phys_to_virt(root));
	return root;
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
	struct acpi_root root;
	size_t table_length;
	const void *table;
	unsigned int wanted = 1, given;
	enum acpi_error error;

	error = acpi_tables_root(info->rsdp_length ? info->rsdp : NULL, info->rsdp_length, &root);
	if (error == ACPI_ERROR_NO_RSDP) {
		set_single_reason("no ACPI RSDP (none from the loader, the EBDA or the BIOS area)");
		return percpu_count();
	}
	if (!error)
		error = acpi_tables_find_in(&root, "APIC", &table, &table_length);
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
		  root.source, root.extended ? "XSDT" : "RSDT", madt.cpu_count, this_cpu()->apic_id,
		  given, (unsigned long)percpu_size());
	if (given < wanted)
		ktap_diag(0, "smp: no memory for the per-CPU data of %u CPUs: %u start at most",
			  wanted, given);
	return given;
}

unsigned int smp_start(const struct smp_start_info *info)
{
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
	ap_start_prepare(page_tables, info->ap_main);
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
		percpu_get(index)->apic_id = cpu->apic_id;
		if (!ap_start(index, cpu->apic_id,
			      (uint64_t)phys_to_virt(stack) + AP_STACK_PAGES * PAGE_SIZE,
			      &cycles)) {
			ktap_diag(0, "smp: APIC id %u: %s within %u ms", cpu->apic_id,
				  ap_start_alive(index) ? "started but not ready" : "did not start",
				  AP_READY_TIMEOUT_MS);
			if (ap_start_alive(index))
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
