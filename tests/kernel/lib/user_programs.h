/* SPDX-License-Identifier: MIT */
/* The tests' user programs, linked into .user_text (tests/kernel/lib/user_programs.asm). */
#ifndef TESTS_KERNEL_LIB_USER_PROGRAMS_H
#define TESTS_KERNEL_LIB_USER_PROGRAMS_H

#include <stdint.h>

#include "arch/x86/user.h"
#include "dr/dr.h"

/*
 * User programs (each takes its argument in rdi and ends with SYSCALL_EXIT); user_exit(code) is
 * arch/x86/user.h's:
 *   user_read_byte(address)         exit(the byte at address)
 *   user_write_byte(address)        store 1 at address, exit(0)
 *   user_<instruction>              run one privileged instruction, then exit(USER_NOT_FAULTED);
 *                                   user_<instruction>_at labels the instruction itself
 *   user_register_pattern(seed)     fill rbx-r15, xmm0-15 and CF with a pattern from seed,
 *                                   spin and yield REGISTER_PATTERN_ROUNDS times, checking
 *                                   all of it; exit(0) or exit(1 + the first corrupted one)
 *   user_yield_timing(timing)       until timing->stop or timing->capacity samples: rdtsc,
 *                                   yield, rdtsc, store the difference; set timing->count; exit(0)
 *   user_exit_with_vector(vector)   a fault handler: exit(USER_FAULT_EXIT_BASE + vector)
 *   user_write_message(address)     write the NUL-terminated string at address, exit(task id)
 *   user_sleep(ms)                  sleep(ms), exit(0)
 *   user_counted_rounds(rounds)     rounds->rounds times: rounds->iterations DEC/JNZ, yield;
 *                                   then rounds->done = 1, sleep until woken (or not, with
 *                                   rounds->exit_when_done), exit(0)
 *   user_ds_poll(out)               out[0..2] = records in its BTS buffer, last from, last to,
 *                                   read through its read-only view at USER_DS_BASE; exit(0)
 *   user_ds_read_loop(counter)      read the view at USER_DS_BASE and ++*counter, forever: only
 *                                   a fault (the view unmapped) ends it
 *   user_arch_pebs_peek(out)        400 DEC/JNZ rounds, then out[0..1] = the first record's
 *                                   header and eventing IP in its arch-PEBS view; exit(0)
 *   user_set_trap_flag()            set RFLAGS.TF itself (POPF), so it traps with DR6.BS
 *   user_icebp()                    ICEBP (INT1): #DB without a DR6 condition bit
 *   user_trap_flag_into_syscall()   set RFLAGS.TF, then a system call: stepped into the kernel
 *   user_fault_with_df()            STD, then CLI: #GP(0) with RFLAGS.DF set
 *   user_bad_stack(rsp)             switch to rsp and push there
 *   user_fault_entry_report(vector) a fault handler: exit(USER_FAULT_EXIT_BASE + vector
 *                                   + RFLAGS.TF + RFLAGS.DF as it was entered, + 0x10000 unless
 *                                   its rsp + 8 is 16-byte aligned)
 *   user_syscall_script(script)     make each system call of the script, store the results;
 *                                   exit(0)
 */
#define USER_NOT_FAULTED 0xbad
#define USER_FAULT_EXIT_BASE 100
#define USER_HANDLER_MISALIGNED 0x10000
#define REGISTER_PATTERN_ROUNDS 150

/* Shared with user_counted_rounds; the offsets are fixed in tests/kernel/lib/user_programs.asm. */
struct counted_rounds {
	uint64_t iterations; /* of the DEC/JNZ loop, each round; at least 1 */
	uint64_t rounds; /* at least 1 */
	volatile uint64_t done; /* set by the program before it sleeps */
	uint64_t exit_when_done; /* nonzero: exit at once, not sleep until woken */
};

/* Shared with user_yield_timing; the offsets are fixed in tests/kernel/lib/user_programs.asm. */
struct yield_timing {
	volatile uint64_t stop; /* set by the kernel to end the loop early */
	uint64_t capacity; /* samples[] has room for this many */
	uint64_t count; /* written by the user program at the end */
	uint64_t samples[];
};

extern const char user_read_byte[], user_write_byte[];
extern const char user_wrmsr[], user_wrmsr_at[], user_rdmsr[], user_rdmsr_at[];
extern const char user_write_dr7[], user_write_dr7_at[], user_read_dr0[], user_read_dr0_at[];
extern const char user_hlt[], user_hlt_at[], user_cli[], user_cli_at[];
extern const char user_lgdt[], user_lgdt_at[];
extern const char user_sgdt[], user_sgdt_at[], user_sidt[], user_sidt_at[];
extern const char user_sldt[], user_sldt_at[], user_str[], user_str_at[];
extern const char user_smsw[], user_smsw_at[];
extern const char user_set_trap_flag[], user_icebp[], user_fault_with_df[], user_bad_stack[];
extern const char user_fault_entry_report[], user_syscall_script[], user_trap_flag_into_syscall[];
extern const char user_register_pattern[], user_yield_timing[];
extern const char user_write_message[], user_sleep[], user_exit_with_vector[];
extern const char user_counted_rounds[];
extern const char user_dr_script[], user_dr_target[], user_ds_poll[], user_ds_read_loop[],
	user_arch_pebs_peek[];

/*
 * Shared with user_dr_script; the offsets are fixed in tests/kernel/lib/user_programs.asm. hits
 * holds what SYSCALL_DR_READ_HITS copied: struct dr_hit records (dr/dr.h), kept as raw bytes so
 * that the offsets do not move with the struct.
 */
enum user_dr_action {
	USER_DR_NOTHING,
	USER_DR_CALL, /* call target */
	USER_DR_WRITE, /* store one byte at target */
	USER_DR_READ, /* load one byte from target */
};

#define USER_DR_HITS_MAX 16
#define USER_DR_HIT_SIZE 40
_Static_assert(sizeof(struct dr_hit) == USER_DR_HIT_SIZE, "USER_DR_HIT_SIZE: struct dr_hit");

struct user_dr_script {
	uint64_t install; /* 1: SYSCALL_DR_INSTALL(address, type, length) first */
	uint64_t address, type, length;
	uint64_t action; /* enum user_dr_action */
	uint64_t target;
	uint64_t repeat;
	int64_t install_result; /* the slot, or -enum dr_error */
	int64_t hit_count; /* what SYSCALL_DR_READ_HITS returned */
	uint8_t hits[USER_DR_HITS_MAX * USER_DR_HIT_SIZE];
};

/* Shared with user_syscall_script; the offsets are fixed in tests/kernel/lib/user_programs.asm. */
#define USER_SYSCALLS_MAX 16

struct user_syscall {
	uint64_t number; /* rax, all 64 bits */
	uint64_t args[3]; /* rdi, rsi, rdx */
	int64_t result; /* rax on return */
};

struct user_syscall_script {
	uint64_t count; /* calls[0..count) are made in order */
	struct user_syscall calls[USER_SYSCALLS_MAX];
};

#endif
