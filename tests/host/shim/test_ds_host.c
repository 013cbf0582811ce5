/* SPDX-License-Identifier: MIT */
/* Host tests of ds/ on the emulated CPU: the MSR writes of attach, switch, detach and drain. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/msr-index.h"
#include "arch/x86/paging.h"
#include "arch/x86/user-abi.h"
#include "ds/ds.h"
#include "ds/records.h"
#include "ds/save_area.h"
#include "kernel/switch_hooks.h"
#include "pmu/pmu.h"
#include "tests/host/shim/shim.h"

#define BTS_ARMED (DEBUGCTL_TR | DEBUGCTL_BTS | DEBUGCTL_BTINT) /* interrupt mode */
#define BTS_CIRCULAR (DEBUGCTL_TR | DEBUGCTL_BTS)
#define RECORDS 256
#define THRESHOLD 200 /* 256 / 16 = 16 records of room: up to 240 */
#define ROOM 16
#define TASK_A 1
#define TASK_B 2
#define ROOT 0x123000ull /* a user task's page-table root, as the shim records it */

static struct ds_target task_target(unsigned int task)
{
	return (struct ds_target){ false, task };
}

static struct ds_target cpu_target(unsigned int cpu)
{
	return (struct ds_target){ true, cpu };
}

static struct ds_bts_config bts_interrupt(size_t records, size_t threshold)
{
	return (struct ds_bts_config){ .records = records, .threshold_records = threshold };
}

static struct ds_bts_config bts_circular(size_t records)
{
	return (struct ds_bts_config){ .records = records, .circular = true };
}

static uint64_t area_address(const struct ds_target *target)
{
	return (uint64_t)ds_area_get(target);
}

/* Pages of a buffer of bytes: the records, then ds/'s 64-byte canary. */
static unsigned int buffer_pages(size_t bytes)
{
	return (unsigned int)((bytes + 64 + PAGE_SIZE - 1) / PAGE_SIZE);
}

/* Attach and detach change nothing on a refusal: no write, no page, no area. */
static void check_refused(enum ds_error expected, enum ds_error error,
			  const struct ds_target *target)
{
	host_check_str(ds_error_name(expected), ds_error_name(error));
	shim_check_no_writes();
	host_check_eq_u64(0, shim_pages_out());
	host_check(ds_area_get(target) == NULL);
}

SHIM_TEST(ds_host_attach_bts_for_the_current_task_writes_ds_area_then_debugctl, "icelake")
{
	struct ds_target self = task_target(0); /* the current task at boot */
	struct ds_bts_config config = bts_interrupt(RECORDS, THRESHOLD);
	const struct ds_area *area;

	shim_boot();
	if (!host_check_eq_u64(DS_OK, ds_attach_bts(&self, &config)))
		return;
	area = ds_area_get(&self);
	shim_check_writes({ MSR_IA32_DS_AREA, (uint64_t)area }, { MSR_IA32_DEBUGCTL, BTS_ARMED });
	/* SDM "DS Save Area": whole records from a 4-byte aligned base, the threshold in them. */
	host_check_eq_u64(0, area->bts_base % 4);
	host_check_eq_u64(area->bts_base, area->bts_index);
	host_check_eq_u64(area->bts_base + RECORDS * BTS_RECORD_SIZE, area->bts_max);
	host_check_eq_u64(area->bts_base + THRESHOLD * BTS_RECORD_SIZE, area->bts_threshold);
	host_check(area->bts_threshold + ROOM * BTS_RECORD_SIZE <= area->bts_max);
	host_check_eq_u64(0, area->pebs_base | area->pebs_index | area->pebs_max);
	host_check_eq_u64(1 + buffer_pages(RECORDS * BTS_RECORD_SIZE), shim_pages_out());
	host_check(ds_canary_intact(&self, DS_USER_BTS));
	host_check_eq_u64((uint64_t)area, ds_registers().ds_area);
	host_check_eq_u64(BTS_ARMED, shim_registers(0)->debugctl);
	host_check_eq_u64(DS_OK, ds_detach(&self, DS_USER_BTS));
	shim_check_clean();
}

