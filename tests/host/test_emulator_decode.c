/* SPDX-License-Identifier: MIT */
/* Host tests of emulator/decode.c: tables of byte strings with their lengths and classes. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "emulator/decode.h"
#include "tests/host/host_test.h"

#define CASE_CAPACITY 24

struct decode_case {
	const char *name;
	uint8_t bytes[CASE_CAPACITY];
	size_t available;
	/* Expected; a case with invalid set expects decode_instruction() to return false. */
	bool invalid;
	unsigned int length;
	enum decode_branch branch;
	bool indirect;
	bool rep_string;
	bool two_byte;
};

/* The bytes of a case, and as many available: decode_instruction() sees nothing more. */
#define BYTES(...) .bytes = { __VA_ARGS__ }, .available = sizeof((const uint8_t[]){ __VA_ARGS__ })

/* Fifteen bytes that are not enough for an instruction: prefixes only. */
#define FIFTEEN_PREFIXES \
	0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66

static const struct decode_case decode_branch_cases[] = {
	{ "je rel8", BYTES(0x74, 0x05), .length = 2, .branch = DECODE_JCC },
	{ "jg rel8", BYTES(0x7f, 0xfe), .length = 2, .branch = DECODE_JCC },
	{ "jne rel32", BYTES(0x0f, 0x85, 0x78, 0x56, 0x34, 0x12), .length = 6, .branch = DECODE_JCC,
	  .two_byte = true },
	{ "jo rel32", BYTES(0x0f, 0x80, 0, 0, 0, 0), .length = 6, .branch = DECODE_JCC,
	  .two_byte = true },
	{ "jne rel32, 66 ignored (Intel 64)", BYTES(0x66, 0x0f, 0x85, 0, 0, 0, 0), .length = 7,
	  .branch = DECODE_JCC, .two_byte = true },
	{ "loopne", BYTES(0xe0, 0xfe), .length = 2, .branch = DECODE_JCC },
	{ "loope", BYTES(0xe1, 0xfe), .length = 2, .branch = DECODE_JCC },
	{ "loop", BYTES(0xe2, 0xfe), .length = 2, .branch = DECODE_JCC },
	{ "jrcxz", BYTES(0xe3, 0x10), .length = 2, .branch = DECODE_JCC },
	{ "jecxz (67)", BYTES(0x67, 0xe3, 0x10), .length = 3, .branch = DECODE_JCC },
	{ "jmp rel8", BYTES(0xeb, 0xfe), .length = 2, .branch = DECODE_JMP },
	{ "jmp rel32", BYTES(0xe9, 0x00, 0x01, 0x00, 0x00), .length = 5, .branch = DECODE_JMP },
	{ "call rel32", BYTES(0xe8, 0xfb, 0xff, 0xff, 0xff), .length = 5, .branch = DECODE_CALL },
	{ "call rel32, 66 ignored (Intel 64)", BYTES(0x66, 0xe8, 0, 0, 0, 0), .length = 6,
	  .branch = DECODE_CALL },
	{ "call rax", BYTES(0xff, 0xd0), .length = 2, .branch = DECODE_CALL, .indirect = true },
	{ "call [rax*8+disp32] (SIB, no base)", BYTES(0xff, 0x14, 0xc5, 0x78, 0x56, 0x34, 0x12),
	  .length = 7, .branch = DECODE_CALL, .indirect = true },
	{ "call [rsp+disp32]", BYTES(0xff, 0x94, 0x24, 0x80, 0x00, 0x00, 0x00), .length = 7,
	  .branch = DECODE_CALL, .indirect = true },
	{ "call [rip+disp32]", BYTES(0xff, 0x15, 0x10, 0x00, 0x00, 0x00), .length = 6,
	  .branch = DECODE_CALL, .indirect = true },
	{ "call far [rax]", BYTES(0xff, 0x18), .length = 2, .branch = DECODE_CALL,
	  .indirect = true },
	{ "jmp r11", BYTES(0x41, 0xff, 0xe3), .length = 3, .branch = DECODE_JMP, .indirect = true },
	{ "jmp [disp32] (SIB, no base, no index)", BYTES(0xff, 0x24, 0x25, 0x00, 0x10, 0x00, 0x00),
	  .length = 7, .branch = DECODE_JMP, .indirect = true },
	{ "jmp [rbx+rcx*8+disp8]", BYTES(0xff, 0x64, 0xcb, 0x08), .length = 4, .branch = DECODE_JMP,
	  .indirect = true },
	{ "notrack jmp rax", BYTES(0x3e, 0xff, 0xe0), .length = 3, .branch = DECODE_JMP,
	  .indirect = true },
	{ "jmp far [rsp]", BYTES(0xff, 0x2c, 0x24), .length = 3, .branch = DECODE_JMP,
	  .indirect = true },
	{ "rex.W jmp far [rax]", BYTES(0x48, 0xff, 0x28), .length = 3, .branch = DECODE_JMP,
	  .indirect = true },
	{ "ret", BYTES(0xc3), .length = 1, .branch = DECODE_RET },
	{ "repz ret", BYTES(0xf3, 0xc3), .length = 2, .branch = DECODE_RET },
	{ "ret imm16", BYTES(0xc2, 0x08, 0x00), .length = 3, .branch = DECODE_RET },
	{ "far ret", BYTES(0xcb), .length = 1, .branch = DECODE_RET },
	{ "far ret imm16", BYTES(0xca, 0x10, 0x00), .length = 3, .branch = DECODE_RET },
	{ "retfq", BYTES(0x48, 0xcb), .length = 2, .branch = DECODE_RET },
	{ "syscall", BYTES(0x0f, 0x05), .length = 2, .branch = DECODE_FAR, .two_byte = true },
	{ "sysret", BYTES(0x0f, 0x07), .length = 2, .branch = DECODE_FAR, .two_byte = true },
	{ "sysretq", BYTES(0x48, 0x0f, 0x07), .length = 3, .branch = DECODE_FAR, .two_byte = true },
	{ "sysenter", BYTES(0x0f, 0x34), .length = 2, .branch = DECODE_FAR, .two_byte = true },
	{ "sysexitq", BYTES(0x48, 0x0f, 0x35), .length = 3, .branch = DECODE_FAR,
	  .two_byte = true },
	{ "iret", BYTES(0xcf), .length = 1, .branch = DECODE_FAR },
	{ "iretq", BYTES(0x48, 0xcf), .length = 2, .branch = DECODE_FAR },
	{ "int3", BYTES(0xcc), .length = 1, .branch = DECODE_FAR },
	{ "int 0x80", BYTES(0xcd, 0x80), .length = 2, .branch = DECODE_FAR },
	{ "icebp", BYTES(0xf1), .length = 1, .branch = DECODE_FAR },
	{ "ud2 is not a branch", BYTES(0x0f, 0x0b), .length = 2, .two_byte = true },
	{ "ud1 is not a branch", BYTES(0x0f, 0xb9, 0xc0), .length = 3, .two_byte = true },
	{ "hlt", BYTES(0xf4), .length = 1 },
};

