/* SPDX-License-Identifier: MIT */
/* Local APIC in xAPIC (MMIO) or x2APIC (MSR) mode (SDM Vol. 3 §11.4-11.6, §11.12); its timer. */
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/apic.h"
#include "arch/x86/apic_mode.h"
#include "arch/x86/cpu.h"
#include "arch/x86/cpuid.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/io.h"
#include "arch/x86/msr.h"
#include "arch/x86/paging.h"
#include "arch/x86/percpu.h"
#include "arch/x86/traps.h"
#include "arch/x86/tsc.h"
#include "lib/cmdline.h"
#include "lib/format.h"
#include "lib/ktap.h"

/* ICR fields (SDM Vol. 3 §11.6.1; x2APIC: §11.12.9). */
#define APIC_ICR_SHORTHAND_SELF (1u << 18) /* destination shorthand 01: self */
#define APIC_ICR_DELIVERY_PENDING (1u << 12) /* xAPIC only: x2APIC has no delivery status */
#define APIC_ICR_LEVEL_ASSERT (1u << 14)
#define APIC_ICR_MODE_FIXED (0u << 8)
#define APIC_ICR_MODE_NMI (4u << 8)
#define APIC_ICR_MODE_INIT (5u << 8)
#define APIC_ICR_MODE_STARTUP (6u << 8)
#define APIC_ICR_STARTUP_PAGE_SHIFT 12 /* STARTUP's vector: the start-up page's number */
#define APIC_ICR_XAPIC_DESTINATION_SHIFT 24 /* xAPIC: in the high half, bits 31:24 */
#define APIC_ICR_X2APIC_DESTINATION_SHIFT 32 /* x2APIC: the one 64-bit ICR's bits 63:32 */

#define APIC_XAPIC_ID_SHIFT 24 /* xAPIC: the ID register's bits 31:24; x2APIC: all 32 bits */

#define TIMER_CALIBRATION_MS 10

/* The legacy 8259 pair: masked, so that it never delivers IRQ0-15 at exception vectors. */
#define PIC_MASTER_DATA 0x21
#define PIC_SLAVE_DATA 0xa1
#define PIC_MASK_ALL 0xff

static enum apic_mode mode; /* set once by apic_init(), before any other CPU starts */
static enum apic_request request;
static bool by_firmware; /* x2APIC mode, and firmware had enabled it */
static bool simulate_firmware; /* selftest.firmware_x2apic */
static bool simulate_stop; /* selftest.timer_calibration_stop */
static volatile uint32_t *apic_registers; /* xAPIC mode only */
static const struct pmi_hooks *pmi_hooks[PMI_HOOKS];
static timer_hook hooks[TIMER_HOOKS];
static unsigned int tick_hz;
static uint32_t counts_per_second;

CMDLINE_OPTION(option_apic, .name = "apic", .syntax = "xapic|x2apic", .parse = apic_parse_request,
	       .dest = &request);
CMDLINE_OPTION(option_firmware_x2apic, .name = "selftest.firmware_x2apic",
	       .parse = cmdline_parse_flag, .dest = &simulate_firmware);
CMDLINE_OPTION(option_calibration_stop, .name = "selftest.timer_calibration_stop",
	       .parse = cmdline_parse_flag, .dest = &simulate_stop);

/*
 * x2APIC registers by RDMSR and WRMSR, apart from msr.h: an APIC access is not a debug-state
 * write, so it is not counted in this_cpu()->writes.msr (xAPIC's MMIO never was, and a tick's
 * EOI must not show in the switch tests' counts), and no CPU model serves it. #GP(0) for a
 * register x2APIC mode does not have (the ICR's high half), a read of a write-only one (EOI,
 * SELF IPI), a write of a read-only one, a nonzero write to EOI or ESR, or a reserved bit.
 */
static inline uint64_t x2apic_read(uint32_t offset)
{
	uint32_t low, high;

	asm volatile("rdmsr" : "=a"(low), "=d"(high) : "c"(apic_x2apic_msr(offset)));
	return ((uint64_t)high << 32) | low;
}

static inline void x2apic_write(uint32_t offset, uint64_t value)
{
	asm volatile("wrmsr"
		     :
		     : "c"(apic_x2apic_msr(offset)), "a"((uint32_t)value),
		       "d"((uint32_t)(value >> 32))
		     : "memory");
}

uint32_t apic_read(uint32_t offset)
{
	if (mode == APIC_MODE_X2APIC)
		return (uint32_t)x2apic_read(offset);
	return apic_registers[offset / 4];
}