/* Each configuration's DEBUGCTL bits and threshold, attached and detached in turn. */
SHIM_TEST(ds_host_attach_bts_writes_the_configured_debugctl_bits_and_threshold, "icelake")
{
	static const struct {
		struct ds_bts_config config;
		uint64_t debugctl;
	} cases[] = {
		{ { .records = 64, .threshold_records = 60 }, BTS_ARMED }, /* 4 of room */
		{ { .records = 64, .circular = true }, BTS_CIRCULAR },
		{ { .records = 8, .threshold_records = 6, .off_os = true },
		  BTS_ARMED | DEBUGCTL_BTS_OFF_OS },
		{ { .records = 1, .circular = true, .off_usr = true },
		  BTS_CIRCULAR | DEBUGCTL_BTS_OFF_USR },
	};
	struct ds_target self = task_target(0);

	shim_boot();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct ds_bts_config *config = &cases[i].config;
		const struct ds_area *area;

		shim_log_clear();
		if (!host_check_eq_u64(DS_OK, ds_attach_bts(&self, config)))
			return;
		area = ds_area_get(&self);
		shim_check_writes({ MSR_IA32_DS_AREA, (uint64_t)area },
				  { MSR_IA32_DEBUGCTL, cases[i].debugctl });
		host_check_eq_u64(area->bts_base + config->records * BTS_RECORD_SIZE,
				  area->bts_max);
		/* Circular: a threshold one record past max is never reached (SDM). */
		host_check_eq_u64(config->circular ? area->bts_max + BTS_RECORD_SIZE
						   : area->bts_base + config->threshold_records *
									      BTS_RECORD_SIZE,
				  area->bts_threshold);
		shim_log_clear();
		host_check_eq_u64(DS_OK, ds_detach(&self, DS_USER_BTS));
		shim_check_writes({ MSR_IA32_DEBUGCTL, 0 }, { MSR_IA32_DS_AREA, 0 });
	}
	shim_check_clean();
}

SHIM_TEST(ds_host_attach_bts_refuses_a_buffer_the_sdm_does_not_allow, "icelake")
{
	struct ds_target self = task_target(0);
	struct ds_bts_config no_room = bts_interrupt(RECORDS, RECORDS - ROOM + 1);
	struct ds_bts_config no_threshold = bts_interrupt(RECORDS, 0);
	struct ds_bts_config no_record = bts_circular(0);
	struct ds_bts_config last_allowed = bts_interrupt(RECORDS, RECORDS - ROOM);

	shim_boot();
	check_refused(DS_ERROR_CONFIG, ds_attach_bts(&self, &no_room), &self);
	check_refused(DS_ERROR_CONFIG, ds_attach_bts(&self, &no_threshold), &self);
	check_refused(DS_ERROR_CONFIG, ds_attach_bts(&self, &no_record), &self);
	host_check_eq_u64(DS_OK, ds_attach_bts(&self, &last_allowed));
	host_check_eq_u64(DS_OK, ds_detach(&self, DS_USER_BTS));
	shim_check_clean();
}

/*
 * A record count whose bytes, or pages with the canary, wrap past 2^64: refused, never a small
 * buffer with the CPU's maximum far past it (found by the kernel-API fuzzer).
 */
SHIM_TEST(ds_host_attach_refuses_a_buffer_size_that_wraps, "icelake")
{
	struct ds_target self = task_target(0);
	struct ds_bts_config bts_bytes = bts_circular(SIZE_MAX / BTS_RECORD_SIZE + 1);
	struct ds_bts_config bts_pages = bts_circular(SIZE_MAX / BTS_RECORD_SIZE);
	struct ds_bts_config bts_pages_32 = bts_circular(733007751851ull);

	shim_boot();
	check_refused(DS_ERROR_CONFIG, ds_attach_bts(&self, &bts_bytes), &self);
	check_refused(DS_ERROR_CONFIG, ds_attach_bts(&self, &bts_pages), &self);
	/* 2^44 + 8 bytes: 2^32 + 1 pages, which a 32-bit page count took for 1. */
	check_refused(DS_ERROR_NO_MEMORY, ds_attach_bts(&self, &bts_pages_32), &self);
	shim_check_clean();
}

/* A KVM guest: no DS-CPL, so no BTS_OFF_OS/USR. */
SHIM_TEST(ds_host_attach_bts_refuses_cpl_filtering_without_ds_cpl, "icelake,ds_cpl:0")
{
	struct ds_target self = task_target(0);
	struct ds_bts_config config = bts_interrupt(RECORDS, THRESHOLD);

	shim_boot();
	config.off_os = true;
	check_refused(DS_ERROR_UNSUPPORTED, ds_attach_bts(&self, &config), &self);
	shim_check_clean();
}

SHIM_TEST(ds_host_attach_out_of_memory_changes_nothing, "icelake")
{
	struct ds_target self = task_target(0);
	struct ds_bts_config config = bts_interrupt(RECORDS, THRESHOLD);

	shim_boot();
	shim_pool_limit(1); /* the area, not its buffer */
	check_refused(DS_ERROR_NO_MEMORY, ds_attach_bts(&self, &config), &self);
	shim_pool_limit(-1);
	shim_check_clean();
}

