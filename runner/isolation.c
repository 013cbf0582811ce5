/* SPDX-License-Identifier: MIT */
/* Isolation frames: a jump buffer, a deadline and an owner task per runner_isolate() call. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/apic.h"
#include "arch/x86/cpu.h"
#include "arch/x86/debug-registers.h"
#include "arch/x86/gdt.h"
#include "arch/x86/percpu.h"
#include "arch/x86/processor-flags.h"
#include "arch/x86/setjmp.h"
#include "arch/x86/traps.h"
#include "arch/x86/tsc.h"
#include "kernel/smp.h"
#include "kernel/spinlock.h"
#include "lib/format.h"
#include "lib/ktap.h"
#include "lib/panic.h"
#include "lib/report.h"
#include "platform/pc/nmi_timer.h"
#include "runner/isolation.h"
#include "runner/test.h"
#include "sched/sched.h"

#define ISOLATION_DEPTH 4

/*
 * A frame can only be unwound on its owner's stack. When an overrun or an exception happens
 * while another task runs (one the test created), the frame records the end as pending and the
 * owner is interrupted: it unwinds as soon as it is back on the CPU.
 */
struct isolation_frame {
	struct jump_buffer jump;
	uint64_t deadline; /* TSC */
	struct task *owner;
	enum isolation_end pending; /* ISOLATION_RETURNED when nothing is pending */
	unsigned int interrupt_depth; /* an unwind out of a handler skips its end: restored */
	unsigned int lock_mark; /* spinlocks_held at the start: the frame's own are above it */
	struct isolation_outcome *outcome;
};

/* frames[0..depth) are live; the innermost is frames[depth - 1]. Touched with IF=0 only. */
static struct isolation_frame frames[ISOLATION_DEPTH];
static volatile unsigned int depth;
/* The full name of the test running now, "" between tests. */
static char running_test[96];

void isolation_name_test(const char *name)
{
	format(running_test, sizeof(running_test), "%s", name);
}

/* How many of the locks this CPU took since base are not private to the test (or unnamed). */
static unsigned int kernel_locks_since(unsigned int base)
{
	struct cpu *cpu = this_cpu();
	unsigned int count = 0;

	for (unsigned int i = base; i < cpu->spinlocks_held; i++)
		count += i >= SPINLOCKS_NAMED || !cpu->held_locks[i] ||
			 !cpu->held_locks[i]->private_to_test;
	return count;
}

/*
 * The locks this CPU took since base, in the flow about to be unwound (why says by what): the
 * test's private locks are released with it (SPINLOCK_INIT_PRIVATE). Any other guards kernel
 * state the flow may have left half-changed, and the next taker would deadlock on it: the run
 * ends here, naming the test and the locks, rather than at a misleading "taken again" later.
 */
static void unwind_locks(unsigned int base, const char *why)
{
	struct cpu *cpu = this_cpu();
	char names[128] = "";
	size_t length = 0;

	if (cpu->spinlocks_held <= base)
		return;
	if (kernel_locks_since(base)) {
		for (unsigned int i = base; i < cpu->spinlocks_held && length < sizeof(names);
		     i++) {
			const struct spinlock *lock =
				i < SPINLOCKS_NAMED ? cpu->held_locks[i] : NULL;

			length += (size_t)format(names + length, sizeof(names) - length, "%s%s",
						 i > base ? ", " : "", lock ? lock->name : "?");
		}
		panic("%s in test %s under spinlock %s (CPU %u): the kernel's state "
		      "cannot be unwound",
		      why, running_test, names, this_cpu_index());
	}
	while (cpu->spinlocks_held > base)
		spin_unlock(cpu->held_locks[cpu->spinlocks_held - 1]);
}

/* Where the locks of the flow that frames[index] would unwind begin on this CPU. */
static unsigned int lock_base(unsigned int index)
{
	return frames[index].owner == sched_current() ? frames[index].lock_mark : 0;
}

/* Unwind to frames[index], ending it (and everything inside it) with end. Owner's stack only. */
static void __attribute__((noreturn)) isolation_unwind(unsigned int index, enum isolation_end end)
{
	local_irq_disable();
	unwind_locks(frames[index].lock_mark, "an unwind");
	frames[index].outcome->end = end;
	depth = index + 1;
	longjmp(&frames[index].jump, 1);
}

/* End frames[index] now if this is its owner's stack, else as soon as the owner runs. */
/*
 * Tell (or stop telling) every CPU's model that the running test overran (arch/x86/percpu.h):
 * a test the model steps on another CPU would keep that CPU stepping, deaf to the runner's calls,
 * after the test ended. Set at a timeout, until the next test starts.
 */
