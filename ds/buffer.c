/* SPDX-License-Identifier: MIT */
/* DS buffer fields: whole records, threshold placement, circular BTS. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ds/buffer.h"

bool ds_bts_fields(uint64_t base, size_t bytes, bool circular, size_t threshold_records,
		   struct ds_buffer_fields *out)
{
	size_t records = bytes / BTS_RECORD_SIZE;

	/* Room subtracted from records, not added to the threshold: that sum could wrap. */
	if (records == 0 ||
	    (!circular && (threshold_records == 0 || records < ds_threshold_room(records) ||
			   threshold_records > records - ds_threshold_room(records))))
		return false;
	out->base = base;
	out->index = base;
	out->max = base + records * BTS_RECORD_SIZE;
	out->threshold =
		circular ? out->max + BTS_RECORD_SIZE : base + threshold_records * BTS_RECORD_SIZE;
	return true;
}

bool ds_pebs_fields(uint64_t base, size_t bytes, size_t record_size, size_t threshold_records,
		    struct ds_buffer_fields *out)
{
	size_t records = record_size ? bytes / record_size : 0;

	if (records == 0 || threshold_records == 0 ||
	    (threshold_records > 1 && threshold_records + ds_threshold_room(records) > records) ||
	    threshold_records > records)
		return false;
	out->base = base;
	out->index = base;
	out->max = base + records * record_size;
	out->threshold = base + threshold_records * record_size;
	return true;
}
