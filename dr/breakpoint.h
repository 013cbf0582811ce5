/* SPDX-License-Identifier: MIT */
/* Breakpoint requests: types, lengths, validation, and the DR7 encoder and decoder. Pure. */
#ifndef DR_BREAKPOINT_H
#define DR_BREAKPOINT_H

#include <stdbool.h>
#include <stdint.h>

/* The DR7 R/W encodings (arch/x86/debugreg.h DR7_RW_*), as a type. */
enum dr_type {
	DR_TYPE_EXECUTE = 0,
	DR_TYPE_WRITE = 1,
	DR_TYPE_IO = 2, /* I/O port read or write; needs CR4.DE */
	DR_TYPE_READ_WRITE = 3,
};

struct dr_breakpoint {
	uint64_t address; /* linear address, or the port number for DR_TYPE_IO */
	enum dr_type type;
	unsigned int length; /* 1, 2, 4 or 8 bytes */
};

/* Why a request was refused. dr_install() and friends return these negated. */
enum dr_error {
	DR_OK = 0,
	DR_ERROR_TYPE, /* not one of enum dr_type */
	DR_ERROR_LENGTH, /* not 1, 2, 4 or 8 */
	DR_ERROR_EXECUTE_LENGTH, /* execute breakpoints must have length 1 (SDM Vol. 3 §18.2.5) */
	DR_ERROR_ALIGNMENT, /* address not aligned to its length */
	DR_ERROR_NON_CANONICAL,
	DR_ERROR_KERNEL_ADDRESS, /* a user task may watch only user addresses */
	DR_ERROR_IO_NEEDS_DE, /* I/O breakpoints need CR4.DE */
	DR_ERROR_IO_PORT, /* not a port (above 0xffff), or length 8, or asked by a user task */
	DR_ERROR_NO_SLOT, /* the reservation would exceed the 4 debug registers */
	DR_ERROR_NOT_INSTALLED, /* uninstall of a slot that holds nothing */
	DR_ERROR_NO_MEMORY,
	DR_ERROR_UNSUPPORTED, /* the CPU (or hypervisor) does not keep the setting */
	DR_ERROR_NO_CPU, /* a pinned breakpoint for a CPU that is not online */
	DR_ERROR_DEBUG_MEMORY, /* overlaps memory that #DB delivery and dr/'s handler use */
	DR_ERROR_NO_TASK, /* no live task has that index (switch_task_live()) */
	DR_ERROR_NEEDS_BPEXT, /* a range beyond 8 bytes needs AMD's BPEXT (dr/bpext.h) */
	DR_ERROR_COUNT,
};

const char *dr_error_name(enum dr_error error);

/* Who asks: a user task may watch only addresses below DR_USER_ADDRESS_LIMIT, and no ports. */
enum dr_requester {
	DR_REQUESTER_KERNEL,
	DR_REQUESTER_USER,
};

#define DR_USER_ADDRESS_LIMIT 0x0000800000000000ull
#define DR_IO_PORT_LIMIT 0x10000ull

/* Check a request against every rule above; io_allowed is CR4.DE. DR_OK when it may be used. */
enum dr_error dr_validate(const struct dr_breakpoint *breakpoint, enum dr_requester requester,
			  bool io_allowed);

/* Linear addresses first to last, both included, so that a range may end at the top of memory. */
struct dr_range {
	uint64_t first;
	uint64_t last;
};

/*
 * DR_ERROR_DEBUG_MEMORY when a valid breakpoint watches, or executes at, a byte of one of
 * ranges, else DR_OK. I/O breakpoints watch ports, not memory: never refused here. For kernel
 * requests, ranges is the memory that #DB itself uses (dr_debug_regions()): a breakpoint there
 * would raise #DB inside the #DB handler, on its own IST stack, as Linux's
 * hw_breakpoint_arch_parse() refuses through within_cpu_entry().
 */
enum dr_error dr_validate_ranges(const struct dr_breakpoint *breakpoint,
				 const struct dr_range *ranges, unsigned int count);

/*
 * The DR7 bits of one slot: its global enable bit and its R/W and LEN field. The breakpoint must
 * be valid. dr7_decode() reads them back: false when the slot is not enabled.
 */
unsigned long dr7_encode(unsigned int slot, enum dr_type type, unsigned int length);
bool dr7_decode(unsigned long dr7, unsigned int slot, enum dr_type *type, unsigned int *length);

/* Every DR7 bit of a slot (enables and control field), and its enable bits alone. */
unsigned long dr7_slot_mask(unsigned int slot);
unsigned long dr7_slot_enable_mask(unsigned int slot);

#endif
