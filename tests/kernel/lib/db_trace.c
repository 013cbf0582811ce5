/* SPDX-License-Identifier: MIT */
/* The raw #DB and #BP recorder of the debug-exception tests (tests/kernel/lib/db_trace.h). */
#include <stdarg.h>
#include <stdbool.h>

#include "arch/x86/debug-registers.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/processor-flags.h"
#include "arch/x86/traps.h"
#include "dr/dr.h"
#include "lib/format.h"
#include "lib/string.h"
#include "runner/test.h"
#include "tests/kernel/lib/db_trace.h"

#define NEAR_LABEL_BYTES 64

static struct db_trace *active;
static exception_handler saved_debug, saved_breakpoint, saved_invalid_opcode;

static void db_trace_record(struct cpu_regs *regs, unsigned int vector, uint64_t dr6)
{
	if (active->count == DB_TRACE_MAX) {
		active->lost++;
		return;
	}
	active->events[active->count] =
		(struct db_event){ .vector = vector, .rip = regs->rip, .dr6 = dr6, .cs = regs->cs };
	active->count++;
}

/* B0-B3 of an enabled execute breakpoint: a fault, so the frame needs RF to go on (§18.3.1.1). */
static bool is_execute_hit(uint64_t dr6, uint64_t dr7)
{
	for (unsigned int slot = 0; slot < 4; slot++)
		if ((dr6 & (DR6_B0 << slot)) && (dr7 & DR7_ENABLE_MASK(slot)) &&
		    DR7_RW_OF(dr7, slot) == DR7_RW_EXECUTE)
			return true;
	return false;
}

static bool db_trace_debug(struct cpu_regs *regs)
{
	uint64_t dr6 = read_dr6();
	uint64_t dr7 = read_dr7();

	db_trace_record(regs, X86_EXC_DB, dr6);
	write_dr6(DR6_RESET);
	if (is_execute_hit(dr6, dr7))
		regs->rflags |= RFLAGS_RF;
	if (active->count == DB_TRACE_MAX) {
		regs->rflags &= ~RFLAGS_TF;
		write_dr7(DR7_RESET);
	}
	return true;
}

static bool db_trace_breakpoint(struct cpu_regs *regs)
{
	db_trace_record(regs, X86_EXC_BP, read_dr6());
	return true;
}

static bool db_trace_invalid_opcode(struct cpu_regs *regs)
{
	for (unsigned int i = 0; i < active->icebp_count; i++) {
		if (regs->rip != active->icebps[i])
			continue;
		db_trace_record(regs, X86_EXC_UD, read_dr6());
		regs->rip += 1; /* as if it had trapped: on to the next instruction */
		return true;
	}
	return saved_invalid_opcode && saved_invalid_opcode(regs);
}

void db_trace_start(struct db_trace *trace)
{
	trace->count = 0;
	trace->lost = 0;
	memset(trace->events, 0, sizeof(trace->events));
	active = trace;
	saved_debug = exception_handler_of(X86_EXC_DB);
	saved_breakpoint = exception_handler_of(X86_EXC_BP);
	saved_invalid_opcode = exception_handler_of(X86_EXC_UD);
	write_dr6(DR6_RESET);
	exception_register(X86_EXC_DB, db_trace_debug);
	exception_register(X86_EXC_BP, db_trace_breakpoint);
	exception_register(X86_EXC_UD, db_trace_invalid_opcode);
}

void db_trace_stop(void)
{
	exception_register(X86_EXC_DB, saved_debug);
	exception_register(X86_EXC_BP, saved_breakpoint);
	exception_register(X86_EXC_UD, saved_invalid_opcode);
	write_dr6(DR6_RESET);
	dr_restore_hardware();
}

static size_t __attribute__((format(printf, 4, 5)))
append(char *text, size_t size, size_t used, const char *fmt, ...)
{
	va_list args;

	if (used >= size)
		return used;
	va_start(args, fmt);
	used += vformat(text + used, size - used, fmt, args);
	va_end(args);
	return used;
}

static size_t format_where(char *text, size_t size, size_t used, uint64_t rip,
			   const struct db_label *labels, unsigned int label_count)
{
	const struct db_label *near = NULL;

	for (unsigned int i = 0; i < label_count; i++) {
		if (labels[i].address == rip)
			return append(text, size, used, "%s", labels[i].name);
		if (labels[i].address < rip && rip - labels[i].address <= NEAR_LABEL_BYTES &&
		    (!near || labels[i].address > near->address))
			near = &labels[i];
	}
	if (near)
		return append(text, size, used, "%s+%llu", near->name,
			      (unsigned long long)(rip - near->address));
	return append(text, size, used, "0x%llx", (unsigned long long)rip);
}

static const struct {
	const char *name;
	uint64_t bit;
} dr6_bits[] = { { "B0", DR6_B0 },	{ "B1", DR6_B0 << 1 }, { "B2", DR6_B0 << 2 },
		 { "B3", DR6_B0 << 3 }, { "BD", DR6_BD },      { "BS", DR6_BS },
		 { "BT", DR6_BT } };

static size_t format_dr6(char *text, size_t size, size_t used, uint64_t dr6)
{
	uint64_t other = (dr6 ^ DR6_RESET) & ~(DR6_BREAKPOINTS | DR6_BD | DR6_BS | DR6_BT);
	const char *separator = "";

	for (unsigned int i = 0; i < sizeof(dr6_bits) / sizeof(dr6_bits[0]); i++) {
		if (!(dr6 & dr6_bits[i].bit))
			continue;
		used = append(text, size, used, "%s%s", separator, dr6_bits[i].name);
		separator = "|";
	}
	if (!(dr6 & DR6_BLD)) {
		used = append(text, size, used, "%s!BLD", separator);
		separator = "|";
		other &= ~DR6_BLD;
	}
	if (!(dr6 & DR6_RTM)) {
		used = append(text, size, used, "%s!RTM", separator);
		separator = "|";
		other &= ~DR6_RTM;
	}
	if (other) {
		used = append(text, size, used, "%s^0x%llx", separator, (unsigned long long)other);
		separator = "|";
	}
	if (!*separator)
		used = append(text, size, used, "-");
	return used;
}

void db_trace_format(const struct db_trace *trace, const struct db_label *labels,
		     unsigned int label_count, char *text, size_t size)
{
	size_t used = 0;

	text[0] = '\0';
	for (unsigned int i = 0; i < trace->count; i++) {
		const struct db_event *event = &trace->events[i];

		used = append(text, size, used, "%s%s%s@", i ? " " : "",
			      event->vector == X86_EXC_BP   ? "BP"
			      : event->vector == X86_EXC_UD ? "UD"
							    : "DB",
			      (event->cs & 3) ? "3" : "");
		used = format_where(text, size, used, event->rip, labels, label_count);
		used = append(text, size, used, ":");
		used = format_dr6(text, size, used, event->dr6);
	}
	if (trace->lost)
		append(text, size, used, " +%u lost", trace->lost);
}

void db_trace_check(const struct db_trace *trace, const struct db_label *labels,
		    unsigned int label_count, const char *expected)
{
	char actual[DB_TRACE_TEXT_MAX];

	db_trace_format(trace, labels, label_count, actual, sizeof(actual));
	check_text(expected, actual);
}
