/* SPDX-License-Identifier: MIT */
/* The emulated CPU: a Debug Store and PMU played behind the MSR and CPUID accessors. */
#ifndef EMULATOR_EMULATOR_H
#define EMULATOR_EMULATOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * ds=auto (the default) installs the model where CPUID.1:EDX.DS=0, ds=emulate always,
 * ds=hardware never. Once installed, the DS, BTS, PEBS and perfmon MSRs and the CPUID leaves
 * that enumerate them are the model's on every CPU, and the model single-steps the code that
 * BTS or an enabled counter observes (docs/emulated-cpu.md). Nothing above arch/x86 sees the
 * difference: only the runner asks, to label results.
 */
void emulator_init(void);
bool emulator_active(void);
/* "emulated (PROFILE)", or "off (ds=hardware)" and the like. */
const char *emulator_describe(void);
/* Whether the model plays a KVM guest's PMU (kvm_pebs): MSRs as KVM, not silicon, takes them. */
bool emulator_plays_kvm_guest(void);
/* The instructions the model lets retire between an overflow and its PMI (0: none; rule 22). */
unsigned int emulator_pmi_skid(void);

struct emulator_stats {
	uint64_t steps; /* single-step #DBs taken */
	uint64_t user_steps; /* of those, in ring 3 */
	uint64_t instructions; /* instructions seen retiring */
	uint64_t branches, taken_branches;
	uint64_t bts_records, pebs_records;
	uint64_t pebs_late; /* of pebs_records, those that landed after PEBS was turned off */
	uint64_t nmis_recorded; /* NMIs in the stepped flow: delivery, IRETQ recorded (rule 21) */
	uint64_t nmis_unobserved; /* in a handler not stepped, or left over */
	uint64_t handlers_stepped; /* exception and interrupt handlers stepped (rule 21) */
	/*
	 * Timer interrupts taken while ring 0 is observed: their handlers are not stepped
	 * (docs/emulated-cpu.md), so each is a margin a ring-0 count must allow.
	 */
	uint64_t ticks_unstepped;
	uint64_t pmis, pmis_masked;
	uint64_t resyncs; /* steps after an exception, a far transfer or a lost step */
	uint64_t diverted; /* RDMSR, WRMSR and CPUID served */
};
/* This CPU's counts, or the sum over every CPU. */
struct emulator_stats emulator_stats(void);
struct emulator_stats emulator_stats_all(void);

#define EMULATOR_VIOLATION_MAX 160

/*
 * Rules broken since the last call, on any CPU: returns how many, and copies the first one's
 * text ("rule N: ...") to text. The runner fails the test that broke them; tests of the rules
 * call it themselves.
 */
unsigned int emulator_take_violations(char *text, size_t size);
/* Warnings (e.g. a BTS threshold one record short of the maximum): as above. */
unsigned int emulator_take_warnings(char *text, size_t size);

#endif
