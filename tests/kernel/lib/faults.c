/* SPDX-License-Identifier: MIT */
/* Functions that fault on purpose, for the tests of isolation (tests/kernel/lib/faults.h). */
#include "tests/kernel/lib/faults.h"
#include "arch/x86/cpu.h"

#define UD2_SEARCH_BYTES 16 /* the UD2 is this close to the function's start */
#define OPCODE_UD2_FIRST 0x0f
#define OPCODE_UD2_SECOND 0x0b

void raise_invalid_opcode(void *arg)
{
	(void)arg;
	ud2();
}

bool is_ud2_in(void (*fn)(void *), uint64_t rip)
{
	const uint8_t *at = (const uint8_t *)rip;

	return rip >= (uint64_t)fn && rip < (uint64_t)fn + UD2_SEARCH_BYTES &&
	       at[0] == OPCODE_UD2_FIRST && at[1] == OPCODE_UD2_SECOND;
}

void write_unmapped(void *arg)
{
	*(volatile uint8_t *)arg = 1;
}