static void set_overrun_everywhere(bool overrun)
{
	for (unsigned int cpu = 0; cpu < percpu_count(); cpu++)
		__atomic_store_n(&percpu_get(cpu)->overrun, overrun, __ATOMIC_RELAXED);
}

static void isolation_end(unsigned int index, enum isolation_end end)
{
	if (end == ISOLATION_TIMEOUT)
		set_overrun_everywhere(true);
	if (frames[index].owner == sched_current())
		isolation_unwind(index, end);
	frames[index].pending = end;
	sched_interrupt(frames[index].owner);
}

static bool isolation_unexpected_exception(struct cpu_regs *regs)
{
	struct isolation_outcome *outcome;
	char why[80];

	if (depth == 0)
		return false;
	/* First: ending the frame takes the scheduler's lock, which this flow may hold. */
	format(why, sizeof(why), "unexpected exception %s at rip=%#llx",
	       exception_name((unsigned int)regs->vector), (unsigned long long)regs->rip);
	unwind_locks(lock_base(depth - 1), why);
	outcome = frames[depth - 1].outcome;
	outcome->vector = (unsigned int)regs->vector;
	outcome->error_code = regs->error_code;
	outcome->rip = regs->rip;
	outcome->cr2 = read_cr2();
	outcome->dr6 = read_dr6();
	write_dr6(DR6_RESET); /* reported; the next #DB starts clean */
	outcome->handler_stack = (uint64_t)regs;
	isolation_end(depth - 1, ISOLATION_EXCEPTION);
	/* Another task took it: that task ends here, the owner unwinds when it runs. */
	task_exit(TASK_EXIT_FAULTED);
}

/* Timer hook, CPU 0 only (one watcher is enough; the owner may run anywhere): end the
 * outermost frame whose deadline passed. */
static void isolation_tick(struct cpu_regs *regs)
{
	uint64_t now = rdtsc_ordered();

	(void)regs;
	if (this_cpu_index() != 0)
		return;
	for (unsigned int i = 0; i < depth; i++) {
		if (now > frames[i].deadline) {
			isolation_end(i, ISOLATION_TIMEOUT);
			return;
		}
	}
}

/*
 * NMI watchdog tick, boot CPU only (arch/x86/nmi.h). It acts only where the tick cannot: the NMI
 * interrupted code with interrupts off, past a deadline by the grace. The owner's frame unwinds
 * from the NMI handler; NMIs stay blocked until the next IRET, which the runner's next
 * interrupt brings. An NMI that lands under a spinlock (which an unwind would leave taken) waits
 * for one that does not, for ISOLATION_WATCHDOG_LOCK_MS: a test that is slow, not stuck, spends
 * time outside its locks too (the emulated CPU's steps on a slow platform). A task of the test's
 * own stuck with interrupts off, or a spin that holds a lock all that time, ends the run instead:
 * the log names the test.
 */
static void isolation_watchdog(struct cpu_regs *regs)
{
	uint64_t now = rdtsc_ordered();
	uint64_t grace = tsc_cycles_from_ms(ISOLATION_WATCHDOG_GRACE_MS);

	if (regs->rflags & RFLAGS_IF)
		return;
	for (unsigned int i = 0; i < depth; i++) {
		unsigned int held;

		if (now <= frames[i].deadline + grace)
			continue;
		frames[i].outcome->watchdog = true;
		/* The flow's own locks only: a private one of the test's goes with the unwind. */
		held = kernel_locks_since(lock_base(i));
		/*
		 * Under a lock now, perhaps not at the next NMI: a slow test still makes progress.
		 * A CPU model stepping it stops (most of its time is under its own lock).
		 */
		if (held && now <= frames[i].deadline + grace +
					    tsc_cycles_from_ms(ISOLATION_WATCHDOG_LOCK_MS)) {
			set_overrun_everywhere(true);
			return;
		}
		if (held)
			panic("NMI watchdog: the running test spins with interrupts off "
			      "past its time limit, holding %u spinlocks, at rip=%#llx: it "
			      "cannot be ended",
			      held, (unsigned long long)regs->rip);
		set_overrun_everywhere(true);
		if (frames[i].owner == sched_current())
			isolation_unwind(i, ISOLATION_TIMEOUT);
		panic("NMI watchdog: task %u of the running test spins with interrupts "
		      "off past the time limit",
		      sched_current()->id);
	}
}

