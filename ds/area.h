/* SPDX-License-Identifier: MIT */
/* The 64-bit DS save area and the arithmetic of its buffer fields (SDM Vol. 3 §18.4.9). Pure. */
#ifndef DS_AREA_H
#define DS_AREA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ds/records.h"

/* 32 GP + 16 fixed: the format-5 layout (docs/hardware-facts.md §2) */
#define DS_PEBS_RESET_SLOTS 48

/* What IA32_DS_AREA points at: every field is a linear address except the reset values. */
struct ds_area {
	uint64_t bts_base; /* first record */
	uint64_t bts_index; /* where the next record goes */
	uint64_t bts_max; /* first byte past the last whole record */
	uint64_t bts_threshold; /* index that raises the PMI (with DEBUGCTL.BTINT) */
	uint64_t pebs_base;
	uint64_t pebs_index;
	uint64_t pebs_max;
	uint64_t pebs_threshold; /* index that raises the PMI, always */
	uint64_t pebs_reset[DS_PEBS_RESET_SLOTS];
};

_Static_assert(__builtin_offsetof(struct ds_area, pebs_base) == 0x20, "SDM DS layout");
_Static_assert(__builtin_offsetof(struct ds_area, pebs_reset) == 0x40, "SDM DS layout");

/* One buffer's four fields. */
struct ds_buffer_fields {
	uint64_t base, index, max, threshold;
};

/*
 * Records an interrupt threshold must leave free before the absolute maximum, so the records
 * written while the PMI is pending are not lost: the SDM asks for "several records", Linux's
 * bts.c keeps max/16. A PEBS threshold of one record (a PMI per record) needs no room.
 */
static inline size_t ds_threshold_room(size_t records)
{
	return records / 16 > 2 ? records / 16 : 2;
}

/*
 * BTS fields for a buffer of bytes at base: whole records only. Circular: the threshold lies one
 * record past max, so it is never reached and the buffer wraps (SDM: clearing BTINT is not
 * enough). Interrupt mode: the PMI comes when threshold_records records are in. False when the
 * buffer holds no record, or threshold_records is 0 or leaves less than ds_threshold_room().
 */
bool ds_bts_fields(uint64_t base, size_t bytes, bool circular, size_t threshold_records,
		   struct ds_buffer_fields *out);

/*
 * PEBS fields: record_size bytes per record (the largest, for adaptive records), the PMI once
 * threshold_records records are in. Same failure rules as ds_bts_fields(), except that a
 * threshold of one record needs no room.
 */
bool ds_pebs_fields(uint64_t base, size_t bytes, size_t record_size, size_t threshold_records,
		    struct ds_buffer_fields *out);

/* Records between base and index. */
static inline size_t ds_records_in(const struct ds_buffer_fields *fields, size_t record_size)
{
	return (size_t)((fields->index - fields->base) / record_size);
}

#endif
