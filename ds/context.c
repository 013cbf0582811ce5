/* SPDX-License-Identifier: MIT */
/* Contexts: a target's save area and buffers: allocation, sharing by BTS and PEBS, user views. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/cpu.h"
#include "arch/x86/cpuid.h"
#include "arch/x86/msr-index.h"
#include "arch/x86/paging.h"
#include "arch/x86/percpu.h"
#include "arch/x86/user-abi.h"
#include "ds/activate.h"
#include "ds/arch_pebs_context.h"
#include "ds/buffer.h"
#include "ds/context.h"
#include "ds/drain.h"
#include "ds/ds.h"
#include "ds/records.h"
#include "ds/save_area.h"
#include "ds/state.h"
#include "kernel/address_space.h"
#include "kernel/pfa.h"
#include "kernel/smp.h"
#include "kernel/switch_hooks.h"
#include "lib/format.h"
#include "lib/string.h"

#define DS_CANARY 0xa5
#define DS_CANARY_BYTES 64 /* right after the absolute maximum */
#define BUFFER_PAGES_MAX 64 /* what pfa_alloc_pages() gives at most */
#define PEBS_ENABLE_BITS 48 /* GP counters 0-31, fixed counters 32-47 */
#define PEBS_FORMAT0_BUFFER_MAX PAGE_SIZE
#define PEBS_DATA_CFG_VALID                                                                     \
	(PEBS_DATA_CFG_MEMINFO | PEBS_DATA_CFG_GPRS | PEBS_DATA_CFG_XMMS | PEBS_DATA_CFG_LBRS | \
	 (PEBS_DATA_CFG_LBR_MASK << PEBS_DATA_CFG_LBR_SHIFT))

/*
 * The reset-value slot of the counter behind IA32_PEBS_ENABLE bit `bit`
 * (docs/hardware-facts.md §2).
 */
static unsigned int ds_reset_slot(unsigned int format, unsigned int bit)
{
	bool fixed = bit >= PEBS_ENABLE_FIXED_SHIFT;

	return pebs_reset_slot((enum pebs_format)format, fixed,
			       fixed ? bit - PEBS_ENABLE_FIXED_SHIFT : bit);
}

static const char *const error_names[DS_ERROR_COUNT] = {
	[DS_OK] = "ok",
	[DS_ERROR_CONFIG] = "buffer or threshold not allowed",
	[DS_ERROR_NO_MEMORY] = "out of memory",
	[DS_ERROR_BUSY] = "that user is attached already",
	[DS_ERROR_NOT_ATTACHED] = "that user is not attached",
	[DS_ERROR_UNSUPPORTED] = "not supported by this CPU",
	[DS_ERROR_DETACHING] = "a detach of that area is under way on another CPU",
	[DS_ERROR_NO_TARGET] = "no live task or online CPU has that index",
};

const char *ds_error_name(enum ds_error error)
{
	return (unsigned int)error < DS_ERROR_COUNT ? error_names[error] : "unknown error";
}

/* Whether target's index is inside its table: checked before ds_lock, which a fault would keep. */
static bool target_in_range(const struct ds_target *target)
{
	return target->index < (target->cpu ? smp_cpus() : SWITCH_TASKS_MAX);
}

static uint64_t user_view_offset(enum ds_user user)
{
	return user == DS_USER_BTS ? USER_DS_BTS_OFFSET : USER_DS_PEBS_OFFSET;
}

/* Map pages read-only, no-execute, not owned (the DS context frees them) into the user's view. */
static bool user_view_map(uint64_t root, uint64_t virt, uint64_t phys, unsigned int pages)
{
	bool mapped = true;

	for (unsigned int i = 0; i < pages; i++)
		mapped &= address_space_map(root, virt + i * PAGE_SIZE, phys + i * PAGE_SIZE,
					    PTE_USER | PTE_NO_EXECUTE);
	return mapped;
}

static void user_view_unmap(uint64_t root, uint64_t virt, unsigned int pages)
{
	for (unsigned int i = 0; i < pages; i++)
		address_space_unmap(root, virt + i * PAGE_SIZE);
}