SHIM_TEST(ds_host_detach_turns_tracing_off_before_ds_area_goes_to_zero_and_frees_the_area,
	  "icelake")
{
	struct ds_target self = task_target(0);
	struct ds_bts_config config = bts_interrupt(RECORDS, THRESHOLD);

	shim_boot();
	if (!host_check_eq_u64(DS_OK, ds_attach_bts(&self, &config)))
		return;
	shim_log_clear();
	host_check_eq_u64(DS_OK, ds_detach(&self, DS_USER_BTS));
	/* Linux's fini_debug_store_on_cpu(): the CPU never names a page ds/ gave back. */
	shim_check_writes({ MSR_IA32_DEBUGCTL, 0 }, { MSR_IA32_DS_AREA, 0 });
	host_check(ds_area_get(&self) == NULL);
	host_check_eq_u64(0, shim_pages_out());
	host_check_str(ds_error_name(DS_ERROR_NOT_ATTACHED),
		       ds_error_name(ds_detach(&self, DS_USER_BTS)));
	shim_check_clean();
}

SHIM_TEST(ds_host_two_tasks_on_the_cpu_mode_area_switch_without_a_write, "icelake")
{
	struct ds_target cpu0 = cpu_target(0);
	struct ds_bts_config config = bts_interrupt(RECORDS, THRESHOLD);

	shim_boot();
	shim_set_current(TASK_A);
	if (!host_check_eq_u64(DS_OK, ds_attach_bts(&cpu0, &config)))
		return;
	shim_check_writes({ MSR_IA32_DS_AREA, area_address(&cpu0) },
			  { MSR_IA32_DEBUGCTL, BTS_ARMED });
	shim_log_clear();
	shim_switch(TASK_A, TASK_B);
	shim_switch(TASK_B, TASK_A);
	shim_check_no_writes();
	host_check_eq_u64(DS_OK, ds_detach(&cpu0, DS_USER_BTS));
	shim_check_writes({ MSR_IA32_DEBUGCTL, 0 }, { MSR_IA32_DS_AREA, 0 });
	shim_check_clean();
}

SHIM_TEST(ds_host_a_switch_to_a_task_without_an_area_turns_tracing_off_then_ds_area, "icelake")
{
	struct ds_target a = task_target(TASK_A);
	struct ds_bts_config config = bts_interrupt(RECORDS, THRESHOLD);
	uint64_t area;

	shim_boot();
	/* Attached while it is not running: nothing to write until it is switched in. */
	if (!host_check_eq_u64(DS_OK, ds_attach_bts(&a, &config)))
		return;
	area = area_address(&a);
	shim_check_no_writes();
	shim_switch(0, TASK_A);
	shim_check_writes({ MSR_IA32_DS_AREA, area }, { MSR_IA32_DEBUGCTL, BTS_ARMED });
	shim_log_clear();
	shim_switch(TASK_A, TASK_B);
	shim_check_writes({ MSR_IA32_DEBUGCTL, 0 }, { MSR_IA32_DS_AREA, 0 });
	shim_log_clear();
	shim_switch(TASK_B, TASK_A);
	shim_check_writes({ MSR_IA32_DS_AREA, area }, { MSR_IA32_DEBUGCTL, BTS_ARMED });
	shim_log_clear();
	shim_switch(TASK_A, 0);
	shim_check_writes({ MSR_IA32_DEBUGCTL, 0 }, { MSR_IA32_DS_AREA, 0 });
	shim_log_clear();
	host_check_eq_u64(DS_OK, ds_detach(&a, DS_USER_BTS)); /* not running: no write */
	shim_check_no_writes();
	shim_check_clean();
}

/* A task's own area wins over the CPU's: between them, tracing off, DS_AREA, tracing on. */
SHIM_TEST(ds_host_a_switch_between_a_task_area_and_the_cpu_area_writes_off_area_on, "icelake")
{
	struct ds_target cpu0 = cpu_target(0), a = task_target(TASK_A);
	struct ds_bts_config circular = bts_circular(RECORDS);
	struct ds_bts_config interrupt = bts_interrupt(RECORDS, THRESHOLD);
	uint64_t cpu_area, task_area;

	shim_boot();
	if (!host_check_eq_u64(DS_OK, ds_attach_bts(&cpu0, &circular)) ||
	    !host_check_eq_u64(DS_OK, ds_attach_bts(&a, &interrupt)))
		return;
	cpu_area = area_address(&cpu0);
	task_area = area_address(&a);
	shim_log_clear();
	shim_switch(0, TASK_A);
	shim_check_writes({ MSR_IA32_DEBUGCTL, 0 }, { MSR_IA32_DS_AREA, task_area },
			  { MSR_IA32_DEBUGCTL, BTS_ARMED });
	shim_log_clear();
	shim_switch(TASK_A, TASK_B);
	shim_check_writes({ MSR_IA32_DEBUGCTL, 0 }, { MSR_IA32_DS_AREA, cpu_area },
			  { MSR_IA32_DEBUGCTL, BTS_CIRCULAR });
	shim_log_clear();
	host_check_eq_u64(DS_OK, ds_detach(&a, DS_USER_BTS));
	host_check_eq_u64(DS_OK, ds_detach(&cpu0, DS_USER_BTS));
	shim_check_writes({ MSR_IA32_DEBUGCTL, 0 }, { MSR_IA32_DS_AREA, 0 });
	shim_check_clean();
}

