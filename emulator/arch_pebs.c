/* SPDX-License-Identifier: MIT */
/* The emulated CPU's architectural PEBS registers and CPUID leaf 23H, per profile (rule 25). */
#include "emulator/arch_pebs.h"

#include "arch/x86/arch-pebs.h"
#include "arch/x86/msr-index.h"

/*
 * Sources: the Linux arch-PEBS patches (msr-index.h, perf_event.h, core.c update_pmu_cap(),
 * ds.c), as arch/x86/arch-pebs.h gives them; the ISE document was not available. Where they
 * leave a case open the model chooses, and says so here and in docs/emulated-cpu.md.
 */

#define PHYS_ADDRESS_BITS 46 /* the model's MAXPHYADDR for PEBS_BASE (choice) */
#define PHYS_ADDRESS_MASK ((1ull << PHYS_ADDRESS_BITS) - 1)
/* Fixed counters 0-2 can PEBS; fixed 3 (topdown slots) counts nothing in the model (choice). */
#define FIXED_PEBS_MAX 3
/* PDIST (precise distribution) on GP counters 0-1 and fixed counter 0 (choice: silicon's set
 * is per part; only enumeration is modelled). */
#define PDIST_GP 0x3u
#define PDIST_FIXED 0x1u
/*
 * CPUID 23H.4 EBX: the CFG_C groups the model writes (bit n = CFG_C bit 32 + n): counter
 * snapshots with their allow bit (35-37), LBR (40-41), XMM (49), GPR (61), AUX (62). Perf
 * metrics (38) are not modelled.
 */
#define PEBS_CAPS                                                                               \
	(ARCH_PEBS_CNTR_ALLOW | ARCH_PEBS_CNTR_GP | ARCH_PEBS_CNTR_FIXED | ARCH_PEBS_LBR_MASK | \
	 ARCH_PEBS_XMM | ARCH_PEBS_GPR | ARCH_PEBS_AUX)
#define LEAF_23_SUBLEAF0_EAX                                              \
	(CPUID_23_EAX_COUNTERS_SUBLEAF | CPUID_23_EAX_PEBS_CAPS_SUBLEAF | \
	 CPUID_23_EAX_PEBS_COUNTERS_SUBLEAF)

static bool in_family(uint32_t index, uint32_t first, unsigned int count, unsigned int *i)
{
	if (index < first || (index - first) % MSR_IA32_PMC_CFG_C_STRIDE ||
	    (index - first) / MSR_IA32_PMC_CFG_C_STRIDE >= count)
		return false;
	*i = (index - first) / MSR_IA32_PMC_CFG_C_STRIDE;
	return true;
}

/* Asked by every MSR accessor, also in counted code: the common answer (no) comes first. */
bool emulator_arch_pebs_owns_msr(uint32_t index)
{
	unsigned int i;

	if (index > MSR_IA32_PMC_FX0_CFG_C + MSR_IA32_PMC_CFG_C_STRIDE * EMULATOR_MAX_FIXED)
		return false;
	return index == MSR_IA32_PEBS_BASE || index == MSR_IA32_PEBS_INDEX ||
	       in_family(index, MSR_IA32_PMC_GP0_CFG_C, EMULATOR_MAX_GP, &i) ||
	       in_family(index, MSR_IA32_PMC_FX0_CFG_C, EMULATOR_MAX_FIXED, &i);
}

bool emulator_arch_pebs_serves_msr(const struct emulator_profile *p, uint32_t index)
{
	if (p->arch_pebs && (index == MSR_IA32_PEBS_ENABLE || index == MSR_PEBS_DATA_CFG))
		return true;
	return emulator_arch_pebs_owns_msr(index);
}

/* The counters that exist, by number: GLOBAL_CTRL's layout, GP from bit 0 and fixed from 32. */
static uint32_t gp_exist(const struct emulator_profile *p)
{
	return (uint32_t)emulator_counter_bits(p);
}

static uint32_t fixed_exist(const struct emulator_profile *p)
{
	return (uint32_t)(emulator_counter_bits(p) / PERF_GLOBAL_FIXED_CTR0);
}

uint32_t emulator_arch_pebs_gp_counters(const struct emulator_profile *p)
{
	if (!p->arch_pebs)
		return 0;
	/* arch_pebs_stray: one counter beyond those 23H.1 enumerates (Linux then refuses). */
	return gp_exist(p) | (p->arch_pebs_stray ? 1u << p->gp_counters : 0);
}

uint32_t emulator_arch_pebs_fixed_counters(const struct emulator_profile *p)
{
	return p->arch_pebs ? fixed_exist(p) & ((1u << FIXED_PEBS_MAX) - 1) : 0;
}

uint64_t emulator_arch_pebs_caps(const struct emulator_profile *p)
{
	return p->arch_pebs ? PEBS_CAPS : 0;
}

uint64_t emulator_arch_pebs_cfg_c_defined(const struct emulator_profile *p, bool fixed,
					  unsigned int i)
{
	uint32_t exist = fixed ? fixed_exist(p) : gp_exist(p);
	uint32_t pebs =
		fixed ? emulator_arch_pebs_fixed_counters(p) : emulator_arch_pebs_gp_counters(p);

	if (!p->arch_pebs || i >= 32 || !(exist & (1u << i)))
		return 0;
	/* EN only on a counter 23H.5 names (choice: the layout gives no other rule). */
	return ARCH_PEBS_RELOAD_MASK | PEBS_CAPS | (pebs & (1u << i) ? ARCH_PEBS_EN : 0);
}

