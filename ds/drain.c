/* SPDX-License-Identifier: MIT */
/* Draining: records leave the buffers, credited to the task that was running; the PMI's drain. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/msr-index.h"
#include "arch/x86/msr.h"
#include "ds/activate.h"
#include "ds/arch_pebs_context.h"
#include "ds/drain.h"
#include "ds/ds.h"
#include "ds/records.h"
#include "ds/save_area.h"
#include "ds/state.h"
#include "kernel/switch_hooks.h"

/*
 * Credit the BTS records since the last credit, in interrupt mode only (a circular buffer is a
 * snapshot that its owner reads in place). Reads only: the index is the CPU's while BTS is on.
 */
static void credit_bts(struct ds_context *context, struct ds_credit *credit)
{
	struct ds_area *area = context->area;
	struct bts_sample sample;
	uint64_t index = area->bts_index;
	uint64_t from =
		context->bts_credited > area->bts_base ? context->bts_credited : area->bts_base;

	if (!context->buffers[DS_USER_BTS].phys || context->bts.circular || index <= from)
		return;
	credit->bts_records += (index - from) / BTS_RECORD_SIZE;
	if (bts_decode((const void *)(index - BTS_RECORD_SIZE), BTS_RECORD_SIZE, &sample)) {
		credit->last_from = sample.from;
		credit->last_to = sample.to;
	}
	context->bts_credited = index;
}

/* The samples of the records in used bytes from at, up to and including the one at last. */
static void credit_pebs_samples(const struct ds_pebs_config *pebs, const uint8_t *at, size_t used,
				size_t last, struct ds_credit *credit)
{
	struct pebs_sample sample;
	unsigned int dropped = 0;
	size_t size;

	for (size_t offset = 0; offset <= last; offset += size) {
		if (!pebs_decode((enum pebs_format)pebs->format, at + offset, used - offset,
				 pebs->data_cfg, &sample, &size))
			break;
		credit->pebs_samples +=
			pebs_record_samples((enum pebs_format)pebs->format, sample.has_status,
					    sample.status, pebs->enable, &dropped);
	}
	credit->pebs_dropped += dropped;
}

/* The same for PEBS, record by record: adaptive records carry their own size (SDM). */
static void credit_pebs(struct ds_context *context, struct ds_credit *credit)
{
	struct ds_area *area = context->area;
	const struct ds_pebs_config *pebs = &context->pebs;
	uint64_t from =
		context->pebs_credited > area->pebs_base ? context->pebs_credited : area->pebs_base;
	size_t used, count = 0, last;
	struct pebs_sample sample;
	size_t size;

	if (!context->buffers[DS_USER_PEBS].phys || area->pebs_index <= from)
		return;
	used = (size_t)(area->pebs_index - from);
	last = pebs_find_last((enum pebs_format)pebs->format, (const void *)from, used,
			      pebs->data_cfg, &count);
	if (last != SIZE_MAX) {
		credit_pebs_samples(pebs, (const uint8_t *)from, used, last, credit);
		credit->pebs_records += count;
		if (pebs_decode((enum pebs_format)pebs->format, (const void *)(from + last),
				used - last, pebs->data_cfg, &sample, &size)) {
			credit->last_pebs_ip = sample.ip;
			credit->last_pebs_counters = sample.has_status ? sample.status : 0;
		}
	}
	context->pebs_credited = area->pebs_index;
}

void ds_credit_context(struct ds_context *context, unsigned int credit_task)
{
	if (!context->area)
		return;
	credit_bts(context, ds_credit_of(credit_task));
	credit_pebs(context, ds_credit_of(credit_task));
}

/*
 * With ds_lock held: credit, then give the buffers back to the CPU by resetting their indexes,
 * as Linux does after reading (ds.c). An area active on this CPU is reset with tracing off
 * (ds_quiesce()): the CPU must never see its fields change under it.
 */
void ds_drain_context(struct ds_context *context, unsigned int credit_task)
{
	ds_drain_users(context, credit_task, DS_DRAIN_ALL);
}

void ds_drain_users(struct ds_context *context, unsigned int credit_task, unsigned int users)
{
	const struct ds_registers *held = ds_registers_held();
	bool active = context->area && held->ds_area == (uint64_t)context->area &&
		      (held->debugctl || held->pebs_enable);
	struct ds_area *area = context->area;

	if (!area)
		return;
	if (active)
		ds_quiesce();
	ds_credit_context(context, credit_task);
	if ((users & DS_DRAIN_USER(DS_USER_BTS)) && context->buffers[DS_USER_BTS].phys) {
		if (!context->bts.circular)
			area->bts_index = area->bts_base;
		context->bts_credited = 0;
	}
	if ((users & DS_DRAIN_USER(DS_USER_PEBS)) && context->buffers[DS_USER_PEBS].phys) {
		area->pebs_index = area->pebs_base;
		context->pebs_credited = 0;
	}
	if (active)
		ds_resume();
}

void ds_drain(const struct ds_target *target)
{
	unsigned long flags = ds_lock_irqsave();

	ds_drain_context(ds_context_of(target), switch_task_current()->index);
	ds_unlock_irqrestore(flags);
	ds_arch_pebs_drain(target);
}

void ds_pmi_drain(void)
{
	struct ds_context *context;
	uint64_t status = 0;

	ds_pmi_counted();
	ds_lock_irqs_off();
	context = ds_context_active();
	if (context)
		ds_drain_context(context, switch_task_current()->index);
	ds_unlock_irqs_off();
	ds_arch_pebs_pmi_drain();
	/* Acknowledge the DS buffer overflow, or no further PEBS PMI comes (§19.6). */
	if (ds_support()->pdcm && rdmsr_safe(MSR_IA32_PERF_GLOBAL_STATUS, &status) == 0 &&
	    (status & PERF_GLOBAL_STATUS_BUFFER_OVF))
		wrmsr_safe(MSR_IA32_PERF_GLOBAL_OVF_CTRL, PERF_GLOBAL_STATUS_BUFFER_OVF);
}