SHIM_TEST(ds_host_a_user_task_sees_its_area_read_only_until_detach_flushes_it, "icelake")
{
	struct ds_target a = { false, TASK_A };
	struct ds_bts_config config = bts_interrupt(RECORDS, THRESHOLD);
	unsigned int pages = buffer_pages(RECORDS * BTS_RECORD_SIZE);
	size_t maps;

	shim_boot();
	switch_task_set_address_space(TASK_A, ROOT); /* as sched/ does for a user task */
	shim_set_current(TASK_A);
	if (!host_check_eq_u64(DS_OK, ds_attach_bts(&a, &config)))
		return;
	maps = shim_mappings();
	if (!host_check_eq_u64(1 + pages, maps))
		return;
	for (size_t i = 0; i < maps; i++) {
		const struct shim_mapping *m = shim_mapping_at(i);
		uint64_t virt = i == 0 ? USER_DS_BASE
				       : USER_DS_BASE + USER_DS_BTS_OFFSET + (i - 1) * PAGE_SIZE;

		host_check(m->op == SHIM_MAP && m->root == ROOT);
		host_check_eq_u64(virt, m->virt);
		host_check_eq_u64(PTE_USER | PTE_NO_EXECUTE,
				  m->flags); /* no PTE_WRITE, not owned */
	}
	host_check_eq_u64(DS_OK, ds_detach(&a, DS_USER_BTS));
	/* The buffer and the area unmapped, then the TLB of the CPU running it, before the free. */
	host_check_eq_u64(maps * 2 + 1, shim_mappings());
	for (size_t i = maps; i < maps * 2; i++)
		host_check(shim_mapping_at(i)->op == SHIM_UNMAP);
	host_check(shim_mapping_at(maps * 2)->op == SHIM_FLUSH &&
		   shim_mapping_at(maps * 2)->root == ROOT);
	switch_task_set_address_space(TASK_A, 0);
	shim_check_clean();
}

/* PEBS, per record format: attach and detach, and what the CPU cannot take. */

struct pebs_case {
	unsigned int format;
	uint64_t fixed_bit; /* PEBS_ENABLE bit of fixed counter 0, 0 without baseline */
	unsigned int fixed_slot; /* its reset slot */
	uint64_t beyond; /* a PEBS_ENABLE bit past the counters the CPU can sample */
};

static struct ds_pebs_config pebs_config(unsigned int format, size_t records, uint64_t enable)
{
	return (struct ds_pebs_config){
		.format = format,
		.record_size = pebs_format_is_adaptive((enum pebs_format)format)
				       ? PEBS_BASIC_GROUP_SIZE
				       : pebs_record_size((enum pebs_format)format),
		.records = records,
		.threshold_records = 1,
		.enable = enable,
		.reset_value = 0xfffffffffc18ull & emulator_counter_mask(shim_profile(), false),
	};
}

