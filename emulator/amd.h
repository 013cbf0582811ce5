/* SPDX-License-Identifier: MIT */
/* The emulated CPU's AMD core PMU: the K7, PerfCtrExtCore and PerfMonV2 MSRs, and AMD's CPUID. */
#ifndef EMULATOR_AMD_H
#define EMULATOR_AMD_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/cpuid.h"
#include "emulator/profile.h"
#include "emulator/registers.h"

/*
 * AMD APM Vol. 2 §13.2 and Linux arch/x86/events/amd/core.c (docs/emulated-cpu.md rule 26).
 * The model owns the whole family on every profile: PERF_CTL0-3/PERF_CTR0-3 (0xC0010000-7),
 * PERF_CTL0-5/PERF_CTR0-5 (0xC0010200-B), the PerfMonV2 global MSRs (0xC0000300-3) and the
 * BPEXT address masks (0xC0011027, 0xC0011019-B), which raise #GP on every profile (BPEXT is not
 * modelled). On an Intel profile each raises #GP.
 */
bool emulator_amd_owns_msr(uint32_t index);
/* A PERF_CTL or PerfMonV2's global control: it changes which counters count. */
bool emulator_amd_msr_enables_counters(uint32_t index);
/* RDMSR and WRMSR of an AMD-owned MSR: true when the access raises #GP(0); nothing changed. */
bool emulator_amd_read_msr(const struct emulator_registers *registers,
			   const struct emulator_profile *profile, uint32_t index, uint64_t *value);
bool emulator_amd_write_msr(struct emulator_registers *registers,
			    const struct emulator_profile *profile, uint32_t index, uint64_t value);
/* The state out of RESET: counters and selects 0; PerfMonV2's global control enables every
 * counter (as KVM resets it: kvm_pmu_refresh()). */
void emulator_amd_reset(struct emulator_registers *registers,
			const struct emulator_profile *profile);

/*
 * The extended leaves on every profile: 0x80000000 EAX at least 0x80000022 with PerfMonV2;
 * 0x80000001 ECX[23] PerfCtrExtCore per profile and ECX[26] BPEXT clear (not modelled), the
 * rest real; 0x80000022 EAX[0] PerfMonV2 and EBX[3:0] the counters, or all zero.
 */
bool emulator_amd_owns_cpuid(uint32_t leaf);
struct cpuid_result emulator_amd_cpuid(const struct emulator_profile *profile, uint32_t leaf,
				       struct cpuid_result real);

#endif
