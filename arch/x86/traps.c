/* SPDX-License-Identifier: MIT */
/* The IDT, and the C side of exception and interrupt dispatch. */
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/apic.h"
#include "arch/x86/cpu.h"
#include "arch/x86/debug-registers.h"
#include "arch/x86/divert.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/extable.h"
#include "arch/x86/gdt.h"
#include "arch/x86/paging.h"
#include "arch/x86/percpu.h"
#include "arch/x86/processor-flags.h"
#include "arch/x86/traps.h"
#include "arch/x86/witness_marker.h"
#include "lib/ktap.h"
#include "lib/panic.h"
#include "lib/report.h"

#define IDT_GATE_INTERRUPT 0x8e00 /* present, DPL 0, 64-bit interrupt gate */
#define IDT_STUB_SIZE 16

struct idt_gate {
	uint16_t offset_low;
	uint16_t selector;
	uint16_t flags; /* IST index in bits 0-2, type and DPL above */
	uint16_t offset_middle;
	uint32_t offset_high;
	uint32_t reserved;
} __attribute__((packed));

struct descriptor_pointer {
	uint16_t limit;
	uint64_t base;
} __attribute__((packed));

extern const char interrupt_stubs[];
extern const char interrupt_entry_end[]; /* the end of entry.asm's code */
extern const char entry_common_iret[], entry_paranoid_iret[];
extern struct extable_entry __extable_start[], __extable_end[];
extern const char __noinstr_text_start[], __noinstr_text_end[];

static struct idt_gate idt[VECTOR_COUNT] __attribute__((aligned(16)));
static exception_handler exception_handlers[X86_EXC_COUNT];
static interrupt_handler interrupt_handlers[VECTOR_COUNT];
static exception_handler user_handler;
static exception_handler unexpected_handler;
static const struct debug_bracket *debug_bracket;

static const char *const exception_names[X86_EXC_COUNT] = {
	[X86_EXC_DE] = "#DE", [X86_EXC_DB] = "#DB", [X86_EXC_NMI] = "NMI", [X86_EXC_BP] = "#BP",
	[X86_EXC_OF] = "#OF", [X86_EXC_BR] = "#BR", [X86_EXC_UD] = "#UD",  [X86_EXC_NM] = "#NM",
	[X86_EXC_DF] = "#DF", [X86_EXC_TS] = "#TS", [X86_EXC_NP] = "#NP",  [X86_EXC_SS] = "#SS",
	[X86_EXC_GP] = "#GP", [X86_EXC_PF] = "#PF", [X86_EXC_MF] = "#MF",  [X86_EXC_AC] = "#AC",
	[X86_EXC_MC] = "#MC", [X86_EXC_XM] = "#XM", [X86_EXC_VE] = "#VE",  [X86_EXC_CP] = "#CP",
};

const char *exception_name(unsigned int vector)
{
	if (vector < X86_EXC_COUNT && exception_names[vector])
		return exception_names[vector];
	return vector < X86_EXC_COUNT ? "reserved" : "interrupt";
}

static void idt_set_gate(unsigned int vector, unsigned int flags)
{
	uint64_t address = (uint64_t)&interrupt_stubs[vector * IDT_STUB_SIZE];

	idt[vector] = (struct idt_gate){
		.offset_low = (uint16_t)address,
		.selector = GDT_KERNEL_CODE,
		.flags = (uint16_t)(IDT_GATE_INTERRUPT | flags),
		.offset_middle = (uint16_t)(address >> 16),
		.offset_high = (uint32_t)(address >> 32),
	};
}

void idt_load(void)
{
	struct descriptor_pointer pointer = { sizeof(idt) - 1, (uint64_t)idt };

	asm volatile("lidt %0" : : "m"(pointer));
}

/*
 * The fix-up table in fault-address order, so that each lookup is a binary search (Linux
 * sort_main_extable() and search_extable()): the dispatcher looks every kernel exception up,
 * and an exception handler the emulated CPU steps pays for each instruction (rule 21; a linear
 * search of 512 entries was about 2,000 steps). Insertion sort: the linker leaves it nearly
 * sorted, and it runs once, before any fault can be fixed up.
 */
static void extable_sort(void)
{
	for (struct extable_entry *entry = __extable_start + 1; entry < __extable_end; entry++) {
		struct extable_entry key = *entry, *at = entry;

		for (; at > __extable_start && at[-1].fault > key.fault; at--)
			at[0] = at[-1];
		*at = key;
	}
}

uint64_t extable_find(uint64_t rip)
{
	const struct extable_entry *low = __extable_start, *high = __extable_end;

	while (low < high) {
		const struct extable_entry *middle = low + (high - low) / 2;

		if (middle->fault == rip)
			return middle->fixup;
		if (middle->fault < rip)
			low = middle + 1;
		else
			high = middle;
	}
	return 0;
}