static void check_pebs_format(const struct pebs_case *c)
{
	struct ds_target self = task_target(0);
	uint64_t enable = 1 | c->fixed_bit;
	struct ds_pebs_config config = pebs_config(c->format, 16, enable), refused;
	const struct ds_area *area;

	shim_boot();
	host_check_str("", ds_support()->pebs_reason);
	host_check_eq_u64(c->format, ds_support()->pebs_format);
	/* Refused before anything is written or allocated. */
	refused = config;
	refused.format = c->format == PEBS_FORMAT_0 ? PEBS_FORMAT_1 : c->format - 1;
	check_refused(DS_ERROR_CONFIG, ds_attach_pebs(&self, &refused), &self);
	refused = config;
	refused.enable |= c->beyond;
	check_refused(DS_ERROR_CONFIG, ds_attach_pebs(&self, &refused), &self);
	refused = config;
	refused.enable = 0;
	check_refused(DS_ERROR_CONFIG, ds_attach_pebs(&self, &refused), &self);
	/* Records smaller than the CPU's, or for formats 0-3 of another size: the CPU moves the
	 * index by its own record and would write past max (found by the kernel-API fuzzer). */
	refused = config;
	refused.record_size = 2;
	check_refused(DS_ERROR_CONFIG, ds_attach_pebs(&self, &refused), &self);
	refused.record_size = config.record_size - 8;
	check_refused(DS_ERROR_CONFIG, ds_attach_pebs(&self, &refused), &self);
	refused.record_size = config.record_size + 8;
	if (c->format < PEBS_FORMAT_4)
		check_refused(DS_ERROR_CONFIG, ds_attach_pebs(&self, &refused), &self);
	refused = config;
	refused.data_cfg = PEBS_DATA_CFG_MEMINFO;
	refused.record_size = pebs_adaptive_record_size(PEBS_DATA_CFG_MEMINFO);
	if (c->format < PEBS_FORMAT_4) /* no adaptive PEBS, no MSR_PEBS_DATA_CFG */
		check_refused(DS_ERROR_CONFIG, ds_attach_pebs(&self, &refused), &self);

	if (!host_check_eq_u64(DS_OK, ds_attach_pebs(&self, &config)))
		return;
	area = ds_area_get(&self);
	shim_check_writes({ MSR_IA32_DS_AREA, (uint64_t)area }, { MSR_IA32_PEBS_ENABLE, enable });
	host_check_eq_u64(area->pebs_base, area->pebs_index);
	host_check_eq_u64(area->pebs_base + 16 * config.record_size, area->pebs_max);
	host_check_eq_u64(area->pebs_base + config.record_size, area->pebs_threshold);
	/* GP counter i reloads from slot i, fixed counter i from 8 + i (32 + i from format 5). */
	for (unsigned int slot = 0; slot < DS_PEBS_RESET_SLOTS; slot++)
		host_checkf(area->pebs_reset[slot] ==
				    (slot == 0 || (c->fixed_bit && slot == c->fixed_slot)
					     ? config.reset_value
					     : 0),
			    "format %u: reset slot %u holds 0x%llx", c->format, slot,
			    (unsigned long long)area->pebs_reset[slot]);
	shim_log_clear();
	host_check_eq_u64(DS_OK, ds_detach(&self, DS_USER_PEBS));
	shim_check_writes({ MSR_IA32_PEBS_ENABLE, 0 }, { MSR_IA32_DS_AREA, 0 });
	shim_check_clean();
}

SHIM_TEST(ds_host_pebs_core2_format_0_on_pmc0_only, "core2")
{
	check_pebs_format(&(struct pebs_case){ .format = 0, .beyond = 1ull << 1 });
}

SHIM_TEST(ds_host_pebs_nehalem_format_1_on_pmc0_to_3, "nehalem")
{
	check_pebs_format(&(struct pebs_case){ .format = 1, .beyond = 1ull << 4 });
}

SHIM_TEST(ds_host_pebs_haswell_format_2_without_fixed_counters, "haswell")
{
	check_pebs_format(&(struct pebs_case){ .format = 2, .beyond = PEBS_ENABLE_FIXED_CTR0 });
}

SHIM_TEST(ds_host_pebs_skylake_format_3_without_fixed_counters, "skylake")
{
	check_pebs_format(&(struct pebs_case){ .format = 3, .beyond = PEBS_ENABLE_FIXED_CTR0 });
}

SHIM_TEST(ds_host_pebs_icelake_format_4_fixed_counter_at_slot_8, "icelake")
{
	check_pebs_format(&(struct pebs_case){ .format = 4,
					       .fixed_bit = PEBS_ENABLE_FIXED_CTR0,
					       .fixed_slot = 8,
					       .beyond = PEBS_ENABLE_FIXED_CTR0 << 4 });
}

SHIM_TEST(ds_host_pebs_arrowlake_format_6_fixed_counter_at_slot_32, "arrowlake")
{
	check_pebs_format(&(struct pebs_case){ .format = 6,
					       .fixed_bit = PEBS_ENABLE_FIXED_CTR0,
					       .fixed_slot = 32,
					       .beyond = 1ull << 8 });
}

/* Core 2 hangs on a PEBS buffer over one page (Linux ds.c): 28 records of 144 bytes fit. */
SHIM_TEST(ds_host_pebs_format_0_buffer_over_one_page_is_refused, "core2")
{
	struct ds_target self = task_target(0);
	struct ds_pebs_config fits = pebs_config(0, PAGE_SIZE / PEBS_FORMAT_0_SIZE, 1);
	struct ds_pebs_config over = pebs_config(0, PAGE_SIZE / PEBS_FORMAT_0_SIZE + 1, 1);

	shim_boot();
	check_refused(DS_ERROR_CONFIG, ds_attach_pebs(&self, &over), &self);
	host_check_eq_u64(DS_OK, ds_attach_pebs(&self, &fits));
	host_check_eq_u64(DS_OK, ds_detach(&self, DS_USER_PEBS));
	shim_check_clean();
}