void apic_write(uint32_t offset, uint32_t value)
{
	if (mode == APIC_MODE_X2APIC)
		x2apic_write(offset, value);
	else
		apic_registers[offset / 4] = value;
}

/*
 * Put the calling CPU's APIC in x2APIC mode, unless it is already: from xAPIC mode by setting
 * EXTD; from the disabled state through xAPIC mode first, since EN=0 with EXTD=1 is invalid
 * (SDM Vol. 3 §11.12.5, "Local x2APIC State Transitions").
 */
static void x2apic_enable_here(void)
{
	uint64_t base = rdmsr(MSR_IA32_APIC_BASE);

	if (base & APIC_BASE_X2APIC_ENABLE)
		return;
	if (!(base & APIC_BASE_GLOBAL_ENABLE)) {
		base |= APIC_BASE_GLOBAL_ENABLE;
		wrmsr(MSR_IA32_APIC_BASE, base);
	}
	wrmsr(MSR_IA32_APIC_BASE, base | APIC_BASE_X2APIC_ENABLE);
}

/* xAPIC mode: enable the APIC where firmware left it disabled (EN=0, EXTD=0). */
static void xapic_enable_here(void)
{
	uint64_t base = rdmsr(MSR_IA32_APIC_BASE);

	if (!(base & APIC_BASE_GLOBAL_ENABLE))
		wrmsr(MSR_IA32_APIC_BASE, base | APIC_BASE_GLOBAL_ENABLE);
}

/*
 * Whether firmware locked the APIC in x2APIC mode: IA32_XAPIC_DISABLE_STATUS bit 0, where
 * IA32_ARCH_CAPABILITIES bit 21 says that MSR exists (Linux's x2apic_hw_locked()).
 */
static bool x2apic_locked(void)
{
	uint64_t capabilities, status;

	if (cpuid_silicon(CPUID_LEAF_VENDOR, 0).eax < CPUID_LEAF_EXTENDED_FEATURES ||
	    !(cpuid_silicon(CPUID_LEAF_EXTENDED_FEATURES, 0).edx & CPUID_7_EDX_ARCH_CAPABILITIES))
		return false;
	if (rdmsr_safe(MSR_IA32_ARCH_CAPABILITIES, &capabilities) ||
	    !(capabilities & ARCH_CAP_XAPIC_DISABLE))
		return false;
	return !rdmsr_safe(MSR_IA32_XAPIC_DISABLE_STATUS, &status) &&
	       (status & XAPIC_DISABLE_STATUS_LEGACY_XAPIC_DISABLED);
}

enum apic_init_result apic_init(char *error, size_t size)
{
	struct cpuid_result leaf1 = cpuid_silicon(CPUID_LEAF_FEATURES, 0);
	struct apic_choice choice;
	uint64_t base;

	outb(PIC_MASTER_DATA, PIC_MASK_ALL);
	outb(PIC_SLAVE_DATA, PIC_MASK_ALL);
	if (!(leaf1.edx & CPUID_1_EDX_APIC)) {
		format(error, size, "no local APIC: CPUID.1:EDX[9] is 0");
		return APIC_INIT_NO_APIC;
	}
	if (simulate_firmware) {
		if (!(leaf1.ecx & CPUID_1_ECX_X2APIC)) {
			format(error, size,
			       "option 'selftest.firmware_x2apic': CPUID.1:ECX[21] is 0: this CPU "
			       "has no x2APIC to hand over in");
			return APIC_INIT_USAGE_ERROR;
		}
		x2apic_enable_here();
		ktap_diag(0, "apic: selftest.firmware_x2apic: the boot CPU's x2APIC was turned on "
			     "before the APIC set-up looked, as firmware that hands over in x2APIC "
			     "mode leaves it");
	}
	base = rdmsr(MSR_IA32_APIC_BASE);
	choice = apic_mode_choose(request, leaf1.ecx & CPUID_1_ECX_X2APIC,
				  base & APIC_BASE_X2APIC_ENABLE);
	if (choice.error) {
		format(error, size, "%s", choice.error);
		return APIC_INIT_USAGE_ERROR;
	}
	mode = choice.mode;
	by_firmware = mode == APIC_MODE_X2APIC && !choice.enable_x2apic;
	if (choice.refused)
		ktap_diag(0, "apic: %s", choice.refused);
	if (mode == APIC_MODE_X2APIC) {
		ktap_diag(0, "apic: x2APIC, %s%s", choice.reason,
			  by_firmware && x2apic_locked()
				  ? ", locked (IA32_XAPIC_DISABLE_STATUS bit 0)"
				  : "");
	} else {
		apic_registers = phys_to_virt(base & APIC_BASE_ADDRESS_MASK);
		ktap_diag(0, "apic: xAPIC at 0x%llx %s",
			  (unsigned long long)(base & APIC_BASE_ADDRESS_MASK), choice.reason);
	}
	apic_init_cpu();
	return APIC_INIT_OK;
}

