/* SPDX-License-Identifier: MIT */
/* Segment selectors, the GDT and the TSS with its interrupt stacks. */
#ifndef ARCH_X86_GDT_H
#define ARCH_X86_GDT_H

#include <stdbool.h>
#include <stdint.h>

/* The order of the user selectors is fixed by SYSRET (SDM Vol. 2B SYSRET, MSR_STAR). */
#define GDT_KERNEL_CODE 0x08
#define GDT_KERNEL_DATA 0x10
#define GDT_USER_CODE32 0x18 /* ring 3 in compatibility mode; SYSRET's base in STAR */
#define GDT_USER_DATA 0x20
#define GDT_USER_CODE 0x28
#define GDT_TSS 0x30
#define SELECTOR_RPL_USER 3

/* Interrupt Stack Table slots (TSS.IST1-7), each with its own stack. */
#define IST_DOUBLE_FAULT 1
#define IST_NMI 2
#define IST_MACHINE_CHECK 3
#define IST_DEBUG 4 /* #DB can arrive on the user stack: MOV SS, then SYSCALL (CVE-2018-8897) */
#define IST_STACKS 4
#define IST_STACK_SIZE 8192
/*
 * The top IST_CPU_SLOT bytes of every IST stack hold the owning CPU's struct cpu pointer, and
 * TSS.IST points below them. So the paranoid entry (arch/x86/entry.asm) finds its CPU at the top
 * of its frame without trusting the live GS base, which ring 3 may have set (the role of Linux's
 * GET_PERCPU_BASE in paranoid_entry).
 */
#define IST_CPU_SLOT 16

/*
 * Load the calling CPU's own GDT and task register, and reload CS, DS, ES and SS (FS and GS keep
 * their selectors: loading GS would clear the per-CPU GS base). After percpu_init(), once on
 * each CPU.
 */
void gdt_init(void);

/*
 * Set CR4.UMIP on the calling CPU where its CPUID.07H.0:ECX.UMIP says it exists: SGDT, SIDT, SLDT,
 * STR and SMSW then raise #GP(0) in ring 3 instead of showing it kernel addresses. Returns
 * whether UMIP is on. Once on each CPU; the kernel's own SGDT and STR (ring 0) still work.
 */
bool gdt_umip_enable(void);

/*
 * Reload CS, DS, ES and SS with the kernel selectors: after a non-local jump out of an
 * exception that arrived through an IST stack, SS holds the NULL selector the CPU loaded.
 */
void gdt_reload_segments(void);

/*
 * The kernel stack for entries from ring 3: TSS.RSP0, which the CPU loads on an interrupt or
 * exception, and this_cpu()->kernel_stack_top, which the SYSCALL entry loads itself.
 */
void tss_set_kernel_stack(uint64_t stack_top);

/* The top of the calling CPU's IST stack slot (1-4), to tell whether a handler runs on it. */
uint64_t tss_ist_stack_top(unsigned int slot);

/* What the calling CPU has loaded (SGDT, STR), and its TSS.RSP0: for tests. */
uint64_t gdt_loaded_base(void);
uint16_t task_register_loaded(void);
uint64_t tss_loaded_kernel_stack(void);
/* The base of the TSS that the calling CPU's task register selects, read from its loaded GDT. */
uint64_t tss_loaded_base(void);

/*
 * Where CPU cpu's GDT, TSS and IST stacks lie, [*start, *end), for cpu < percpu_count(): exception
 * delivery reads the first two and pushes onto the third, so dr/ refuses breakpoints there (as
 * Linux's within_cpu_entry() does for the CPU entry area, the GDT and cpu_tss_rw).
 */
void cpu_tables_range(unsigned int cpu, uint64_t *start, uint64_t *end);

#endif