SHIM_TEST(ds_host_pebs_data_cfg_is_refused_with_reserved_bits_or_short_records, "icelake")
{
	struct ds_target self = task_target(0);
	uint64_t groups = PEBS_DATA_CFG_MEMINFO | PEBS_DATA_CFG_GPRS;
	struct ds_pebs_config config = pebs_config(4, 16, 1);

	shim_boot();
	config.data_cfg = groups | (1ull << 4); /* reserved: #GP on the CPU */
	config.record_size = pebs_adaptive_record_size(groups);
	check_refused(DS_ERROR_CONFIG, ds_attach_pebs(&self, &config), &self);
	config.data_cfg = groups;
	config.record_size = pebs_adaptive_record_size(groups) - 8;
	check_refused(DS_ERROR_CONFIG, ds_attach_pebs(&self, &config), &self);
	shim_check_clean();
}

/* Records of one size per buffer (Linux ds.c): MSR_PEBS_DATA_CFG changes only with PEBS off. */
SHIM_TEST(ds_host_pebs_data_cfg_is_written_with_pebs_off, "icelake")
{
	struct ds_target a = task_target(TASK_A), b = task_target(TASK_B);
	uint64_t groups = PEBS_DATA_CFG_MEMINFO | PEBS_DATA_CFG_GPRS;
	struct ds_pebs_config adaptive = pebs_config(4, 16, 1), basic = pebs_config(4, 16, 1);
	uint64_t area_a, area_b;

	shim_boot();
	adaptive.data_cfg = groups;
	adaptive.record_size = pebs_adaptive_record_size(groups);
	if (!host_check_eq_u64(DS_OK, ds_attach_pebs(&a, &adaptive)) ||
	    !host_check_eq_u64(DS_OK, ds_attach_pebs(&b, &basic)))
		return;
	area_a = area_address(&a);
	area_b = area_address(&b);
	shim_check_no_writes();
	shim_switch(0, TASK_A);
	shim_check_writes({ MSR_IA32_DS_AREA, area_a }, { MSR_PEBS_DATA_CFG, groups },
			  { MSR_IA32_PEBS_ENABLE, 1 });
	shim_log_clear();
	shim_switch(TASK_A, TASK_B);
	shim_check_writes({ MSR_IA32_PEBS_ENABLE, 0 }, { MSR_IA32_DS_AREA, area_b },
			  { MSR_PEBS_DATA_CFG, 0 }, { MSR_IA32_PEBS_ENABLE, 1 });
	shim_log_clear();
	shim_switch(TASK_B, TASK_A);
	shim_check_writes({ MSR_IA32_PEBS_ENABLE, 0 }, { MSR_IA32_DS_AREA, area_a },
			  { MSR_PEBS_DATA_CFG, groups }, { MSR_IA32_PEBS_ENABLE, 1 });
	shim_log_clear();
	/* To a task without PEBS: the groups stay for whoever comes next. */
	shim_switch(TASK_A, 0);
	shim_check_writes({ MSR_IA32_PEBS_ENABLE, 0 }, { MSR_IA32_DS_AREA, 0 });
	host_check_eq_u64(groups, shim_registers(0)->pebs_data_cfg);
	host_check_eq_u64(DS_OK, ds_detach(&a, DS_USER_PEBS));
	host_check_eq_u64(DS_OK, ds_detach(&b, DS_USER_PEBS));
	shim_check_clean();
}

/* Draining. The CPU stores records with shim_bts_store(); the shim checks rule 3 at each. */

