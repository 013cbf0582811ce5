/* SPDX-License-Identifier: MIT */
/* Diverted RDMSR, WRMSR, CPUID and RDPMC: the #UD (and RDPMC's #GP) side (arch/x86/divert.h). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/cpu.h"
#include "arch/x86/cpuid.h"
#include "arch/x86/divert.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/traps.h"
#include "arch/x86/witness_marker.h"
#include "arch/x86/xsave.h"

#define UD2_LENGTH 2
#define OPCODE_TWO_BYTE 0x0f
#define OPCODE_WRMSR 0x30
#define OPCODE_RDMSR 0x32
#define OPCODE_CPUID 0xa2
#define OPCODE_RDPMC 0x33
#define RDPMC_LENGTH 2
#define PREFIX_REX_W 0x48
#define OPCODE_GROUP_9 0xc7
#define MODRM_XSAVES_RSI 0x2e /* mod 00, reg 5 (XSAVES), rm 6 (RSI) */
#define MODRM_XRSTORS_RSI 0x1e /* mod 00, reg 3 (XRSTORS), rm 6 (RSI) */

extern const uint64_t __divert_start[], __divert_end[];

static const struct cpu_model_ops *model;

void cpu_model_register(const struct cpu_model_ops *ops)
{
	model = ops;
}

bool cpu_model_registered(void)
{
	return model != NULL;
}

bool msr_diverted(uint32_t index)
{
	return model && model->owns_msr(index);
}

bool cpuid_diverted(uint32_t leaf)
{
	return model && model->owns_cpuid(leaf);
}

bool xsaves_diverted(uint64_t components)
{
	return model && model->owns_xstate && model->owns_xstate(components);
}

/* XSAVES64 or XRSTORS64 at a diverted site, with the accessors' operands (arch/x86/xsave.h). */
static enum divert_outcome divert_xsaves(struct cpu_regs *regs, const uint8_t *insn)
{
	bool restore = insn[3] == MODRM_XRSTORS_RSI;

	if (model->xsaves(regs, restore)) {
		regs->vector = X86_EXC_GP;
		regs->error_code = 0;
		return DIVERT_FAULT;
	}
	return DIVERT_DONE;
}

bool rdpmc_diverted(void)
{
	return model && model->rdpmc;
}

static bool divert_site(uint64_t rip)
{
	for (const uint64_t *site = __divert_start; site < __divert_end; site++)
		if (*site == rip)
			return true;
	return false;
}

static bool emulate(struct cpu_regs *regs, uint8_t opcode)
{
	uint32_t index = (uint32_t)regs->rcx;
	uint64_t value;
	struct cpuid_result result;

	switch (opcode) {
	case OPCODE_RDMSR:
		if (model->read_msr(regs, index, &value))
			return false;
		regs->rax = (uint32_t)value;
		regs->rdx = value >> 32;
		return true;
	case OPCODE_WRMSR:
		return !model->write_msr(regs, index,
					 ((regs->rdx & 0xffffffffu) << 32) | (uint32_t)regs->rax);
	default:
		result = model->cpuid((uint32_t)regs->rax, (uint32_t)regs->rcx,
				      cpuid_silicon((uint32_t)regs->rax, (uint32_t)regs->rcx));
		regs->rax = result.eax;
		regs->rbx = result.ebx;
		regs->rcx = result.ecx;
		regs->rdx = result.edx;
		return true;
	}
}

/* RDPMC served by the model: a diverted site, or the instruction itself. */
static enum divert_outcome divert_rdpmc(struct cpu_regs *regs, unsigned int length)
{
	if (model->rdpmc(regs, length)) {
		regs->vector = X86_EXC_GP;
		regs->error_code = 0;
		return DIVERT_FAULT;
	}
	return DIVERT_DONE;
}

/*
 * RDPMC executed as itself, at any CPL: 0F 33. The first byte is read alone first: the
 * instruction that faulted may be one byte long, at the end of its page.
 */
static bool rdpmc_instruction(uint64_t rip)
{
	const uint8_t *bytes = (const uint8_t *)rip;

	return bytes[0] == OPCODE_TWO_BYTE && bytes[1] == OPCODE_RDPMC;
}

enum divert_outcome divert_handle_trap(struct cpu_regs *regs)
{
	const uint8_t *bytes = (const uint8_t *)regs->rip;
	uint8_t opcode;

	if (!model)
		return DIVERT_NONE;
	if (model->rdpmc && rdpmc_instruction(regs->rip))
		return divert_rdpmc(regs, RDPMC_LENGTH);
	if (regs->vector != X86_EXC_UD || regs_from_user(regs) || !divert_site(regs->rip))
		return DIVERT_NONE;
	if (model->xsaves && bytes[UD2_LENGTH] == PREFIX_REX_W &&
	    bytes[UD2_LENGTH + 1] == OPCODE_TWO_BYTE && bytes[UD2_LENGTH + 2] == OPCODE_GROUP_9 &&
	    (bytes[UD2_LENGTH + 3] == MODRM_XSAVES_RSI ||
	     bytes[UD2_LENGTH + 3] == MODRM_XRSTORS_RSI))
		return divert_xsaves(regs, bytes + UD2_LENGTH);
	opcode = bytes[UD2_LENGTH + 1];
	if (bytes[UD2_LENGTH] == OPCODE_TWO_BYTE && opcode == OPCODE_RDPMC && model->rdpmc)
		return divert_rdpmc(regs, DIVERTED_SITE_LENGTH);
	if (bytes[UD2_LENGTH] != OPCODE_TWO_BYTE ||
	    (opcode != OPCODE_RDMSR && opcode != OPCODE_WRMSR && opcode != OPCODE_CPUID))
		return DIVERT_NONE;
	if (!emulate(regs, opcode)) {
		regs->vector = X86_EXC_GP;
		regs->error_code = 0;
		return DIVERT_FAULT;
	}
	regs->rip += DIVERTED_SITE_LENGTH;
	model->retired(regs);
	return DIVERT_DONE;
}

bool divert_debug_trap(struct cpu_regs *regs, unsigned long dr7)
{
	return model && model->debug_trap(regs, dr7);
}

/*
 * The handler that follows is stepped when the model asks (rule 21): TF is set last, so that
 * only the witness's point (one NOP) runs before the first #DB (SDM Vol. 3B "Single-Step
 * Exception Condition": a POPF that sets TF traps after the next instruction), and the model
 * serves that #DB as its own. The handler is stepped from the next instruction on.
 */
static void step_handler(void)
{
	set_trap_flag();
	witness_point(WITNESS_HANDLER_STEPPED);
}

void divert_interrupted(struct cpu_regs *regs)
{
	if (model && model->interrupted(regs))
		step_handler();
}

void divert_system_call(struct cpu_regs *regs)
{
	if (model)
		model->system_call(regs);
}

void divert_exception(struct cpu_regs *regs)
{
	if (model && model->exception(regs))
		step_handler();
}

void divert_nmi(struct cpu_regs *regs)
{
	if (model && model->nmi)
		model->nmi(regs);
}

void divert_resume(struct cpu_regs *regs)
{
	if (model)
		model->resume(regs, entry_iret_site((unsigned int)regs->vector));
}

void divert_resume_system_call(struct cpu_regs *regs)
{
	if (model)
		model->resume(regs, (uint64_t)syscall_entry_iret);
}
