/* SPDX-License-Identifier: MIT */
/* dr/'s state: the breakpoint tables, the locks, each CPU's shadow, and the writes through it. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/debug-registers.h"
#include "arch/x86/debugctl.h"
#include "arch/x86/gdt.h"
#include "arch/x86/msr-index.h"
#include "arch/x86/msr.h"
#include "arch/x86/paging.h"
#include "arch/x86/percpu.h"
#include "arch/x86/traps.h"
#include "dr/bpext.h"
#include "dr/state.h"
#include "kernel/pfa.h"
#include "kernel/spinlock.h"
#include "kernel/switch_hooks.h"
#include "lib/bitops.h"
#include "lib/panic.h"
#include "lib/string.h"

static struct dr_task tasks[SWITCH_TASKS_MAX];
static struct dr_set system_set;
static struct dr_handler_entry system_handlers[DR_SLOTS];
static DEFINE_PER_CPU(struct dr_set, pinned_sets);
static DEFINE_PER_CPU(struct dr_handler_entry[DR_SLOTS], pinned_handlers);
/* Per-CPU counts of pinned breakpoints; tasks and system-wide ones count on every CPU. */
static struct dr_reservation reservation;
static uint64_t generation = 1;
static struct spinlock lock = SPINLOCK_INIT("dr");
/* Every task's hit ring: written in #DB on the task's CPU, read by dr_read_hits() anywhere. */
static struct spinlock hits_lock = SPINLOCK_INIT("dr hits");
static DEFINE_PER_CPU(struct dr_cpu, cpus);
static bool btf_supported;

/* The IDT, the entry code, the noinstr text and dr/'s three; per CPU its GDT, TSS and IST stacks,
 * struct cpu and dr/ shadow. */
#define DEBUG_REGIONS_FIXED 6
#define DEBUG_REGIONS_PER_CPU 3

/* dr_debug_regions(), allocated for percpu_count() CPUs and filled once by dr_state_init(). */
static struct dr_region *debug_regions;
static unsigned int debug_region_count;

unsigned long dr_lock_irqsave(void)
{
	return spin_lock_irqsave(&lock);
}

void dr_unlock_irqrestore(unsigned long flags)
{
	spin_unlock_irqrestore(&lock, flags);
}

void dr_lock_irqs_off(void)
{
	spin_lock(&lock);
}

void dr_unlock_irqs_off(void)
{
	spin_unlock(&lock);
}

const void *dr_lock_address(void)
{
	return &lock;
}

unsigned long dr_hits_lock_irqsave(void)
{
	return spin_lock_irqsave(&hits_lock);
}

void dr_hits_unlock_irqrestore(unsigned long flags)
{
	spin_unlock_irqrestore(&hits_lock, flags);
}

bool dr_hits_lock_in_debug(void)
{
	if (spin_is_held(&hits_lock))
		return false;
	spin_lock(&hits_lock);
	return true;
}

void dr_hits_unlock_in_debug(void)
{
	spin_unlock(&hits_lock);
}

struct dr_task *dr_task_get(unsigned int task)
{
	return &tasks[task];
}

struct dr_set *dr_system_set(void)
{
	return &system_set;
}

struct dr_handler_entry *dr_system_handler(unsigned int slot)
{
	return &system_handlers[slot];
}

struct dr_set *dr_pinned_set(unsigned int cpu)
{
	return per_cpu_ptr(pinned_sets, cpu);
}

struct dr_handler_entry *dr_pinned_handler(unsigned int cpu, unsigned int slot)
{
	return &(*per_cpu_ptr(pinned_handlers, cpu))[slot];
}

struct dr_reservation *dr_reservation_get(void)
{
	return &reservation;
}

void dr_task_release(unsigned int task)
{
	struct dr_task *state = &tasks[task];
	unsigned long flags = spin_lock_irqsave(&lock);

	dr_reserve_task(&reservation, bits_set(state->set.used), 0);
	memset(state, 0, sizeof(*state));
	spin_unlock_irqrestore(&lock, flags);
}

uint64_t dr_generation(void)
{
	return generation;
}

void dr_generation_bump(void)
{
	generation++;
}

/* Inlined: dr_debug_enter() runs it before DR7 is clear (__noinstr). */
static inline __attribute__((always_inline)) struct dr_cpu *this_dr_cpu(void)
{
	return this_cpu_ptr(cpus);
}