SHIM_TEST(ds_host_a_drain_of_the_active_area_turns_tracing_off_around_the_index_reset, "icelake")
{
	struct ds_target self = task_target(0);
	struct ds_bts_config bts = bts_interrupt(RECORDS, THRESHOLD);
	struct ds_pebs_config pebs = pebs_config(4, 16, 1);
	const struct ds_area *area;
	struct ds_credit credit;

	shim_boot();
	if (!host_check_eq_u64(DS_OK, ds_attach_bts(&self, &bts)) ||
	    !host_check_eq_u64(DS_OK, ds_attach_pebs(&self, &pebs)))
		return;
	area = ds_area_get(&self);
	for (uint64_t i = 1; i <= 3; i++)
		shim_bts_store(0x1000 * i, 0x1000 * i + 0x40);
	shim_log_clear();
	ds_drain(&self);
	/* Tracing off while the index goes back (SDM, rule 3; Linux drains with BTS off). */
	shim_check_writes({ MSR_IA32_DEBUGCTL, 0 }, { MSR_IA32_PEBS_ENABLE, 0 },
			  { MSR_IA32_DEBUGCTL, BTS_ARMED }, { MSR_IA32_PEBS_ENABLE, 1 });
	host_check_eq_u64(area->bts_base, area->bts_index);
	credit = ds_credit(0);
	host_check_eq_u64(3, credit.bts_records);
	host_check_eq_u64(0x3000, credit.last_from);
	host_check_eq_u64(0x3040, credit.last_to);
	shim_bts_store(0x4000, 0x4040); /* the CPU goes on from the base */
	host_check_eq_u64(area->bts_base + BTS_RECORD_SIZE, area->bts_index);
	host_check_eq_u64(DS_OK, ds_detach(&self, DS_USER_PEBS));
	host_check_eq_u64(DS_OK, ds_detach(&self, DS_USER_BTS));
	host_check_eq_u64(4, ds_credit(0).bts_records); /* the detach drained the last one */
	shim_check_clean();
}

/* A CPU-mode area is shared: a switch credits the task leaving, reading only (no write). */
SHIM_TEST(ds_host_a_switch_credits_the_cpu_mode_area_without_a_write, "icelake")
{
	struct ds_target cpu0 = cpu_target(0);
	struct ds_bts_config config = bts_interrupt(RECORDS, THRESHOLD);
	const struct ds_area *area;

	shim_boot();
	shim_set_current(TASK_A);
	if (!host_check_eq_u64(DS_OK, ds_attach_bts(&cpu0, &config)))
		return;
	area = ds_area_get(&cpu0);
	shim_log_clear();
	for (uint64_t i = 1; i <= 3; i++)
		shim_bts_store(0xa000 + i, 0xa100 + i);
	shim_switch(TASK_A, TASK_B);
	for (uint64_t i = 1; i <= 2; i++)
		shim_bts_store(0xb000 + i, 0xb100 + i);
	shim_switch(TASK_B, TASK_A);
	shim_check_no_writes();
	host_check_eq_u64(area->bts_base + 5 * BTS_RECORD_SIZE, area->bts_index); /* kept */
	host_check_eq_u64(3, ds_credit(TASK_A).bts_records);
	host_check_eq_u64(0xa003, ds_credit(TASK_A).last_from);
	host_check_eq_u64(2, ds_credit(TASK_B).bts_records);
	host_check_eq_u64(0xb102, ds_credit(TASK_B).last_to);
	host_check_eq_u64(DS_OK, ds_detach(&cpu0, DS_USER_BTS));
	host_check_eq_u64(3, ds_credit(TASK_A).bts_records); /* credited once only */
	shim_check_clean();
}

/* The PMI (debugstate_pmi()), as Linux's intel_pmu_handle_irq(): pmu/ stops the counters, ds/
 * turns BTS off and keeps it off through the drain (the handler's own branches would land in
 * the buffer it drains), drains and acknowledges the buffer and turns BTS on, pmu/ restarts the
 * counters last. */
SHIM_TEST(ds_host_the_pmi_drains_inside_the_pmu_bracket_and_acknowledges_the_buffer, "icelake")
{
	struct ds_target self = task_target(0);
	struct ds_bts_config config = bts_interrupt(64, 2); /* a PMI after two records */
	struct pmu_event instructions = { .event = 0xc0, .user = true, .kernel = true };
	const struct ds_area *area;

	shim_boot();
	host_check_eq_u64(1, shim_pmi_hooks()); /* debugstate/'s, which runs pmu/ and ds/ */
	if (!host_check_eq_u64(DS_OK, ds_attach_bts(&self, &config)) ||
	    !host_check_eq_u64(0, pmu_add_event(0, &instructions)))
		return;
	area = ds_area_get(&self);
	shim_bts_store(0x1000, 0x2000);
	shim_bts_store(0x3000, 0x4000);
	host_check_eq_u64(PERF_GLOBAL_STATUS_BUFFER_OVF, shim_registers(0)->global_status);
	shim_log_clear();
	shim_pmi();
	shim_check_writes({ MSR_IA32_PERF_GLOBAL_CTRL, 0 }, { MSR_IA32_DEBUGCTL, 0 },
			  { MSR_IA32_PERF_GLOBAL_OVF_CTRL, PERF_GLOBAL_STATUS_BUFFER_OVF },
			  { MSR_IA32_DEBUGCTL, BTS_ARMED }, { MSR_IA32_PERF_GLOBAL_CTRL, 1 });
	host_check_eq_u64(0, shim_registers(0)->global_status);
	host_check_eq_u64(area->bts_base, area->bts_index);
	host_check_eq_u64(2, ds_credit(0).bts_records);
	host_check_eq_u64(1, ds_pmi_count());
	host_check(pmu_release(0));
	host_check_eq_u64(DS_OK, ds_detach(&self, DS_USER_BTS));
	shim_check_clean();
}

