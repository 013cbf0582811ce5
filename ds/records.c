/* SPDX-License-Identifier: MIT */
/* BTS and PEBS record decoding: fixed formats 0-3, adaptive formats 4-6, buffer walking. */
#include "ds/records.h"
#include "lib/bitops.h"
#include "lib/load.h"

#define QWORD_SIZE 8

bool bts_decode(const void *bytes, size_t length, struct bts_sample *out)
{
	if (!bytes || !out || length < BTS_RECORD_SIZE)
		return false;
	out->from = load_u64(bytes, BTS_RECORD_FROM);
	out->to = load_u64(bytes, BTS_RECORD_TO);
	out->flags = load_u64(bytes, BTS_RECORD_FLAGS);
	out->predicted = (out->flags & BTS_FLAGS_PREDICTED) != 0;
	return true;
}

/* Where each enum pebs_gpr register sits in a format 0-3 record. */
static const uint8_t pebs_fixed_gpr_offset[PEBS_GPR_COUNT] = {
	[PEBS_GPR_RAX] = PEBS_REC_RAX,
	[PEBS_GPR_RCX] = PEBS_REC_RCX,
	[PEBS_GPR_RDX] = PEBS_REC_RDX,
	[PEBS_GPR_RBX] = PEBS_REC_RBX,
	[PEBS_GPR_RSP] = PEBS_REC_RSP,
	[PEBS_GPR_RBP] = PEBS_REC_RBP,
	[PEBS_GPR_RSI] = PEBS_REC_RSI,
	[PEBS_GPR_RDI] = PEBS_REC_RDI,
	[PEBS_GPR_R8] = PEBS_REC_R8 + 0 * QWORD_SIZE,
	[PEBS_GPR_R9] = PEBS_REC_R8 + 1 * QWORD_SIZE,
	[PEBS_GPR_R10] = PEBS_REC_R8 + 2 * QWORD_SIZE,
	[PEBS_GPR_R11] = PEBS_REC_R8 + 3 * QWORD_SIZE,
	[PEBS_GPR_R12] = PEBS_REC_R8 + 4 * QWORD_SIZE,
	[PEBS_GPR_R13] = PEBS_REC_R8 + 5 * QWORD_SIZE,
	[PEBS_GPR_R14] = PEBS_REC_R8 + 6 * QWORD_SIZE,
	[PEBS_GPR_R15] = PEBS_REC_R8 + 7 * QWORD_SIZE,
};

/* The adaptive GPR group stores registers in encoding order after RFLAGS and RIP. */
static size_t pebs_adaptive_gpr_offset(enum pebs_gpr reg)
{
	return PEBS_GPRS_RAX + (size_t)reg * QWORD_SIZE;
}

static bool pebs_format_known(enum pebs_format format)
{
	return (unsigned int)format <= PEBS_FORMAT_MAX_KNOWN;
}

bool pebs_format_is_adaptive(enum pebs_format format)
{
	return pebs_format_known(format) && format >= PEBS_FORMAT_4;
}

size_t pebs_record_size(enum pebs_format format)
{
	switch (format) {
	case PEBS_FORMAT_0:
		return PEBS_FORMAT_0_SIZE;
	case PEBS_FORMAT_1:
		return PEBS_FORMAT_1_SIZE;
	case PEBS_FORMAT_2:
		return PEBS_FORMAT_2_SIZE;
	case PEBS_FORMAT_3:
		return PEBS_FORMAT_3_SIZE;
	default:
		return 0;
	}
}

uint64_t pebs_data_cfg_lbrs(unsigned int entries)
{
	if (entries == 0 || entries > PEBS_DATA_CFG_LBR_MAX)
		return 0;
	return PEBS_DATA_CFG_LBRS | (uint64_t)(entries - 1) << PEBS_DATA_CFG_LBR_SHIFT;
}

unsigned int pebs_data_cfg_lbr_count(uint64_t data_cfg)
{
	if (!(data_cfg & PEBS_DATA_CFG_LBRS))
		return 0;
	return (unsigned int)((data_cfg >> PEBS_DATA_CFG_LBR_SHIFT) & PEBS_DATA_CFG_LBR_MASK) + 1;
}

#define PEBS_DATA_CFG_GROUPS \
	(PEBS_DATA_CFG_MEMINFO | PEBS_DATA_CFG_GPRS | PEBS_DATA_CFG_XMMS | PEBS_DATA_CFG_LBRS)

/* The bits of a record format field or DATA_CFG value that this decoder understands. */
static uint64_t pebs_known_cfg_bits(uint64_t data_cfg)
{
	uint64_t known = PEBS_DATA_CFG_GROUPS;

	if (data_cfg & PEBS_DATA_CFG_LBRS)
		known |= PEBS_DATA_CFG_LBR_MASK << PEBS_DATA_CFG_LBR_SHIFT;
	return known;
}

