/* SPDX-License-Identifier: MIT */
/* x86-64 instruction length decoder and branch classifier, for single-stepping with TF. */
#ifndef EMULATOR_DECODE_H
#define EMULATOR_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The longest instruction the CPU accepts: a longer one raises #GP (SDM Vol. 2, 2.3.11). */
#define DECODE_MAX_LENGTH 15

/*
 * How an instruction can change RIP. A taken branch is one whose next RIP differs from
 * rip + length for DECODE_JCC; every other kind except DECODE_NOT_BRANCH is always taken.
 */
enum decode_branch {
	DECODE_NOT_BRANCH,
	/* Conditional near: 70-7F, 0F 80-8F, E0-E2 (LOOPcc/LOOP), E3 (JRCXZ/JECXZ). */
	DECODE_JCC,
	/* EB, E9, FF /4 near indirect, FF /5 far indirect. */
	DECODE_JMP,
	/* E8, FF /2, FF /3. */
	DECODE_CALL,
	/* C3, C2 iw, CB, CA iw. */
	DECODE_RET,
	/*
	 * Other control transfers: SYSCALL, SYSRET, SYSENTER, SYSEXIT, INT n, INT3, INT1/ICEBP,
	 * IRET/IRETQ. UD2 is not a branch: it faults like any other instruction can.
	 */
	DECODE_FAR,
};

/* The opcode map an instruction's last opcode byte belongs to (SDM Vol. 2, Appendix A). */
enum decode_map {
	DECODE_MAP_ONE_BYTE,
	DECODE_MAP_0F,
	DECODE_MAP_0F38,
	DECODE_MAP_0F3A,
	/* EVEX maps 5 and 6 (AVX512-FP16). */
	DECODE_MAP_EVEX_5,
	DECODE_MAP_EVEX_6,
};

struct decoded_instruction {
	/* 1-15, prefixes included. */
	unsigned int length;
	enum decode_branch branch;
	/* FF /2 /3 /4 /5: the target comes from a register or memory. */
	bool indirect;
	/* A far CALL, JMP or RET: FF /3, FF /5, CA iw, CB (LBR_SELECT's FAR_BRANCH kind). */
	bool far;
	/*
	 * F2/F3 prefix on a string instruction (MOVS, STOS, LODS, CMPS, SCAS, INS, OUTS): TF
	 * traps after each iteration, with RIP still at the instruction while RCX is not zero.
	 */
	bool rep_string;
	/* The last opcode byte, for diagnostics. */
	uint8_t opcode;
	/* Not the one-byte map: 0F, 0F 38, 0F 3A, also through VEX, or an EVEX map. */
	bool two_byte;
	enum decode_map map;
	/* Encoded with a VEX (C4/C5) or EVEX (62) prefix. */
	bool vex;
	bool evex;
};

/*
 * Decode one 64-bit-mode instruction from at most available bytes. False when the bytes are
 * not a valid 64-bit instruction (opcodes invalid in 64-bit mode, undefined group members),
 * the instruction would be longer than 15 bytes, or more bytes are needed than available;
 * *out is then unspecified. Reads no byte past bytes[available - 1] nor past bytes[14].
 */
bool decode_instruction(const uint8_t *bytes, size_t available, struct decoded_instruction *out);

/* "jcc" "jmp" "call" "ret" "far" or "none", for diagnostics. */
const char *decode_branch_name(enum decode_branch branch);

#endif