/* BTS and PEBS share the area: the one that stays keeps tracing, the area goes with the last. */
SHIM_TEST(ds_host_detaching_one_user_of_a_shared_area_leaves_the_other_on, "icelake")
{
	struct ds_target self = task_target(0);
	struct ds_bts_config bts = bts_interrupt(RECORDS, THRESHOLD);
	struct ds_pebs_config pebs = pebs_config(4, 16, 1);
	uint64_t area;

	shim_boot();
	if (!host_check_eq_u64(DS_OK, ds_attach_bts(&self, &bts)))
		return;
	area = area_address(&self);
	shim_log_clear();
	if (!host_check_eq_u64(DS_OK, ds_attach_pebs(&self, &pebs)))
		return;
	shim_check_writes({ MSR_IA32_PEBS_ENABLE, 1 }); /* the same area: DS_AREA stays */
	host_check_eq_u64(area, area_address(&self));
	host_check_str(ds_error_name(DS_ERROR_BUSY), ds_error_name(ds_attach_pebs(&self, &pebs)));
	shim_log_clear();
	host_check_eq_u64(DS_OK, ds_detach(&self, DS_USER_BTS));
	/* BTS off; the drain of the area then stops PEBS around the index reset. */
	shim_check_writes({ MSR_IA32_DEBUGCTL, 0 }, { MSR_IA32_PEBS_ENABLE, 0 },
			  { MSR_IA32_PEBS_ENABLE, 1 });
	host_check_eq_u64(area, shim_registers(0)->ds_area);
	host_check_eq_u64(0, ds_area_get(&self)->bts_base);
	shim_log_clear();
	host_check_eq_u64(DS_OK, ds_detach(&self, DS_USER_PEBS));
	shim_check_writes({ MSR_IA32_PEBS_ENABLE, 0 }, { MSR_IA32_DS_AREA, 0 });
	shim_check_clean();
}

/* A task's area dies with it (the task_exit hook), whatever it held. */
SHIM_TEST(ds_host_a_task_that_exits_gives_its_area_back, "icelake")
{
	struct ds_target a = task_target(TASK_A);
	struct ds_bts_config bts = bts_interrupt(RECORDS, THRESHOLD);
	struct ds_pebs_config pebs = pebs_config(4, 16, 1);
	struct switch_task task = shim_task(TASK_A);

	shim_boot();
	if (!host_check_eq_u64(DS_OK, ds_attach_bts(&a, &bts)) ||
	    !host_check_eq_u64(DS_OK, ds_attach_pebs(&a, &pebs)))
		return;
	switch_hooks_run_exit(&task);
	host_check(ds_area_get(&a) == NULL);
	shim_check_no_writes();
	host_check_eq_u64(0, ds_release_leftovers(TASK_A));
	shim_check_clean();
}

/* A CPU's area: allocated anywhere, activated on its CPU, detached through a call there. */
SHIM_TEST(ds_host_another_cpus_area_is_activated_there_and_detached_by_a_call, "icelake")
{
	struct ds_target cpu1 = cpu_target(1);
	struct ds_bts_config config = bts_circular(RECORDS);
	uint64_t area;

	shim_set_cpus(2);
	shim_boot();
	if (!host_check_eq_u64(DS_OK, ds_attach_bts(&cpu1, &config)))
		return;
	area = area_address(&cpu1);
	shim_check_no_writes();
	host_check_eq_u64(0, shim_smp_calls());
	shim_set_cpu(1);
	ds_activate_cpu();
	shim_set_cpu(0);
	shim_check_writes({ MSR_IA32_DS_AREA, area }, { MSR_IA32_DEBUGCTL, BTS_CIRCULAR });
	host_check_eq_u64(1, shim_write_at(0)->cpu);
	host_check_eq_u64(0, shim_registers(0)->ds_area);
	shim_log_clear();
	host_check_eq_u64(DS_OK, ds_detach(&cpu1, DS_USER_BTS));
	shim_check_writes({ MSR_IA32_DEBUGCTL, 0 }, { MSR_IA32_DS_AREA, 0 });
	host_check_eq_u64(1, shim_write_at(0)->cpu);
	host_check(shim_smp_calls() == 1 && shim_smp_call_target(0) == 1);
	shim_check_clean();
}
