/* SPDX-License-Identifier: MIT */
/* Byte builders for the DS record host tests, written from the SDM and Linux layouts. */
#ifndef TESTS_HOST_DS_RECORD_BYTES_H
#define TESTS_HOST_DS_RECORD_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ds/records.h"

/*
 * The offsets and sizes here are typed in from the SDM and Linux (ds.c pebs_record_*,
 * perf_event.h pebs_basic/pebs_meminfo/pebs_gprs/pebs_xmm/lbr_entry), not taken from
 * ds/records.h, so a wrong constant there makes a test fail.
 */
#define TEST_BASIC_SIZE 32 /* format_size, ip, applicable_counters, tsc */
#define TEST_MEMINFO_SIZE 32 /* address, aux, latency, tsx_tuning */
#define TEST_GPRS_SIZE 144 /* flags, ip, ax, cx, dx, bx, sp, bp, si, di, r8-r15 */
#define TEST_XMM_SIZE 256 /* xmm0-15, two qwords each */
#define TEST_LBR_SIZE 24 /* from, to, info */

/* Little-endian store at any offset, as the processor writes records. */
static inline void test_put_u64(uint8_t *buffer, size_t offset, uint64_t value)
{
	for (unsigned int i = 0; i < 8; i++)
		buffer[offset + i] = (uint8_t)(value >> (8 * i));
}

/* A value unique to (record, offset), so reading the wrong field or record shows. */
static inline uint64_t test_pattern(unsigned int record, size_t offset)
{
	return 0xa500000000000000ULL | (uint64_t)record << 24 | (uint64_t)offset;
}

/* Fill size bytes of record number `record` with test_pattern() qwords. */
static inline void test_fill(uint8_t *buffer, unsigned int record, size_t size)
{
	for (size_t offset = 0; offset + 8 <= size; offset += 8)
		test_put_u64(buffer, offset, test_pattern(record, offset));
}

/* Which groups an adaptive test record holds, and where each starts. */
struct test_adaptive_layout {
	bool meminfo, gprs, xmm;
	unsigned int lbrs; /* 0: no LBR group */
	size_t meminfo_at, gprs_at, xmm_at, lbr_at, size;
};

static inline struct test_adaptive_layout test_layout(bool meminfo, bool gprs, bool xmm,
						      unsigned int lbrs)
{
	struct test_adaptive_layout layout = { meminfo, gprs, xmm, lbrs, 0, 0, 0, 0, 0 };
	size_t at = TEST_BASIC_SIZE;

	layout.meminfo_at = at;
	at += meminfo ? TEST_MEMINFO_SIZE : 0;
	layout.gprs_at = at;
	at += gprs ? TEST_GPRS_SIZE : 0;
	layout.xmm_at = at;
	at += xmm ? TEST_XMM_SIZE : 0;
	layout.lbr_at = at;
	layout.size = at + lbrs * TEST_LBR_SIZE;
	return layout;
}

/* The record format field: DATA_CFG bit 0 meminfo, 1 GPRs, 2 XMM, 3 LBRs, 31:24 LBRs - 1. */
static inline uint64_t test_groups(const struct test_adaptive_layout *layout)
{
	uint64_t groups =
		(layout->meminfo ? 1 : 0) | (layout->gprs ? 2 : 0) | (layout->xmm ? 4 : 0);

	if (layout->lbrs)
		groups |= 8 | (uint64_t)(layout->lbrs - 1) << 24;
	return groups;
}

/* Header qword: record size in bits 63:48, record format in bits 31:0. */
static inline uint64_t test_header(uint64_t size, uint64_t groups)
{
	return size << 48 | groups;
}

/* Write an adaptive record of the given layout at buffer; return its size. */
static inline size_t test_build_adaptive(uint8_t *buffer, unsigned int record,
					 const struct test_adaptive_layout *layout)
{
	test_fill(buffer, record, layout->size);
	test_put_u64(buffer, 0, test_header(layout->size, test_groups(layout)));
	return layout->size;
}

#endif
