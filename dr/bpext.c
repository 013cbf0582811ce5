/* SPDX-License-Identifier: MIT */
/* AMD breakpoint address masks: range validation and the masks' MSRs (Linux
 * arch_build_bp_info(), amd_set_dr_addr_mask()); dr/layout.c plans their writes. */
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/msr-index.h"
#include "dr/bpext.h"
#include "dr/breakpoint.h"

bool dr_is_range(const struct dr_breakpoint *breakpoint)
{
	return breakpoint->length >= DR_RANGE_MIN_LENGTH;
}

static bool power_of_two(uint64_t value)
{
	return value && !(value & (value - 1));
}

enum dr_error dr_validate_range(const struct dr_breakpoint *breakpoint, enum dr_requester requester,
				bool bpext, uint64_t *mask, struct dr_breakpoint *as_byte)
{
	uint64_t length = breakpoint->length;
	struct dr_breakpoint last;
	enum dr_error error;

	/* In dr_validate()'s order; BPEXT last, as arch_build_bp_info() asks for it last. */
	if ((unsigned int)breakpoint->type > DR_TYPE_READ_WRITE)
		return DR_ERROR_TYPE;
	if (!power_of_two(length) || length < DR_RANGE_MIN_LENGTH || length > DR_RANGE_MAX_LENGTH)
		return DR_ERROR_LENGTH;
	if (breakpoint->type != DR_TYPE_WRITE && breakpoint->type != DR_TYPE_READ_WRITE)
		return DR_ERROR_EXECUTE_LENGTH;
	if (breakpoint->address & (length - 1))
		return DR_ERROR_ALIGNMENT;
	/* Its first and its last byte, as 1-byte breakpoints: canonical, and the requester's. */
	*as_byte = (struct dr_breakpoint){ breakpoint->address, breakpoint->type, 1 };
	last = (struct dr_breakpoint){ breakpoint->address + length - 1, breakpoint->type, 1 };
	error = dr_validate(as_byte, requester, false);
	if (!error)
		error = dr_validate(&last, requester, false);
	if (error)
		return error;
	if (!bpext)
		return DR_ERROR_NEEDS_BPEXT;
	*mask = length - 1;
	return DR_OK;
}

uint32_t dr_mask_msr(unsigned int slot)
{
	return slot == 0 ? MSR_F16H_DR0_ADDR_MASK : MSR_F16H_DR1_ADDR_MASK + slot - 1;
}
