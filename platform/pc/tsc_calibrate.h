/* SPDX-License-Identifier: MIT */
/* The TSC's frequency, from CPUID or measured against the PC's timers (arch/x86/tsc.h keeps it). */
#ifndef PLATFORM_PC_TSC_CALIBRATE_H
#define PLATFORM_PC_TSC_CALIBRATE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Find the TSC frequency: from the source tsc.source= names, else from the first of CPUID
 * 0x15/0x16, the hypervisor leaf 0x40000010, the PIT, the ACPI PM timer and the HPET that
 * answers, printing "# tsc: SOURCE: why not" for each one before it. rsdp[0, rsdp_length) is the
 * loader's copy of the RSDP (length 0: scan the BIOS areas). Gives the result to tsc_set_hz().
 * On failure writes why into error (a forced source that is missing: "option 'tsc.source':
 * ...") and returns false.
 */
bool tsc_calibrate(const void *rsdp, size_t rsdp_length, char *error, size_t size);
/* Whether tsc.source= named a source: its failure is then a usage error. */
bool tsc_source_forced(void);

#endif
