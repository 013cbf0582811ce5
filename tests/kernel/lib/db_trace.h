/* SPDX-License-Identifier: MIT */
/* A raw #DB and #BP recorder for the debug-exception tests, and its traces as text. */
#ifndef TESTS_KERNEL_LIB_DB_TRACE_H
#define TESTS_KERNEL_LIB_DB_TRACE_H

#include <stddef.h>
#include <stdint.h>

#define DB_TRACE_MAX 12
#define DB_TRACE_TEXT_MAX 320

struct db_event {
	unsigned int vector; /* X86_EXC_DB, X86_EXC_BP, or X86_EXC_UD at an ICEBP */
	uint64_t rip, dr6, cs;
};

/* Written from #DB and #BP context, behind the compiler's back: volatile. */
struct db_trace {
	volatile unsigned int count;
	volatile unsigned int lost; /* events past DB_TRACE_MAX */
	struct db_event events[DB_TRACE_MAX];
	/* A #UD at an ICEBP (0xF1: QEMU TCG refuses it) is recorded and stepped over. */
	const uint64_t *icebps;
	unsigned int icebp_count;
};

/* An address of a payload and its name in the text. */
struct db_label {
	const char *name;
	uint64_t address;
};

/*
 * Take #DB and #BP from dr/ and the runner until db_trace_stop(), kvm-unit-tests' handle_db(), and
 * #UD at trace->icebps from whoever has it:
 * each is recorded with DR6 as the CPU left it, then DR6 is written back to DR6_RESET, RF is set
 * in the frame after an execute hit (fault-class), and at DB_TRACE_MAX events TF and DR7 are
 * cleared, so that a runaway trace ends. The runner restores the handlers of a test that ended
 * before db_trace_stop().
 */
void db_trace_start(struct db_trace *trace);
/* Give #DB and #BP back, DR6 to DR6_RESET and DR7 to what dr/ installed. */
void db_trace_stop(void);

/*
 * The trace as text, build-independent: one "VECTOR@WHERE:DR6" per event, space-separated.
 * VECTOR is DB, BP or UD, with a 3 after it for an event from ring 3. WHERE is the label whose
 * address is the RIP, else label+N for one at most 64 bytes below, else the address. DR6 is what
 * differs from DR6_RESET: the names of the bits set (B0-B3, BD, BS, BT), !BLD and !RTM for an
 * active-low bit cleared, ^0xN for any other difference, "-" for none.
 */
void db_trace_format(const struct db_trace *trace, const struct db_label *labels,
		     unsigned int label_count, char *text, size_t size);

/* check_text() of the trace's text against expected, as the current test's check. */
void db_trace_check(const struct db_trace *trace, const struct db_label *labels,
		    unsigned int label_count, const char *expected);

#define DB_LABELS(labels) (labels), (unsigned int)(sizeof(labels) / sizeof((labels)[0]))

/*
 * Payloads are asm text, each written twice by DB_PAYLOAD(name, body) (or once, by the
 * DB_KERNEL_PAYLOAD or DB_USER_PAYLOAD half): k_NAME, a kernel function that ends in RET, and
 * u_NAME in .user_text, a user program that ends in exit(0). body(prefix)
 * gives the text; its labels are prefix "_label", so k_NAME_label and u_NAME_label. A body
 * clobbers only registers a C call may (rax, rcx, rdx, rsi, rdi, r8-r11) and flags.
 */
#define DB_STRING(x) #x
#define DB_EXPAND(x) DB_STRING(x)
#define DB_TF 0x100 /* RFLAGS_TF, as asm text takes it */
#define DB_ASM_TF_ON "\tpushfq\n\torq $" DB_EXPAND(DB_TF) ", (%rsp)\n\tpopfq\n"
#define DB_ASM_USER_EXIT                                               \
	"\txor %edi, %edi\n\tmov $" DB_EXPAND(SYSCALL_EXIT) ", %eax\n" \
							    "\tcall user_syscall_gate\n\tud2\n"
#define DB_KERNEL_PAYLOAD(name, body)                                                   \
	asm(".pushsection .text, \"ax\"\n\t.balign 16\n\t.global k_" #name "\nk_" #name \
	    ":\n" body("k_" #name) "\tret\n.popsection\n")
#define DB_USER_PAYLOAD(name, body)                                                          \
	asm(".pushsection .user_text, \"ax\"\n\t.balign 16\n\t.global u_" #name "\nu_" #name \
	    ":\n" body("u_" #name) DB_ASM_USER_EXIT ".popsection\n")
#define DB_PAYLOAD(name, body)         \
	DB_KERNEL_PAYLOAD(name, body); \
	DB_USER_PAYLOAD(name, body)
/* A label of the kernel copy and of the user copy, under one name in the text. */
#define DB_KERNEL_LABEL(name, label)                 \
	{                                            \
#label, (uint64_t)k_##name##_##label \
	}
#define DB_USER_LABEL(name, label)                            \
	{                                                     \
#label, user_text_address(u_##name##_##label) \
	}

#endif
