/* SPDX-License-Identifier: MIT */
/* start_kernel(): the boot path, from the long-mode entry to the end of the run. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/apic.h"
#include "arch/x86/context.h"
#include "arch/x86/cpu.h"
#include "arch/x86/fpu.h"
#include "arch/x86/gdt.h"
#include "arch/x86/paging.h"
#include "arch/x86/percpu.h"
#include "arch/x86/traps.h"
#include "arch/x86/tsc.h"
#include "boot/boot_info.h"
#include "boot/console.h"
#include "debugstate/debugstate.h"
#include "dr/dr.h"
#include "ds/ds.h"
#include "emulator/emulator.h"
#include "kernel/address_space.h"
#include "kernel/console_lock.h"
#include "kernel/pfa.h"
#include "kernel/platform_report.h"
#include "kernel/shutdown.h"
#include "kernel/smp.h"
#include "lbr/lbr.h"
#include "lib/cmdline.h"
#include "lib/console.h"
#include "lib/ktap.h"
#include "lib/panic.h"
#include "platform/pc/tsc_calibrate.h"
#include "pmu/pmu.h"
#include "runner/isolation.h"
#include "runner/options.h"
#include "runner/runner.h"
#include "sched/sched.h"

#define SWITCHYARD_VERSION "0.1"
#define TICK_HZ 250

void start_kernel(uint32_t magic, uint32_t info_phys);

static struct boot_info boot_info;

const struct boot_info *boot_info_get(void)
{
	return &boot_info;
}

static void memory_init(void)
{
	size_t pages;

	paging_init();
	for (size_t i = 0; i < boot_info.region_count; i++)
		ktap_diag(0, "memory: 0x%016llx-0x%016llx type %u",
			  (unsigned long long)boot_info.regions[i].base,
			  (unsigned long long)(boot_info.regions[i].base +
					       boot_info.regions[i].length - 1),
			  boot_info.regions[i].type);
	pages = pfa_init(boot_info.regions, boot_info.region_count);
	ktap_diag(0, "memory: multiboot%u loader=\"%s\" regions=%zu free_pages=%zu (%zu MiB)",
		  boot_info.protocol, boot_info.loader_name, boot_info.region_count, pages,
		  pages / 256);
	if (pages == 0)
		panic("no free memory in the boot memory map");
}

static void time_init(void)
{
	char error[CMDLINE_STRING_MAX];

	switch (apic_init(error, sizeof(error))) {
	case APIC_INIT_OK:
		break;
	case APIC_INIT_NO_APIC:
		panic("%s", error);
	case APIC_INIT_USAGE_ERROR:
		runner_usage_error(error);
		shutdown_exit(EXIT_USAGE);
	}
	if (!tsc_calibrate(boot_info.rsdp, boot_info.rsdp_length, error, sizeof(error))) {
		if (!tsc_source_forced())
			panic("%s", error);
		runner_usage_error(error);
		shutdown_exit(EXIT_USAGE);
	}
	timer_start(TICK_HZ);
	local_irq_enable();
}

static void seed_init(void)
{
	if (!run_options.seed_given)
		run_options.seed = rdtsc_ordered();
	ktap_diag(0, "seed=%llu", (unsigned long long)run_options.seed);
}

/* Each application processor, once arch/x86 set it up: its scheduler, its registers, its tick. */
static void __attribute__((noreturn)) ap_main(void)
{
	sched_start_cpu();
	dr_init_cpu();
	ds_init_cpu();
	pmu_init_cpu();
	timer_start_cpu();
	smp_cpu_ready();
	sched_idle();
}

static struct smp_start_info smp_info(void)
{
	return (struct smp_start_info){
		.rsdp = boot_info.rsdp_length ? boot_info.rsdp : NULL,
		.rsdp_length = boot_info.rsdp_length,
		.regions = boot_info.regions,
		.region_count = boot_info.region_count,
		.ap_main = ap_main,
	};
}

static void smp_prepare_cpus(void)
{
	struct smp_start_info info = smp_info();

	smp_prepare(&info);
}

