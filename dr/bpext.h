/* SPDX-License-Identifier: MIT */
/* AMD's breakpoint address masks (BPEXT): range data breakpoints and their mask writes. Pure. */
#ifndef DR_BPEXT_H
#define DR_BPEXT_H

#include <stdbool.h>
#include <stdint.h>

#include "dr/breakpoint.h"

#define DR_MASK_SLOTS 4 /* DR0_ADDR_MASK, DR1-3_ADDR_MASK */
#define DR_RANGE_MIN_LENGTH 16 /* beyond DR7's 8 bytes */
#define DR_RANGE_MAX_LENGTH (1u << 31) /* the largest power of two a request's length holds */

/*
 * A range data breakpoint, as Linux arch_build_bp_info() takes one: a write or read/write
 * breakpoint whose length is a power of two from 16 to DR_RANGE_MAX_LENGTH, the address aligned
 * to it. It is installed as a 1-byte breakpoint (DR7.LEN = 1) whose slot's address mask is
 * length - 1: the match ignores those address bits.
 */
bool dr_is_range(const struct dr_breakpoint *breakpoint);

/*
 * Check a range request, in dr_validate()'s order: DR_ERROR_TYPE, DR_ERROR_LENGTH for a length
 * that is not a power of two up to DR_RANGE_MAX_LENGTH, DR_ERROR_EXECUTE_LENGTH for an execute
 * or I/O range, DR_ERROR_ALIGNMENT, dr_validate()'s address rules for its first and last byte;
 * then DR_ERROR_NEEDS_BPEXT where the CPU has no BPEXT (CPUID 0x80000001 ECX[26]).
 * On DR_OK, *mask is the slot's address mask and *as_byte the 1-byte breakpoint DR0-3 and DR7 take.
 */
enum dr_error dr_validate_range(const struct dr_breakpoint *breakpoint, enum dr_requester requester,
				bool bpext, uint64_t *mask, struct dr_breakpoint *as_byte);

/* The MSR of slot's address mask (AMD APM; Linux amd_set_dr_addr_mask()). */
uint32_t dr_mask_msr(unsigned int slot);

#endif
