/* SPDX-License-Identifier: MIT */
/* The emulated CPU's architectural PEBS assist: records in the buffer IA32_PEBS_BASE names. */
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/arch-pebs.h"
#include "arch/x86/cpu.h"
#include "arch/x86/msr-index.h"
#include "arch/x86/paging.h"
#include "emulator/arch_pebs_record.h"
#include "emulator/internal.h"

#define BIT_31 (1ull << 31)

/* The counter's CFG_C, in PEBS_ENABLE numbering. */
static uint64_t cfg_c(const struct emulator_registers *r, unsigned int bit)
{
	return bit < PEBS_ENABLE_FIXED_SHIFT ? r->cfg_c[bit]
					     : r->fixed_cfg_c[bit - PEBS_ENABLE_FIXED_SHIFT];
}

/*
 * The reload value of CFG_C bits 31:0, sign-extended from bit 31 to the counter's width: the
 * -period Linux writes there makes a 48-bit counter overflow after period events again, as
 * a legacy PMC write does (inference: the layout gives 32 bits for the value).
 */
static uint64_t reload_value(uint64_t cfg, uint64_t mask)
{
	uint64_t value = cfg & ARCH_PEBS_RELOAD_MASK;

	if (value & BIT_31)
		value |= ~ARCH_PEBS_RELOAD_MASK;
	return value & mask;
}

static void assist_fill(struct arch_pebs_assist *a, const struct emulator_registers *r,
			unsigned int lowest)
{
	a->cfg_c = cfg_c(r, lowest);
	for (unsigned int i = 0; i < EMULATOR_MAX_GP; i++) {
		a->gp[i] = r->counter[i];
		if (r->cfg_c[i] & ARCH_PEBS_CNTR_ALLOW)
			a->gp_allowed |= 1u << i;
	}
	for (unsigned int i = 0; i < EMULATOR_MAX_FIXED; i++) {
		a->fixed[i] = r->fixed_counter[i];
		if (r->fixed_cfg_c[i] & ARCH_PEBS_CNTR_ALLOW)
			a->fixed_allowed |= 1u << i;
	}
}

/*
 * Rule 25. IA32_PEBS_INDEX.EN off: no record (inference: Linux sets EN whenever it arms the
 * buffer). PEBS_BASE 0 with a PEBS counter armed: reported (the hardware was told to stop, so
 * software left a counter enabled). A record that does not fit below the buffer's size sets
 * FULL and is lost. The threshold PMI comes when WR reaches THRESH: GLOBAL_STATUS bit 54, not
 * bit 62 (Linux handle_pmi_common()). The groups are those of the lowest counter's CFG_C
 * (choice, as for adaptive PEBS: rule 23).
 */
bool emulator_arch_pebs_assist(struct emulator_cpu *cpu, uint64_t bits, uint64_t eventing_ip,
			       struct cpu_regs *regs)
{
	const struct emulator_profile *p = emulator_profile();
	struct emulator_registers *r = &cpu->registers;
	unsigned int lowest = (unsigned int)__builtin_ctzll(bits);
	uint64_t base = r->pebs_base & ARCH_PEBS_BASE_ADDRESS_MASK;
	uint64_t size = ARCH_PEBS_BUFFER_BYTES(r->pebs_base & ARCH_PEBS_BASE_SIZE_MASK);
	uint64_t wr = (r->pebs_index & ARCH_PEBS_INDEX_WR_MASK) >> ARCH_PEBS_INDEX_WR_SHIFT;
	uint64_t thresh =
		(r->pebs_index & ARCH_PEBS_INDEX_THRESH_MASK) >> ARCH_PEBS_INDEX_THRESH_SHIFT;
	struct arch_pebs_assist a = {
		.applicable_counters = bits,
		.eventing_ip = eventing_ip,
		.tsc = rdtsc_ordered(),
		.split = (enum arch_pebs_split)p->arch_pebs_fragments,
	};
	uint64_t bytes, next;

