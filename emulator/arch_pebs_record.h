/* SPDX-License-Identifier: MIT */
/* The emulated CPU's architectural PEBS assist: the bytes of one record, in fragments. */
#ifndef EMULATOR_ARCH_PEBS_RECORD_H
#define EMULATOR_ARCH_PEBS_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "emulator/pebs_record.h"
#include "emulator/profile.h"

/*
 * The "hardware" side of arch-PEBS, typed from the record layout of the Linux patches
 * (arch/x86/include/asm/perf_event.h struct arch_pebs_header, _basic, _aux, _gprs,
 * _xer_header, _lbr_header, _cntr_header; ds.c setup_arch_pebs_sample_data()): the ISE document
 * itself was not available. It shares nothing with the decoder in ds/.
 *
 * How silicon splits a record into fragments is not in those patches, only how software walks
 * them. The model writes a record whole unless told otherwise (emulate=...,fragments:N): a
 * choice, so that a decoder meets every shape the layout allows.
 */
enum arch_pebs_split {
	ARCH_PEBS_SPLIT_NONE, /* one fragment holding every group */
	ARCH_PEBS_SPLIT_GROUPS, /* the basic group, then each other group in a fragment of its own
				 */
	ARCH_PEBS_SPLIT_GROUPS_NULL, /* as above, with a null fragment before each continuation */
};

struct arch_pebs_assist {
	/* The CFG_C of the counter the record is for: its group bits (docs/emulated-cpu.md). */
	uint64_t cfg_c;
	uint64_t applicable_counters; /* GLOBAL_STATUS numbering */
	uint64_t eventing_ip;
	uint64_t tsc;
	struct pebs_machine_state state; /* rip: the next instruction */
	uint64_t ssp; /* the shadow-stack pointer: the model has no CET, so 0 */
	/* The counters whose CFG_C allows a snapshot (CNTR_ALLOW), and all counters' values. */
	uint32_t gp_allowed, fixed_allowed;
	uint64_t gp[EMULATOR_MAX_GP], fixed[EMULATOR_MAX_FIXED];
	enum arch_pebs_split split;
};

/* LBR entries the group code of CFG_C bits 41:40 asks for: 0, 8, 16, or the variable depth. */
#define ARCH_PEBS_MODEL_VARIABLE_DEPTH 32 /* code 3: arch-LBR's deepest stack (choice) */
unsigned int arch_pebs_lbr_entries(uint64_t cfg_c);

/* Bytes of the whole record, every fragment's header included; 0 for a NULL assist. */
size_t arch_pebs_record_bytes(const struct arch_pebs_assist *assist);

/*
 * Write the record at out (room bytes writable), little-endian. Returns the bytes written,
 * arch_pebs_record_bytes(assist); 0, with out untouched, when room is too small or an argument
 * is NULL. Every byte is written; fields the model does not implement are 0.
 */
size_t arch_pebs_record_write(const struct arch_pebs_assist *assist, void *out, size_t room);

#endif
