/* SPDX-License-Identifier: MIT */
/* Exception vectors (SDM Vol. 3 Table 6-1) and the interrupt vectors switchyard assigns. */
#ifndef ARCH_X86_EXCEPTIONS_H
#define ARCH_X86_EXCEPTIONS_H

#define X86_EXC_DE 0 /* divide error */
#define X86_EXC_DB 1 /* debug */
#define X86_EXC_NMI 2
#define X86_EXC_BP 3 /* int3 */
#define X86_EXC_OF 4
#define X86_EXC_BR 5
#define X86_EXC_UD 6 /* invalid opcode */
#define X86_EXC_NM 7
#define X86_EXC_DF 8 /* double fault: IST_DOUBLE_FAULT */
#define X86_EXC_TS 10
#define X86_EXC_NP 11
#define X86_EXC_SS 12
#define X86_EXC_GP 13
#define X86_EXC_PF 14
#define X86_EXC_MF 16
#define X86_EXC_AC 17
#define X86_EXC_MC 18 /* machine check: IST_MACHINE_CHECK */
#define X86_EXC_XM 19
#define X86_EXC_VE 20
#define X86_EXC_CP 21
#define X86_EXC_COUNT 32

/* #PF error code bits (SDM Vol. 3 §4.7). */
#define PF_ERROR_PRESENT (1u << 0)
#define PF_ERROR_WRITE (1u << 1)
#define PF_ERROR_USER (1u << 2)
#define PF_ERROR_RESERVED (1u << 3)
#define PF_ERROR_FETCH (1u << 4)

/* Interrupt vectors above the exceptions. */
#define VECTOR_TIMER 0x20
#define VECTOR_PMI 0x21
#define VECTOR_RESCHEDULE 0x22 /* IPI: run the scheduler */
#define VECTOR_CALL_FUNCTION 0x23 /* IPI: run the calls queued for this CPU */
#define VECTOR_TEST 0x30 /* free for tests that take an interrupt of their own */
#define VECTOR_SPURIOUS 0xff

#define VECTOR_COUNT 256

#endif