static const struct decode_case decode_prefix_cases[] = {
	{ "xchg ax,ax", BYTES(0x66, 0x90), .length = 2 },
	{ "pause", BYTES(0xf3, 0x90), .length = 2 },
	{ "data16 cs nopw [rax+rax+disp32]",
	  BYTES(0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00), .length = 10,
	  .two_byte = true },
	{ "lock cmpxchg [rdx],rcx", BYTES(0xf0, 0x48, 0x0f, 0xb1, 0x0a), .length = 5,
	  .two_byte = true },
	{ "mov rax,fs:[0x28]", BYTES(0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0x00, 0x00, 0x00),
	  .length = 9 },
	{ "mov rax,gs:[0]", BYTES(0x65, 0x48, 0x8b, 0x04, 0x25, 0x00, 0x00, 0x00, 0x00),
	  .length = 9 },
	{ "es ss ds segment prefixes", BYTES(0x26, 0x36, 0x3e, 0x8b, 0x00), .length = 5 },
	{ "addr32 mov eax,[eax]", BYTES(0x67, 0x8b, 0x00), .length = 3 },
	{ "mov rax,imm64", BYTES(0x48, 0xb8, 0xef, 0xcd, 0xab, 0x89, 0x67, 0x45, 0x23, 0x01),
	  .length = 10 },
	{ "mov r11,imm64", BYTES(0x49, 0xbb, 1, 2, 3, 4, 5, 6, 7, 8), .length = 10 },
	{ "mov eax,imm32", BYTES(0xb8, 1, 2, 3, 4), .length = 5 },
	{ "mov ax,imm16", BYTES(0x66, 0xb8, 0x34, 0x12), .length = 4 },
	{ "REX.W beats 66: mov rax,imm64", BYTES(0x66, 0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8),
	  .length = 11 },
	{ "a REX before a legacy prefix is ignored", BYTES(0x48, 0x66, 0xb8, 0x34, 0x12),
	  .length = 5 },
	{ "two REX: the last counts", BYTES(0x40, 0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8),
	  .length = 11 },
	{ "mov rax,simm32 (C7 with REX.W)", BYTES(0x48, 0xc7, 0xc0, 0xff, 0xff, 0xff, 0xff),
	  .length = 7 },
	{ "add rsp,imm32 (81 with REX.W)", BYTES(0x48, 0x81, 0xc4, 0x00, 0x01, 0x00, 0x00),
	  .length = 7 },
	{ "imul rax,rax,imm32 (69 with REX.W)", BYTES(0x48, 0x69, 0xc0, 0x10, 0x27, 0x00, 0x00),
	  .length = 7 },
	{ "add ax,imm16 (66 81 /0 iw)", BYTES(0x66, 0x81, 0xc0, 0x34, 0x12), .length = 5 },
	{ "add word [rax],imm16", BYTES(0x66, 0x81, 0x00, 0x34, 0x12), .length = 5 },
	{ "add rax,imm32 (66 and REX.W)", BYTES(0x66, 0x48, 0x81, 0xc0, 1, 2, 3, 4), .length = 8 },
	{ "mov word [rip+disp32],imm16",
	  BYTES(0x66, 0xc7, 0x05, 0x00, 0x00, 0x00, 0x00, 0x34, 0x12), .length = 9 },
	{ "push imm16", BYTES(0x66, 0x68, 0x34, 0x12), .length = 4 },
	{ "test ax,imm16", BYTES(0x66, 0xa9, 0x34, 0x12), .length = 4 },
	{ "rep movsb", BYTES(0xf3, 0xa4), .length = 2, .rep_string = true },
	{ "rep movsq", BYTES(0xf3, 0x48, 0xa5), .length = 3, .rep_string = true },
	{ "rep stosq", BYTES(0xf3, 0x48, 0xab), .length = 3, .rep_string = true },
	{ "rep lodsb", BYTES(0xf3, 0xac), .length = 2, .rep_string = true },
	{ "repe cmpsb", BYTES(0xf3, 0xa6), .length = 2, .rep_string = true },
	{ "repne scasb", BYTES(0xf2, 0xae), .length = 2, .rep_string = true },
	{ "rep insb", BYTES(0xf3, 0x6c), .length = 2, .rep_string = true },
	{ "rep outsd", BYTES(0xf3, 0x6f), .length = 2, .rep_string = true },
	{ "movsb without rep", BYTES(0xa4), .length = 1 },
	{ "popcnt (F3, not a string)", BYTES(0xf3, 0x0f, 0xb8, 0xc1), .length = 4,
	  .two_byte = true },
	{ "endbr64", BYTES(0xf3, 0x0f, 0x1e, 0xfa), .length = 4, .two_byte = true },
	{ "14 prefixes and a NOP: 15 bytes",
	  BYTES(0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66,
		0x90),
	  .length = 15 },
	{ "3 prefixes, mov [rsp+disp32],imm32 with REX.W: 15 bytes",
	  BYTES(0x64, 0x2e, 0x3e, 0x48, 0xc7, 0x84, 0x24, 1, 2, 3, 4, 5, 6, 7, 8), .length = 15 },
};

