/* SPDX-License-Identifier: MIT */
/* The arithmetic of a DS buffer's four fields: whole records, the threshold (SDM §18.4.9). Pure. */
#ifndef DS_BUFFER_H
#define DS_BUFFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ds/records.h"

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
