/* SPDX-License-Identifier: MIT */
/* Host tests of dr/bpext.c and the masks in dr/layout.c: range breakpoints as Linux
 * arch_build_bp_info() takes them, laid out and written only where a mask changes. */
#include <stdbool.h>
#include <stdint.h>

#include "dr/bpext.h"
#include "dr/breakpoint.h"
#include "dr/layout.h"
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

/* The layout of one task's breakpoints with no system ones. */
static void lay_out(const struct dr_breakpoint *breakpoints, unsigned int count,
		    struct dr_hardware *out)
{
	struct dr_set system = { 0 }, task = { 0 };
	uint8_t logical_of[DR_SLOTS];

	for (unsigned int i = 0; i < count; i++) {
		task.breakpoints[i] = breakpoints[i];
		task.used |= (uint8_t)(1u << i);
	}
	dr_layout(&system, &task, out, logical_of);
}

HOST_TEST(dr_bpext_a_range_is_laid_out_as_a_byte_in_dr7_and_its_mask)
{
	struct dr_breakpoint breakpoints[] = { { 0x1008, DR_TYPE_WRITE, 8 },
					       { 0x400000, DR_TYPE_READ_WRITE, 4096 } };
	struct dr_hardware out;

	lay_out(breakpoints, 2, &out);
	host_check_eq_u64(0, out.mask[0]);
	host_check_eq_u64(0xfff, out.mask[1]);
	host_check_eq_u64(0x400000, out.address[1]);
	/* SDM Vol. 3 §18.2.4: R/W1 = 11b (read/write) at bits 21:20, LEN1 = 00b (1 byte) at 23:22;
	 * slot 0: R/W0 = 01b, LEN0 = 10b (8 bytes); L0, L1, GE. */
	host_check_eq_u64(DR7_RESET | DR7_GE | DR7_G0 | DR7_G0 << 2 | 0x9ul << 16 | 0x3ul << 20,
			  out.dr7);
}

HOST_TEST(dr_bpext_a_mask_is_written_before_dr7_enables_its_slot)
{
	struct dr_breakpoint range = { 0x400000, DR_TYPE_WRITE, 64 };
	struct dr_hardware held = { .dr7 = DR7_RESET }, wanted;
	struct dr_write_plan plan;

	lay_out(&range, 1, &wanted);
	dr_plan(&held, &wanted, false, &plan);
	/* The slot was off: no DR7 write before; then the mask, the address, DR7 (3 writes). */
	host_check(!plan.disable_first);
	host_check_eq_u64(1, plan.mask_bits);
	host_check_eq_u64(63, plan.mask[0]);
	host_check_eq_u64(1, plan.address_mask);
	host_check(plan.write_dr7);
	host_check_eq_u64(3, dr_plan_writes(&plan));
	/* The same range again (a switch between two tasks that have it): nothing. */
	dr_plan(&wanted, &wanted, false, &plan);
	host_check_eq_u64(0, dr_plan_writes(&plan));
	/* Eager rewrites DR0-3 and DR7, never an unchanged mask. */
	dr_plan(&wanted, &wanted, true, &plan);
	host_check_eq_u64(0, plan.mask_bits);
	host_check_eq_u64(6, dr_plan_writes(&plan));
}

HOST_TEST(dr_bpext_a_mask_is_cleared_after_dr7_disables_its_slot)
{
	struct dr_breakpoint range = { 0x400000, DR_TYPE_WRITE, 64 };
	struct dr_hardware held, wanted = { .dr7 = DR7_RESET };
	struct dr_write_plan plan;

	lay_out(&range, 1, &held);
	dr_plan(&held, &wanted, false, &plan);
	host_check(plan.disable_first);
	host_check_eq_u64(0, plan.dr7_disabled & dr7_slot_mask(0));
	host_check_eq_u64(1, plan.mask_bits);
	host_check_eq_u64(0, plan.mask[0]);
	host_check_eq_u64(0, plan.address_mask); /* a disabled slot's address is left */
}

HOST_TEST(dr_bpext_a_mask_that_changes_under_an_enabled_slot_is_written_with_the_slot_off)
{
	struct dr_breakpoint wide = { 0x400000, DR_TYPE_WRITE, 4096 };
	struct dr_breakpoint narrow = { 0x400000, DR_TYPE_WRITE, 64 };
	struct dr_breakpoint byte = { 0x400000, DR_TYPE_WRITE, 1 };
	struct dr_hardware held, wanted;
	struct dr_write_plan plan;

	lay_out(&wide, 1, &held);
	lay_out(&narrow, 1, &wanted);
	dr_plan(&held, &wanted, false, &plan);
	/* Same address and DR7 entry: DR7 off, the mask, DR7 back on. */
	host_check(plan.disable_first);
	host_check_eq_u64(0, plan.dr7_disabled & dr7_slot_enable_mask(0));
	host_check_eq_u64(1, plan.mask_bits);
	host_check_eq_u64(63, plan.mask[0]);
	host_check_eq_u64(0, plan.address_mask);
	host_check(plan.write_dr7);
	host_check_eq_u64(3, dr_plan_writes(&plan));
	/* From a range to a 1-byte breakpoint at the same place: the mask goes to 0 so. */
	lay_out(&byte, 1, &wanted);
	dr_plan(&held, &wanted, false, &plan);
	host_check(plan.disable_first);
	host_check_eq_u64(0, plan.mask[0]);
	host_check_eq_u64(3, dr_plan_writes(&plan));
}
