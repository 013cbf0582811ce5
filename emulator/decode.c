/* SPDX-License-Identifier: MIT */
/* x86-64 instruction length decoder and branch classifier: tables of SDM Vol. 2, Appendix A. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "emulator/decode.h"

/* Legacy prefixes (SDM Vol. 2, 2.1.1). */
#define PREFIX_OPERAND_SIZE 0x66
#define PREFIX_ADDRESS_SIZE 0x67
#define PREFIX_LOCK 0xf0
#define PREFIX_REPNE 0xf2
#define PREFIX_REP 0xf3
#define PREFIX_SEGMENT_ES 0x26
#define PREFIX_SEGMENT_CS 0x2e
#define PREFIX_SEGMENT_SS 0x36
#define PREFIX_SEGMENT_DS 0x3e
#define PREFIX_SEGMENT_FS 0x64
#define PREFIX_SEGMENT_GS 0x65

/* REX (SDM Vol. 2, 2.2.1): 0100WRXB, only directly before the opcode. */
#define REX_FIRST 0x40
#define REX_LAST 0x4f
#define REX_W 0x08

/* Escapes to the other opcode maps (SDM Vol. 2, A.2.1, A.3). */
#define ESCAPE_TWO_BYTE 0x0f
#define ESCAPE_0F38 0x38
#define ESCAPE_0F3A 0x3a
#define VEX_THREE_BYTE 0xc4
#define VEX_TWO_BYTE 0xc5
#define EVEX 0x62
#define OPCODE_FAR_RET_IMM16 0xca /* RET far Iw */
#define OPCODE_FAR_RET 0xcb /* RET far */

/* VEX.mmmmm (SDM Vol. 2, 2.3.6.1) and EVEX.mmm (2.7.1): the implied leading opcode bytes. */
#define VEX_MAP_SELECT_MASK 0x1f
#define EVEX_MAP_SELECT_MASK 0x07
#define VEX_MAP_0F 1
#define VEX_MAP_0F38 2
#define VEX_MAP_0F3A 3
#define EVEX_MAP_5 5
#define EVEX_MAP_6 6
/* EVEX P1 bit 2 is fixed at 1 (SDM Vol. 2, Table 2-30). */
#define EVEX_P1_FIXED_ONE 0x04

/* ModRM and SIB fields (SDM Vol. 2, 2.1.5). */
#define MODRM_MOD(modrm) ((modrm) >> 6)
#define MODRM_REG(modrm) (((modrm) >> 3) & 7)
#define MODRM_RM(modrm) ((modrm)&7)
#define SIB_BASE(sib) ((sib)&7)
#define MOD_INDIRECT 0
#define MOD_DISP8 1
#define MOD_DISP32 2
#define MOD_REGISTER 3
/* rm = 100 with mod != 11: a SIB byte follows. */
#define RM_SIB 4
/* rm = 101 with mod = 00: RIP + disp32; SIB base = 101 with mod = 00: no base, disp32. */
#define RM_DISP32 5

/* ModRM bytes that select one instruction of a group with mod = 11 (SDM Vol. 2, Table A-6). */
#define MODRM_XABORT_XBEGIN 0xf8

/*
 * How an opcode is encoded after its opcode bytes (SDM Vol. 2, A.2.1 and A.2.2). An opcode
 * without OPCODE_VALID does not exist in 64-bit mode.
 */