static const struct decode_case decode_operand_cases[] = {
	{ "mov eax,[rbp-8]", BYTES(0x8b, 0x45, 0xf8), .length = 3 },
	{ "mov eax,[rsp+8]", BYTES(0x8b, 0x44, 0x24, 0x08), .length = 4 },
	{ "mov eax,[rsp]", BYTES(0x8b, 0x04, 0x24), .length = 3 },
	{ "mov eax,[disp32]", BYTES(0x8b, 0x04, 0x25, 1, 2, 3, 4), .length = 7 },
	{ "mov eax,[rbp+disp32]", BYTES(0x8b, 0x85, 1, 2, 3, 4), .length = 6 },
	{ "mov eax,[rsp+disp32]", BYTES(0x8b, 0x84, 0x24, 1, 2, 3, 4), .length = 7 },
	{ "mov eax,[r13+rax+disp32] (SIB base 101, mod 00)",
	  BYTES(0x42, 0x8b, 0x04, 0x05, 1, 2, 3, 4), .length = 8 },
	{ "mov eax,[r12] (SIB)", BYTES(0x41, 0x8b, 0x04, 0x24), .length = 4 },
	{ "mov rax,[rip+disp32]", BYTES(0x48, 0x8b, 0x05, 0, 0, 0, 0), .length = 7 },
	{ "lea rcx,[rip+disp32]", BYTES(0x48, 0x8d, 0x0d, 0xf9, 0xff, 0xff, 0xff), .length = 7 },
	{ "mov dword [rip+disp32],imm32", BYTES(0xc7, 0x05, 1, 2, 3, 4, 5, 6, 7, 8), .length = 10 },
	{ "cmp byte [rip+disp32],imm8", BYTES(0x80, 0x3d, 1, 2, 3, 4, 0), .length = 7 },
	{ "mov eax,moffs64", BYTES(0xa1, 1, 2, 3, 4, 5, 6, 7, 8), .length = 9 },
	{ "mov moffs64,rax", BYTES(0x48, 0xa3, 1, 2, 3, 4, 5, 6, 7, 8), .length = 10 },
	{ "mov al,moffs32 (67)", BYTES(0x67, 0xa0, 1, 2, 3, 4), .length = 6 },
	{ "enter 16,0", BYTES(0xc8, 0x10, 0x00, 0x00), .length = 4 },
	{ "leave", BYTES(0xc9), .length = 1 },
	{ "test cl,1 (F6 /0 ib)", BYTES(0xf6, 0xc1, 0x01), .length = 3 },
	{ "neg al (F6 /3)", BYTES(0xf6, 0xd8), .length = 2 },
	{ "test eax,imm32 (F7 /0 iz)", BYTES(0xf7, 0xc0, 1, 2, 3, 4), .length = 6 },
	{ "test [rsp],imm32 (F7 /1 iz)", BYTES(0xf7, 0x0c, 0x24, 1, 2, 3, 4), .length = 7 },
	{ "test ax,imm16 (66 F7 /0 iw)", BYTES(0x66, 0xf7, 0xc0, 0x34, 0x12), .length = 5 },
	{ "not eax (F7 /2)", BYTES(0xf7, 0xd0), .length = 2 },
	{ "div qword [rax] (F7 /6)", BYTES(0x48, 0xf7, 0x30), .length = 3 },
	{ "shl rax,4", BYTES(0x48, 0xc1, 0xe0, 0x04), .length = 4 },
	{ "shr eax,cl", BYTES(0xd3, 0xe8), .length = 2 },
	{ "push imm8", BYTES(0x6a, 0x01), .length = 2 },
	{ "push imm32", BYTES(0x68, 1, 2, 3, 4), .length = 5 },
	{ "imul eax,ecx,imm8", BYTES(0x6b, 0xc1, 0x0a), .length = 3 },
	{ "in al,imm8", BYTES(0xe4, 0x60), .length = 2 },
	{ "out dx,al", BYTES(0xee), .length = 1 },
	{ "pop [rax] (8F /0)", BYTES(0x8f, 0x00), .length = 2 },
	{ "xbegin rel32", BYTES(0xc7, 0xf8, 1, 2, 3, 4), .length = 6 },
	{ "xabort imm8", BYTES(0xc6, 0xf8, 0x01), .length = 3 },
	{ "fldz", BYTES(0xd9, 0xee), .length = 2 },
	{ "fld qword [rsp]", BYTES(0xdd, 0x04, 0x24), .length = 3 },
	{ "fild qword [rsp+8]", BYTES(0xdf, 0x6c, 0x24, 0x08), .length = 4 },
	{ "fwait", BYTES(0x9b), .length = 1 },
	{ "mov rax,cr0", BYTES(0x0f, 0x20, 0xc0), .length = 3, .two_byte = true },
	{ "mov cr3,rax", BYTES(0x0f, 0x22, 0xd8), .length = 3, .two_byte = true },
	{ "mov dr7,rax", BYTES(0x0f, 0x23, 0xf8), .length = 3, .two_byte = true },
	{ "mov rax,dr0 with mod 00: still a register", BYTES(0x0f, 0x21, 0x05), .length = 3,
	  .two_byte = true },
	{ "swapgs", BYTES(0x0f, 0x01, 0xf8), .length = 3, .two_byte = true },
	{ "rdtscp", BYTES(0x0f, 0x01, 0xf9), .length = 3, .two_byte = true },
	{ "lgdt [rip+disp32]", BYTES(0x0f, 0x01, 0x15, 1, 2, 3, 4), .length = 7, .two_byte = true },
	{ "lidt [rsp]", BYTES(0x0f, 0x01, 0x1c, 0x24), .length = 4, .two_byte = true },
	{ "invlpg [rax]", BYTES(0x0f, 0x01, 0x38), .length = 3, .two_byte = true },
	{ "rdtsc", BYTES(0x0f, 0x31), .length = 2, .two_byte = true },
	{ "rdmsr", BYTES(0x0f, 0x32), .length = 2, .two_byte = true },
	{ "wrmsr", BYTES(0x0f, 0x30), .length = 2, .two_byte = true },
	{ "cpuid", BYTES(0x0f, 0xa2), .length = 2, .two_byte = true },
	{ "fxsave64 [rax]", BYTES(0x48, 0x0f, 0xae, 0x00), .length = 4, .two_byte = true },
	{ "fxrstor64 [rsp+8]", BYTES(0x48, 0x0f, 0xae, 0x4c, 0x24, 0x08), .length = 6,
	  .two_byte = true },
	{ "lfence", BYTES(0x0f, 0xae, 0xe8), .length = 3, .two_byte = true },
	{ "bt eax,5 (0F BA /4 ib)", BYTES(0x0f, 0xba, 0xe0, 0x05), .length = 4, .two_byte = true },
	{ "shld edx,eax,4", BYTES(0x0f, 0xa4, 0xc2, 0x04), .length = 4, .two_byte = true },
	{ "movzx eax,al", BYTES(0x0f, 0xb6, 0xc0), .length = 3, .two_byte = true },
	{ "bswap rax", BYTES(0x48, 0x0f, 0xc8), .length = 3, .two_byte = true },
	{ "emms", BYTES(0x0f, 0x77), .length = 2, .two_byte = true },
	{ "pshufd xmm0,xmm0,imm8", BYTES(0x66, 0x0f, 0x70, 0xc0, 0x1b), .length = 5,
	  .two_byte = true },
	{ "psrldq xmm0,8", BYTES(0x66, 0x0f, 0x73, 0xd8, 0x08), .length = 5, .two_byte = true },
	{ "movq xmm0,rax", BYTES(0x66, 0x48, 0x0f, 0x6e, 0xc0), .length = 5, .two_byte = true },
	{ "pshufb xmm0,xmm1 (0F 38)", BYTES(0x66, 0x0f, 0x38, 0x00, 0xc1), .length = 5,
	  .two_byte = true },
	{ "crc32 eax,ecx (0F 38)", BYTES(0xf2, 0x0f, 0x38, 0xf1, 0xc1), .length = 5,
	  .two_byte = true },
	{ "palignr xmm0,xmm1,8 (0F 3A)", BYTES(0x66, 0x0f, 0x3a, 0x0f, 0xc1, 0x08), .length = 6,
	  .two_byte = true },
	{ "pextrq rax,xmm0,1 (0F 3A)", BYTES(0x66, 0x48, 0x0f, 0x3a, 0x16, 0xc0, 0x01), .length = 7,
	  .two_byte = true },
	{ "vzeroupper (VEX, no ModRM)", BYTES(0xc5, 0xf8, 0x77), .length = 3, .two_byte = true },
	{ "vmovdqa ymm0,[rsp] (VEX2)", BYTES(0xc5, 0xfd, 0x6f, 0x04, 0x24), .length = 5,
	  .two_byte = true },
	{ "vpshufd xmm0,xmm0,imm8 (VEX2)", BYTES(0xc5, 0xf9, 0x70, 0xc0, 0x1b), .length = 5,
	  .two_byte = true },
	{ "vbroadcastss ymm0,[rip+disp32] (VEX3 0F38)",
	  BYTES(0xc4, 0xe2, 0x7d, 0x18, 0x05, 1, 2, 3, 4), .length = 9, .two_byte = true },
	{ "andn eax,eax,ecx (VEX3 0F38)", BYTES(0xc4, 0xe2, 0x78, 0xf2, 0xc1), .length = 5,
	  .two_byte = true },
	{ "rorx rax,rcx,5 (VEX3 0F3A)", BYTES(0xc4, 0xe3, 0xfb, 0xf0, 0xc1, 0x05), .length = 6,
	  .two_byte = true },
	{ "vmovups zmm0,[rsp] (EVEX)", BYTES(0x62, 0xf1, 0x7c, 0x48, 0x10, 0x04, 0x24), .length = 7,
	  .two_byte = true },
	{ "vmovdqa64 zmm0,[rip+disp32] (EVEX)",
	  BYTES(0x62, 0xf1, 0xfd, 0x48, 0x6f, 0x05, 1, 2, 3, 4), .length = 10, .two_byte = true },
	{ "vinsertf32x4 zmm0,zmm0,xmm1,1 (EVEX 0F3A)",
	  BYTES(0x62, 0xf3, 0x7d, 0x48, 0x18, 0xc1, 0x01), .length = 7, .two_byte = true },
};

