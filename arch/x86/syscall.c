/* SPDX-License-Identifier: MIT */
/* SYSCALL set-up: the MSRs, and the C side of the entry. */
#include <stdint.h>

#include "arch/x86/divert.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/gdt.h"
#include "arch/x86/msr-index.h"
#include "arch/x86/msr.h"
#include "arch/x86/processor-flags.h"
#include "arch/x86/syscall.h"
#include "arch/x86/traps.h"
#include "arch/x86/user.h"

/* STAR[47:32]: kernel CS (SS = CS + 8). STAR[63:48]: base of the user selectors, from which
 * SYSRET takes SS = base + 8 and CS = base + 16 (SDM Vol. 2B SYSRET). */
#define STAR_KERNEL_SHIFT 32
#define STAR_USER_SHIFT 48
/* RFLAGS bits SYSCALL clears on entry: the kernel starts with interrupts off. */
#define SYSCALL_MASK (RFLAGS_IF | RFLAGS_TF | RFLAGS_DF | RFLAGS_AC | RFLAGS_NT)

/* SDM Vol. 2B: SYSCALL is 0f 05, UD2 is 0f 0b; both two bytes, so the gate keeps its size. */
#define OPCODE_SECOND_BYTE_UD2 0x0b
#define GATE_INSTRUCTION_LENGTH 2

extern const char syscall_entry[], syscall_compat_entry[];
extern char user_syscall_gate[];

static syscall_handler handlers[SYSCALL_COUNT];
static bool use_trap;

void syscall_register(unsigned int number, syscall_handler handler)
{
	handlers[number] = handler;
}

/*
 * Every way ring 3 has into ring 0 by an instruction is given a target, as Linux's syscall_init()
 * does: LSTAR for 64-bit SYSCALL; CSTAR for SYSCALL in compatibility mode, which would otherwise
 * enter ring 0 at whatever firmware left there (0 at reset) on ring 3's stack; and a null
 * SYSENTER_CS, which makes SYSENTER #GP(0) where long mode allows it at all (Intel).
 */
void syscall_init_cpu(void)
{
	wrmsr(MSR_STAR,
	      ((uint64_t)GDT_KERNEL_CODE << STAR_KERNEL_SHIFT) |
		      ((uint64_t)(GDT_USER_CODE32 | SELECTOR_RPL_USER) << STAR_USER_SHIFT));
	wrmsr(MSR_LSTAR, (uint64_t)syscall_entry);
	wrmsr(MSR_CSTAR, (uint64_t)syscall_compat_entry);
	wrmsr(MSR_IA32_SYSENTER_CS, 0);
	wrmsr(MSR_IA32_SYSENTER_ESP, 0);
	wrmsr(MSR_IA32_SYSENTER_EIP, 0);
	wrmsr(MSR_SYSCALL_MASK, SYSCALL_MASK);
	wrmsr(MSR_EFER, rdmsr(MSR_EFER) | EFER_SCE);
}

void handle_syscall(struct cpu_regs *regs)
{
	divert_system_call(regs);
	if (!regs_from_user(regs) || regs->rax >= SYSCALL_COUNT || !handlers[regs->rax])
		regs->rax = (uint64_t)SYSCALL_ERROR_NO_SYSCALL;
	else
		regs->rax = (uint64_t)handlers[regs->rax](regs);
	divert_resume_system_call(regs);
}

/*
 * #UD handler: a UD2 at the gate, from 64-bit ring 3, is a system call; anything else is a real
 * #UD. From compatibility mode it stays a #UD, as SYSCALL there is (syscall_compat_entry).
 */
static bool syscall_trap(struct cpu_regs *regs)
{
	if (regs->cs != (GDT_USER_CODE | SELECTOR_RPL_USER) ||
	    regs->rip != user_text_address(user_syscall_gate))
		return false;
	regs->rip += GATE_INSTRUCTION_LENGTH;
	handle_syscall(regs);
	return true;
}

void syscall_use_trap(void)
{
	/* The kernel's own mapping of .user_text is writable; user mappings are read-only. */
	user_syscall_gate[1] = OPCODE_SECOND_BYTE_UD2;
	exception_register(X86_EXC_UD, syscall_trap);
	use_trap = true;
}

bool syscall_uses_trap(void)
{
	return use_trap;
}
