/* SPDX-License-Identifier: MIT */
/* The breakpoint system calls of user tasks (numbers in arch/x86/user-abi.h). */
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/probe.h"
#include "arch/x86/regs.h"
#include "arch/x86/switch_hooks.h"
#include "arch/x86/syscall.h"
#include "arch/x86/user-abi.h"
#include "arch/x86/user.h"
#include "dr/internal.h"

#define READ_HITS_MAX DR_HITS_MAX

_Static_assert(sizeof(struct dr_hit) == USER_DR_HIT_SIZE, "arch/x86/user.h: USER_DR_HIT_SIZE");
_Static_assert(READ_HITS_MAX <= USER_DR_HITS_MAX, "arch/x86/user.h: USER_DR_HITS_MAX");

static unsigned int current_task(void)
{
	return switch_task_current()->index;
}

/* rdi = address, rsi = enum dr_type, rdx = length: the slot, or -enum dr_error. */
static long syscall_dr_install(struct cpu_regs *regs)
{
	struct dr_breakpoint breakpoint = {
		.address = regs->rdi,
		.type = (enum dr_type)regs->rsi,
		.length = (unsigned int)regs->rdx,
	};

	if (regs->rsi > DR_TYPE_READ_WRITE || regs->rdx > 8)
		return -DR_ERROR_TYPE;
	return dr_install_as(current_task(), &breakpoint, NULL, NULL, DR_REQUESTER_USER);
}

static long syscall_dr_uninstall(struct cpu_regs *regs)
{
	return dr_uninstall(current_task(), (int)regs->rdi);
}

/* Copy byte by byte with probes: a bad user pointer is an error, not a kernel fault. */
static long syscall_dr_read_hits(struct cpu_regs *regs)
{
	struct dr_hit hits[READ_HITS_MAX];
	uint64_t address = regs->rdi;
	unsigned int count;

	if (address >= DR_USER_ADDRESS_LIMIT || sizeof(hits) > DR_USER_ADDRESS_LIMIT - address)
		return SYSCALL_ERROR_FAULT;
	count = dr_read_hits(current_task(), hits,
			     regs->rsi < READ_HITS_MAX ? (unsigned int)regs->rsi : READ_HITS_MAX,
			     NULL);
	for (uint64_t i = 0; i < count * sizeof(hits[0]); i++)
		if (probe_write_safe((void *)(address + i), ((const uint8_t *)hits)[i]))
			return SYSCALL_ERROR_FAULT;
	return count;
}

static long syscall_dr_set_handler(struct cpu_regs *regs)
{
	if (regs->rdi >= DR_USER_ADDRESS_LIMIT)
		return SYSCALL_ERROR_FAULT;
	dr_set_user_handler(current_task(), regs->rdi);
	return 0;
}

void dr_syscalls_init(void)
{
	syscall_register(SYSCALL_DR_INSTALL, syscall_dr_install);
	syscall_register(SYSCALL_DR_UNINSTALL, syscall_dr_uninstall);
	syscall_register(SYSCALL_DR_READ_HITS, syscall_dr_read_hits);
	syscall_register(SYSCALL_DR_SET_HANDLER, syscall_dr_set_handler);
}