void idt_init(void)
{
	extable_sort();
	for (unsigned int vector = 0; vector < VECTOR_COUNT; vector++)
		idt_set_gate(vector, 0);
	idt_set_gate(X86_EXC_DF, IST_DOUBLE_FAULT);
	idt_set_gate(X86_EXC_NMI, IST_NMI);
	idt_set_gate(X86_EXC_MC, IST_MACHINE_CHECK);
	idt_set_gate(X86_EXC_DB, IST_DEBUG);
	idt_load();
}

uint64_t entry_iret_site(unsigned int vector)
{
	/* entry.asm's PARANOID(): #DB, NMI, #DF and #MC. */
	bool paranoid = vector == X86_EXC_DB || vector == X86_EXC_NMI || vector == X86_EXC_DF ||
			vector == X86_EXC_MC;

	return (uint64_t)(paranoid ? entry_paranoid_iret : entry_common_iret);
}

void idt_range(uint64_t *start, uint64_t *end)
{
	*start = (uint64_t)&idt[0];
	*end = (uint64_t)&idt[VECTOR_COUNT];
}

void entry_text_range(uint64_t *start, uint64_t *end)
{
	*start = (uint64_t)interrupt_stubs;
	*end = (uint64_t)interrupt_entry_end;
}

void noinstr_text_range(uint64_t *start, uint64_t *end)
{
	*start = (uint64_t)__noinstr_text_start;
	*end = (uint64_t)__noinstr_text_end;
}

void exception_set_debug_bracket(const struct debug_bracket *bracket)
{
	debug_bracket = bracket;
}

uint64_t idt_gate_target(unsigned int vector)
{
	const struct idt_gate *gate = &idt[vector];

	return gate->offset_low | ((uint64_t)gate->offset_middle << 16) |
	       ((uint64_t)gate->offset_high << 32);
}

void exception_register(unsigned int vector, exception_handler handler)
{
	exception_handlers[vector] = handler;
}

void exception_unregister(unsigned int vector)
{
	exception_handlers[vector] = NULL;
}

exception_handler exception_handler_of(unsigned int vector)
{
	return exception_handlers[vector];
}

void interrupt_register(unsigned int vector, interrupt_handler handler)
{
	interrupt_handlers[vector] = handler;
}

interrupt_handler interrupt_handler_of(unsigned int vector)
{
	return interrupt_handlers[vector];
}

void exception_set_user_handler(exception_handler handler)
{
	user_handler = handler;
}

void exception_set_unexpected_handler(exception_handler handler)
{
	unexpected_handler = handler;
}

void exception_report(const struct cpu_regs *regs, unsigned int depth)
{
	unsigned long dr6 = read_dr6();

	ktap_diag(depth,
		  "exception %s (vector %lu) error_code=0x%lx rip=0x%016lx cr2=0x%016lx dr6=0x%lx",
		  exception_name(regs->vector), regs->vector, regs->error_code, regs->rip,
		  read_cr2(), dr6);
	ktap_diag(depth, "cs=0x%lx rflags=0x%lx rsp=0x%016lx ss=0x%lx", regs->cs, regs->rflags,
		  regs->rsp, regs->ss);
}

void fatal_exception(const struct cpu_regs *regs)
{
	exception_report(regs, 0);
	ktap_diag(0, "rax=0x%016lx rbx=0x%016lx rcx=0x%016lx rdx=0x%016lx", regs->rax, regs->rbx,
		  regs->rcx, regs->rdx);
	ktap_diag(0, "rsi=0x%016lx rdi=0x%016lx rbp=0x%016lx r8=0x%016lx", regs->rsi, regs->rdi,
		  regs->rbp, regs->r8);
	ktap_diag(0, "r9=0x%016lx r10=0x%016lx r11=0x%016lx r12=0x%016lx", regs->r9, regs->r10,
		  regs->r11, regs->r12);
	ktap_diag(0, "r13=0x%016lx r14=0x%016lx r15=0x%016lx cr3=0x%lx", regs->r13, regs->r14,
		  regs->r15, read_cr3());
	panic("unexpected exception %s in the kernel at rip=0x%lx", exception_name(regs->vector),
	      regs->rip);
}

/*
 * A #DF whose CR2 lies in a stack's guard: the code ran off the bottom of that stack, and the #PF
 * could not push its frame there. Said before the #DF is handled as any unexpected exception
 * (it fails the running test, or ends the run outside one).
 */
