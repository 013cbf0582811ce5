/* SPDX-License-Identifier: MIT */
/* Host tests of dr/breakpoint.c: request validation, DR7 encoding and the error names. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "arch/x86/debugreg.h"
#include "dr/breakpoint.h"
#include "tests/host/host_test.h"

#define KERNEL DR_REQUESTER_KERNEL
#define USER DR_REQUESTER_USER

static const struct {
	uint64_t address;
	enum dr_type type;
	unsigned int length;
	enum dr_requester requester;
	bool io_allowed;
	enum dr_error expected;
} validate_cases[] = {
	/* Every type and length that is valid, from both requesters. */
	{ 0x1000, DR_TYPE_EXECUTE, 1, USER, false, DR_OK },
	{ 0x1000, DR_TYPE_WRITE, 1, USER, false, DR_OK },
	{ 0x1000, DR_TYPE_WRITE, 2, USER, false, DR_OK },
	{ 0x1000, DR_TYPE_READ_WRITE, 4, USER, false, DR_OK },
	{ 0x1000, DR_TYPE_READ_WRITE, 8, KERNEL, false, DR_OK },
	{ 0xffffffff80001000ull, DR_TYPE_EXECUTE, 1, KERNEL, false, DR_OK },
	/* Type and length. */
	{ 0x1000, (enum dr_type)4, 1, KERNEL, true, DR_ERROR_TYPE },
	{ 0x1000, (enum dr_type)(-1), 1, USER, true, DR_ERROR_TYPE },
	{ 0x1000, DR_TYPE_WRITE, 0, KERNEL, true, DR_ERROR_LENGTH },
	{ 0x1000, DR_TYPE_WRITE, 3, KERNEL, true, DR_ERROR_LENGTH },
	{ 0x1000, DR_TYPE_WRITE, 16, USER, true, DR_ERROR_LENGTH },
	{ 0x1000, DR_TYPE_EXECUTE, 2, KERNEL, true, DR_ERROR_EXECUTE_LENGTH },
	{ 0x1000, DR_TYPE_EXECUTE, 8, USER, true, DR_ERROR_EXECUTE_LENGTH },
	/* Alignment to the length. */
	{ 0x1001, DR_TYPE_WRITE, 2, KERNEL, false, DR_ERROR_ALIGNMENT },
	{ 0x1002, DR_TYPE_WRITE, 4, USER, false, DR_ERROR_ALIGNMENT },
	{ 0x1004, DR_TYPE_READ_WRITE, 8, KERNEL, false, DR_ERROR_ALIGNMENT },
	{ 0x1001, DR_TYPE_IO, 2, KERNEL, true, DR_ERROR_ALIGNMENT },
	{ 0x1003, DR_TYPE_EXECUTE, 1, KERNEL, false, DR_OK },
	/* The canonical limits, 0x00007fffffffffff and 0xffff800000000000. */
	{ 0x00007fffffffffffull, DR_TYPE_WRITE, 1, KERNEL, false, DR_OK },
	{ 0x0000800000000000ull, DR_TYPE_WRITE, 1, KERNEL, false, DR_ERROR_NON_CANONICAL },
	{ 0xffff7ffffffffff8ull, DR_TYPE_WRITE, 8, KERNEL, false, DR_ERROR_NON_CANONICAL },
	{ 0xffff800000000000ull, DR_TYPE_WRITE, 8, KERNEL, false, DR_OK },
	{ 0xfffffffffffffff8ull, DR_TYPE_READ_WRITE, 8, KERNEL, false, DR_OK },
	{ 0x0000800000000000ull, DR_TYPE_WRITE, 1, USER, false, DR_ERROR_NON_CANONICAL },
	/* The user limit: the whole watched range must lie below DR_USER_ADDRESS_LIMIT. */
	{ 0x00007fffffffffffull, DR_TYPE_WRITE, 1, USER, false, DR_OK },
	{ 0x00007ffffffffff8ull, DR_TYPE_WRITE, 8, USER, false, DR_OK },
	{ 0x00007ffffffffffcull, DR_TYPE_WRITE, 4, USER, false, DR_OK },
	{ 0x00007fffffffffffull, DR_TYPE_EXECUTE, 1, USER, false, DR_OK },
	{ 0xffff800000000000ull, DR_TYPE_WRITE, 1, USER, false, DR_ERROR_KERNEL_ADDRESS },
	{ 0xffffffff80000000ull, DR_TYPE_EXECUTE, 1, USER, false, DR_ERROR_KERNEL_ADDRESS },
	{ 0xfffffffffffffff0ull, DR_TYPE_READ_WRITE, 8, USER, false, DR_ERROR_KERNEL_ADDRESS },
	/* I/O: ports up to 0xffff, lengths 1, 2 and 4, the kernel only, and CR4.DE. */
	{ 0xffff, DR_TYPE_IO, 1, KERNEL, true, DR_OK },
	{ 0xfffe, DR_TYPE_IO, 2, KERNEL, true, DR_OK },
	{ 0xfffc, DR_TYPE_IO, 4, KERNEL, true, DR_OK },
	{ 0x0, DR_TYPE_IO, 1, KERNEL, true, DR_OK },
	{ 0xffff, DR_TYPE_IO, 1, KERNEL, false, DR_ERROR_IO_NEEDS_DE },
	{ 0x3f8, DR_TYPE_IO, 4, KERNEL, false, DR_ERROR_IO_NEEDS_DE },
	{ 0x10000, DR_TYPE_IO, 1, KERNEL, true, DR_ERROR_IO_PORT },
	{ 0x10000, DR_TYPE_IO, 1, KERNEL, false, DR_ERROR_IO_PORT },
	{ 0x10000, DR_TYPE_IO, 4, KERNEL, true, DR_ERROR_IO_PORT },
	{ 0xfff8, DR_TYPE_IO, 8, KERNEL, true, DR_ERROR_IO_PORT },
	{ 0x3f8, DR_TYPE_IO, 1, USER, true, DR_ERROR_IO_PORT },
	{ 0x3f8, DR_TYPE_IO, 1, USER, false, DR_ERROR_IO_PORT },
	/* io_allowed matters for I/O only. */
	{ 0x1000, DR_TYPE_WRITE, 4, KERNEL, true, DR_OK },
	{ 0x1000, DR_TYPE_WRITE, 4, USER, true, DR_OK },
};