	if (!base) {
		emulator_violation(25,
				   "a PEBS counter (0x%llx) is armed with IA32_PEBS_BASE = 0: the "
				   "buffer was withdrawn before CFG_C.EN was cleared",
				   (unsigned long long)bits);
		return false;
	}
	if (!(r->pebs_index & ARCH_PEBS_INDEX_EN))
		return false;
	if (base + size > DIRECT_MAP_UNCACHED) {
		emulator_violation(25,
				   "IA32_PEBS_BASE 0x%llx: %llu bytes beyond the RAM the model "
				   "maps (0x%lx)",
				   (unsigned long long)r->pebs_base, (unsigned long long)size,
				   DIRECT_MAP_UNCACHED);
		return false;
	}
	emulator_machine_state(regs, &a.state);
	assist_fill(&a, r, lowest);
	bytes = arch_pebs_record_bytes(&a);
	if (wr * ARCH_PEBS_INDEX_UNIT + bytes > size || (r->pebs_index & ARCH_PEBS_INDEX_FULL)) {
		r->pebs_index |= ARCH_PEBS_INDEX_FULL; /* the record is lost */
		return false;
	}
	arch_pebs_record_write(&a, phys_to_virt(base + wr * ARCH_PEBS_INDEX_UNIT), (size_t)bytes);
	cpu->stats.pebs_records++;
	next = wr + bytes / ARCH_PEBS_INDEX_UNIT;
	r->pebs_index =
		(r->pebs_index & ~ARCH_PEBS_INDEX_WR_MASK) | (next << ARCH_PEBS_INDEX_WR_SHIFT);
	for (uint64_t left = bits; left; left &= left - 1) {
		unsigned int bit = (unsigned int)__builtin_ctzll(left);

		if (bit < PEBS_ENABLE_FIXED_SHIFT)
			r->counter[bit] =
				reload_value(r->cfg_c[bit], emulator_counter_mask(p, false));
		else
			r->fixed_counter[bit - PEBS_ENABLE_FIXED_SHIFT] =
				reload_value(cfg_c(r, bit), emulator_counter_mask(p, true));
	}
	r->global_status &= ~bits;
	if (thresh && wr < thresh && next >= thresh) {
		r->global_status |= PERF_GLOBAL_STATUS_ARCH_PEBS_THRESHOLD;
		emulator_pmi_request(cpu);
	}
	return true;
}

/*
 * Rules 17 and 18 for CFG_C: a counter's CFG_C is written only while the counter does not
 * count, as PEBS_ENABLE and the reset slots are for DS-area PEBS (Linux
 * intel_pmu_enable_event_ext() writes it before the counter is enabled; 52448a0a7390 leaves it
 * alone once the counter is disabled, "as CFG_C has no effect" then). EN changing is rule 18,
 * the reload value or the groups rule 17. before is the register file before the WRMSR.
 */
void emulator_arch_pebs_write_check(struct emulator_cpu *cpu,
				    const struct emulator_registers *before)
{
	const struct emulator_registers *r = &cpu->registers;

	for (unsigned int bit = 0; bit < PEBS_ENABLE_FIXED_SHIFT + EMULATOR_MAX_FIXED; bit++) {
		bool fixed = bit >= PEBS_ENABLE_FIXED_SHIFT;
		unsigned int i = fixed ? bit - PEBS_ENABLE_FIXED_SHIFT : bit;
		bool counting = fixed ? cpu->counting.fixed & (1u << i)
				      : i < EMULATOR_MAX_GP && (cpu->counting.gp & (1u << i));
		uint64_t old, now;

		if (!fixed && i >= EMULATOR_MAX_GP)
			continue;
		old = cfg_c(before, bit);
		now = cfg_c(r, bit);
		if (old == now || !counting)
			continue;
		if ((old ^ now) & ARCH_PEBS_EN)
			emulator_violation(18,
					   "CFG_C of counter bit %u: EN 0x%llx -> 0x%llx while it "
					   "counts (GLOBAL_CTRL=0x%llx)",
					   bit, (unsigned long long)old, (unsigned long long)now,
					   (unsigned long long)r->global_ctrl);
		else
			emulator_violation(
				17,
				"CFG_C of counter bit %u: 0x%llx -> 0x%llx while it counts "
				"(GLOBAL_CTRL=0x%llx)",
				bit, (unsigned long long)old, (unsigned long long)now,
				(unsigned long long)r->global_ctrl);
	}
}