static void report_stack_overflow(const struct cpu_regs *regs)
{
	uint64_t cr2 = read_cr2();
	int slot = kernel_stack_guard_slot(cr2);
	uint64_t top;

	if (slot < 0)
		return;
	top = KERNEL_STACKS_BASE + (uint64_t)(slot + 1) * KERNEL_STACK_SLOT_SIZE;
	report_diag("kernel stack overflow: task %u ran off the bottom of its stack "
		    "(slot %d, 0x%lx-0x%lx) into the guard page at 0x%lx, rsp=0x%lx rip=0x%lx",
		    this_cpu()->task_id, slot, top - KERNEL_STACK_PAGES * PAGE_SIZE, top - 1, cr2,
		    regs->rsp, regs->rip);
}

/*
 * The handlers that own an exception: the CPU model (#UD, RDPMC's #GP, #DB), an .extable
 * fix-up, the vector's handler. True when one of them dealt with it. dr7: what DR7 held when a
 * #DB arrived (its bracket's enter()); unused for other vectors.
 */
static bool dispatch_owned(struct cpu_regs *regs, unsigned long dr7)
{
	unsigned int vector = (unsigned int)regs->vector;
	uint64_t fixup;

	if (vector == X86_EXC_DF)
		report_stack_overflow(regs);

	if ((regs->rflags & RFLAGS_TF) && vector != X86_EXC_NMI)
		this_cpu()->stepped_exceptions++;
	if (vector == X86_EXC_UD || vector == X86_EXC_GP) {
		enum divert_outcome outcome = divert_handle_trap(regs);

		if (outcome == DIVERT_DONE)
			return true;
		vector = (unsigned int)regs->vector; /* #GP when the model raised one */
	}
	if (vector == X86_EXC_DB && divert_debug_trap(regs, dr7)) {
		witness_point(WITNESS_STEP_CONSUMED); /* the model's own step: docs/witness.md */
		return true;
	}
	if (vector != X86_EXC_NMI)
		divert_exception(regs);
	/*
	 * A fix-up answers a fault of the instruction at regs->rip. An NMI is no fault: it comes
	 * between any two instructions, also just before a _safe accessor's, which must then run.
	 */
	fixup = regs_from_user(regs) || vector == X86_EXC_NMI ? 0 : extable_find(regs->rip);
	if (fixup) {
		regs->rdi = EXINFO(vector, regs->error_code);
		regs->rip = fixup;
		return true;
	}
	return exception_handlers[vector] && exception_handlers[vector](regs);
}

/*
 * An exception nobody owns: ring 3's fault (the scheduler may end the task here, and not
 * return), else the test's failure (the runner unwinds it), else the end of the run.
 */
static void dispatch_unowned(struct cpu_regs *regs)
{
	if (regs_from_user(regs) && user_handler && user_handler(regs))
		return;
	if (unexpected_handler && unexpected_handler(regs))
		return;
	fatal_exception(regs);
}

/*
 * #DB as Linux's exc_debug(): the bracket's enter() first, so that its owners, the CPU model's
 * step included, run with no breakpoint armed; its exit() last. An exception nobody owns is
 * handed on after exit(), as it may end the task or the test and never come back.
 */
static void __noinstr handle_debug(struct cpu_regs *regs)
{
	unsigned long dr7 = debug_bracket ? debug_bracket->enter() : read_dr7();
	bool owned = dispatch_owned(regs, dr7);

	if (owned)
		divert_resume(regs);
	if (debug_bracket)
		debug_bracket->exit();
	if (!owned) {
		dispatch_unowned(regs);
		divert_resume(regs);
	}
}

void __noinstr handle_exception(struct cpu_regs *regs)
{
	unsigned int vector = (unsigned int)regs->vector;

	if (vector == X86_EXC_DB) {
		handle_debug(regs);
		return;
	}
	if (vector >= X86_EXC_COUNT) {
		/*
		 * EOI first: a handler need not return (the runner aborts a test that overran its
		 * time limit). RFLAGS.IF stays 0 until IRET, so nothing nests meanwhile.
		 */
		if (vector != VECTOR_SPURIOUS)
			apic_end_of_interrupt();
		if (this_cpu()->interrupt_depth++ == 0)
			divert_interrupted(regs);
		if (interrupt_handlers[vector])
			interrupt_handlers[vector](regs);
		this_cpu()->interrupt_depth--;
	} else {
		if (vector == X86_EXC_NMI) {
			this_cpu()->nmis++;
			divert_nmi(regs);
		}
		if (!dispatch_owned(regs, 0))
			dispatch_unowned(regs);
	}
	/*
	 * An NMI comes between any two instructions, the #DB handler's and a CPU model's own
	 * included, and returns to exactly what it interrupted: the model sees its delivery
	 * (divert_nmi()) but not its resume (it would set TF in a handler it interrupted).
	 */
	if (vector != X86_EXC_NMI)
		divert_resume(regs);
}