/*
 * Frames the CPU may store records into: write-back, below the uncached part of the direct map
 * (the SDM recommends WB for the DS area and buffers).
 */
static bool write_back(uint64_t phys, unsigned int pages)
{
	return phys + (uint64_t)pages * PAGE_SIZE <= DIRECT_MAP_UNCACHED;
}

/* The area: one zeroed page in the direct map, so at one linear address in every CR3, A/D set. */
static bool context_acquire(struct ds_context *context, const struct ds_target *target)
{
	uint64_t root = target->cpu ? 0 : switch_task_address_space(target->index);
	uint64_t phys;

	if (context->area)
		return true;
	phys = pfa_alloc();
	if (!phys)
		return false;
	if (!write_back(phys, 1)) {
		pfa_free(phys);
		return false;
	}
	if (root && !user_view_map(root, USER_DS_BASE, phys, 1)) {
		user_view_unmap(root, USER_DS_BASE, 1);
		pfa_free(phys);
		return false;
	}
	memset(context, 0, sizeof(*context));
	context->area = phys_to_virt(phys);
	context->address_space = root;
	return true;
}

static void context_release_if_unused(struct ds_context *context)
{
	for (unsigned int user = 0; user < DS_USERS; user++)
		if (context->buffers[user].phys)
			return;
	if (context->address_space)
		user_view_unmap(context->address_space, USER_DS_BASE, 1);
	pfa_free(virt_to_phys(context->area));
	context->area = NULL;
}

/*
 * records of record_size bytes and the canary after them have a size in 64 bits: a count whose
 * bytes or pages wrap would give a small buffer with the CPU's maximum far past it.
 */
static bool buffer_size_fits(size_t records, size_t record_size)
{
	size_t bytes;

	return !__builtin_mul_overflow(records, record_size, &bytes) &&
	       bytes <= SIZE_MAX - DS_CANARY_BYTES - PAGE_SIZE;
}

/* Whole records, then a canary: nothing may ever be written past max. */
static bool buffer_alloc(struct ds_context *context, enum ds_user user, size_t records,
			 size_t record_size)
{
	struct ds_buffer *buffer = &context->buffers[user];
	size_t bytes = records * record_size; /* buffer_size_fits() */
	size_t page_count = (bytes + DS_CANARY_BYTES + PAGE_SIZE - 1) / PAGE_SIZE;
	unsigned int pages = (unsigned int)page_count;
	uint64_t phys;

	/* Compared before narrowing: a count past 32 bits must not wrap to a small one. */
	if (records == 0 || page_count > BUFFER_PAGES_MAX)
		return false;
	phys = pfa_alloc_pages(pages);
	if (!phys)
		return false;
	if (!write_back(phys, pages)) {
		pfa_free_pages(phys, pages);
		return false;
	}
	memset((uint8_t *)phys_to_virt(phys) + bytes, DS_CANARY, DS_CANARY_BYTES);
	if (context->address_space &&
	    !user_view_map(context->address_space, USER_DS_BASE + user_view_offset(user), phys,
			   pages)) {
		user_view_unmap(context->address_space, USER_DS_BASE + user_view_offset(user),
				pages);
		pfa_free_pages(phys, pages);
		return false;
	}
	*buffer = (struct ds_buffer){ phys, pages, record_size, bytes };
	return true;
}

bool ds_canary_intact(const struct ds_target *target, enum ds_user user)
{
	const struct ds_buffer *buffer = &ds_context_of(target)->buffers[user];
	const uint8_t *bytes = phys_to_virt(buffer->phys);

	for (size_t i = buffer->bytes; i < buffer->bytes + DS_CANARY_BYTES; i++)
		if (bytes[i] != DS_CANARY)
			return false;
	return true;
}

