/* SPDX-License-Identifier: MIT */
/* Host tests of dr_validate_ranges(): breakpoints overlapping the memory #DB uses. */
#include <stddef.h>
#include <stdint.h>

#include "dr/breakpoint.h"
#include "tests/host/host_test.h"

static const struct dr_range ranges[] = {
	{ 0x1000, 0x1fff },
	{ 0x3004, 0x3004 }, /* one byte, inside an 8-byte breakpoint at 0x3000 */
	{ 0xffffffff80100000ull, 0xffffffff80100fffull },
	{ 0xfffffffffffff000ull, 0xffffffffffffffffull }, /* ends at the top of memory */
};

static const struct {
	uint64_t address;
	enum dr_type type;
	unsigned int length;
	enum dr_error expected;
} cases[] = {
	/* The bytes just outside a range, then its first and last bytes, every length. */
	{ 0x0ff8, DR_TYPE_WRITE, 8, DR_OK },
	{ 0x0fff, DR_TYPE_READ_WRITE, 1, DR_OK },
	{ 0x1000, DR_TYPE_WRITE, 1, DR_ERROR_DEBUG_MEMORY },
	{ 0x1000, DR_TYPE_WRITE, 8, DR_ERROR_DEBUG_MEMORY },
	{ 0x1ffe, DR_TYPE_READ_WRITE, 2, DR_ERROR_DEBUG_MEMORY },
	{ 0x1ffc, DR_TYPE_WRITE, 4, DR_ERROR_DEBUG_MEMORY },
	{ 0x1fff, DR_TYPE_WRITE, 1, DR_ERROR_DEBUG_MEMORY },
	{ 0x2000, DR_TYPE_WRITE, 8, DR_OK },
	/* A range inside the breakpoint's bytes. */
	{ 0x3000, DR_TYPE_WRITE, 8, DR_ERROR_DEBUG_MEMORY },
	{ 0x3004, DR_TYPE_WRITE, 4, DR_ERROR_DEBUG_MEMORY },
	{ 0x3000, DR_TYPE_WRITE, 4, DR_OK },
	{ 0x3006, DR_TYPE_WRITE, 2, DR_OK },
	/* Execute breakpoints cover one byte. */
	{ 0xffffffff80100000ull, DR_TYPE_EXECUTE, 1, DR_ERROR_DEBUG_MEMORY },
	{ 0xffffffff80100fffull, DR_TYPE_EXECUTE, 1, DR_ERROR_DEBUG_MEMORY },
	{ 0xffffffff800fffffull, DR_TYPE_EXECUTE, 1, DR_OK },
	{ 0xffffffff80101000ull, DR_TYPE_EXECUTE, 1, DR_OK },
	/* The last bytes of memory: address + length wraps to 0, the overlap is still seen. */
	{ 0xfffffffffffffff8ull, DR_TYPE_READ_WRITE, 8, DR_ERROR_DEBUG_MEMORY },
	{ 0xffffffffffffffffull, DR_TYPE_EXECUTE, 1, DR_ERROR_DEBUG_MEMORY },
	{ 0xffffffffffffeff8ull, DR_TYPE_WRITE, 8, DR_OK },
	/* I/O breakpoints watch ports: port 0x1000 is not address 0x1000. */
	{ 0x1000, DR_TYPE_IO, 4, DR_OK },
};

HOST_TEST(dr_validate_ranges_refuses_any_overlap_with_db_memory)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dr_breakpoint breakpoint = { cases[i].address, cases[i].type,
						    cases[i].length };
		enum dr_error error =
			dr_validate_ranges(&breakpoint, ranges, sizeof(ranges) / sizeof(ranges[0]));

		host_checkf(error == cases[i].expected,
			    "case %zu: address 0x%llx type %d length %u: expected %s, got %s", i,
			    (unsigned long long)cases[i].address, (int)cases[i].type,
			    cases[i].length, dr_error_name(cases[i].expected),
			    dr_error_name(error));
	}
}

HOST_TEST(dr_validate_ranges_with_no_ranges_accepts_everything)
{
	struct dr_breakpoint breakpoint = { 0x1000, DR_TYPE_WRITE, 8 };

	host_check_eq_u64(DR_OK, dr_validate_ranges(&breakpoint, ranges, 0));
	host_check_eq_u64(DR_OK, dr_validate_ranges(&breakpoint, NULL, 0));
}
