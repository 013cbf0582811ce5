/* SPDX-License-Identifier: MIT */
/* Ring-3 tasks: their address spaces, their first entry, and their faults. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/cpu.h"
#include "arch/x86/debug-registers.h"
#include "arch/x86/debugreg.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/fpu.h"
#include "arch/x86/paging.h"
#include "arch/x86/probe.h"
#include "arch/x86/processor-flags.h"
#include "arch/x86/regs.h"
#include "arch/x86/syscall.h"
#include "arch/x86/traps.h"
#include "arch/x86/user.h"
#include "kernel/address_space.h"
#include "kernel/pfa.h"
#include "lib/ktap.h"
#include "sched/internal.h"
#include "sched/sched.h"

#define USER_TEXT_FLAGS PTE_USER /* read-only, executable */
#define USER_DATA_FLAGS (PTE_USER | PTE_WRITE | PTE_NO_EXECUTE | PTE_OWNED)

/* Map .user_text, the data pages and the stack; false when memory ran out. */
static bool user_address_space_fill(struct task *task, uint64_t root)
{
	uint64_t data;
	bool mapped = true;

	for (const char *page = __user_text_start; page < __user_text_end; page += PAGE_SIZE)
		mapped &= address_space_map(root, user_text_address(page), virt_to_phys(page),
					    USER_TEXT_FLAGS);
	data = pfa_alloc_pages(USER_DATA_PAGES);
	if (!data)
		return false;
	task->user_data = phys_to_virt(data);
	for (unsigned int i = 0; i < USER_DATA_PAGES; i++)
		mapped &= address_space_map(root, USER_DATA_BASE + i * PAGE_SIZE,
					    data + i * PAGE_SIZE, USER_DATA_FLAGS);
	for (unsigned int i = 1; i <= USER_STACK_PAGES; i++) {
		uint64_t stack = pfa_alloc();

		if (!stack)
			return false;
		mapped &= address_space_map(root, USER_STACK_TOP - i * PAGE_SIZE, stack,
					    USER_DATA_FLAGS);
	}
	return mapped;
}

/* First switch to a user task: its CR3, TSS.RSP0 and FPU state are already loaded. */
static void user_task_start(void *arg)
{
	struct task *task = arg;

	sched_task_started(task);
	local_irq_disable();
	return_to_user_mode(task_user_frame(task));
}

struct task *task_create_user(const char *name, const void *program, uint64_t arg,
			      enum task_start start)
{
	struct task *task = task_alloc(name, user_task_start, true);
	unsigned long flags;

	if (!task)
		return NULL;
	task->address_space = address_space_create();
	if (!task->address_space || !user_address_space_fill(task, task->address_space)) {
		task_free(task);
		return NULL;
	}
	switch_task_set_address_space(task->index, task->address_space);
	fpu_state_init(&task->fpu);
	user_frame_init(task_user_frame(task), user_text_address(program), USER_STACK_TOP, arg);
	if (start == TASK_START_RUNNABLE) {
		flags = sched_lock_irqsave();
		run_queue_add(task, false);
		sched_unlock_irqrestore(flags);
	}
	return task;
}

void *task_user_data(const struct task *task)
{
	return task->user_data;
}

void task_set_fault_handler(struct task *task, const void *handler)
{
	task->user_fault_handler = handler ? user_text_address(handler) : 0;
}

/* The System V ABI lets code use this much below rsp without moving it: a handler skips it. */
#define USER_RED_ZONE 128
#define USER_STACK_ALIGN 16
/* What a fault handler is entered without, as Linux enters a signal handler (setup_rt_frame()). */
#define USER_HANDLER_FLAGS_CLEARED (RFLAGS_TF | RFLAGS_DF | RFLAGS_RF)

/*
 * Build the handler's frame on the faulting stack, as Linux's get_sigframe() places a signal
 * frame: below the red zone, aligned as after a call (rsp + 8 a multiple of 16), holding a return
 * address of 0. A handler does not return: one that does faults at 0 and enters itself again on
 * a lower frame, until the stack runs out. False, with nothing written, when the stack is not
 * writable user memory there (unmapped, non-canonical, the kernel's).
 */
static bool user_fault_frame_push(struct cpu_regs *regs)
{
	uint64_t frame;

	if (regs->rsp > USER_SPACE_END || regs->rsp < USER_RED_ZONE + USER_STACK_ALIGN)
		return false;
	frame = ((regs->rsp - USER_RED_ZONE) & ~(uint64_t)(USER_STACK_ALIGN - 1)) -
		sizeof(uint64_t);
	/* Eight aligned bytes share one page: a fault can come only from the first. */
	for (unsigned int i = 0; i < sizeof(uint64_t); i++)
		if (probe_write_safe((void *)(frame + i), 0))
			return false;
	regs->rsp = frame;
	return true;
}

/*
 * An exception in ring 3: record it for the task, then enter the task's fault handler, or end
 * the task when it has none (TASK_EXIT_FAULTED) or its stack cannot take the handler's frame
 * (TASK_EXIT_NO_FAULT_FRAME). Nothing else in the kernel is affected.
 */
static bool user_fault(struct cpu_regs *regs)
{
	struct task *task = sched_current();

	task->fault = (struct user_fault){
		.valid = true,
		.vector = (unsigned int)regs->vector,
		.error_code = regs->error_code,
		.rip = regs->rip,
		.cr2 = read_cr2(),
	};
	if (regs->vector == X86_EXC_DB) {
		/* dr/ left the DR6 of a #DB it did not handle; the CPU never clears it (SDM Vol. 3
		 * §18.2.3): reset it, or its BS bit shows in the next, unrelated #DB. */
		task->fault.dr6 = read_dr6();
		write_dr6(DR6_RESET);
	}
	if (!task->user_fault_handler)
		task_exit(TASK_EXIT_FAULTED);
	if (!user_fault_frame_push(regs))
		task_exit(TASK_EXIT_NO_FAULT_FRAME);
	regs->rdi = task->fault.vector;
	regs->rsi = task->fault.error_code;
	regs->rdx = task->fault.rip;
	regs->rcx = task->fault.cr2;
	user_frame_redirect(regs, task->user_fault_handler);
	/* TF would trap after the handler's first instruction, and again, forever; DF is clear at
	 * every call (System V ABI); RF would let an execute breakpoint at the handler pass. */
	regs->rflags &= ~USER_HANDLER_FLAGS_CLEARED;
	return true;
}

void user_faults_init(void)
{
	exception_set_user_handler(user_fault);
}

/*
 * Find a system-call instruction that works here: SYSCALL, else the UD2 trap. A user task that
 * exits with code 0 through the gate proves it. Returns false when neither works.
 */
bool user_syscall_select(void)
{
	struct user_fault fault;
	struct task *task = task_create_user("syscall-probe", user_exit, 0, TASK_START_RUNNABLE);
	long code = task ? task_join(task, &fault) : -1;

	if (code == 0) {
		ktap_diag(0, "user system calls: SYSCALL");
		return true;
	}
	ktap_diag(0,
		  "user system calls: SYSCALL from ring 3 failed (%s at rip=0x%llx in ring 3); "
		  "using the UD2 trap",
		  fault.valid ? exception_name(fault.vector) : "no fault",
		  (unsigned long long)fault.rip);
	syscall_use_trap();
	task = task_create_user("syscall-probe", user_exit, 0, TASK_START_RUNNABLE);
	return task && task_join(task, NULL) == 0;
}