struct dr_cpu *dr_cpu_this(void)
{
	return this_dr_cpu();
}

uint8_t dr_logical_of(unsigned int hardware_slot)
{
	return this_dr_cpu()->logical_of[hardware_slot];
}

uint8_t dr_pinned_of(unsigned int hardware_slot)
{
	return this_dr_cpu()->pinned_of[hardware_slot];
}

void dr_shadow_write_dr7(unsigned long dr7)
{
	struct dr_cpu *cpu = this_dr_cpu();

	if (cpu->in_debug) {
		cpu->resume_dr7 = dr7;
		return;
	}
	write_dr7(dr7);
	cpu->held.dr7 = dr7;
}

void dr_shadow_write_address(unsigned int slot, uint64_t address)
{
	write_dr_address(slot, address);
	this_dr_cpu()->held.address[slot] = address;
}

void dr_shadow_write_mask(unsigned int slot, uint64_t mask)
{
	wrmsr(dr_mask_msr(slot), mask);
	this_dr_cpu()->held.mask[slot] = mask;
}

/*
 * Linux's local_db_save(): nothing may fire while #DB runs on its IST stack, so DR7 is cleared
 * first (one write, and none when no slot is enabled). Only this CPU's shadow and per-CPU
 * struct are touched before, and only __noinstr code runs: dr_debug_regions() keeps breakpoints
 * off all three.
 */
unsigned long __noinstr dr_debug_enter(void)
{
	struct dr_cpu *cpu = this_dr_cpu();
	unsigned long dr7 = cpu->held.dr7;

	if (dr7 != DR7_RESET) {
		write_dr7(DR7_RESET);
		cpu->held.dr7 = DR7_RESET;
	}
	cpu->resume_dr7 = dr7;
	cpu->in_debug = true;
	/* "The processor clears the BTF flag when it generates a debug exception" (SDM, as quoted
	 * in Linux's exc_debug_user()). */
	if (btf_supported)
		debugctl_cleared(DEBUGCTL_BTF);
	return dr7;
}

unsigned long dr_debug_held(void)
{
	return this_dr_cpu()->resume_dr7;
}

/*
 * Linux's local_db_restore(): DR7 back to resume_dr7, through the shadow, last of all. BTF
 * again first if the running task steps on branches: the #DB cleared it.
 */
void dr_debug_exit(void)
{
	struct dr_cpu *cpu = this_dr_cpu();
	unsigned long dr7 = cpu->resume_dr7;

	if (btf_supported && tasks[switch_task_current()->index].branch_step)
		debugctl_update(DEBUGCTL_BTF, DEBUGCTL_BTF);
	cpu->in_debug = false;
	if (dr7 != cpu->held.dr7) {
		cpu->held.dr7 = dr7; /* before the write: nothing of dr/'s is written once armed */
		write_dr7(dr7);
	}
}

bool dr_debug_recover(void)
{
	unsigned long flags = spin_lock_irqsave(&lock);
	bool abandoned = this_dr_cpu()->in_debug;

	if (abandoned)
		dr_debug_exit();
	spin_unlock_irqrestore(&lock, flags);
	return abandoned;
}

struct dr_hardware dr_shadow(void)
{
	return this_dr_cpu()->held;
}

void dr_restore_hardware(void)
{
	unsigned long flags = spin_lock_irqsave(&lock);
	struct dr_cpu *cpu = this_dr_cpu();

	write_dr7(DR7_RESET);
	for (unsigned int slot = 0; slot < DR_SLOTS; slot++)
		write_dr_address(slot, cpu->held.address[slot]);
	write_dr7(cpu->held.dr7);
	spin_unlock_irqrestore(&lock, flags);
}

bool dr_branch_step_supported(void)
{
	return btf_supported;
}

unsigned int dr_debug_regions(const struct dr_region **regions)
{
	*regions = debug_regions;
	return debug_region_count;
}

enum dr_error dr_validate_debug_memory(const struct dr_breakpoint *breakpoint)
{
	for (unsigned int i = 0; i < debug_region_count; i++)
		if (dr_validate_ranges(breakpoint, &debug_regions[i].range, 1))
			return DR_ERROR_DEBUG_MEMORY;
	return DR_OK;
}

/* [start, end) */
static void dr_add_region(const char *name, uint64_t start, uint64_t end)
{
	debug_regions[debug_region_count++] = (struct dr_region){ name, { start, end - 1 } };
}

