/* SPDX-License-Identifier: MIT */
/* The emulated CPU's architectural PEBS registers: IA32_PEBS_BASE, _INDEX, CFG_C, leaf 23H. */
#ifndef EMULATOR_ARCH_PEBS_H
#define EMULATOR_ARCH_PEBS_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/cpuid.h"
#include "emulator/profile.h"
#include "emulator/registers.h"

/*
 * Rule 25 (docs/emulated-cpu.md). On a profile with arch_pebs: PERF_CAPABILITIES PEBS_FMT
 * 0xF; CPUID leaf 23H sub-leaves 0, 1, 4 and 5; IA32_PEBS_BASE, IA32_PEBS_INDEX and a CFG_C
 * per counter, each reserved bit #GP; IA32_PEBS_ENABLE and MSR_PEBS_DATA_CFG #GP. On every
 * other profile those MSRs raise #GP and leaf 23H reads 0. Pure: host-tested.
 */

/* PEBS_BASE, PEBS_INDEX and every CFG_C: the model owns them on every profile. */
bool emulator_arch_pebs_owns_msr(uint32_t index);
/* The MSRs arch_pebs.c serves on this profile: those above, and on an arch-PEBS part
 * IA32_PEBS_ENABLE and MSR_PEBS_DATA_CFG (which it refuses). */
bool emulator_arch_pebs_serves_msr(const struct emulator_profile *p, uint32_t index);
/* As emulator_read_msr()/emulator_write_msr(): true for #GP, nothing changed. A CFG_C write
 * keeps registers->pebs_enable the bitmap of CFG_C.EN in PEBS_ENABLE numbering. */
bool emulator_arch_pebs_read_msr(const struct emulator_registers *r,
				 const struct emulator_profile *p, uint32_t index, uint64_t *value);
bool emulator_arch_pebs_write_msr(struct emulator_registers *r, const struct emulator_profile *p,
				  uint32_t index, uint64_t value);

/* GP counters (bit i) and fixed counters (bit i) that can PEBS: CPUID 23H.5 EAX and ECX. */
uint32_t emulator_arch_pebs_gp_counters(const struct emulator_profile *p);
uint32_t emulator_arch_pebs_fixed_counters(const struct emulator_profile *p);
/* The CFG_C bits CPUID 23H.4 EBX allows (bit n of EBX is CFG_C bit 32 + n). */
uint64_t emulator_arch_pebs_caps(const struct emulator_profile *p);
/* The bits a CFG_C of a GP (fixed = false) or fixed counter i defines; 0 when it has none. */
uint64_t emulator_arch_pebs_cfg_c_defined(const struct emulator_profile *p, bool fixed,
					  unsigned int i);
/* GLOBAL_STATUS bits arch-PEBS adds (bit 54, the threshold), for STATUS_RESET and _SET. */
uint64_t emulator_arch_pebs_status_bits(const struct emulator_profile *p);

/* CPUID leaf 23H, owned on every profile. */
bool emulator_arch_pebs_owns_cpuid(uint32_t leaf);
struct cpuid_result emulator_arch_pebs_cpuid(const struct emulator_profile *p, uint32_t subleaf);
/* The highest basic leaf the profile enumerates at least: 23H with arch_pebs, else 0. */
uint32_t emulator_arch_pebs_max_leaf(const struct emulator_profile *p);

#endif
