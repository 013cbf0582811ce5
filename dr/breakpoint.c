/* SPDX-License-Identifier: MIT */
/* Breakpoint validation and the DR7 encoder and decoder (SDM Vol. 3 §18.2.4-18.2.5). */
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/debugreg.h"
#include "dr/breakpoint.h"

#define DR7_FIELD_MASK 0xful
#define CANONICAL_SHIFT 47

static const char *const error_names[DR_ERROR_COUNT] = {
	[DR_OK] = "ok",
	[DR_ERROR_TYPE] = "unknown breakpoint type",
	[DR_ERROR_LENGTH] = "length must be 1, 2, 4 or 8",
	[DR_ERROR_EXECUTE_LENGTH] = "execute breakpoints must have length 1",
	[DR_ERROR_ALIGNMENT] = "address not aligned to the length",
	[DR_ERROR_NON_CANONICAL] = "address not canonical",
	[DR_ERROR_KERNEL_ADDRESS] = "a user task may watch only user addresses",
	[DR_ERROR_IO_NEEDS_DE] = "I/O breakpoints need CR4.DE",
	[DR_ERROR_IO_PORT] = "I/O breakpoints take a port below 0x10000, length 1, 2 or 4, "
			     "from the kernel",
	[DR_ERROR_NO_SLOT] = "no debug register left for this request",
	[DR_ERROR_NOT_INSTALLED] = "no breakpoint in that slot",
	[DR_ERROR_NO_MEMORY] = "out of memory",
	[DR_ERROR_UNSUPPORTED] = "not supported here",
	[DR_ERROR_NO_CPU] = "no such CPU online",
	[DR_ERROR_DEBUG_MEMORY] = "the #DB handler uses that memory",
	[DR_ERROR_NO_TASK] = "no live task has that index",
	[DR_ERROR_NEEDS_BPEXT] = "a range breakpoint needs the breakpoint address masks "
				 "(CPUID 0x80000001 ECX[26] BPEXT)",
};

const char *dr_error_name(enum dr_error error)
{
	return (unsigned int)error < DR_ERROR_COUNT ? error_names[error] : "unknown error";
}

static bool is_canonical(uint64_t address)
{
	uint64_t upper = address >> CANONICAL_SHIFT;

	return upper == 0 || upper == (UINT64_MAX >> CANONICAL_SHIFT);
}

enum dr_error dr_validate(const struct dr_breakpoint *breakpoint, enum dr_requester requester,
			  bool io_allowed)
{
	unsigned int length = breakpoint->length;
	uint64_t address = breakpoint->address;

	if ((unsigned int)breakpoint->type > DR_TYPE_READ_WRITE)
		return DR_ERROR_TYPE;
	if (length != 1 && length != 2 && length != 4 && length != 8)
		return DR_ERROR_LENGTH;
	if (breakpoint->type == DR_TYPE_EXECUTE && length != 1)
		return DR_ERROR_EXECUTE_LENGTH;
	if (address & (length - 1))
		return DR_ERROR_ALIGNMENT;
	if (breakpoint->type == DR_TYPE_IO) {
		if (requester == DR_REQUESTER_USER || length == 8 || address >= DR_IO_PORT_LIMIT)
			return DR_ERROR_IO_PORT;
		return io_allowed ? DR_OK : DR_ERROR_IO_NEEDS_DE;
	}
	if (!is_canonical(address))
		return DR_ERROR_NON_CANONICAL;
	/* Written so that it cannot wrap: address + length overflows at the top of memory. */
	if (requester == DR_REQUESTER_USER &&
	    (address >= DR_USER_ADDRESS_LIMIT || length > DR_USER_ADDRESS_LIMIT - address))
		return DR_ERROR_KERNEL_ADDRESS;
	return DR_OK;
}

enum dr_error dr_validate_ranges(const struct dr_breakpoint *breakpoint,
				 const struct dr_range *ranges, unsigned int count)
{
	/* Cannot wrap: a valid breakpoint is aligned to its length. */
	uint64_t last = breakpoint->address + breakpoint->length - 1;

	if (breakpoint->type == DR_TYPE_IO)
		return DR_OK;
	for (unsigned int i = 0; i < count; i++)
		if (breakpoint->address <= ranges[i].last && last >= ranges[i].first)
			return DR_ERROR_DEBUG_MEMORY;
	return DR_OK;
}

static unsigned long length_field(unsigned int length)
{
	switch (length) {
	case 2:
		return DR7_LEN_2;
	case 4:
		return DR7_LEN_4;
	case 8:
		return DR7_LEN_8;
	default:
		return DR7_LEN_1;
	}
}

static unsigned int field_length(unsigned long field)
{
	switch (field) {
	case DR7_LEN_2:
		return 2;
	case DR7_LEN_4:
		return 4;
	case DR7_LEN_8:
		return 8;
	default:
		return 1;
	}
}

unsigned long dr7_slot_enable_mask(unsigned int slot)
{
	return (DR7_L0 | DR7_G0) << (slot * DR7_ENABLE_SIZE);
}

unsigned long dr7_slot_mask(unsigned int slot)
{
	return dr7_slot_enable_mask(slot) |
	       (DR7_FIELD_MASK << (DR7_CONTROL_SHIFT + slot * DR7_CONTROL_SIZE));
}

unsigned long dr7_encode(unsigned int slot, enum dr_type type, unsigned int length)
{
	unsigned long field = (unsigned long)type | (length_field(length) << DR7_LEN_SHIFT);

	return (DR7_G0 << (slot * DR7_ENABLE_SIZE)) |
	       (field << (DR7_CONTROL_SHIFT + slot * DR7_CONTROL_SIZE));
}

bool dr7_decode(unsigned long dr7, unsigned int slot, enum dr_type *type, unsigned int *length)
{
	unsigned long field =
		(dr7 >> (DR7_CONTROL_SHIFT + slot * DR7_CONTROL_SIZE)) & DR7_FIELD_MASK;

	*type = (enum dr_type)(field & DR7_RW_MASK);
	*length = field_length(field >> DR7_LEN_SHIFT);
	return (dr7 & dr7_slot_enable_mask(slot)) != 0;
}