enum apic_mode apic_mode(void)
{
	return mode;
}

enum apic_request apic_requested(void)
{
	return request;
}

bool apic_x2apic_by_firmware(void)
{
	return by_firmware;
}

/*
 * Every CPU runs in the boot CPU's mode; an application CPU that firmware left in xAPIC mode is
 * switched here. In xAPIC mode every CPU's APIC sits at the same address (the boot CPU's
 * IA32_APIC_BASE, left as reset set it).
 */
void apic_init_cpu(void)
{
	if (mode == APIC_MODE_X2APIC)
		x2apic_enable_here();
	else
		xapic_enable_here();
	apic_write(APIC_LVT_LINT0, APIC_LVT_MASKED);
	apic_write(APIC_LVT_LINT1, APIC_LVT_MASKED);
	apic_write(APIC_LVT_ERROR, APIC_LVT_MASKED);
	apic_write(APIC_LVT_TIMER, APIC_LVT_MASKED);
	apic_write(APIC_SPURIOUS, APIC_SPURIOUS_ENABLE | VECTOR_SPURIOUS);
	if (pmi_hooks[0])
		apic_write(APIC_LVT_PERFORMANCE, VECTOR_PMI);
	this_cpu()->apic_id = apic_id();
}

uint32_t apic_id(void)
{
	if (mode == APIC_MODE_X2APIC)
		return (uint32_t)x2apic_read(APIC_ID); /* all 32 bits (SDM Vol. 3 §11.12.5.1) */
	return apic_read(APIC_ID) >> APIC_XAPIC_ID_SHIFT;
}

/* Vector's bit in the ISR or IRR (first: the first of its 8 registers). */
static bool apic_vector_bit(uint32_t first, unsigned int vector)
{
	uint32_t bits =
		apic_read(first + vector / APIC_VECTORS_PER_REGISTER * APIC_REGISTER_STRIDE);

	return bits & (1u << (vector % APIC_VECTORS_PER_REGISTER));
}

bool apic_in_service(unsigned int vector)
{
	return apic_vector_bit(APIC_IN_SERVICE, vector);
}

bool apic_pending(unsigned int vector)
{
	return apic_vector_bit(APIC_INTERRUPT_REQUEST, vector);
}

void apic_end_of_interrupt(void)
{
	apic_write(APIC_EOI, 0);
}
static void timer_interrupt(struct cpu_regs *regs)
{
	this_cpu()->ticks++;
	for (unsigned int i = 0; i < TIMER_HOOKS; i++) {
		timer_hook hook = __atomic_load_n(&hooks[i], __ATOMIC_ACQUIRE);

		if (hook)
			hook(regs);
	}
}

void timer_register_hook(timer_hook hook)
{
	for (unsigned int i = 0; i < TIMER_HOOKS; i++) {
		if (!hooks[i]) {
			timer_hook_set(i, hook);
			return;
		}
	}
}

void timer_unregister_hook(timer_hook hook)
{
	for (unsigned int i = 0; i < TIMER_HOOKS; i++)
		if (hooks[i] == hook)
			timer_hook_set(i, NULL);
}

timer_hook timer_hook_at(unsigned int slot)
{
	return __atomic_load_n(&hooks[slot], __ATOMIC_ACQUIRE);
}

void timer_hook_set(unsigned int slot, timer_hook hook)
{
	__atomic_store_n(&hooks[slot], hook, __ATOMIC_RELEASE);
}

/*
 * The timer's calibration: its counts in TIMER_CALIBRATION_MS against the TSC. Each end reads
 * the current count between two TSC reads, and again, up to CALIBRATION_READS times, until
 * those are less than 1 / CALIBRATION_READ_FRACTION of the window apart (else the narrowest
 * stands): a host that stops the guest between a TSC read and the count's moves one clock and
 * not the other (docs/platforms.md: the period came out 2,408 us for 4,000). A stop inside the
 * window passes for both clocks alike. selftest.timer_calibration_stop plays such a stop: the
 * first read of the first end waits CALIBRATION_STOP_MS between its TSC read and the count's.
 */
