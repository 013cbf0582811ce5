/* SPDX-License-Identifier: MIT */
/* The synthetic record producer: a software stand-in for the CPU's BTS and PEBS stores. */
#ifndef DS_SYNTH_H
#define DS_SYNTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * These write records the way the SDM says the processor does (Vol. 3 §18.4.9), into the DS
 * area that the synthetic IA32_DS_AREA names, and only while the synthetic DEBUGCTL (TR and BTS)
 * or PEBS_ENABLE says so: at the index, which then advances by the record size; a circular BTS
 * buffer wraps to its base at the absolute maximum; otherwise nothing is written at or past the
 * absolute maximum; reaching the threshold raises the PMI vector by a self-IPI. They need the
 * synthetic backend. Everything they produce is synthetic, never a hardware result.
 */
struct ds_synth_stats {
	uint64_t written, dropped, pmis_raised;
};

/* Store one branch record; false when it was dropped (tracing off, or the buffer full). */
bool ds_synth_branch(uint64_t from, uint64_t to);
/* Store one PEBS record of size bytes, built by the caller in the configured format. */
bool ds_synth_pebs(const void *record, size_t size);
/* The calling CPU's producer's counts, or CPU cpu's. */
struct ds_synth_stats ds_synth_stats(void);
struct ds_synth_stats ds_synth_stats_cpu(unsigned int cpu);

#endif