enum opcode_flag {
	OPCODE_VALID = 1 << 0,
	/* A ModRM byte follows, and the SIB and displacement it calls for. */
	OPCODE_MODRM = 1 << 1,
	/* 0F 20-23 (MOV to/from CR, DR): mod is ignored and taken as 11 (SDM Vol. 2, MOV). */
	OPCODE_MODRM_ALWAYS_REGISTER = 1 << 2,
	/* ib, or a rel8 branch displacement. */
	OPCODE_IMM8 = 1 << 3,
	/* iw. */
	OPCODE_IMM16 = 1 << 4,
	/* iz: a word with the 66 prefix and no REX.W, else a doubleword (also with REX.W). */
	OPCODE_IMMZ = 1 << 5,
	/* iv (B8+r): a word with 66 and no REX.W, a quadword with REX.W, else a doubleword. */
	OPCODE_IMMV = 1 << 6,
	/*
	 * rel32 of E8, E9, 0F 80-8F: 64-bit mode forces a 64-bit operand size on near branches,
	 * and Intel 64 ignores the 66 prefix on them (SDM Vol. 2, JMP, CALL, Jcc).
	 */
	OPCODE_REL32 = 1 << 7,
	/* A0-A3: a quadword offset, a doubleword one with 67 (SDM Vol. 2, 2.2.1.4). */
	OPCODE_MOFFS = 1 << 8,
	/* MOVS, CMPS, STOS, LODS, SCAS, INS, OUTS: F2/F3 make them repeat. */
	OPCODE_STRING = 1 << 9,
	/* ModRM.reg picks the instruction: decode_group() decides validity and operands. */
	OPCODE_GROUP = 1 << 10,
};

struct opcode_info {
	uint16_t flags;
	uint8_t branch; /* enum decode_branch */
};

#define VALID(operands)                                                          \
	{                                                                        \
		.flags = OPCODE_VALID | (operands), .branch = DECODE_NOT_BRANCH, \
	}
#define BRANCH(operands, kind)                                        \
	{                                                             \
		.flags = OPCODE_VALID | (operands), .branch = (kind), \
	}
#define NO_OPERANDS VALID(0)

/*
 * The one-byte opcode map in 64-bit mode (SDM Vol. 2, Table A-2). Missing entries are invalid
 * in 64-bit mode: 06 07 0E 16 17 1E 1F 27 2F 37 3F 60 61 82 9A CE D4 D5 D6 EA. Prefixes, REX,
 * 0F, and the VEX/EVEX bytes C4 C5 62 are handled before this table is consulted.
 */