static const struct decode_case decode_invalid_cases[] = {
	{ "push es", BYTES(0x06), .invalid = true },
	{ "pop es", BYTES(0x07), .invalid = true },
	{ "push cs", BYTES(0x0e), .invalid = true },
	{ "push ss", BYTES(0x16), .invalid = true },
	{ "pop ss", BYTES(0x17), .invalid = true },
	{ "push ds", BYTES(0x1e), .invalid = true },
	{ "pop ds", BYTES(0x1f), .invalid = true },
	{ "daa", BYTES(0x27), .invalid = true },
	{ "das", BYTES(0x2f), .invalid = true },
	{ "aaa", BYTES(0x37), .invalid = true },
	{ "aas", BYTES(0x3f), .invalid = true },
	{ "pusha", BYTES(0x60), .invalid = true },
	{ "popa", BYTES(0x61), .invalid = true },
	{ "82 alias of 80", BYTES(0x82, 0xc0, 0x01), .invalid = true },
	{ "call far ptr16:32", BYTES(0x9a, 1, 2, 3, 4, 5, 6), .invalid = true },
	{ "into", BYTES(0xce), .invalid = true },
	{ "aam", BYTES(0xd4, 0x0a), .invalid = true },
	{ "aad", BYTES(0xd5, 0x0a), .invalid = true },
	{ "salc", BYTES(0xd6), .invalid = true },
	{ "jmp far ptr16:32", BYTES(0xea, 1, 2, 3, 4, 5, 6), .invalid = true },
	{ "FE /2", BYTES(0xfe, 0xd0), .invalid = true },
	{ "FF /7", BYTES(0xff, 0xf8), .invalid = true },
	{ "call far to a register (FF /3, mod 11)", BYTES(0xff, 0xd8), .invalid = true },
	{ "jmp far to a register (FF /5, mod 11)", BYTES(0xff, 0xe8), .invalid = true },
	{ "8F /1 (XOP)", BYTES(0x8f, 0xc8, 0x00, 0x00), .invalid = true },
	{ "C6 /1", BYTES(0xc6, 0xc8, 0x00), .invalid = true },
	{ "C7 /1", BYTES(0xc7, 0xc8, 1, 2, 3, 4), .invalid = true },
	{ "3DNow!", BYTES(0x0f, 0x0f, 0xc0, 0x9e), .invalid = true },
	{ "0F 04", BYTES(0x0f, 0x04), .invalid = true },
	{ "mov tr (0F 24)", BYTES(0x0f, 0x24, 0xc0), .invalid = true },
	{ "0F A6", BYTES(0x0f, 0xa6, 0xc0), .invalid = true },
	{ "0F BA /0", BYTES(0x0f, 0xba, 0xc0, 0x05), .invalid = true },
	{ "66 before VEX", BYTES(0x66, 0xc5, 0xf8, 0x77), .invalid = true },
	{ "REX before VEX", BYTES(0x48, 0xc5, 0xf8, 0x77), .invalid = true },
	{ "VEX map 0", BYTES(0xc4, 0xe0, 0x7d, 0x18, 0xc0), .invalid = true },
	{ "EVEX with P1 bit 2 clear", BYTES(0x62, 0xf1, 0x78, 0x48, 0x10, 0xc0), .invalid = true },
	{ "empty", .available = 0, .invalid = true },
	{ "prefix only", BYTES(0x66), .invalid = true },
	{ "REX only", BYTES(0x48), .invalid = true },
	{ "0F only", BYTES(0x0f), .invalid = true },
	{ "call rel32 short by one", BYTES(0xe8, 0, 0, 0), .invalid = true },
	{ "mov rax,imm64 short by one", BYTES(0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7), .invalid = true },
	{ "SIB missing", BYTES(0x8b, 0x04), .invalid = true },
	{ "disp32 short", BYTES(0x8b, 0x80, 0, 0), .invalid = true },
	{ "VEX3 short", BYTES(0xc4, 0xe2), .invalid = true },
	{ "15 prefixes: 16 bytes with the NOP", BYTES(FIFTEEN_PREFIXES, 0x90), .invalid = true },
	{ "4 prefixes, mov [rsp+disp32],imm32 with REX.W: 16 bytes",
	  BYTES(0x64, 0x65, 0x2e, 0x3e, 0x48, 0xc7, 0x84, 0x24, 1, 2, 3, 4, 5, 6, 7, 8),
	  .invalid = true },
	{ "a 16-byte instruction with more bytes after it",
	  BYTES(FIFTEEN_PREFIXES, 0x90, 0x90, 0x90, 0x90, 0x90), .invalid = true },
};