size_t pebs_adaptive_record_size(uint64_t data_cfg)
{
	size_t size = PEBS_BASIC_GROUP_SIZE;

	if (data_cfg & ~pebs_known_cfg_bits(data_cfg))
		return 0;
	if (data_cfg & PEBS_DATA_CFG_MEMINFO)
		size += PEBS_MEMINFO_GROUP_SIZE;
	if (data_cfg & PEBS_DATA_CFG_GPRS)
		size += PEBS_GPRS_GROUP_SIZE;
	if (data_cfg & PEBS_DATA_CFG_XMMS)
		size += PEBS_XMM_GROUP_SIZE;
	size += (size_t)pebs_data_cfg_lbr_count(data_cfg) * PEBS_LBR_ENTRY_SIZE;
	return size;
}

/*
 * pebs_decode() rules 2-7 for an adaptive record's first qword: the record's size if the
 * header is self-consistent and allowed by data_cfg, else 0. Rule 8 (size > available) is the
 * caller's, since pebs_find_last() reads an oversized tail as truncated, not malformed.
 */
static size_t pebs_adaptive_header_size(uint64_t format_size, uint64_t data_cfg)
{
	size_t size = (size_t)((format_size >> PEBS_BASIC_SIZE_SHIFT) & PEBS_BASIC_SIZE_MASK);
	uint64_t groups = format_size & PEBS_BASIC_GROUPS_MASK;

	if (size == 0 || size % QWORD_SIZE != 0 || size < PEBS_BASIC_GROUP_SIZE)
		return 0;
	if (groups & ~pebs_known_cfg_bits(groups))
		return 0;
	if ((groups & PEBS_DATA_CFG_GROUPS) & ~data_cfg)
		return 0;
	if (pebs_data_cfg_lbr_count(groups) > pebs_data_cfg_lbr_count(data_cfg))
		return 0;
	if (size != pebs_adaptive_record_size(groups))
		return 0;
	return size;
}

static void pebs_decode_fixed(enum pebs_format format, const void *bytes, struct pebs_sample *out)
{
	out->ip = load_u64(bytes, PEBS_REC_IP);
	out->rflags = load_u64(bytes, PEBS_REC_FLAGS);
	out->register_ip = out->ip;
	for (unsigned int reg = 0; reg < PEBS_GPR_COUNT; reg++)
		out->gprs[reg] = load_u64(bytes, pebs_fixed_gpr_offset[reg]);
	out->has_gprs = true;
	if (format >= PEBS_FORMAT_1) {
		out->status = load_u64(bytes, PEBS_REC_STATUS);
		out->data_address = load_u64(bytes, PEBS_REC_DATA_ADDRESS);
		out->data_source = load_u64(bytes, PEBS_REC_DATA_SOURCE);
		out->latency = load_u64(bytes, PEBS_REC_LATENCY);
		out->has_status = true;
		out->has_memory = true;
	}
	if (format >= PEBS_FORMAT_2) {
		out->eventing_ip = load_u64(bytes, PEBS_REC_EVENTING_IP);
		out->tsx_tuning = load_u64(bytes, PEBS_REC_TSX_TUNING);
		out->has_eventing_ip = true;
		out->has_tsx_tuning = true;
	}
	if (format >= PEBS_FORMAT_3) {
		out->tsc = load_u64(bytes, PEBS_REC_TSC);
		out->has_tsc = true;
	}
}

/* The record has passed pebs_adaptive_header_size(), so every group it names is in bounds. */
static void pebs_decode_adaptive(const uint8_t *bytes, uint64_t groups, struct pebs_sample *out)
{
	size_t at = PEBS_BASIC_GROUP_SIZE;

	out->ip = load_u64(bytes, PEBS_BASIC_IP);
	out->eventing_ip = out->ip;
	out->status = load_u64(bytes, PEBS_BASIC_APPLICABLE_COUNTERS);
	out->tsc = load_u64(bytes, PEBS_BASIC_TSC);
	out->has_eventing_ip = true;
	out->has_status = true;
	out->has_tsc = true;
	if (groups & PEBS_DATA_CFG_MEMINFO) {
		out->data_address = load_u64(bytes, at + PEBS_MEMINFO_DATA_ADDRESS);
		out->data_source = load_u64(bytes, at + PEBS_MEMINFO_DATA_SOURCE);
		out->latency = load_u64(bytes, at + PEBS_MEMINFO_LATENCY);
		out->tsx_tuning = load_u64(bytes, at + PEBS_MEMINFO_TSX_TUNING);
		out->has_memory = true;
		out->has_tsx_tuning = true;
		at += PEBS_MEMINFO_GROUP_SIZE;
	}
	if (groups & PEBS_DATA_CFG_GPRS) {
		out->rflags = load_u64(bytes, at + PEBS_GPRS_FLAGS);
		out->register_ip = load_u64(bytes, at + PEBS_GPRS_IP);
		for (unsigned int reg = 0; reg < PEBS_GPR_COUNT; reg++)
			out->gprs[reg] = load_u64(bytes, at + pebs_adaptive_gpr_offset(reg));
		out->has_gprs = true;
		at += PEBS_GPRS_GROUP_SIZE;
	}
	if (groups & PEBS_DATA_CFG_XMMS) {
		out->xmm_offset = at;
		out->has_xmm = true;
		at += PEBS_XMM_GROUP_SIZE;
	}
	if (groups & PEBS_DATA_CFG_LBRS) {
		out->lbr_offset = at;
		out->lbr_count = pebs_data_cfg_lbr_count(groups);
		out->has_lbrs = true;
	}
}