/* With ds_lock held: the area (on first use) and user's buffer, or why not; nothing on failure. */
static enum ds_error attach_buffer(struct ds_context *context, const struct ds_target *target,
				   enum ds_user user, size_t records, size_t record_size)
{
	/* Under ds_lock, which the task's exit takes to release its area: nothing outlives it. */
	if (!target->cpu && !switch_task_live(target->index))
		return DS_ERROR_NO_TARGET;
	if (context->detaching)
		return DS_ERROR_DETACHING;
	if (context->area && context->buffers[user].phys)
		return DS_ERROR_BUSY;
	if (!context_acquire(context, target))
		return DS_ERROR_NO_MEMORY;
	if (!buffer_alloc(context, user, records, record_size)) {
		context_release_if_unused(context);
		return DS_ERROR_NO_MEMORY;
	}
	return DS_OK;
}

enum ds_error ds_attach_bts(const struct ds_target *target, const struct ds_bts_config *config)
{
	struct ds_context *context = ds_context_of(target);
	struct ds_buffer_fields fields;
	enum ds_error error;
	unsigned long flags;

	if (!target_in_range(target))
		return DS_ERROR_NO_TARGET;
	/* Refused here, not met as a #GP under ds_lock or at the task's next switch-in. */
	if (ds_support()->bts_reason[0] ||
	    ((config->off_os || config->off_usr) && !ds_support()->ds_cpl))
		return DS_ERROR_UNSUPPORTED;
	if (!buffer_size_fits(config->records, BTS_RECORD_SIZE) ||
	    !ds_bts_fields(0, config->records * BTS_RECORD_SIZE, config->circular,
			   config->threshold_records, &fields))
		return DS_ERROR_CONFIG;
	flags = ds_lock_irqsave();
	error = attach_buffer(context, target, DS_USER_BTS, config->records, BTS_RECORD_SIZE);
	if (error) {
		ds_unlock_irqrestore(flags);
		return error;
	}
	context->bts = *config;
	ds_bts_fields((uint64_t)phys_to_virt(context->buffers[DS_USER_BTS].phys),
		      config->records * BTS_RECORD_SIZE, config->circular,
		      config->threshold_records, &fields);
	context->area->bts_base = fields.base;
	context->area->bts_index = fields.index;
	context->area->bts_max = fields.max;
	context->area->bts_threshold = fields.threshold;
	ds_unlock_irqrestore(flags);
	ds_sync_target(target, false);
	return DS_OK;
}

/*
 * What this CPU's PEBS can take, refused here rather than met as a #GP under ds_lock: the
 * CPU's own record format and record size, counters it can sample
 * (ds_support()->pebs_enable_valid), a reset slot for each, and for format 0 a buffer of at most
 * one page (larger ones hang Core 2; Linux ds.c); then the buffer rules of ds_pebs_fields().
 * false with the first broken rule in reason.
 */
static bool ds_pebs_config_check(const struct ds_pebs_config *config, char *reason, size_t size)
{
	const struct ds_support *support = ds_support();
	struct ds_buffer_fields fields;

	if (config->format != support->pebs_format) {
		format(reason, size, "PEBS format %u: this CPU's is %u", config->format,
		       support->pebs_format);
		return false;
	}
	if (config->enable == 0 || (config->enable & ~support->pebs_enable_valid)) {
		format(reason, size, "enable 0x%llx: PEBS_ENABLE takes 0x%llx here",
		       (unsigned long long)config->enable,
		       (unsigned long long)support->pebs_enable_valid);
		return false;
	}
	if (config->pdist) {
		format(reason, size,
		       "pdist 0x%llx: only CPUID leaf 23H (architectural PEBS) enumerates precise "
		       "distribution",
		       (unsigned long long)config->pdist);
		return false;
	}
	/* PEBS_DATA_CFG exists only with adaptive PEBS, and its reserved bits #GP (SDM). */
	if (config->data_cfg && (!support->pebs_baseline || config->format < PEBS_FORMAT_4 ||
				 (config->data_cfg & ~PEBS_DATA_CFG_VALID))) {
		format(reason, size, "PEBS_DATA_CFG 0x%llx: baseline %u, format %u, valid 0x%llx",
		       (unsigned long long)config->data_cfg, support->pebs_baseline, config->format,
		       (unsigned long long)PEBS_DATA_CFG_VALID);
		return false;
	}
	/*
	 * The CPU moves the index by the record it writes: the format's own, or for adaptive
	 * formats up to the one data_cfg's groups make. Smaller slots would let it write past max.
	 */
	if (pebs_format_is_adaptive((enum pebs_format)config->format)
		    ? config->record_size < pebs_adaptive_record_size(config->data_cfg)
		    : config->record_size != pebs_record_size((enum pebs_format)config->format)) {
		format(reason, size, "record size %zu: not format %u's record", config->record_size,
		       config->format);
		return false;
	}
	for (unsigned int bit = 0; bit < PEBS_ENABLE_BITS; bit++) {
		if ((config->enable & (1ull << bit)) &&
		    ds_reset_slot(config->format, bit) == PEBS_RESET_SLOT_NONE) {
			format(reason, size, "counter bit %u: format %u has no reset slot for it",
			       bit, config->format);
			return false;
		}
	}
	if (!buffer_size_fits(config->records, config->record_size) ||
	    (config->format == PEBS_FORMAT_0 &&
	     config->records * config->record_size > PEBS_FORMAT0_BUFFER_MAX) ||
	    !ds_pebs_fields(0, config->records * config->record_size, config->record_size,
			    config->threshold_records, &fields)) {
		format(reason, size,
		       "%zu records of %zu bytes with a threshold of %zu: not a buffer the DS area "
		       "rules allow",
		       config->records, config->record_size, config->threshold_records);
		return false;
	}
	return true;
}