/*
 * Decode from a heap copy of exactly case->available bytes, so that ASan reports a read past
 * them, and compare with the expected result.
 */
static void check_case(const struct decode_case *test_case)
{
	uint8_t *copy = malloc(test_case->available ? test_case->available : 1);
	struct decoded_instruction decoded;
	bool valid;

	if (!host_check(copy != NULL))
		return;
	memcpy(copy, test_case->bytes, test_case->available);
	valid = decode_instruction(copy, test_case->available, &decoded);
	free(copy);

	if (!host_checkf(valid != test_case->invalid, "%s: decode_instruction() returned %s",
			 test_case->name, valid ? "true" : "false") ||
	    !valid)
		return;
	host_checkf(decoded.length == test_case->length, "%s: length %u, expected %u",
		    test_case->name, decoded.length, test_case->length);
	host_checkf(decoded.branch == test_case->branch, "%s: branch %s, expected %s",
		    test_case->name, decode_branch_name(decoded.branch),
		    decode_branch_name(test_case->branch));
	host_checkf(decoded.indirect == test_case->indirect, "%s: indirect %d", test_case->name,
		    decoded.indirect);
	host_checkf(decoded.rep_string == test_case->rep_string, "%s: rep_string %d",
		    test_case->name, decoded.rep_string);
	host_checkf(decoded.two_byte == test_case->two_byte, "%s: two_byte %d", test_case->name,
		    decoded.two_byte);
}