bool pebs_decode(enum pebs_format format, const void *bytes, size_t available, uint64_t data_cfg,
		 struct pebs_sample *out, size_t *record_size)
{
	uint64_t format_size;
	size_t size;

	if (!bytes || !out || !pebs_format_known(format))
		return false;
	*out = (struct pebs_sample){ 0 };
	if (!pebs_format_is_adaptive(format)) {
		size = pebs_record_size(format);
		if (available < size)
			return false;
		pebs_decode_fixed(format, bytes, out);
	} else {
		/* Rule 1, then rules 2-7, then rule 8: see records.h. */
		if (available < QWORD_SIZE)
			return false;
		format_size = load_u64(bytes, PEBS_BASIC_FORMAT_SIZE);
		size = pebs_adaptive_header_size(format_size, data_cfg);
		if (size == 0 || size > available)
			return false;
		pebs_decode_adaptive(bytes, format_size & PEBS_BASIC_GROUPS_MASK, out);
	}
	if (record_size)
		*record_size = size;
	return true;
}

bool pebs_lbr_entry(const void *record, const struct pebs_sample *sample, unsigned int index,
		    struct pebs_lbr_entry *out)
{
	size_t at;

	if (!record || !sample || !out || !sample->has_lbrs || index >= sample->lbr_count)
		return false;
	at = sample->lbr_offset + (size_t)index * PEBS_LBR_ENTRY_SIZE;
	out->from = load_u64(record, at + PEBS_LBR_FROM);
	out->to = load_u64(record, at + PEBS_LBR_TO);
	out->info = load_u64(record, at + PEBS_LBR_INFO);
	return true;
}

#define PEBS_XMM_REGISTERS 16
#define PEBS_XMM_REGISTER_SIZE (2 * QWORD_SIZE)

bool pebs_xmm_register(const void *record, const struct pebs_sample *sample, unsigned int reg,
		       uint64_t out[2])
{
	size_t at;

	if (!record || !sample || !out || !sample->has_xmm || reg >= PEBS_XMM_REGISTERS)
		return false;
	at = sample->xmm_offset + (size_t)reg * PEBS_XMM_REGISTER_SIZE;
	out[0] = load_u64(record, at);
	out[1] = load_u64(record, at + QWORD_SIZE);
	return true;
}

size_t pebs_find_last(enum pebs_format format, const void *base, size_t used_bytes,
		      uint64_t data_cfg, size_t *count)
{
	const uint8_t *bytes = base;
	size_t found = 0;
	size_t last = SIZE_MAX;
	size_t offset = 0;

	if (count)
		*count = 0;
	if (!bytes || !pebs_format_known(format))
		return SIZE_MAX;
	while (used_bytes - offset >= QWORD_SIZE) {
		size_t remaining = used_bytes - offset;
		size_t size = pebs_record_size(format);

		if (pebs_format_is_adaptive(format)) {
			size = pebs_adaptive_header_size(load_u64(bytes, offset), data_cfg);
			if (size == 0)
				return SIZE_MAX; /* malformed: the walk cannot go on */
		}
		if (size > remaining)
			break; /* truncated last record */
		last = offset;
		found++;
		offset += size;
	}
	if (count && last != SIZE_MAX)
		*count = found;
	return last;
}

unsigned int pebs_reset_slot(enum pebs_format format, bool fixed_counter, unsigned int counter)
{
	bool wide = format >= PEBS_FORMAT_5;
	unsigned int gp_slots = wide ? PEBS_RESET_GP_SLOTS_FMT5 : PEBS_RESET_GP_SLOTS_FMT4;
	unsigned int fixed_slots = wide ? PEBS_RESET_FIXED_SLOTS_FMT5 : PEBS_RESET_FIXED_SLOTS_FMT4;

	if (!pebs_format_known(format))
		return PEBS_RESET_SLOT_NONE;
	if (!fixed_counter)
		return counter < gp_slots ? counter : PEBS_RESET_SLOT_NONE;
	return counter < fixed_slots ? gp_slots + counter : PEBS_RESET_SLOT_NONE;
}

unsigned int pebs_record_samples(enum pebs_format format, bool has_status, uint64_t status,
				 uint64_t enabled, unsigned int *dropped)
{
	uint64_t named = status & enabled;

	if (!has_status)
		return 1;
	if (!named && enabled && !(enabled & (enabled - 1)))
		named = enabled;
	if (!named || (format < PEBS_FORMAT_3 && (named & (named - 1)))) {
		(*dropped)++;
		return 0;
	}
	return bits_set(named);
}
