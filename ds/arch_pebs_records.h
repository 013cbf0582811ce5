/* SPDX-License-Identifier: MIT */
/* Architectural PEBS records: the decoder of header, fragments and groups. Pure, host-tested. */
#ifndef DS_ARCH_PEBS_RECORDS_H
#define DS_ARCH_PEBS_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The layout is Linux's (perf_event.h struct arch_pebs_header and the group structs; ds.c
 * setup_arch_pebs_sample_data() and intel_pmu_drain_arch_pebs()), as arch/x86/arch-pebs.h has
 * it; the ISE document was not available. A record is one or more fragments; a fragment whose
 * header has CONT set, or is null (bits 63:16 clear), is followed by another of the same record;
 * the first holds the basic group.
 */
enum arch_pebs_decode {
	ARCH_PEBS_DECODED,
	ARCH_PEBS_TRUNCATED, /* a header or a fragment runs past the bytes given */
	ARCH_PEBS_NO_SIZE, /* a header whose size is below its own 16 bytes: the walk stops */
	ARCH_PEBS_NO_BASIC, /* the first fragment has no basic group: Linux skips it */
	ARCH_PEBS_GROUPS_OVERRUN, /* a fragment's groups need more bytes than its size */
};

struct arch_pebs_sample {
	uint64_t ip; /* basic: the eventing IP */
	uint64_t applicable_counters; /* basic: GLOBAL_STATUS numbering */
	uint64_t tsc;
	unsigned int retire_latency; /* basic bits 15:0, when its valid bit (16) is set; else 0 */
	uint64_t groups; /* the header group bits of every fragment, BASIC included */
	unsigned int fragments; /* null ones included */
	size_t bytes; /* every fragment's */
	/* Where each group sits in the record (NULL when absent); any alignment. */
	const uint8_t *aux, *gprs, *xmm, *lbr;
	unsigned int lbr_entries;
	uint32_t counters_gp, counters_fixed; /* the counter group's bitmaps */
	const uint8_t *counter_values; /* GP ones in ascending order, then fixed ones */
};

/* Offsets in the GPR group (struct arch_pebs_gprs): flags, ip, ax, cx, dx, bx, sp, bp, si, di,
 * r8-r15, ssp. */
#define ARCH_PEBS_GPRS_FLAGS 0x00
#define ARCH_PEBS_GPRS_IP 0x08
#define ARCH_PEBS_GPRS_AX 0x10
#define ARCH_PEBS_GPRS_SSP 0x90

/*
 * Decode the record at bytes, of which length bytes were written (INDEX.WR's extent from here).
 * Fills out as far as it got; out->bytes is what to step over even on NO_BASIC.
 */
enum arch_pebs_decode arch_pebs_decode(const void *bytes, size_t length,
				       struct arch_pebs_sample *out);
const char *arch_pebs_decode_name(enum arch_pebs_decode result);

#endif