static const struct opcode_info one_byte_map[256] = {
	[0x00 ... 0x03] = VALID(OPCODE_MODRM), /* ADD Eb,Gb Ev,Gv Gb,Eb Gv,Ev */
	[0x04] = VALID(OPCODE_IMM8), /* ADD AL,Ib */
	[0x05] = VALID(OPCODE_IMMZ), /* ADD rAX,Iz */
	[0x08 ... 0x0b] = VALID(OPCODE_MODRM), /* OR Eb,Gb Ev,Gv Gb,Eb Gv,Ev */
	[0x0c] = VALID(OPCODE_IMM8), /* OR AL,Ib */
	[0x0d] = VALID(OPCODE_IMMZ), /* OR rAX,Iz */
	[0x10 ... 0x13] = VALID(OPCODE_MODRM), /* ADC Eb,Gb Ev,Gv Gb,Eb Gv,Ev */
	[0x14] = VALID(OPCODE_IMM8), /* ADC AL,Ib */
	[0x15] = VALID(OPCODE_IMMZ), /* ADC rAX,Iz */
	[0x18 ... 0x1b] = VALID(OPCODE_MODRM), /* SBB Eb,Gb Ev,Gv Gb,Eb Gv,Ev */
	[0x1c] = VALID(OPCODE_IMM8), /* SBB AL,Ib */
	[0x1d] = VALID(OPCODE_IMMZ), /* SBB rAX,Iz */
	[0x20 ... 0x23] = VALID(OPCODE_MODRM), /* AND Eb,Gb Ev,Gv Gb,Eb Gv,Ev */
	[0x24] = VALID(OPCODE_IMM8), /* AND AL,Ib */
	[0x25] = VALID(OPCODE_IMMZ), /* AND rAX,Iz */
	[0x28 ... 0x2b] = VALID(OPCODE_MODRM), /* SUB Eb,Gb Ev,Gv Gb,Eb Gv,Ev */
	[0x2c] = VALID(OPCODE_IMM8), /* SUB AL,Ib */
	[0x2d] = VALID(OPCODE_IMMZ), /* SUB rAX,Iz */
	[0x30 ... 0x33] = VALID(OPCODE_MODRM), /* XOR Eb,Gb Ev,Gv Gb,Eb Gv,Ev */
	[0x34] = VALID(OPCODE_IMM8), /* XOR AL,Ib */
	[0x35] = VALID(OPCODE_IMMZ), /* XOR rAX,Iz */
	[0x38 ... 0x3b] = VALID(OPCODE_MODRM), /* CMP Eb,Gb Ev,Gv Gb,Eb Gv,Ev */
	[0x3c] = VALID(OPCODE_IMM8), /* CMP AL,Ib */
	[0x3d] = VALID(OPCODE_IMMZ), /* CMP rAX,Iz */
	[0x50 ... 0x5f] = NO_OPERANDS, /* PUSH, POP r64 */
	[0x63] = VALID(OPCODE_MODRM), /* MOVSXD */
	[0x68] = VALID(OPCODE_IMMZ), /* PUSH Iz */
	[0x69] = VALID(OPCODE_MODRM | OPCODE_IMMZ), /* IMUL Gv,Ev,Iz */
	[0x6a] = VALID(OPCODE_IMM8), /* PUSH Ib */
	[0x6b] = VALID(OPCODE_MODRM | OPCODE_IMM8), /* IMUL Gv,Ev,Ib */
	[0x6c ... 0x6f] = VALID(OPCODE_STRING), /* INS, OUTS */
	[0x70 ... 0x7f] = BRANCH(OPCODE_IMM8, DECODE_JCC), /* Jcc rel8 */
	[0x80] = VALID(OPCODE_MODRM | OPCODE_IMM8), /* group 1 Eb,Ib */
	[0x81] = VALID(OPCODE_MODRM | OPCODE_IMMZ), /* group 1 Ev,Iz */
	[0x83] = VALID(OPCODE_MODRM | OPCODE_IMM8), /* group 1 Ev,Ib */
	[0x84 ... 0x8e] = VALID(OPCODE_MODRM), /* TEST, XCHG, MOV, MOV Sreg, LEA */
	[0x8f] = VALID(OPCODE_MODRM | OPCODE_GROUP), /* group 1A: POP Ev */
	[0x90 ... 0x99] = NO_OPERANDS, /* XCHG, NOP, PAUSE, CBW, CWD */
	[0x9b ... 0x9f] = NO_OPERANDS, /* FWAIT, PUSHF, POPF, SAHF, LAHF */
	[0xa0 ... 0xa3] = VALID(OPCODE_MOFFS), /* MOV AL/rAX <-> moffs */
	[0xa4 ... 0xa7] = VALID(OPCODE_STRING), /* MOVS, CMPS */
	[0xa8] = VALID(OPCODE_IMM8), /* TEST AL,Ib */
	[0xa9] = VALID(OPCODE_IMMZ), /* TEST rAX,Iz */
	[0xaa ... 0xaf] = VALID(OPCODE_STRING), /* STOS, LODS, SCAS */
	[0xb0 ... 0xb7] = VALID(OPCODE_IMM8), /* MOV r8,Ib */
	[0xb8 ... 0xbf] = VALID(OPCODE_IMMV), /* MOV r,Iv */
	[0xc0 ... 0xc1] = VALID(OPCODE_MODRM | OPCODE_IMM8), /* group 2 shifts by Ib */
	[0xc2] = BRANCH(OPCODE_IMM16, DECODE_RET), /* RET Iw */
	[0xc3] = BRANCH(0, DECODE_RET), /* RET */
	[0xc6] = VALID(OPCODE_MODRM | OPCODE_IMM8 | OPCODE_GROUP), /* group 11: MOV Eb,Ib */
	[0xc7] = VALID(OPCODE_MODRM | OPCODE_IMMZ | OPCODE_GROUP), /* group 11: MOV Ev,Iz */
	[0xc8] = VALID(OPCODE_IMM16 | OPCODE_IMM8), /* ENTER Iw,Ib */
	[0xc9] = NO_OPERANDS, /* LEAVE */
	[0xca] = BRANCH(OPCODE_IMM16, DECODE_RET), /* far RET Iw */
	[0xcb] = BRANCH(0, DECODE_RET), /* far RET */
	[0xcc] = BRANCH(0, DECODE_FAR), /* INT3 */
	[0xcd] = BRANCH(OPCODE_IMM8, DECODE_FAR), /* INT Ib */
	[0xcf] = BRANCH(0, DECODE_FAR), /* IRET, IRETQ */
	[0xd0 ... 0xd3] = VALID(OPCODE_MODRM), /* group 2 shifts by 1, CL */
	[0xd7] = NO_OPERANDS, /* XLAT */
	[0xd8 ... 0xdf] = VALID(OPCODE_MODRM), /* x87 escapes */
	[0xe0 ... 0xe3] = BRANCH(OPCODE_IMM8, DECODE_JCC), /* LOOPNE, LOOPE, LOOP, JRCXZ */
	[0xe4 ... 0xe7] = VALID(OPCODE_IMM8), /* IN, OUT Ib */
	[0xe8] = BRANCH(OPCODE_REL32, DECODE_CALL), /* CALL rel32 */
	[0xe9] = BRANCH(OPCODE_REL32, DECODE_JMP), /* JMP rel32 */
	[0xeb] = BRANCH(OPCODE_IMM8, DECODE_JMP), /* JMP rel8 */
	[0xec ... 0xef] = NO_OPERANDS, /* IN, OUT DX */
	[0xf1] = BRANCH(0, DECODE_FAR), /* INT1 (ICEBP) */
	[0xf4 ... 0xf5] = NO_OPERANDS, /* HLT, CMC */
	[0xf6] = VALID(OPCODE_MODRM | OPCODE_IMM8 | OPCODE_GROUP), /* group 3 Eb */
	[0xf7] = VALID(OPCODE_MODRM | OPCODE_IMMZ | OPCODE_GROUP), /* group 3 Ev */
	[0xf8 ... 0xfd] = NO_OPERANDS, /* CLC, STC, CLI, STI, CLD, STD */
	[0xfe] = VALID(OPCODE_MODRM | OPCODE_GROUP), /* group 4: INC, DEC Eb */
	[0xff] = VALID(OPCODE_MODRM | OPCODE_GROUP), /* group 5: INC, DEC, CALL, JMP, PUSH */
};

