/* SPDX-License-Identifier: MIT */
/* The synthetic producer: BTS and PEBS stores in software, by the SDM's buffer rules. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/apic.h"
#include "arch/x86/cpu.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/msr-index.h"
#include "arch/x86/processor-flags.h"
#include "arch/x86/tsc.h"
#include "ds/internal.h"
#include "ds/synth.h"
#include "lib/string.h"

static struct ds_synth_stats cpu_stats[MAX_CPUS]; /* each CPU is its own producer */

static struct ds_synth_stats *this_stats(void)
{
	return &cpu_stats[this_cpu_index()];
}

struct ds_synth_stats ds_synth_stats(void)
{
	return *this_stats();
}

struct ds_synth_stats ds_synth_stats_cpu(unsigned int cpu)
{
	return cpu_stats[cpu];
}

#define PMI_DELIVERY_WAIT_MS 10

static void raise_pmi(void)
{
	this_stats()->pmis_raised++;
	apic_send_self_ipi(VECTOR_PMI);
}

/*
 * A real PMI is taken at the next instruction boundary once interrupts are on. Some emulators
 * (KVM-PVM here) deliver a self-IPI only at a later exit: wait for it, boundedly, so the producer
 * keeps the hardware's ordering. With interrupts off it stays pending, as on hardware.
 */
static void await_pmi(uint64_t pmis_before, unsigned long flags)
{
	uint64_t deadline = rdtsc_ordered() + tsc_cycles_from_ms(PMI_DELIVERY_WAIT_MS);

	if (!(flags & RFLAGS_IF))
		return;
	while (ds_pmi_count() == pmis_before && rdtsc_ordered() < deadline)
		cpu_relax();
}

bool ds_synth_branch(uint64_t from, uint64_t to)
{
	const struct ds_registers *registers = ds_registers_held();
	unsigned long flags = local_irq_save();
	struct ds_area *area = (struct ds_area *)registers->ds_area;
	struct bts_record record = { from, to, 0 };
	bool interrupt = registers->debugctl & DEBUGCTL_BTINT;
	uint64_t before;

	if (ds_get_backend() != DS_BACKEND_SYNTHETIC || !area ||
	    (registers->debugctl & (DEBUGCTL_TR | DEBUGCTL_BTS)) != (DEBUGCTL_TR | DEBUGCTL_BTS) ||
	    area->bts_index + BTS_RECORD_SIZE > area->bts_max) {
		this_stats()->dropped++;
		local_irq_restore(flags);
		return false;
	}
	before = area->bts_index;
	memcpy((void *)area->bts_index, &record, sizeof(record));
	area->bts_index += BTS_RECORD_SIZE;
	this_stats()->written++;
	/* Without BTINT the buffer is circular: at the absolute maximum the index wraps. */
	if (!interrupt && area->bts_index >= area->bts_max)
		area->bts_index = area->bts_base;
	if (interrupt && before < area->bts_threshold && area->bts_index >= area->bts_threshold) {
		uint64_t pmis = ds_pmi_count();

		raise_pmi();
		local_irq_restore(flags); /* the self-IPI arrives here */
		await_pmi(pmis, flags);
		return true;
	}
	local_irq_restore(flags);
	return true;
}

bool ds_synth_pebs(const void *bytes, size_t size)
{
	const struct ds_registers *registers = ds_registers_held();
	unsigned long flags = local_irq_save();
	struct ds_area *area = (struct ds_area *)registers->ds_area;
	uint64_t before;

	if (ds_get_backend() != DS_BACKEND_SYNTHETIC || !area || !registers->pebs_enable ||
	    area->pebs_index + size > area->pebs_max) {
		this_stats()->dropped++;
		local_irq_restore(flags);
		return false;
	}
	before = area->pebs_index;
	memcpy((void *)area->pebs_index, bytes, size);
	area->pebs_index += size;
	this_stats()->written++;
	if (before < area->pebs_threshold && area->pebs_index >= area->pebs_threshold) {
		uint64_t pmis = ds_pmi_count();

		raise_pmi();
		local_irq_restore(flags);
		await_pmi(pmis, flags);
		return true;
	}
	local_irq_restore(flags);
	return true;
}