static void smp_init(void)
{
	struct smp_start_info info = smp_info();

	ktap_diag(0, "smp: %u CPUs online", smp_start(&info));
}

/*
 * The command line, validated whole before any of it takes effect. A rejected line (too long,
 * an unknown or malformed option, a console that is not there) is reported on the fallback
 * console (the SPCR's UART, else COM1: boot/console.h) and ends the run with the usage-error
 * status: every word is parsed even after an error, and an overlong line's first
 * CMDLINE_MAX - 1 characters, so exit=isa-debug still works.
 */
static void boot_options(uint32_t magic, uint32_t info_phys)
{
	static char error[CMDLINE_STRING_MAX + 64], spare[CMDLINE_STRING_MAX + 64];
	static char shown[CMDLINE_MAX];
	bool copied = boot_info_copy(magic, info_phys, &boot_info, error, sizeof(error));
	bool valid = options_parse(boot_info.cmdline, copied ? error : spare,
				   copied ? sizeof(error) : sizeof(spare)) &&
		     copied;

	valid = boot_console_start(&run_options.console, valid,
				   boot_info.rsdp_length ? boot_info.rsdp : NULL,
				   boot_info.rsdp_length, error, sizeof(error));
	shutdown_set_isa_debug_exit(run_options.isa_debug_exit);
	console_fresh_line(); /* ends the firmware's unterminated text; not in the CRC */
	ktap_version(0);
	ktap_diag(0, "switchyard %s (x86-64)", SWITCHYARD_VERSION);
	cmdline_escape(shown, sizeof(shown), boot_info.cmdline);
	ktap_diag(0, "cmdline: %s", shown);
	boot_console_report();
	if (!valid) {
		runner_usage_error(error);
		shutdown_exit(EXIT_USAGE);
	}
	if (run_options.boot_file[0]) {
		cmdline_escape(shown, sizeof(shown), run_options.boot_file);
		ktap_diag(0, "boot file: %s", shown);
	}
}

/*
 * The rest of the boot, then the runner, on the runner's guarded stack (arch/x86/paging.h): a
 * test that runs off it faults in the guard instead of overwriting the boot page tables below
 * boot/entry.asm's stack.
 */
static void __attribute__((noreturn)) start_kernel_guarded(void)
{
	time_init();
	smp_prepare_cpus(); /* the MADT; per-CPU data for each CPU to start, before any user of it
			     */
	fpu_init(); /* SSE for user tasks; the kernel itself never uses it */
	isolation_init(); /* before the scheduler: its tick hook must run first */
	sched_init(); /* the boot context becomes the runner task */
	if (!user_syscall_select())
		panic("user tasks cannot make system calls");
	emulator_init(); /* where the CPU has no Debug Store: the emulated one, under the accessors
			  */
	dr_init(); /* breakpoints: #DB, CR4.DE */
	pmu_init(); /* counters: detection, the multiplexing tick */
	ds_init(); /* Debug Store: detection */
	lbr_init(); /* Last Branch Records: detection */
	debugstate_init(); /* the one switch hook and PMI handler, their order written as code */
	smp_init(); /* the other CPUs, each with its own run queue, idle until given work */
	platform_report();
	seed_init();
	shutdown_exit(runner_run(&run_options));
}

void start_kernel(uint32_t magic, uint32_t info_phys)
{
	uint64_t runner_stack;

	shutdown_init(); /* first: panic() ends the run from here on */
	percpu_init(0); /* the accessors count writes through %gs */
	console_lock_init(); /* one line at a time, from any CPU */
	gdt_init(); /* the TSS and its IST stacks for #DF, NMI and #MC */
	idt_init(); /* from here on every exception is reported */
	gdt_umip_enable(); /* CR4.UMIP: ring 3 cannot read where the GDT, IDT and TSS are */
	boot_options(magic, info_phys); /* the console, the banner; a bad line ends the run here */
	memory_init(); /* the page allocator, and the stack area's tables */
	runner_stack = kernel_stack_top(KERNEL_STACK_RUNNER);
	if (!runner_stack)
		panic("no memory for the runner's stack");
	run_on_stack(runner_stack, start_kernel_guarded);
}