/*
 * The two-byte opcode map, 0F xx (SDM Vol. 2, Table A-3). Mandatory prefixes (66, F2, F3)
 * select among instructions of one opcode without changing its length. Missing entries are
 * invalid: 0F 04 0A 0C 24-27 36 39 3B-3F 7A 7B A6 A7, and 0E 0F (AMD 3DNow!, not supported).
 */
static const struct opcode_info two_byte_map[256] = {
	[0x00 ... 0x03] = VALID(OPCODE_MODRM), /* groups 6, 7 (LGDT, SWAPGS, ...), LAR, LSL */
	[0x05] = BRANCH(0, DECODE_FAR), /* SYSCALL */
	[0x06] = NO_OPERANDS, /* CLTS */
	[0x07] = BRANCH(0, DECODE_FAR), /* SYSRET */
	[0x08 ... 0x09] = NO_OPERANDS, /* INVD, WBINVD */
	[0x0b] = NO_OPERANDS, /* UD2 */
	[0x0d] = VALID(OPCODE_MODRM), /* PREFETCHW */
	[0x10 ... 0x1f] = VALID(OPCODE_MODRM), /* SSE moves, prefetch, hint NOPs, ENDBR64 */
	[0x20 ... 0x23] = VALID(OPCODE_MODRM | OPCODE_MODRM_ALWAYS_REGISTER), /* MOV CR, DR */
	[0x28 ... 0x2f] = VALID(OPCODE_MODRM), /* SSE */
	[0x30 ... 0x33] = NO_OPERANDS, /* WRMSR, RDTSC, RDMSR, RDPMC */
	[0x34] = BRANCH(0, DECODE_FAR), /* SYSENTER */
	[0x35] = BRANCH(0, DECODE_FAR), /* SYSEXIT */
	[0x37] = NO_OPERANDS, /* GETSEC */
	[0x40 ... 0x4f] = VALID(OPCODE_MODRM), /* CMOVcc */
	[0x50 ... 0x6f] = VALID(OPCODE_MODRM), /* SSE, MMX */
	[0x70 ... 0x73] = VALID(OPCODE_MODRM | OPCODE_IMM8), /* PSHUF*, groups 12-14 */
	[0x74 ... 0x76] = VALID(OPCODE_MODRM), /* PCMPEQ* */
	[0x77] = NO_OPERANDS, /* EMMS */
	[0x78 ... 0x79] = VALID(OPCODE_MODRM), /* VMREAD, VMWRITE */
	[0x7c ... 0x7f] = VALID(OPCODE_MODRM), /* SSE */
	[0x80 ... 0x8f] = BRANCH(OPCODE_REL32, DECODE_JCC), /* Jcc rel32 */
	[0x90 ... 0x9f] = VALID(OPCODE_MODRM), /* SETcc */
	[0xa0 ... 0xa2] = NO_OPERANDS, /* PUSH FS, POP FS, CPUID */
	[0xa3] = VALID(OPCODE_MODRM), /* BT */
	[0xa4] = VALID(OPCODE_MODRM | OPCODE_IMM8), /* SHLD Ib */
	[0xa5] = VALID(OPCODE_MODRM), /* SHLD CL */
	[0xa8 ... 0xaa] = NO_OPERANDS, /* PUSH GS, POP GS, RSM */
	[0xab] = VALID(OPCODE_MODRM), /* BTS */
	[0xac] = VALID(OPCODE_MODRM | OPCODE_IMM8), /* SHRD Ib */
	[0xad ... 0xaf] = VALID(OPCODE_MODRM), /* SHRD CL, group 15 (FXSAVE, ...), IMUL */
	[0xb0 ... 0xb9] = VALID(OPCODE_MODRM), /* CMPXCHG, LSS, BTR, ..., MOVZX, POPCNT, UD1 */
	[0xba] = VALID(OPCODE_MODRM | OPCODE_IMM8 | OPCODE_GROUP), /* group 8: BT* Ev,Ib */
	[0xbb ... 0xc1] = VALID(OPCODE_MODRM), /* BTC, BSF, BSR, MOVSX, XADD */
	[0xc2] = VALID(OPCODE_MODRM | OPCODE_IMM8), /* CMPPS */
	[0xc3] = VALID(OPCODE_MODRM), /* MOVNTI */
	[0xc4 ... 0xc6] = VALID(OPCODE_MODRM | OPCODE_IMM8), /* PINSRW, PEXTRW, SHUFPS */
	[0xc7] = VALID(OPCODE_MODRM), /* group 9: CMPXCHG16B, RDRAND, RDSEED, RDPID */
	[0xc8 ... 0xcf] = NO_OPERANDS, /* BSWAP */
	[0xd0 ... 0xff] = VALID(OPCODE_MODRM), /* SSE, MMX, UD0 */
};

