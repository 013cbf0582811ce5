/* SPDX-License-Identifier: MIT */
/* The GDT and the 64-bit TSS (SDM Vol. 3 §3.4.5, §8.7). */
#include <stdint.h>

#include "arch/x86/cpu.h"
#include "arch/x86/cpuid.h"
#include "arch/x86/gdt.h"
#include "arch/x86/percpu.h"
#include "arch/x86/processor-flags.h"

/* Descriptor bits (SDM Vol. 3 §3.4.5). */
#define SEG_ACCESSED (1ull << 40)
#define SEG_WRITABLE (1ull << 41)
#define SEG_CODE (1ull << 43)
#define SEG_NONSYSTEM (1ull << 44)
#define SEG_DPL_USER (3ull << 45)
#define SEG_PRESENT (1ull << 47)
#define SEG_LONG (1ull << 53)
#define SEG_DB (1ull << 54)
#define SEG_GRANULARITY (1ull << 55)
#define SEG_LIMIT_MAX (0xffffull | (0xfull << 48))
#define SEG_TYPE_TSS_AVAILABLE (0x9ull << 40)

#define KERNEL_CODE (SEG_PRESENT | SEG_NONSYSTEM | SEG_CODE | SEG_LONG | SEG_ACCESSED)
#define KERNEL_DATA                                                                             \
	(SEG_PRESENT | SEG_NONSYSTEM | SEG_WRITABLE | SEG_ACCESSED | SEG_DB | SEG_GRANULARITY | \
	 SEG_LIMIT_MAX)
#define USER_CODE32                                                                         \
	(SEG_PRESENT | SEG_NONSYSTEM | SEG_CODE | SEG_DPL_USER | SEG_DB | SEG_GRANULARITY | \
	 SEG_LIMIT_MAX)

struct tss {
	uint32_t reserved0;
	uint64_t rsp[3];
	uint64_t reserved1;
	uint64_t ist[7];
	uint64_t reserved2;
	uint16_t reserved3;
	uint16_t iomap_base;
} __attribute__((packed));

struct descriptor_pointer {
	uint16_t limit;
	uint64_t base;
} __attribute__((packed));

/* Each CPU has its own GDT (its TSS descriptor is marked busy by LTR), TSS and IST stacks. */
struct cpu_tables {
	uint64_t gdt[8] __attribute__((aligned(16)));
	struct tss tss __attribute__((aligned(16)));
	uint8_t ist_stacks[IST_STACKS][IST_STACK_SIZE] __attribute__((aligned(16)));
};

static DEFINE_PER_CPU(struct cpu_tables, tables);

static struct cpu_tables *this_tables(void)
{
	return this_cpu_ptr(tables);
}

static void gdt_set_tss(uint64_t *gdt, unsigned int index, const struct tss *t)
{
	uint64_t base = (uint64_t)t;
	uint64_t limit = sizeof(*t) - 1;

	gdt[index] = (limit & 0xffff) | ((base & 0xffffff) << 16) | SEG_TYPE_TSS_AVAILABLE |
		     SEG_PRESENT | (((limit >> 16) & 0xf) << 48) | (((base >> 24) & 0xff) << 56);
	gdt[index + 1] = base >> 32;
}

void gdt_init(void)
{
	struct cpu_tables *cpu = this_tables();
	uint64_t *gdt = cpu->gdt;
	struct tss *tss = &cpu->tss;
	struct descriptor_pointer pointer = { sizeof(cpu->gdt) - 1, (uint64_t)gdt };

	gdt[GDT_KERNEL_CODE / 8] = KERNEL_CODE;
	gdt[GDT_KERNEL_DATA / 8] = KERNEL_DATA;
	gdt[GDT_USER_CODE32 / 8] = USER_CODE32;
	gdt[GDT_USER_DATA / 8] = KERNEL_DATA | SEG_DPL_USER;
	gdt[GDT_USER_CODE / 8] = KERNEL_CODE | SEG_DPL_USER;
	for (unsigned int slot = 1; slot <= IST_STACKS; slot++) {
		uint64_t top = tss_ist_stack_top(slot);

		*(struct cpu **)(top - IST_CPU_SLOT) = this_cpu();
		tss->ist[slot - 1] = top - IST_CPU_SLOT;
	}
	tss->iomap_base = sizeof(*tss); /* no I/O bitmap: every port #GPs at CPL 3 */
	gdt_set_tss(gdt, GDT_TSS / 8, tss);

	asm volatile("lgdt %0" : : "m"(pointer));
	gdt_reload_segments();
	asm volatile("ltr %w0" : : "r"(GDT_TSS));
}

bool gdt_umip_enable(void)
{
	/* The silicon's CPUID, not an emulated model's: CR4 is the silicon's. */
	if (cpuid_silicon(CPUID_LEAF_VENDOR, 0).eax < CPUID_LEAF_EXTENDED_FEATURES ||
	    !(cpuid_silicon(CPUID_LEAF_EXTENDED_FEATURES, 0).ecx & CPUID_7_ECX_UMIP))
		return false;
	write_cr4(read_cr4() | CR4_UMIP);
	return true;
}

void gdt_reload_segments(void)
{
	asm volatile("pushq %0\n\t"
		     "leaq 1f(%%rip), %%rax\n\t"
		     "pushq %%rax\n\t"
		     "lretq\n"
		     "1:\n\t"
		     "mov %w1, %%ds\n\t"
		     "mov %w1, %%es\n\t"
		     "mov %w1, %%ss"
		     :
		     : "i"(GDT_KERNEL_CODE), "r"(GDT_KERNEL_DATA)
		     : "rax", "memory");
}

void tss_set_kernel_stack(uint64_t stack_top)
{
	this_tables()->tss.rsp[0] = stack_top;
	this_cpu()->kernel_stack_top = stack_top;
}

uint64_t tss_ist_stack_top(unsigned int slot)
{
	return (uint64_t)&this_tables()->ist_stacks[slot - 1][IST_STACK_SIZE];
}

uint64_t gdt_loaded_base(void)
{
	struct descriptor_pointer pointer;

	asm volatile("sgdt %0" : "=m"(pointer));
	return pointer.base;
}

uint16_t task_register_loaded(void)
{
	uint16_t selector;

	asm volatile("str %0" : "=r"(selector));
	return selector;
}

uint64_t tss_loaded_kernel_stack(void)
{
	return this_tables()->tss.rsp[0];
}

/* The inverse of gdt_set_tss(). */
uint64_t tss_loaded_base(void)
{
	const uint64_t *gdt = (const uint64_t *)gdt_loaded_base();
	unsigned int index = task_register_loaded() / 8;

	return ((gdt[index] >> 16) & 0xffffff) | (((gdt[index] >> 56) & 0xff) << 24) |
	       (gdt[index + 1] << 32);
}

void cpu_tables_range(unsigned int cpu, uint64_t *start, uint64_t *end)
{
	*start = (uint64_t)per_cpu_ptr(tables, cpu);
	*end = *start + sizeof(struct cpu_tables);
}
