/* SPDX-License-Identifier: MIT */
/* The breakpoint system calls of user tasks (numbers in arch/x86/user-abi.h). */
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/probe.h"
#include "arch/x86/regs.h"
#include "arch/x86/syscall.h"
#include "arch/x86/user-abi.h"
#include "arch/x86/user.h"
#include "dr/dr.h"
#include "dr/state.h"
#include "dr/syscall.h"
#include "kernel/switch_hooks.h"

#define READ_HITS_MAX DR_HITS_MAX
#define DR_LENGTH_MAX 8 /* bytes: the longest breakpoint (SDM Vol. 3 §18.2.4) */

static unsigned int current_task(void)
{
	return switch_task_current()->index;
}

/*
 * Every argument is checked at its full 64-bit width before it is narrowed: a value with high
 * bits set is an error, never the value of its low bits.
 */

/* rdi = address, rsi = enum dr_type, rdx = length: the slot, or -enum dr_error. */
static long syscall_dr_install(struct cpu_regs *regs)
{
	struct dr_breakpoint breakpoint = { .address = regs->rdi };

	if (regs->rsi > DR_TYPE_READ_WRITE)
		return -DR_ERROR_TYPE;
	if (regs->rdx > DR_LENGTH_MAX)
		return -DR_ERROR_LENGTH;
	breakpoint.type = (enum dr_type)regs->rsi;
	breakpoint.length = (unsigned int)regs->rdx;
	return dr_install_as(current_task(), &breakpoint, NULL, NULL, DR_REQUESTER_USER);
}

/* rdi = slot: 0, or -DR_ERROR_NOT_INSTALLED (also for a slot number that is no slot). */
static long syscall_dr_uninstall(struct cpu_regs *regs)
{
	if (regs->rdi >= DR_SLOTS)
		return -DR_ERROR_NOT_INSTALLED;
	return dr_uninstall(current_task(), (int)regs->rdi);
}

/*
 * A hit the kernel took on the task's behalf (a system call reading or writing a watched user
 * buffer) has a kernel RIP: the task gets it with rip 0 instead, so that no kernel address
 * reaches ring 3. from_user (0) says the access was the kernel's; the rest of the hit is kept.
 */
static void dr_hits_scrub(struct dr_hit *hits, unsigned int count)
{
	for (unsigned int i = 0; i < count; i++)
		if (hits[i].rip >= DR_USER_ADDRESS_LIMIT)
			hits[i].rip = 0;
}

/*
 * Copy byte by byte with probes: a bad user pointer is an error, not a kernel fault. The hits
 * stay recorded until copied; only the whole hits that reached the buffer are taken, so a buffer
 * that faults part-way gets what fits (-EFAULT when not even one) and loses nothing.
 */
static long syscall_dr_read_hits(struct cpu_regs *regs)
{
	struct dr_hit hits[READ_HITS_MAX];
	uint64_t address = regs->rdi, serial;
	unsigned int count, copied = 0;

	if (address >= DR_USER_ADDRESS_LIMIT || sizeof(hits) > DR_USER_ADDRESS_LIMIT - address)
		return SYSCALL_ERROR_FAULT;
	count = dr_peek_hits(current_task(), hits,
			     regs->rsi < READ_HITS_MAX ? (unsigned int)regs->rsi : READ_HITS_MAX,
			     &serial);
	dr_hits_scrub(hits, count);
	for (uint64_t i = 0; i < count * sizeof(hits[0]); i++) {
		if (probe_write_safe((void *)(address + i), ((const uint8_t *)hits)[i]))
			break;
		if ((i + 1) % sizeof(hits[0]) == 0)
			copied++;
	}
	dr_take_hits(current_task(), serial, copied);
	if (count && !copied)
		return SYSCALL_ERROR_FAULT;
	return copied;
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