uint64_t emulator_arch_pebs_status_bits(const struct emulator_profile *p)
{
	return p->arch_pebs ? PERF_GLOBAL_STATUS_ARCH_PEBS_THRESHOLD : 0;
}

/* The CFG_C register an index names, or NULL; *fixed and *i say which counter. */
static const uint64_t *cfg_c_of(const struct emulator_registers *r, uint32_t index, bool *fixed,
				unsigned int *i)
{
	if (in_family(index, MSR_IA32_PMC_GP0_CFG_C, EMULATOR_MAX_GP, i)) {
		*fixed = false;
		return &r->cfg_c[*i];
	}
	if (in_family(index, MSR_IA32_PMC_FX0_CFG_C, EMULATOR_MAX_FIXED, i)) {
		*fixed = true;
		return &r->fixed_cfg_c[*i];
	}
	return NULL;
}

bool emulator_arch_pebs_read_msr(const struct emulator_registers *r,
				 const struct emulator_profile *p, uint32_t index, uint64_t *value)
{
	const uint64_t *cfg;
	unsigned int i;
	bool fixed;

	if (!p->arch_pebs)
		return true;
	switch (index) {
	case MSR_IA32_PEBS_BASE:
		*value = r->pebs_base;
		return false;
	case MSR_IA32_PEBS_INDEX:
		*value = r->pebs_index;
		return false;
	}
	cfg = cfg_c_of(r, index, &fixed, &i);
	if (!cfg || !emulator_arch_pebs_cfg_c_defined(p, fixed, i))
		return true; /* PEBS_ENABLE, DATA_CFG, or the CFG_C of a counter that is absent */
	*value = *cfg;
	return false;
}

/* PEBS_ENABLE numbering: GP counter i at bit i, fixed counter i at bit 32 + i. */
static uint64_t enabled_bitmap(const struct emulator_registers *r)
{
	uint64_t bits = 0;

	for (unsigned int i = 0; i < EMULATOR_MAX_GP; i++)
		if (r->cfg_c[i] & ARCH_PEBS_EN)
			bits |= 1ull << i;
	for (unsigned int i = 0; i < EMULATOR_MAX_FIXED; i++)
		if (r->fixed_cfg_c[i] & ARCH_PEBS_EN)
			bits |= PEBS_ENABLE_FIXED_CTR0 << i;
	return bits;
}

bool emulator_arch_pebs_write_msr(struct emulator_registers *r, const struct emulator_profile *p,
				  uint32_t index, uint64_t value)
{
	uint64_t *cfg;
	unsigned int i;
	bool fixed;

	if (!p->arch_pebs)
		return true;
	switch (index) {
	case MSR_IA32_PEBS_BASE:
		/* A physical address below MAXPHYADDR, 4 KiB aligned; bits 11:4 reserved. */
		if (value &
		    ~(ARCH_PEBS_BASE_SIZE_MASK | (ARCH_PEBS_BASE_ADDRESS_MASK & PHYS_ADDRESS_MASK)))
			return true;
		r->pebs_base = value;
		return false;
	case MSR_IA32_PEBS_INDEX:
		if (value & ~ARCH_PEBS_INDEX_DEFINED)
			return true;
		r->pebs_index = value;
		return false;
	}
	cfg = (uint64_t *)cfg_c_of(r, index, &fixed, &i);
	if (!cfg || !emulator_arch_pebs_cfg_c_defined(p, fixed, i) ||
	    (value & ~emulator_arch_pebs_cfg_c_defined(p, fixed, i)))
		return true;
	*cfg = value;
	r->pebs_enable = enabled_bitmap(r);
	return false;
}

bool emulator_arch_pebs_owns_cpuid(uint32_t leaf)
{
	return leaf == CPUID_LEAF_PERFMON_EXT;
}

uint32_t emulator_arch_pebs_max_leaf(const struct emulator_profile *p)
{
	return p->arch_pebs ? CPUID_LEAF_PERFMON_EXT : 0;
}

struct cpuid_result emulator_arch_pebs_cpuid(const struct emulator_profile *p, uint32_t subleaf)
{
	struct cpuid_result r = { 0 };

	if (!p->arch_pebs)
		return r; /* no leaf 23H: the profiles before arch-PEBS (choice) */
	switch (subleaf) {
	case 0:
		r.eax = LEAF_23_SUBLEAF0_EAX;
		break;
	case CPUID_23_SUBLEAF_COUNTERS:
		r.eax = gp_exist(p);
		r.ebx = fixed_exist(p);
		break;
	case CPUID_23_SUBLEAF_PEBS_CAPS:
		r.ebx = (uint32_t)(PEBS_CAPS >> CPUID_23_PEBS_CAPS_SHIFT);
		break;
	case CPUID_23_SUBLEAF_PEBS_COUNTERS:
		r.eax = emulator_arch_pebs_gp_counters(p);
		r.ebx = PDIST_GP & gp_exist(p);
		r.ecx = emulator_arch_pebs_fixed_counters(p);
		r.edx = PDIST_FIXED & fixed_exist(p);
		break;
	}
	return r;
}