/* Every valid case cut short by one or more bytes needs more bytes than it has. */
static void check_truncations(const struct decode_case *test_case)
{
	struct decoded_instruction decoded;

	if (test_case->invalid)
		return;
	for (size_t available = 0; available < test_case->length; available++) {
		uint8_t *copy = malloc(available ? available : 1);

		if (!host_check(copy != NULL))
			return;
		memcpy(copy, test_case->bytes, available);
		host_checkf(!decode_instruction(copy, available, &decoded),
			    "%s: decoded from only %zu bytes", test_case->name, available);
		free(copy);
	}
}

static void check_cases(const struct decode_case *cases, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		check_case(&cases[i]);
		check_truncations(&cases[i]);
	}
}

#define CHECK_CASES(cases) check_cases((cases), sizeof(cases) / sizeof((cases)[0]))

HOST_TEST(decode_branches_are_classified)
{
	CHECK_CASES(decode_branch_cases);
}

HOST_TEST(decode_prefixes_set_immediate_sizes_and_rep)
{
	CHECK_CASES(decode_prefix_cases);
}

HOST_TEST(decode_modrm_sib_displacements_and_immediates)
{
	CHECK_CASES(decode_operand_cases);
}

HOST_TEST(decode_rejects_invalid_truncated_and_overlong_bytes)
{
	CHECK_CASES(decode_invalid_cases);
}