enum ds_error ds_pebs_check(const struct ds_pebs_config *config, char *reason, size_t size)
{
	if (size)
		reason[0] = '\0';
	if (ds_support()->arch_pebs.usable)
		return ds_arch_pebs_check(config, reason, size);
	if (ds_support()->pebs_reason[0]) {
		format(reason, size, "%s", ds_support()->pebs_reason);
		return DS_ERROR_UNSUPPORTED;
	}
	return ds_pebs_config_check(config, reason, size) ? DS_OK : DS_ERROR_CONFIG;
}

enum ds_error ds_attach_pebs(const struct ds_target *target, const struct ds_pebs_config *config)
{
	struct ds_context *context = ds_context_of(target);
	struct ds_buffer_fields fields;
	enum ds_error error;
	unsigned long flags;

	if (!target_in_range(target))
		return DS_ERROR_NO_TARGET;
	if (ds_support()->arch_pebs.usable)
		return ds_arch_pebs_attach(target, config);
	if (ds_support()->pebs_reason[0])
		return DS_ERROR_UNSUPPORTED;
	if (!ds_pebs_config_check(config, NULL, 0))
		return DS_ERROR_CONFIG;
	flags = ds_lock_irqsave();
	error = attach_buffer(context, target, DS_USER_PEBS, config->records, config->record_size);
	if (error) {
		ds_unlock_irqrestore(flags);
		return error;
	}
	context->pebs = *config;
	ds_pebs_fields((uint64_t)phys_to_virt(context->buffers[DS_USER_PEBS].phys),
		       config->records * config->record_size, config->record_size,
		       config->threshold_records, &fields);
	context->area->pebs_base = fields.base;
	context->area->pebs_index = fields.index;
	context->area->pebs_max = fields.max;
	context->area->pebs_threshold = fields.threshold;
	for (unsigned int bit = 0; bit < PEBS_ENABLE_BITS; bit++)
		if (config->enable & (1ull << bit))
			context->area->pebs_reset[ds_reset_slot(config->format, bit)] =
				config->reset_value;
	ds_unlock_irqrestore(flags);
	ds_sync_target(target, false);
	return DS_OK;
}

/*
 * In two steps around ds_sync_target(). First the user is marked stopping, so that no CPU turns
 * its feature on any more; the sync makes the CPU that has the area active turn it off (and
 * IA32_DS_AREA to 0 when no user is left) and, for a user task running there, flush its TLB.
 * Only then is the buffer drained and its fields cleared (never under a tracing CPU: SDM, and
 * Linux drains with BTS off), and the memory given back. Meanwhile the context is marked
 * detaching, and other attaches and detaches of it are refused.
 */
