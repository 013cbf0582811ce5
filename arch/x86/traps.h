/* SPDX-License-Identifier: MIT */
/* Exception and interrupt dispatch: registration of handlers, the IDT. */
#ifndef ARCH_X86_TRAPS_H
#define ARCH_X86_TRAPS_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/regs.h"

/*
 * An exception handler returns true when it dealt with the exception (the frame may have been
 * edited: rip, rflags) and false to pass it on. Order of dispatch for vectors 0-31: for #UD and
 * #DB the registered CPU model first (arch/x86/divert.h), then an .extable fix-up (kernel mode
 * only), then the vector's handler, then for a fault in ring 3 the user-fault handler (the
 * scheduler), then the unexpected-exception handler (the test runner: it does not return while
 * a test runs), then fatal_exception().
 */
typedef bool (*exception_handler)(struct cpu_regs *regs);

/*
 * Interrupt handlers (vectors 32-255) are called with interrupts off, after the EOI (none for
 * VECTOR_SPURIOUS). A handler may switch tasks before it returns.
 */
typedef void (*interrupt_handler)(struct cpu_regs *regs);

/* Build the IDT (one for all CPUs) and load it; idt_load() loads it on another CPU. */
void idt_init(void);
void idt_load(void);
void exception_register(unsigned int vector, exception_handler handler);
void exception_unregister(unsigned int vector);
/* The handler registered for an exception vector (0-31), or NULL. */
exception_handler exception_handler_of(unsigned int vector);
void interrupt_register(unsigned int vector, interrupt_handler handler);
/* The handler registered for an interrupt vector (32-255), or NULL. */
interrupt_handler interrupt_handler_of(unsigned int vector);
void exception_set_user_handler(exception_handler handler);
void exception_set_unexpected_handler(exception_handler handler);

/*
 * Code that #DB runs before its bracket's enter() has cleared DR7 or after its exit() has set it
 * again: it goes to .text.noinstr, which dr/ refuses breakpoints on (noinstr_text_range()), as
 * Linux refuses its noinstr text. A breakpoint there would raise #DB inside #DB, on the same IST
 * stack.
 */
#define __noinstr __attribute__((section(".text.noinstr"), noinline))

/*
 * What #DB runs first and last, registered by the debug-register owner (dr/): enter() clears DR7
 * and returns what it held, as Linux's local_db_save() at the start of exc_debug(); exit() sets
 * it again, as local_db_restore() at the end. Everything else of the #DB, the CPU model's step
 * included, runs between them with no breakpoint armed. enter() is __noinstr.
 */
struct debug_bracket {
	unsigned long (*enter)(void);
	void (*exit)(void);
};

void exception_set_debug_bracket(const struct debug_bracket *bracket);

/* The IRETQ by which an entry of vector returns (entry.asm: the paranoid entry's or the common). */
uint64_t entry_iret_site(unsigned int vector);
/* The system-call entry's IRETQ (syscall_entry.asm). */
extern const char syscall_entry_iret[];

/* Called from entry.asm only. */
void handle_exception(struct cpu_regs *regs);

/* Print the frame, CR2 and DR6 as KTAP diagnostics at the given depth. */
void exception_report(const struct cpu_regs *regs, unsigned int depth);

/* Dump the frame, bail out and end the run. Does not return. */
void __attribute__((noreturn)) fatal_exception(const struct cpu_regs *regs);

const char *exception_name(unsigned int vector);

/*
 * The IDT, and the entry code (arch/x86/entry.asm: the stubs and the common paths), each as
 * [*start, *end): exception delivery reads the one and runs the other before any handler, so
 * dr/ refuses breakpoints there (Linux's within_cpu_entry() refuses the CPU entry area, which
 * holds the IDT).
 */
void idt_range(uint64_t *start, uint64_t *end);
void entry_text_range(uint64_t *start, uint64_t *end);
/* The __noinstr text, [*start, *end). */
void noinstr_text_range(uint64_t *start, uint64_t *end);
/* Where vector's gate in the IDT sends the CPU: its entry stub. For tests. */
uint64_t idt_gate_target(unsigned int vector);

#endif