#define CALIBRATION_READS 8
#define CALIBRATION_READ_FRACTION 100
#define CALIBRATION_STOP_MS 4

/* The current count, and the TSC at its read (the middle of the two around it). */
struct timer_reading {
	uint32_t count;
	uint64_t tsc;
};

static struct timer_reading timer_read_bracketed(uint64_t window, bool stop)
{
	struct timer_reading best = { 0 };
	uint64_t best_width = UINT64_MAX;

	for (unsigned int i = 0; i < CALIBRATION_READS; i++) {
		uint64_t before = rdtsc_ordered(), after;
		uint32_t count;

		while (stop && i == 0 &&
		       rdtsc_ordered() - before < tsc_cycles_from_ms(CALIBRATION_STOP_MS))
			cpu_relax();
		count = apic_read(APIC_TIMER_CURRENT);
		after = rdtsc_ordered();
		if (after - before < best_width) {
			best_width = after - before;
			best = (struct timer_reading){ count, before + (after - before) / 2 };
		}
		if (best_width < window / CALIBRATION_READ_FRACTION)
			break;
	}
	return best;
}

/* Counts of the timer (divided by 16) in one second. */
static uint32_t timer_counts_per_second(void)
{
	uint64_t window = tsc_cycles_from_ms(TIMER_CALIBRATION_MS);
	struct timer_reading first, last;

	apic_write(APIC_TIMER_DIVIDE, APIC_TIMER_DIVIDE_BY_16);
	apic_write(APIC_LVT_TIMER, APIC_LVT_MASKED);
	apic_write(APIC_TIMER_INITIAL, UINT32_MAX);
	first = timer_read_bracketed(window, simulate_stop);
	while (rdtsc_ordered() - first.tsc < window)
		cpu_relax();
	last = timer_read_bracketed(window, false);
	apic_write(APIC_TIMER_INITIAL, 0);
	return (uint32_t)((uint64_t)(first.count - last.count) * tsc_hz() / (last.tsc - first.tsc));
}

void timer_start(unsigned int hz)
{
	counts_per_second = timer_counts_per_second();
	interrupt_register(VECTOR_TIMER, timer_interrupt);
	apic_write(APIC_TIMER_DIVIDE, APIC_TIMER_DIVIDE_BY_16);
	apic_write(APIC_LVT_TIMER, APIC_LVT_TIMER_PERIODIC | VECTOR_TIMER);
	timer_set_hz(hz);
}

void timer_start_cpu(void)
{
	apic_write(APIC_TIMER_DIVIDE, APIC_TIMER_DIVIDE_BY_16);
	apic_write(APIC_LVT_TIMER, APIC_LVT_TIMER_PERIODIC | VECTOR_TIMER);
	apic_write(APIC_TIMER_INITIAL,
		   counts_per_second / tick_hz ? counts_per_second / tick_hz : 1);
}

void timer_stop_cpu(void)
{
	apic_write(APIC_TIMER_INITIAL, 0); /* a zero initial count stops the timer (§11.5.4) */
}

void timer_set_hz(unsigned int hz)
{
	tick_hz = hz;
	apic_write(APIC_TIMER_INITIAL, counts_per_second / hz ? counts_per_second / hz : 1);
}

unsigned int timer_hz(void)
{
	return tick_hz;
}

static void apic_wait_idle(void)
{
	while (apic_read(APIC_INTERRUPT_COMMAND_LOW) & APIC_ICR_DELIVERY_PENDING)
		cpu_relax();
}

/*
 * xAPIC: the high half names the destination, writing the low half sends, and the delivery
 * status says when the ICR is free again (SDM Vol. 3 §11.6.1). x2APIC: one WRMSR of the 64-bit
 * ICR sends, and there is no delivery status to wait for (§11.12.9). WRMSR to an x2APIC register
 * is not serializing, so stores before it could still be invisible to the CPU the IPI reaches
 * (smp_call() publishes its call just before the IPI): MFENCE then LFENCE first, as Linux's
 * weak_wrmsr_fence() (arch/x86/include/asm/barrier.h) does before every x2APIC IPI.
 */