/* The 0F 38 map takes a ModRM and no immediate; the 0F 3A map a ModRM and an ib (A.3). */
static const struct opcode_info map_0f38_info = VALID(OPCODE_MODRM);
static const struct opcode_info map_0f3a_info = VALID(OPCODE_MODRM | OPCODE_IMM8);

/* Bytes still unread, up to the smaller of what the caller has and the 15-byte limit. */
struct byte_reader {
	const uint8_t *bytes;
	size_t limit;
	size_t position;
};

static bool read_byte(struct byte_reader *reader, uint8_t *byte)
{
	if (reader->position >= reader->limit)
		return false;
	*byte = reader->bytes[reader->position++];
	return true;
}

static bool skip_bytes(struct byte_reader *reader, size_t count)
{
	if (count > reader->limit - reader->position)
		return false;
	reader->position += count;
	return true;
}

static bool is_legacy_prefix(uint8_t byte)
{
	switch (byte) {
	case PREFIX_OPERAND_SIZE:
	case PREFIX_ADDRESS_SIZE:
	case PREFIX_LOCK:
	case PREFIX_REPNE:
	case PREFIX_REP:
	case PREFIX_SEGMENT_ES:
	case PREFIX_SEGMENT_CS:
	case PREFIX_SEGMENT_SS:
	case PREFIX_SEGMENT_DS:
	case PREFIX_SEGMENT_FS:
	case PREFIX_SEGMENT_GS:
		return true;
	default:
		return false;
	}
}