/*
 * What #DB reads or writes before dr_debug_enter() cleared DR7 or after dr_debug_exit() set it
 * again, after Linux's within_cpu_entry() (arch/x86/kernel/hw_breakpoint.c): the CPU reads the
 * IDT, GDT and TSS and pushes onto the IST stack; the entry code runs and pops it; struct cpu
 * gives the CPU index and counts the DR7 writes; dr/'s shadow says what DR7 holds. The hit rings
 * and locks are written only while DR7 is clear, refused as Linux refuses cpu_dr7 and
 * cpu_tlbstate: they are the handler's own state.
 */
static void dr_find_debug_regions(void)
{
	size_t bytes = (DEBUG_REGIONS_FIXED + DEBUG_REGIONS_PER_CPU * (size_t)percpu_count()) *
		       sizeof(*debug_regions);
	unsigned int pages = (unsigned int)((bytes + PAGE_SIZE - 1) / PAGE_SIZE);
	uint64_t phys = pfa_alloc_pages(pages);
	uint64_t start, end;

	if (!phys)
		panic("dr: no memory for the #DB regions of %u CPUs", percpu_count());
	debug_regions = phys_to_virt(phys);
	idt_range(&start, &end);
	dr_add_region("IDT", start, end);
	entry_text_range(&start, &end);
	dr_add_region("exception entry code", start, end);
	noinstr_text_range(&start, &end);
	dr_add_region("#DB path before DR7 is clear (noinstr)", start, end);
	dr_add_region("dr/ task states and hit rings", (uint64_t)&tasks[0],
		      (uint64_t)&tasks[SWITCH_TASKS_MAX]);
	dr_add_region("dr_lock", (uint64_t)&lock, (uint64_t)(&lock + 1));
	dr_add_region("dr/ hit ring lock", (uint64_t)&hits_lock, (uint64_t)(&hits_lock + 1));
	for (unsigned int cpu = 0; cpu < percpu_count(); cpu++) {
		cpu_tables_range(cpu, &start, &end);
		dr_add_region("IST stacks, GDT and TSS", start, end);
		start = (uint64_t)percpu_get(cpu);
		dr_add_region("struct cpu", start, start + sizeof(struct cpu));
		start = (uint64_t)per_cpu_ptr(cpus, cpu);
		dr_add_region("dr/ per-CPU shadow", start, start + sizeof(struct dr_cpu));
	}
}

/*
 * Whether DEBUGCTL keeps BTF: TCG and KVM-PVM drop it (docs/platforms.md); real CPUs, and the
 * emulated one where it owns DEBUGCTL, keep it. The other bits keep what the shadow says.
 */
static bool dr_probe_btf(void)
{
	uint64_t held = debugctl_shadow();
	uint64_t value = 0;

	if (wrmsr_safe(MSR_IA32_DEBUGCTL, held | DEBUGCTL_BTF) ||
	    rdmsr_safe(MSR_IA32_DEBUGCTL, &value))
		return false;
	wrmsr_safe(MSR_IA32_DEBUGCTL, held);
	return value & DEBUGCTL_BTF;
}

void dr_state_init(void)
{
	unsigned int cpus_counted = percpu_count();
	unsigned int pages =
		(unsigned int)((cpus_counted * sizeof(unsigned int) + PAGE_SIZE - 1) / PAGE_SIZE);
	uint64_t pinned = pfa_alloc_pages(pages);

	if (!pinned)
		panic("dr: no memory for the pinned counts of %u CPUs", cpus_counted);
	dr_reservation_init(&reservation, phys_to_virt(pinned), cpus_counted);
	btf_supported = dr_probe_btf();
	dr_find_debug_regions();
}

void dr_state_init_cpu(void)
{
	struct dr_cpu *cpu = this_dr_cpu();

	write_dr7(DR7_RESET);
	write_dr6(DR6_RESET);
	for (unsigned int slot = 0; slot < DR_SLOTS; slot++)
		write_dr_address(slot, 0);
	memset(cpu, 0, sizeof(*cpu));
	cpu->held.dr7 = DR7_RESET;
	memset(cpu->logical_of, DR_NO_SLOT, sizeof(cpu->logical_of));
	memset(cpu->pinned_of, DR_NO_SLOT, sizeof(cpu->pinned_of));
}