HOST_TEST(dr_validate_applies_every_rule)
{
	for (size_t i = 0; i < sizeof(validate_cases) / sizeof(validate_cases[0]); i++) {
		struct dr_breakpoint breakpoint = {
			.address = validate_cases[i].address,
			.type = validate_cases[i].type,
			.length = validate_cases[i].length,
		};
		enum dr_error error = dr_validate(&breakpoint, validate_cases[i].requester,
						  validate_cases[i].io_allowed);

		host_checkf(
			error == validate_cases[i].expected,
			"case %zu: address 0x%llx type %d length %u %s io %d: expected %s, got %s",
			i, (unsigned long long)breakpoint.address, (int)breakpoint.type,
			breakpoint.length, validate_cases[i].requester == USER ? "user" : "kernel",
			validate_cases[i].io_allowed, dr_error_name(validate_cases[i].expected),
			dr_error_name(error));
	}
}

/* The last bytes of the address space are kernel addresses, though address + length wraps to 0. */
HOST_TEST(dr_validate_refuses_user_ranges_that_end_at_the_top_of_memory)
{
	for (unsigned int length = 1; length <= 8; length *= 2) {
		struct dr_breakpoint breakpoint = {
			.address = 0 - (uint64_t)length,
			.type = length == 1 ? DR_TYPE_EXECUTE : DR_TYPE_READ_WRITE,
			.length = length,
		};
		enum dr_error error = dr_validate(&breakpoint, USER, false);

		host_checkf(error == DR_ERROR_KERNEL_ADDRESS,
			    "user, address 0x%llx length %u: expected %s, got %s",
			    (unsigned long long)breakpoint.address, length,
			    dr_error_name(DR_ERROR_KERNEL_ADDRESS), dr_error_name(error));
		host_check_eq_u64(DR_OK, dr_validate(&breakpoint, KERNEL, false));
	}
}

/* SDM Vol. 3 §18.2.4, written out here independently of arch/x86/debugreg.h. */
static const unsigned long sdm_rw[] = {
	[DR_TYPE_EXECUTE] = 0, /* 00 */
	[DR_TYPE_WRITE] = 1, /* 01 */
	[DR_TYPE_IO] = 2, /* 10 */
	[DR_TYPE_READ_WRITE] = 3, /* 11 */
};
static const unsigned int lengths[] = { 1, 2, 4, 8 };
static const unsigned long sdm_len[] = { 0 /* 1: 00 */, 1 /* 2: 01 */, 3 /* 4: 11 */,
					 2 /* 8: 10 */ };

/* Gi is bit 2i + 1, R/Wi bits 16 + 4i and 17 + 4i, LENi bits 18 + 4i and 19 + 4i. */
static unsigned long sdm_dr7(unsigned int slot, enum dr_type type, unsigned int length_index)
{
	return (1ul << (2 * slot + 1)) | (sdm_rw[type] << (16 + 4 * slot)) |
	       (sdm_len[length_index] << (18 + 4 * slot));
}