/*
 * Group opcodes whose ModRM.reg selects the instruction (SDM Vol. 2, Table A-6): drop the
 * immediate or set the branch kind that the selected member has. False for undefined members.
 */
static bool decode_group(enum decode_map map, uint8_t opcode, uint8_t modrm,
			 struct opcode_info *info, bool *indirect, bool *far)
{
	unsigned int reg = MODRM_REG(modrm);
	bool register_operand = MODRM_MOD(modrm) == MOD_REGISTER;

	if (map == DECODE_MAP_0F)
		return opcode != 0xba || reg >= 4; /* group 8: BT, BTS, BTR, BTC are /4-/7 */

	switch (opcode) {
	case 0x8f: /* group 1A: POP is /0; other members are AMD XOP */
		return reg == 0;
	case 0xc6: /* group 11: MOV /0, XABORT Ib */
	case 0xc7: /* group 11: MOV /0, XBEGIN rel16/32 */
		return reg == 0 || modrm == MODRM_XABORT_XBEGIN;
	case 0xf6: /* group 3: TEST /0 /1 take the immediate; NOT, NEG, MUL, DIV do not */
	case 0xf7:
		if (reg >= 2)
			info->flags &= (uint16_t) ~(OPCODE_IMM8 | OPCODE_IMMZ);
		return true;
	case 0xfe: /* group 4: INC, DEC */
		return reg <= 1;
	case 0xff: /* group 5 */
		switch (reg) {
		case 2: /* CALL near Ev */
		case 3: /* CALL far Mp */
			info->branch = DECODE_CALL;
			*indirect = true;
			*far = reg == 3;
			return reg == 2 || !register_operand;
		case 4: /* JMP near Ev */
		case 5: /* JMP far Mp */
			info->branch = DECODE_JMP;
			*indirect = true;
			*far = reg == 5;
			return reg == 4 || !register_operand;
		case 7:
			return false;
		default: /* INC, DEC, PUSH */
			return true;
		}
	default:
		return true;
	}
}

/* Whether an opcode in VEX/EVEX map 0F has an ib: the same ones as in the legacy 0F map. */
static bool vex_map_0f_has_imm8(uint8_t opcode)
{
	return (opcode >= 0x70 && opcode <= 0x73) || opcode == 0xc2 ||
	       (opcode >= 0xc4 && opcode <= 0xc6);
}

/*
 * VEX (C4, C5: SDM Vol. 2, 2.3) and EVEX (62: 2.7) in 64-bit mode, where the former LES, LDS
 * and BOUND encodings are invalid. The prefix byte is already read. Fills the map and the
 * opcode's operand encoding.
 */