enum ds_error ds_detach(const struct ds_target *target, enum ds_user user)
{
	struct ds_context *context;
	unsigned long flags;
	struct ds_buffer buffer;
	bool last;

	if (!target_in_range(target))
		return DS_ERROR_NO_TARGET;
	if ((unsigned int)user >= DS_USERS)
		return DS_ERROR_NOT_ATTACHED;
	if (user == DS_USER_PEBS && ds_support()->arch_pebs.usable)
		return ds_arch_pebs_detach(target);
	context = ds_context_of(target);
	flags = ds_lock_irqsave();
	buffer = context->buffers[user];

	if (context->detaching) {
		ds_unlock_irqrestore(flags);
		return DS_ERROR_DETACHING;
	}
	if (!context->area || !buffer.phys) {
		ds_unlock_irqrestore(flags);
		return DS_ERROR_NOT_ATTACHED;
	}
	context->stopping[user] = true;
	last = !ds_user_live(context, DS_USER_BTS) && !ds_user_live(context, DS_USER_PEBS);
	if (context->address_space) {
		user_view_unmap(context->address_space, USER_DS_BASE + user_view_offset(user),
				buffer.pages);
		if (last)
			user_view_unmap(context->address_space, USER_DS_BASE, 1);
	}
	context->detaching = true;
	ds_unlock_irqrestore(flags);
	ds_sync_target(target, true);
	flags = ds_lock_irqsave();
	ds_drain_users(context, target->cpu ? switch_task_current()->index : target->index,
		       DS_DRAIN_USER(user));
	context->buffers[user] = (struct ds_buffer){ 0 };
	context->stopping[user] = false;
	if (user == DS_USER_BTS) {
		context->bts = (struct ds_bts_config){ 0 };
		context->area->bts_base = context->area->bts_index = 0;
		context->area->bts_max = context->area->bts_threshold = 0;
	} else {
		context->pebs = (struct ds_pebs_config){ 0 };
		context->area->pebs_base = context->area->pebs_index = 0;
		context->area->pebs_max = context->area->pebs_threshold = 0;
	}
	pfa_free_pages(buffer.phys, buffer.pages);
	if (context->release_all && !last) {
		/* The task exited meanwhile (ds_release_all()): the other user goes too. */
		context->release_all = false;
		context->detaching = false;
		ds_unlock_irqrestore(flags);
		return ds_detach(target, user == DS_USER_BTS ? DS_USER_PEBS : DS_USER_BTS);
	}
	if (last) {
		pfa_free(virt_to_phys(context->area));
		context->area = NULL;
	}
	context->release_all = false;
	context->detaching = false;
	ds_unlock_irqrestore(flags);
	return DS_OK;
}

void ds_release_all(const struct ds_target *target)
{
	struct ds_context *context = ds_context_of(target);

	for (;;) {
		unsigned long flags = ds_lock_irqsave();
		enum ds_user user = context->buffers[DS_USER_BTS].phys ? DS_USER_BTS : DS_USER_PEBS;

		if (context->detaching)
			context->release_all = true; /* the detach under way finishes the job */
		if (context->detaching || !context->area) {
			ds_unlock_irqrestore(flags);
			return;
		}
		ds_unlock_irqrestore(flags);
		ds_detach(target, user);
	}
}

static unsigned int release_counting(const struct ds_target *target)
{
	const struct ds_context *context = ds_context_of(target);
	unsigned int users = context->area ? !!context->buffers[DS_USER_BTS].phys +
						     !!context->buffers[DS_USER_PEBS].phys
					   : 0;

	if (users)
		ds_release_all(target);
	return users;
}

unsigned int ds_release_leftovers(unsigned int task)
{
	struct ds_target own = { false, task };
	unsigned int left = release_counting(&own) + ds_arch_pebs_release(task);

	for (unsigned int cpu = 0; cpu < smp_cpus(); cpu++) {
		struct ds_target target = { true, cpu };

		left += release_counting(&target);
	}
	return left;
}

struct ds_area *ds_area_get(const struct ds_target *target)
{
	if (!target_in_range(target))
		return NULL;
	return ds_context_of(target)->area;
}