HOST_TEST(dr7_encode_matches_the_sdm_layout_and_decodes_back)
{
	for (unsigned int slot = 0; slot < DR_SLOTS; slot++) {
		for (unsigned int type = 0; type < 4; type++) {
			for (unsigned int l = 0; l < 4; l++) {
				unsigned long dr7 = dr7_encode(slot, type, lengths[l]);
				enum dr_type decoded_type;
				unsigned int decoded_length;
				bool enabled;

				host_checkf(dr7 == sdm_dr7(slot, type, l),
					    "slot %u type %u length %u: expected 0x%lx, got 0x%lx",
					    slot, type, lengths[l], sdm_dr7(slot, type, l), dr7);
				enabled = dr7_decode(dr7, slot, &decoded_type, &decoded_length);
				host_checkf(
					enabled && decoded_type == type &&
						decoded_length == lengths[l],
					"slot %u type %u length %u: decoded %d, type %d length %u",
					slot, type, lengths[l], enabled, (int)decoded_type,
					decoded_length);
			}
		}
	}
}

HOST_TEST(dr7_encode_spot_values)
{
	/* Slot 1, write, length 4: G1 (bit 3) | RW1 = 01 (bits 20-21) | LEN1 = 11 (bits 22-23). */
	host_check_eq_u64(0x00d00008, dr7_encode(1, DR_TYPE_WRITE, 4));
	/* Slot 0, execute, length 1: G0 only. */
	host_check_eq_u64(0x00000002, dr7_encode(0, DR_TYPE_EXECUTE, 1));
	/* Slot 3, read/write, length 8: G3 (bit 7) | RW3 = 11 (bits 28-29) | LEN3 = 10. */
	host_check_eq_u64(0xb0000080, dr7_encode(3, DR_TYPE_READ_WRITE, 8));
	/* Slot 2, I/O, length 2: G2 (bit 5) | RW2 = 10 (bits 24-25) | LEN2 = 01. */
	host_check_eq_u64(0x06000020, dr7_encode(2, DR_TYPE_IO, 2));
}

HOST_TEST(dr7_decode_reads_each_slot_of_a_full_dr7)
{
	unsigned long dr7 = DR7_RESET | DR7_GE;
	enum dr_type type;
	unsigned int length;

	for (unsigned int slot = 0; slot < DR_SLOTS; slot++)
		dr7 |= dr7_encode(slot, (enum dr_type)(3 - slot), lengths[slot]);
	for (unsigned int slot = 0; slot < DR_SLOTS; slot++) {
		host_check(dr7_decode(dr7, slot, &type, &length));
		host_check_eq_u64(3 - slot, type);
		host_check_eq_u64(lengths[slot], length);
	}
	/* A slot enabled only locally (Li) is enabled; a slot with no enable bit is not. */
	host_check(dr7_decode(1ul << 4, 2, &type, &length));
	host_check(!dr7_decode(DR7_RESET | DR7_GE | (0xful << 16), 0, &type, &length));
	host_check(!dr7_decode(dr7 & ~dr7_slot_enable_mask(1), 1, &type, &length));
	host_check(dr7_decode(dr7 & ~dr7_slot_enable_mask(1), 2, &type, &length));
}

HOST_TEST(dr7_slot_masks_cover_exactly_the_slot_bits)
{
	unsigned long all = 0;

	for (unsigned int slot = 0; slot < DR_SLOTS; slot++) {
		unsigned long enable = 3ul << (2 * slot); /* Li and Gi */
		unsigned long control = 0xful << (16 + 4 * slot);

		host_check_eq_u64(enable, dr7_slot_enable_mask(slot));
		host_check_eq_u64(enable | control, dr7_slot_mask(slot));
		host_check_eq_u64(0, all & dr7_slot_mask(slot));
		all |= dr7_slot_mask(slot);
		for (unsigned int type = 0; type < 4; type++)
			for (unsigned int l = 0; l < 4; l++)
				host_check_eq_u64(0, dr7_encode(slot, type, lengths[l]) &
							     ~dr7_slot_mask(slot));
	}
	host_check_eq_u64(0xffff00ff, all);
}

HOST_TEST(dr_error_name_names_every_error)
{
	host_check_str("ok", dr_error_name(DR_OK));
	for (int error = 0; error < DR_ERROR_COUNT; error++) {
		const char *name = dr_error_name(error);

		if (!host_checkf(name != NULL && name[0] != '\0', "error %d has no name", error))
			continue;
		host_checkf(strcmp(name, "unknown error") != 0, "error %d is unnamed", error);
		for (int other = 0; other < error; other++)
			host_checkf(strcmp(name, dr_error_name(other)) != 0,
				    "errors %d and %d share the name \"%s\"", other, error, name);
	}
	host_check_str("unknown error", dr_error_name(DR_ERROR_COUNT));
	host_check_str("unknown error", dr_error_name((enum dr_error)(-1)));
	host_check_str("unknown error", dr_error_name((enum dr_error)1000));
}