static bool decode_vex_prefix(struct byte_reader *reader, uint8_t prefix, enum decode_map *map,
			      uint8_t *opcode, struct opcode_info *info)
{
	uint8_t payload[3];
	unsigned int map_select;

	if (prefix == VEX_TWO_BYTE) {
		if (!read_byte(reader, &payload[0]))
			return false;
		map_select = VEX_MAP_0F;
	} else if (prefix == VEX_THREE_BYTE) {
		if (!read_byte(reader, &payload[0]) || !read_byte(reader, &payload[1]))
			return false;
		map_select = payload[0] & VEX_MAP_SELECT_MASK;
	} else {
		for (size_t i = 0; i < 3; i++) {
			if (!read_byte(reader, &payload[i]))
				return false;
		}
		if (!(payload[1] & EVEX_P1_FIXED_ONE))
			return false;
		map_select = payload[0] & EVEX_MAP_SELECT_MASK;
	}
	if (!read_byte(reader, opcode))
		return false;

	*info = (struct opcode_info)VALID(OPCODE_MODRM);
	switch (map_select) {
	case VEX_MAP_0F:
		*map = DECODE_MAP_0F;
		/* VZEROUPPER, VZEROALL have no ModRM; EVEX has no 0F 77. */
		if (*opcode == 0x77 && prefix != EVEX)
			info->flags &= (uint16_t)~OPCODE_MODRM;
		if (vex_map_0f_has_imm8(*opcode))
			info->flags |= OPCODE_IMM8;
		return true;
	case VEX_MAP_0F38:
		*map = DECODE_MAP_0F38;
		return true;
	case VEX_MAP_0F3A:
		*map = DECODE_MAP_0F3A;
		info->flags |= OPCODE_IMM8;
		return true;
	case EVEX_MAP_5:
		*map = DECODE_MAP_EVEX_5;
		return prefix == EVEX;
	case EVEX_MAP_6:
		*map = DECODE_MAP_EVEX_6;
		return prefix == EVEX;
	default:
		return false;
	}
}

/* Skip the SIB byte and displacement that a ModRM byte calls for (SDM Vol. 2, Table 2-2). */
static bool skip_modrm_operand(struct byte_reader *reader, uint8_t modrm)
{
	unsigned int mod = MODRM_MOD(modrm);
	size_t displacement = 0;

	if (mod == MOD_REGISTER)
		return true;
	if (MODRM_RM(modrm) == RM_SIB) {
		uint8_t sib;

		if (!read_byte(reader, &sib))
			return false;
		if (mod == MOD_INDIRECT && SIB_BASE(sib) == RM_DISP32)
			displacement = 4;
	} else if (mod == MOD_INDIRECT && MODRM_RM(modrm) == RM_DISP32) {
		displacement = 4; /* RIP-relative */
	}
	if (mod == MOD_DISP8)
		displacement = 1;
	else if (mod == MOD_DISP32)
		displacement = 4;
	return skip_bytes(reader, displacement);
}

/* The immediate and displacement bytes after ModRM (SDM Vol. 2, A.2.2 operand types). */
static size_t immediate_size(uint16_t flags, bool operand_size_prefix, bool rex_w,
			     bool address_size_prefix)
{
	size_t size = 0;

	if (flags & OPCODE_IMM8)
		size += 1;
	if (flags & OPCODE_IMM16)
		size += 2;
	if (flags & OPCODE_REL32)
		size += 4;
	if (flags & OPCODE_IMMZ)
		size += operand_size_prefix && !rex_w ? 2 : 4;
	if (flags & OPCODE_IMMV)
		size += rex_w ? 8 : operand_size_prefix ? 2 : 4;
	if (flags & OPCODE_MOFFS)
		size += address_size_prefix ? 4 : 8;
	return size;
}