void isolation_watchdog_start(bool on)
{
	char reason[128];

	if (!on) {
		ktap_diag(0, "watchdog: off (watchdog=off): a test that spins with interrupts off "
			     "ends only at the harness's time limit");
		return;
	}
	if (nmi_timer_start(smp_madt(), ISOLATION_WATCHDOG_HZ, isolation_watchdog, reason,
			    sizeof(reason)))
		ktap_diag(0,
			  "watchdog: NMI from the %s; it ends a test %u ms past its limit with "
			  "interrupts off",
			  reason, ISOLATION_WATCHDOG_GRACE_MS);
	else
		ktap_diag(0, "watchdog: none: %s", reason);
}

/* sched_interrupt() handler: runs on the interrupted owner's stack. */
static void isolation_interrupted(void)
{
	for (unsigned int i = 0; i < depth; i++)
		if (frames[i].pending != ISOLATION_RETURNED && frames[i].owner == sched_current())
			isolation_unwind(i, frames[i].pending);
}

void isolation_init(void)
{
	exception_set_unexpected_handler(isolation_unexpected_exception);
	timer_register_hook(isolation_tick);
	sched_set_interrupt_handler(isolation_interrupted);
}

void runner_isolate(void (*fn)(void *), void *arg, uint64_t timeout_ms,
		    struct isolation_outcome *outcome)
{
	struct isolation_frame *frame;
	unsigned int saved_depth = depth;

	*outcome = (struct isolation_outcome){ .end = ISOLATION_RETURNED };
	if (saved_depth == 0)
		set_overrun_everywhere(false); /* a new test: what the last one overran is over */
	if (saved_depth == ISOLATION_DEPTH) {
		outcome->end = ISOLATION_ABORTED;
		report_fail("runner_isolate: nested deeper than %d", ISOLATION_DEPTH);
		return;
	}
	frame = &frames[saved_depth];
	frame->outcome = outcome;
	frame->owner = sched_current();
	frame->pending = ISOLATION_RETURNED;
	frame->deadline = rdtsc_ordered() + tsc_cycles_from_ms(timeout_ms);
	frame->interrupt_depth = this_cpu()->interrupt_depth;
	frame->lock_mark = this_cpu()->spinlocks_held;
	if (setjmp(&frame->jump) == 0) {
		depth = saved_depth + 1;
		local_irq_enable();
		fn(arg);
		/* Returned, but late: with interrupts off no tick could end it in time. */
		if (rdtsc_ordered() > frame->deadline)
			outcome->end = ISOLATION_TIMEOUT;
	}
	/*
	 * Here after fn returned or after an unwind to this frame. An unwind skipped the IRET that
	 * would have restored SS (NULL after an IST or ring change), so reload the segments.
	 */
	local_irq_disable();
	gdt_reload_segments();
	/* A function that returned ran every handler's end: its depth must be back. */
	if (outcome->end == ISOLATION_RETURNED &&
	    this_cpu()->interrupt_depth != frame->interrupt_depth)
		report_fail("interrupt depth %u after the function returned, %u before: a task "
			    "switch inside a handler lost its depth",
			    this_cpu()->interrupt_depth, frame->interrupt_depth);
	this_cpu()->interrupt_depth = frame->interrupt_depth;
	depth = saved_depth;
	local_irq_enable();
}

static void __attribute__((noreturn)) isolation_end_current(enum isolation_end end)
{
	unsigned long flags = local_irq_save();

	(void)flags;
	if (depth == 0)
		panic("test_skip() or test_abort() called outside a test");
	unwind_locks(lock_base(depth - 1),
		     end == ISOLATION_SKIPPED ? "test_skip()" : "test_abort()");
	isolation_end(depth - 1, end);
	task_exit(TASK_EXIT_KILLED); /* a task the test created: it ends, its test unwinds */
}

void test_skip(const char *fmt, ...)
{
	char reason[REPORT_REASON_MAX];
	va_list args;

	va_start(args, fmt);
	vformat(reason, sizeof(reason), fmt, args);
	va_end(args);
	report_skip("%s", reason);
	isolation_end_current(ISOLATION_SKIPPED);
}

void test_abort(const char *fmt, ...)
{
	char reason[REPORT_REASON_MAX];
	va_list args;

	va_start(args, fmt);
	vformat(reason, sizeof(reason), fmt, args);
	va_end(args);
	report_fail("test aborted: %s", reason);
	isolation_end_current(ISOLATION_ABORTED);
}
