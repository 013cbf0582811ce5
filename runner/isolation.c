/* SPDX-License-Identifier: MIT */
/* Isolation frames: a jump buffer and a deadline per nested runner_isolate() call. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/apic.h"
#include "arch/x86/cpu.h"
#include "arch/x86/debugreg.h"
#include "arch/x86/gdt.h"
#include "arch/x86/platform.h"
#include "arch/x86/setjmp.h"
#include "arch/x86/traps.h"
#include "arch/x86/tsc.h"
#include "lib/console.h"
#include "lib/format.h"
#include "lib/report.h"
#include "runner/isolation.h"
#include "runner/test.h"

#define ISOLATION_DEPTH 4

struct isolation_frame {
	struct jump_buffer jump;
	uint64_t deadline; /* TSC */
	struct isolation_outcome *outcome;
};

/* frames[0..depth) are live; the innermost is frames[depth - 1]. Touched with IF=0 only. */
static struct isolation_frame frames[ISOLATION_DEPTH];
static volatile unsigned int depth;

/* Unwind to frames[index], ending it (and everything inside it) with end. */
static void __attribute__((noreturn)) isolation_unwind(unsigned int index, enum isolation_end end)
{
	local_irq_disable();
	frames[index].outcome->end = end;
	depth = index + 1;
	longjmp(&frames[index].jump, 1);
}

static bool isolation_unexpected_exception(struct cpu_regs *regs)
{
	struct isolation_outcome *outcome;

	if (depth == 0)
		return false;
	outcome = frames[depth - 1].outcome;
	outcome->vector = (unsigned int)regs->vector;
	outcome->error_code = regs->error_code;
	outcome->rip = regs->rip;
	outcome->cr2 = read_cr2();
	outcome->dr6 = read_dr6();
	outcome->handler_stack = (uint64_t)regs;
	isolation_unwind(depth - 1, ISOLATION_EXCEPTION);
}

/*
 * Timer hook: end the outermost frame whose deadline passed. Not in the middle of a console
 * write, whose line would otherwise be counted in the CRC but never sent: the next tick will do.
 */
static void isolation_tick(struct cpu_regs *regs)
{
	uint64_t now = rdtsc_ordered();

	(void)regs;
	if (console_is_busy())
		return;
	for (unsigned int i = 0; i < depth; i++)
		if (now > frames[i].deadline)
			isolation_unwind(i, ISOLATION_TIMEOUT);
}

void isolation_init(void)
{
	exception_set_unexpected_handler(isolation_unexpected_exception);
	timer_register_hook(isolation_tick);
}

void runner_isolate(void (*fn)(void *), void *arg, uint64_t timeout_ms,
		    struct isolation_outcome *outcome)
{
	struct isolation_frame *frame;
	unsigned int saved_depth = depth;

	*outcome = (struct isolation_outcome){ .end = ISOLATION_RETURNED };
	if (saved_depth == ISOLATION_DEPTH) {
		outcome->end = ISOLATION_ABORTED;
		report_fail("runner_isolate: nested deeper than %d", ISOLATION_DEPTH);
		return;
	}
	frame = &frames[saved_depth];
	frame->outcome = outcome;
	frame->deadline = rdtsc_ordered() + tsc_cycles_from_ms(timeout_ms);
	if (setjmp(&frame->jump) == 0) {
		depth = saved_depth + 1;
		local_irq_enable();
		fn(arg);
	}
	/*
	 * Here after fn returned or after an unwind to this frame. An unwind skipped the IRET that
	 * would have restored SS (NULL after an IST or ring change), so reload the segments.
	 */
	local_irq_disable();
	gdt_reload_segments();
	depth = saved_depth;
	local_irq_enable();
}

static void __attribute__((noreturn)) isolation_end_current(enum isolation_end end)
{
	if (depth == 0)
		platform_bail_out("test_skip() or test_abort() called outside a test");
	isolation_unwind(depth - 1, end);
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
