/* SPDX-License-Identifier: MIT */
/* Architectural PEBS record decoder: fragments walked as Linux walks them, groups located. */
#include "ds/arch_pebs_records.h"

#include "arch/x86/arch-pebs.h"

#define QWORD 8

static uint64_t load64(const uint8_t *at)
{
	uint64_t value = 0;

	for (unsigned int i = 0; i < QWORD; i++)
		value |= (uint64_t)at[i] << (8 * i);
	return value;
}

static unsigned int count_bits(uint32_t bits)
{
	unsigned int n = 0;

	for (; bits; bits &= bits - 1)
		n++;
	return n;
}

static bool continued(uint64_t format)
{
	return (format & ARCH_PEBS_HEADER_CONT) || !(format & ARCH_PEBS_HEADER_NOT_NULL_MASK);
}

/* The groups of one fragment, from at (after its header) up to end. False: they overrun. */
static bool fragment_groups(const uint8_t *at, const uint8_t *end, uint64_t format,
			    struct arch_pebs_sample *out)
{
	unsigned int lbr = (unsigned int)((format & ARCH_PEBS_LBR_MASK) >> ARCH_PEBS_LBR_SHIFT);

	if (format & ARCH_PEBS_HEADER_BASIC) {
		uint64_t retire;

		if (end - at < ARCH_PEBS_BASIC_BYTES)
			return false;
		out->ip = load64(at);
		out->applicable_counters = load64(at + QWORD);
		out->tsc = load64(at + 2 * QWORD);
		retire = load64(at + 3 * QWORD);
		out->retire_latency = retire & (1ull << 16) ? (unsigned int)(retire & 0xffff) : 0;
		at += ARCH_PEBS_BASIC_BYTES;
	}
	if (format & ARCH_PEBS_AUX) {
		if (end - at < ARCH_PEBS_AUX_BYTES)
			return false;
		out->aux = at;
		at += ARCH_PEBS_AUX_BYTES;
	}
	if (format & ARCH_PEBS_GPR) {
		if (end - at < ARCH_PEBS_GPR_BYTES)
			return false;
		out->gprs = at;
		at += ARCH_PEBS_GPR_BYTES;
	}
	if (format & ARCH_PEBS_XMM) {
		if (end - at < ARCH_PEBS_XER_HEADER_BYTES + ARCH_PEBS_XMM_BYTES)
			return false;
		out->xmm = at + ARCH_PEBS_XER_HEADER_BYTES;
		at += ARCH_PEBS_XER_HEADER_BYTES + ARCH_PEBS_XMM_BYTES;
	}
	if (lbr) {
		uint64_t entries;

		if (end - at < ARCH_PEBS_LBR_HEADER_BYTES)
			return false;
		/* Code 3 takes the depth from the LBR header (its third qword), as Linux does. */
		entries = lbr == ARCH_PEBS_LBR_VARIABLE
				  ? load64(at + 2 * QWORD)
				  : (uint64_t)lbr * ARCH_PEBS_LBR_BASE_ENTRIES;
		if ((uint64_t)(end - at - ARCH_PEBS_LBR_HEADER_BYTES) <
		    entries * ARCH_PEBS_LBR_ENTRY_BYTES)
			return false;
		out->lbr = at + ARCH_PEBS_LBR_HEADER_BYTES;
		out->lbr_entries = (unsigned int)entries;
		at += ARCH_PEBS_LBR_HEADER_BYTES + entries * ARCH_PEBS_LBR_ENTRY_BYTES;
	}
	if (format & ARCH_PEBS_HEADER_CNTR_MASK) {
		uint64_t bitmaps;
		size_t values;

		if (end - at < ARCH_PEBS_CNTR_HEADER_BYTES)
			return false;
		bitmaps = load64(at);
		out->counters_gp = (uint32_t)bitmaps;
		out->counters_fixed = (uint32_t)(bitmaps >> 32);
		/* Perf metrics (the third dword = 3) add two values (Linux INTEL_CNTR_METRICS). */
		values = count_bits(out->counters_gp) + count_bits(out->counters_fixed) +
			 ((uint32_t)load64(at + QWORD) == 3 ? 2 : 0);
		if ((size_t)(end - at - ARCH_PEBS_CNTR_HEADER_BYTES) < values * QWORD)
			return false;
		out->counter_values = at + ARCH_PEBS_CNTR_HEADER_BYTES;
	}
	return true;
}

enum arch_pebs_decode arch_pebs_decode(const void *bytes, size_t length,
				       struct arch_pebs_sample *out)
{
	const uint8_t *at = bytes, *end = at + length;

	*out = (struct arch_pebs_sample){ 0 };
	for (;;) {
		uint64_t format, size;

		if (end - at < ARCH_PEBS_HEADER_BYTES)
			return ARCH_PEBS_TRUNCATED;
		format = load64(at);
		size = format & ARCH_PEBS_HEADER_SIZE_MASK;
		if (size < ARCH_PEBS_HEADER_BYTES)
			return ARCH_PEBS_NO_SIZE;
		if ((uint64_t)(end - at) < size)
			return ARCH_PEBS_TRUNCATED;
		out->fragments++;
		out->bytes += size;
		if (out->fragments == 1 && !(format & ARCH_PEBS_HEADER_BASIC)) {
			/* Linux: "1st fragment or single record must have basic group". */
			return ARCH_PEBS_NO_BASIC;
		}
		out->groups |= format & ~(ARCH_PEBS_HEADER_SIZE_MASK | ARCH_PEBS_HEADER_CONT);
		if (!fragment_groups(at + ARCH_PEBS_HEADER_BYTES, at + size, format, out))
			return ARCH_PEBS_GROUPS_OVERRUN;
		at += size;
		if (!continued(format))
			return ARCH_PEBS_DECODED;
	}
}

const char *arch_pebs_decode_name(enum arch_pebs_decode result)
{
	switch (result) {
	case ARCH_PEBS_DECODED:
		return "decoded";
	case ARCH_PEBS_TRUNCATED:
		return "truncated";
	case ARCH_PEBS_NO_SIZE:
		return "a header without a size";
	case ARCH_PEBS_NO_BASIC:
		return "a first fragment without the basic group";
	case ARCH_PEBS_GROUPS_OVERRUN:
		return "groups beyond the fragment's size";
	default:
		return "unknown";
	}
}
