/* SPDX-License-Identifier: MIT */
/* The system calls of user tasks (numbers in arch/x86/user-abi.h). */
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/cpu.h"
#include "arch/x86/probe.h"
#include "arch/x86/regs.h"
#include "arch/x86/syscall.h"
#include "arch/x86/tsc.h"
#include "arch/x86/user-abi.h"
#include "lib/report.h"
#include "sched/internal.h"
#include "sched/sched.h"

#define WRITE_MAX 160

/* System calls run with interrupts off, on the task's kernel stack; they may switch tasks. */
static long syscall_yield(struct cpu_regs *regs)
{
	(void)regs;
	spin_lock(&sched_lock);
	schedule();
	spin_unlock(&sched_lock);
	return 0;
}

static long syscall_exit(struct cpu_regs *regs)
{
	task_exit((long)regs->rdi);
}

/* Copy the user's bytes with probes, so that a bad pointer is an error, not a kernel fault. */
static long syscall_write(struct cpu_regs *regs)
{
	uint64_t address = regs->rdi, length = regs->rsi;
	char text[WRITE_MAX + 1];

	if (length > WRITE_MAX)
		return SYSCALL_ERROR_INVALID;
	if (address >= USER_SPACE_END || length > USER_SPACE_END - address)
		return SYSCALL_ERROR_FAULT;
	for (uint64_t i = 0; i < length; i++) {
		uint8_t byte;

		if (probe_read_safe((const void *)(address + i), &byte))
			return SYSCALL_ERROR_FAULT;
		text[i] = (char)(byte >= ' ' && byte < 0x7f ? byte : '?');
	}
	text[length] = '\0';
	report_diag("task %u says: %s", sched_current()->id, text);
	return (long)length;
}

/* rdi = milliseconds, saturated: a sleep too long for the TSC lasts until sched_wake(). */
static long syscall_sleep(struct cpu_regs *regs)
{
	spin_lock(&sched_lock);
	sched_sleep_until(tsc_deadline_after_ms(regs->rdi));
	spin_unlock(&sched_lock);
	return 0;
}

static long syscall_get_task_id(struct cpu_regs *regs)
{
	(void)regs;
	return sched_current()->id;
}

void syscall_init(void)
{
	syscall_register(SYSCALL_YIELD, syscall_yield);
	syscall_register(SYSCALL_EXIT, syscall_exit);
	syscall_register(SYSCALL_WRITE, syscall_write);
	syscall_register(SYSCALL_SLEEP, syscall_sleep);
	syscall_register(SYSCALL_GET_TASK_ID, syscall_get_task_id);
	syscall_init_cpu();
}