bool decode_instruction(const uint8_t *bytes, size_t available, struct decoded_instruction *out)
{
	struct byte_reader reader = {
		.bytes = bytes,
		.limit = available < DECODE_MAX_LENGTH ? available : DECODE_MAX_LENGTH,
	};
	bool operand_size_prefix = false, address_size_prefix = false;
	bool rep_prefix = false, lock_prefix = false;
	uint8_t rex = 0, opcode;
	enum decode_map map = DECODE_MAP_ONE_BYTE;
	struct opcode_info info;
	bool indirect = false, far = false, vex = false, evex = false;

	/* Legacy prefixes in any order; a REX that a legacy prefix follows is ignored. */
	for (;;) {
		if (!read_byte(&reader, &opcode))
			return false;
		if (opcode >= REX_FIRST && opcode <= REX_LAST) {
			rex = opcode;
			continue;
		}
		if (!is_legacy_prefix(opcode))
			break;
		rex = 0;
		if (opcode == PREFIX_OPERAND_SIZE)
			operand_size_prefix = true;
		else if (opcode == PREFIX_ADDRESS_SIZE)
			address_size_prefix = true;
		else if (opcode == PREFIX_REP || opcode == PREFIX_REPNE)
			rep_prefix = true;
		else if (opcode == PREFIX_LOCK)
			lock_prefix = true;
	}

	if (opcode == ESCAPE_TWO_BYTE) {
		if (!read_byte(&reader, &opcode))
			return false;
		if (opcode == ESCAPE_0F38) {
			map = DECODE_MAP_0F38;
			info = map_0f38_info;
		} else if (opcode == ESCAPE_0F3A) {
			map = DECODE_MAP_0F3A;
			info = map_0f3a_info;
		} else {
			map = DECODE_MAP_0F;
			info = two_byte_map[opcode];
		}
		if (map != DECODE_MAP_0F && !read_byte(&reader, &opcode))
			return false;
	} else if (opcode == VEX_TWO_BYTE || opcode == VEX_THREE_BYTE || opcode == EVEX) {
		/* 66, F2, F3, LOCK or REX before VEX/EVEX is #UD (SDM Vol. 2, 2.3.2). */
		if (operand_size_prefix || rep_prefix || lock_prefix || rex)
			return false;
		evex = opcode == EVEX;
		vex = !evex;
		if (!decode_vex_prefix(&reader, opcode, &map, &opcode, &info))
			return false;
	} else {
		info = one_byte_map[opcode];
	}
	if (!(info.flags & OPCODE_VALID))
		return false;

	if (info.flags & OPCODE_MODRM) {
		uint8_t modrm;

		if (!read_byte(&reader, &modrm))
			return false;
		if ((info.flags & OPCODE_GROUP) &&
		    !decode_group(map, opcode, modrm, &info, &indirect, &far))
			return false;
		if (!(info.flags & OPCODE_MODRM_ALWAYS_REGISTER) &&
		    !skip_modrm_operand(&reader, modrm))
			return false;
	}
	if (!skip_bytes(&reader, immediate_size(info.flags, operand_size_prefix, rex & REX_W,
						address_size_prefix)))
		return false;

	out->length = (unsigned int)reader.position;
	out->branch = (enum decode_branch)info.branch;
	out->indirect = indirect;
	out->far = far || (map == DECODE_MAP_ONE_BYTE && !vex && !evex &&
			   (opcode == OPCODE_FAR_RET_IMM16 || opcode == OPCODE_FAR_RET));
	out->rep_string = rep_prefix && map == DECODE_MAP_ONE_BYTE && !vex && !evex &&
			  (info.flags & OPCODE_STRING);
	out->opcode = opcode;
	out->two_byte = map != DECODE_MAP_ONE_BYTE;
	out->map = map;
	out->vex = vex;
	out->evex = evex;
	return true;
}

const char *decode_branch_name(enum decode_branch branch)
{
	switch (branch) {
	case DECODE_JCC:
		return "jcc";
	case DECODE_JMP:
		return "jmp";
	case DECODE_CALL:
		return "call";
	case DECODE_RET:
		return "ret";
	case DECODE_FAR:
		return "far";
	case DECODE_NOT_BRANCH:
		break;
	}
	return "none";
}
