/* SPDX-License-Identifier: MIT */
/* Host tests of dr/bpext.c: range breakpoints as Linux arch_build_bp_info() takes them, and the
 * mask writes, cached per CPU, made only where a mask changes. */
#include <stdbool.h>
#include <stdint.h>

#include "dr/bpext.h"
#include "dr/breakpoint.h"
#include "tests/host/host_test.h"

/* From the AMD APM and Linux msr-index.h (MSR_F16H_DR0_ADDR_MASK, MSR_F16H_DR1_ADDR_MASK). */
#define DR0_ADDR_MASK 0xc0011027u
#define DR1_ADDR_MASK 0xc0011019u

static enum dr_error check_range(uint64_t address, enum dr_type type, unsigned int length,
				 enum dr_requester requester, bool bpext, uint64_t *mask)
{
	struct dr_breakpoint request = { address, type, length }, as_byte = { 0 };

	*mask = ~0ull;
	return dr_validate_range(&request, requester, bpext, mask, &as_byte);
}

HOST_TEST(dr_bpext_a_range_is_a_byte_breakpoint_and_a_mask_of_length_minus_1)
{
	struct dr_breakpoint request = { 0x400000, DR_TYPE_WRITE, 4096 }, as_byte = { 0 };
	uint64_t mask = 0;

	host_check(dr_is_range(&request));
	host_check_eq_u64(DR_OK,
			  dr_validate_range(&request, DR_REQUESTER_USER, true, &mask, &as_byte));
	host_check_eq_u64(0xfff, mask);
	host_check_eq_u64(0x400000, as_byte.address);
	host_check_eq_u64(1, as_byte.length);
	host_check_eq_u64(DR_TYPE_WRITE, as_byte.type);
	for (unsigned int shift = 4; shift <= 31; shift++) {
		host_check_eq_u64(DR_OK, check_range(1ull << 33, DR_TYPE_READ_WRITE, 1u << shift,
						     DR_REQUESTER_KERNEL, true, &mask));
		host_check_eq_u64((1ull << shift) - 1, mask);
	}
	request.length = 8;
	host_check(!dr_is_range(&request));
}

HOST_TEST(dr_bpext_without_bpext_a_range_is_refused_with_its_reason)
{
	uint64_t mask;

	host_check_eq_u64(DR_ERROR_NEEDS_BPEXT, check_range(0x400000, DR_TYPE_WRITE, 64,
							    DR_REQUESTER_USER, false, &mask));
	host_check_eq_u64(~0ull, mask);
	/* A request that is no range at all says what is wrong with it first. */
	host_check_eq_u64(DR_ERROR_LENGTH, check_range(0x400000, DR_TYPE_WRITE, 24,
						       DR_REQUESTER_USER, false, &mask));
	host_check_eq_u64(DR_ERROR_ALIGNMENT, check_range(0x400020, DR_TYPE_WRITE, 64,
							  DR_REQUESTER_USER, false, &mask));
	host_check_str("a range breakpoint needs the breakpoint address masks (CPUID 0x80000001 "
		       "ECX[26] BPEXT)",
		       dr_error_name(DR_ERROR_NEEDS_BPEXT));
}

HOST_TEST(dr_bpext_ranges_follow_linuxs_rules)
{
	uint64_t mask;

	/* Not a power of two, misaligned, an execute or I/O range, too long. */
	host_check_eq_u64(DR_ERROR_LENGTH,
			  check_range(0x400000, DR_TYPE_WRITE, 48, DR_REQUESTER_USER, true, &mask));
	host_check_eq_u64(DR_ERROR_ALIGNMENT,
			  check_range(0x400010, DR_TYPE_WRITE, 64, DR_REQUESTER_USER, true, &mask));
	host_check_eq_u64(DR_ERROR_EXECUTE_LENGTH, check_range(0x400000, DR_TYPE_EXECUTE, 64,
							       DR_REQUESTER_KERNEL, true, &mask));
	host_check_eq_u64(DR_ERROR_EXECUTE_LENGTH,
			  check_range(0x400, DR_TYPE_IO, 16, DR_REQUESTER_KERNEL, true, &mask));
	host_check_eq_u64(DR_ERROR_TYPE, check_range(0x400000, (enum dr_type)7, 64,
						     DR_REQUESTER_KERNEL, true, &mask));
	/* The whole range is the requester's: a user task's ends below the kernel half. */
	host_check_eq_u64(DR_ERROR_KERNEL_ADDRESS,
			  check_range(0xffff800000000000ull, DR_TYPE_WRITE, 1u << 14,
				      DR_REQUESTER_USER, true, &mask));
	host_check_eq_u64(DR_ERROR_ALIGNMENT,
			  check_range(0x00007fffffffe000ull, DR_TYPE_WRITE, 1u << 14,
				      DR_REQUESTER_USER, true, &mask));
	host_check_eq_u64(DR_OK, check_range(0x00007fffffffc000ull, DR_TYPE_WRITE, 1u << 14,
					     DR_REQUESTER_USER, true, &mask));
	host_check_eq_u64(DR_ERROR_NON_CANONICAL,
			  check_range(0x0000800000000000ull, DR_TYPE_WRITE, 64, DR_REQUESTER_KERNEL,
				      true, &mask));
	host_check_eq_u64(~0ull, mask); /* untouched on a refusal */
}

HOST_TEST(dr_bpext_mask_msrs_are_amds)
{
	host_check_eq_u64(DR0_ADDR_MASK, dr_mask_msr(0));
	host_check_eq_u64(DR1_ADDR_MASK, dr_mask_msr(1));
	host_check_eq_u64(DR1_ADDR_MASK + 1, dr_mask_msr(2));
	host_check_eq_u64(DR1_ADDR_MASK + 2, dr_mask_msr(3));
}

HOST_TEST(dr_bpext_masks_are_written_only_when_they_change)
{
	struct dr_mask_cache cache = { 0 };
	struct dr_mask_write writes[DR_MASK_SLOTS];
	uint64_t wanted[DR_MASK_SLOTS] = { 0, 0xfff, 0, 0 };
	unsigned int count;

	/* Nothing known after boot: every mask is written once. */
	count = dr_mask_plan(&cache, wanted, writes);
	host_check_eq_u64(4, count);
	host_check_eq_u64(DR0_ADDR_MASK, writes[0].msr);
	host_check_eq_u64(0, writes[0].value);
	host_check_eq_u64(DR1_ADDR_MASK, writes[1].msr);
	host_check_eq_u64(0xfff, writes[1].value);
	/* The same masks again (the switch between two tasks with the same range): none. */
	host_check_eq_u64(0, dr_mask_plan(&cache, wanted, writes));
	/* Uninstall: the slot's mask back to 0, one write. */
	wanted[1] = 0;
	count = dr_mask_plan(&cache, wanted, writes);
	host_check_eq_u64(1, count);
	host_check_eq_u64(DR1_ADDR_MASK, writes[0].msr);
	host_check_eq_u64(0, writes[0].value);
	/* Two slots change: two writes, ascending. */
	wanted[3] = 0x3f;
	wanted[0] = 0xffff;
	count = dr_mask_plan(&cache, wanted, writes);
	host_check_eq_u64(2, count);
	host_check_eq_u64(DR0_ADDR_MASK, writes[0].msr);
	host_check_eq_u64(DR1_ADDR_MASK + 2, writes[1].msr);
	host_check_eq_u64(0x3f, writes[1].value);
	host_check(cache.known[3] && cache.mask[3] == 0x3f);
}