/* The opcode field names the last opcode byte, whatever the prefixes and maps before it. */
HOST_TEST(decode_reports_the_last_opcode_byte)
{
	static const uint8_t syscall_bytes[] = { 0x0f, 0x05 };
	static const uint8_t pextrq_bytes[] = { 0x66, 0x48, 0x0f, 0x3a, 0x16, 0xc0, 0x01 };
	static const uint8_t rep_stosq_bytes[] = { 0xf3, 0x48, 0xab };
	struct decoded_instruction decoded;

	if (host_check(decode_instruction(syscall_bytes, sizeof(syscall_bytes), &decoded)))
		host_check_eq_u64(0x05, decoded.opcode);
	if (host_check(decode_instruction(pextrq_bytes, sizeof(pextrq_bytes), &decoded))) {
		host_check_eq_u64(0x16, decoded.opcode);
		host_check_eq_u64(DECODE_MAP_0F3A, decoded.map);
	}
	if (host_check(decode_instruction(rep_stosq_bytes, sizeof(rep_stosq_bytes), &decoded)))
		host_check_eq_u64(0xab, decoded.opcode);
}

/* Only the bytes of the instruction count: what follows it does not change its length. */
HOST_TEST(decode_ignores_bytes_after_the_instruction)
{
	static const uint8_t bytes[] = { 0xe8, 1,    2,	   3,	 4,    0x66, 0x66, 0x66, 0x66,
					 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66 };
	struct decoded_instruction decoded;

	if (host_check(decode_instruction(bytes, sizeof(bytes), &decoded)))
		host_check_eq_u64(5, decoded.length);
}

HOST_TEST(decode_branch_names)
{
	host_check_str("none", decode_branch_name(DECODE_NOT_BRANCH));
	host_check_str("jcc", decode_branch_name(DECODE_JCC));
	host_check_str("jmp", decode_branch_name(DECODE_JMP));
	host_check_str("call", decode_branch_name(DECODE_CALL));
	host_check_str("ret", decode_branch_name(DECODE_RET));
	host_check_str("far", decode_branch_name(DECODE_FAR));
}