static void apic_send(uint32_t destination, uint32_t command)
{
	unsigned long flags;

	if (mode == APIC_MODE_X2APIC) {
		asm volatile("mfence; lfence" : : : "memory");
		x2apic_write(APIC_INTERRUPT_COMMAND_LOW,
			     ((uint64_t)destination << APIC_ICR_X2APIC_DESTINATION_SHIFT) |
				     command);
		return;
	}
	flags = local_irq_save();
	apic_wait_idle();
	apic_write(APIC_INTERRUPT_COMMAND_HIGH, destination << APIC_ICR_XAPIC_DESTINATION_SHIFT);
	apic_write(APIC_INTERRUPT_COMMAND_LOW, command);
	apic_wait_idle();
	local_irq_restore(flags);
}

/* x2APIC has a register for it (SDM Vol. 3 §11.12.11); xAPIC the ICR's shorthand. */
void apic_send_self_ipi(unsigned int vector)
{
	if (mode == APIC_MODE_X2APIC)
		x2apic_write(APIC_SELF_IPI, vector);
	else
		apic_send(0, APIC_ICR_SHORTHAND_SELF |
				     vector); /* the shorthand ignores the destination */
}
void apic_send_ipi(uint32_t destination, unsigned int vector)
{
	apic_send(destination, APIC_ICR_MODE_FIXED | APIC_ICR_LEVEL_ASSERT | vector);
}

void apic_send_nmi(uint32_t destination)
{
	apic_send(destination, APIC_ICR_MODE_NMI | APIC_ICR_LEVEL_ASSERT);
}

void apic_send_init(uint32_t destination)
{
	apic_write(APIC_ERROR_STATUS, 0);
	apic_send(destination, APIC_ICR_MODE_INIT | APIC_ICR_LEVEL_ASSERT);
}

void apic_send_startup(uint32_t destination, uint64_t start_phys)
{
	apic_send(destination,
		  APIC_ICR_MODE_STARTUP | (uint32_t)(start_phys >> APIC_ICR_STARTUP_PAGE_SHIFT));
}

/* Every subsystem that enables PMIs (ds/, pmu/) looks at its own status; then LVTPC is unmasked. */
static void pmi_interrupt(struct cpu_regs *regs)
{
	const struct pmi_hooks *registered[PMI_HOOKS];

	for (unsigned int i = 0; i < PMI_HOOKS; i++)
		registered[i] = pmi_hooks_at(i); /* the same set for enter and exit */
	for (unsigned int i = 0; i < PMI_HOOKS; i++)
		if (registered[i] && registered[i]->enter)
			registered[i]->enter(regs);
	for (unsigned int i = PMI_HOOKS; i-- > 0;)
		if (registered[i] && registered[i]->exit)
			registered[i]->exit(regs);
	apic_pmi_unmask();
}

void pmi_register(const struct pmi_hooks *hook)
{
	for (unsigned int i = 0; i < PMI_HOOKS; i++) {
		if (!pmi_hooks[i]) {
			pmi_hooks_set(i, hook);
			break;
		}
	}
	interrupt_register(VECTOR_PMI, pmi_interrupt);
	apic_write(APIC_LVT_PERFORMANCE, VECTOR_PMI);
}

void pmi_unregister(const struct pmi_hooks *hook)
{
	for (unsigned int i = 0; i < PMI_HOOKS; i++)
		if (pmi_hooks[i] == hook)
			pmi_hooks_set(i, NULL);
}

const struct pmi_hooks *pmi_hooks_at(unsigned int slot)
{
	return __atomic_load_n(&pmi_hooks[slot], __ATOMIC_ACQUIRE);
}

void pmi_hooks_set(unsigned int slot, const struct pmi_hooks *hooks)
{
	__atomic_store_n(&pmi_hooks[slot], hooks, __ATOMIC_RELEASE);
}

void apic_pmi_unmask(void)
{
	apic_write(APIC_LVT_PERFORMANCE, apic_read(APIC_LVT_PERFORMANCE) & ~APIC_LVT_MASKED);
}

uint32_t apic_lvtpc_configured(void)
{
	return pmi_hooks[0] ? VECTOR_PMI : APIC_LVT_MASKED;
}

uint32_t apic_read_lvtpc(void)
{
	return apic_read(APIC_LVT_PERFORMANCE);
}

void apic_write_lvtpc(uint32_t value)
{
	apic_write(APIC_LVT_PERFORMANCE, value);
}

bool apic_pmi_masked(void)
{
	return apic_read(APIC_LVT_PERFORMANCE) & APIC_LVT_MASKED;
}
