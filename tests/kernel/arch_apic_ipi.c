/* SPDX-License-Identifier: MIT */
/* arch suite: the local APIC between CPUs: every CPU in the boot CPU's mode, IPIs and NMIs. */
#include "arch/x86/apic.h"
#include "arch/x86/cpu.h"
#include "arch/x86/cpuid.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/msr.h"
#include "arch/x86/nmi.h"
#include "arch/x86/percpu.h"
#include "arch/x86/traps.h"
#include "arch/x86/tsc.h"
#include "kernel/smp.h"
#include "runner/test.h"
#include "tests/kernel/lib/arch_apic.h"
#include "tests/kernel/lib/smp_util.h"

#define CPUID_LEAF_TOPOLOGY 0x0b /* EDX: the x2APIC id of this CPU (SDM Vol. 2A, CPUID) */
#define CPUID_1_EBX_APIC_ID_SHIFT 24 /* EBX[31:24]: the initial APIC id */
/* A halted vCPU can wait long for its host to run it (docs/platforms.md): only a lost IPI
 * waits this out. */
#define DELIVERY_WAIT_MS 2000

/* What a CPU's APIC says of itself, read on that CPU. */
struct apic_view {
	uint64_t base;
	uint32_t id, cpuid_id;
	uint32_t lvt_timer, timer_divide; /* as timer_start_cpu() set them */
};

static void read_apic_here(void *arg)
{
	struct apic_view *view = arg;

	view->base = rdmsr(MSR_IA32_APIC_BASE);
	view->id = apic_id();
	view->lvt_timer = apic_read(APIC_LVT_TIMER);
	view->timer_divide = apic_read(APIC_TIMER_DIVIDE);
	if (apic_mode() == APIC_MODE_X2APIC)
		view->cpuid_id = cpuid_silicon(CPUID_LEAF_TOPOLOGY, 0).edx;
	else
		view->cpuid_id =
			cpuid_silicon(CPUID_LEAF_FEATURES, 0).ebx >> CPUID_1_EBX_APIC_ID_SHIFT;
}

TEST(arch, apic_every_cpu_runs_in_the_boot_cpus_mode_with_its_own_id_and_tick)
{
	smp_require_cpus(2);
	for (unsigned int cpu = 0; cpu < smp_cpus(); cpu++) {
		struct apic_view view = { 0, UINT32_MAX, UINT32_MAX, 0, UINT32_MAX };

		if (!smp_call(cpu, read_apic_here, &view))
			test_abort("CPU %u did not take a call within %u ms", cpu,
				   SMP_CALL_TIMEOUT_MS);
		test_diag("CPU %u: IA32_APIC_BASE 0x%llx, APIC id %u", cpu,
			  (unsigned long long)view.base, view.id);
		check_eq(APIC_BASE_GLOBAL_ENABLE, view.base & APIC_BASE_GLOBAL_ENABLE);
		check_eq(apic_mode() == APIC_MODE_X2APIC ? APIC_BASE_X2APIC_ENABLE : 0,
			 view.base & APIC_BASE_X2APIC_ENABLE);
		check_eq(percpu_get(cpu)->apic_id, view.id);
		check_eq(view.cpuid_id, view.id);
		check_eq(APIC_LVT_TIMER_PERIODIC | VECTOR_TIMER, view.lvt_timer);
		check_eq(APIC_TIMER_DIVIDE_BY_16, view.timer_divide);
	}
}

static volatile unsigned int taken;
static volatile unsigned int taken_on;

static void note_test_interrupt(struct cpu_regs *regs)
{
	(void)regs;
	taken_on = this_cpu_index();
	__atomic_add_fetch(&taken, 1, __ATOMIC_RELEASE);
}

TEST(arch, apic_fixed_ipi_reaches_exactly_the_cpu_it_names)
{
	smp_require_cpus(2);
	interrupt_register(VECTOR_TEST, note_test_interrupt);
	for (unsigned int cpu = smp_cpus(); cpu-- > 0;) {
		taken = 0;
		taken_on = UINT32_MAX;
		apic_send_ipi(percpu_get(cpu)->apic_id, VECTOR_TEST);
		apic_test_wait_for(&taken, 1, DELIVERY_WAIT_MS);
		check_eq(1, taken);
		check_eq(cpu, taken_on);
	}
	interrupt_register(VECTOR_TEST, NULL);
}

static volatile bool nmi_armed;
static volatile unsigned int nmi_target;

/*
 * Claims one NMI on the target CPU while armed; every other NMI goes on to the next handler. The
 * NMI watchdog's go to CPU 0 only, so the test sends to the other CPUs.
 */
static bool note_test_nmi(struct cpu_regs *regs)
{
	bool armed = true;

	(void)regs;
	if (this_cpu_index() != nmi_target ||
	    !__atomic_compare_exchange_n(&nmi_armed, &armed, false, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_RELAXED))
		return false;
	taken_on = this_cpu_index();
	__atomic_add_fetch(&taken, 1, __ATOMIC_RELEASE);
	return true;
}

TEST(arch, apic_nmi_reaches_exactly_the_other_cpu_it_names)
{
	static bool registered;

	smp_require_cpus(2);
	if (!registered)
		nmi_register(note_test_nmi);
	registered = true;
	for (unsigned int cpu = 0; cpu < smp_cpus(); cpu++) {
		if (cpu == this_cpu_index())
			continue; /* arch.apic_nmi_to_this_cpus_own_id_arrives_at_once */
		taken = 0;
		taken_on = UINT32_MAX;
		nmi_target = cpu;
		__atomic_store_n(&nmi_armed, true, __ATOMIC_RELEASE);
		apic_send_nmi(percpu_get(cpu)->apic_id);
		apic_test_wait_for(&taken, 1, DELIVERY_WAIT_MS);
		nmi_armed = false;
		check_eq(1, taken);
		check_eq(cpu, taken_on);
	}
}
