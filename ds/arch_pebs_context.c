/* SPDX-License-Identifier: MIT */
/* Architectural PEBS users: their buffers, PEBS_BASE, PEBS_INDEX and each counter's CFG_C. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/arch-pebs.h"
#include "arch/x86/cpuid.h"
#include "arch/x86/msr-index.h"
#include "arch/x86/msr.h"
#include "arch/x86/paging.h"
#include "arch/x86/percpu.h"
#include "arch/x86/user-abi.h"
#include "ds/arch_pebs_context.h"
#include "ds/arch_pebs_records.h"
#include "ds/buffer.h"
#include "ds/ds.h"
#include "ds/state.h"
#include "kernel/address_space.h"
#include "kernel/pfa.h"
#include "kernel/smp.h"
#include "kernel/switch_hooks.h"
#include "lib/bitops.h"
#include "lib/format.h"
#include "lib/panic.h"
#include "lib/string.h"

#define COUNTER_BITS 48 /* PEBS_ENABLE numbering: GP 0-31, fixed 32-47 */
#define FIXED_SHIFT 32
#define SIZE_CODE_MAX 6 /* 256 KiB: the 64 pages pfa_alloc_pages() gives at most */
#define RELOAD_SIGN (1ull << 31) /* the CPU sign-extends CFG_C bits 31:0 */

/*
 * One task's architectural-PEBS user: a physically contiguous buffer of 4 KiB << code bytes
 * (the size code PEBS_BASE carries), which the CPU never writes past; the CFG_C value of each
 * enabled counter; and IA32_PEBS_INDEX while the task is not on a CPU (WR, FULL, EN, THRESH).
 */
struct arch_context {
	uint64_t phys; /* 0: no user */
	unsigned int code, pages;
	struct ds_pebs_config config;
	uint64_t cfg_c; /* EN, the groups and the reload value */
	uint64_t index; /* saved at switch-out, restored at switch-in */
	uint64_t credited; /* bytes from the base already credited */
	uint64_t address_space; /* a user task's root, where its read-only view is mapped */
	bool stopping; /* being detached: never made active again */
	bool detaching;
};

/* What this CPU's registers hold, as ds/ wrote them, and whose buffer PEBS_BASE names. */
struct arch_cpu {
	struct arch_context *active;
	uint64_t base, index;
	uint64_t cfg_c[COUNTER_BITS];
	struct ds_arch_pebs_writes writes;
};

static struct arch_context contexts[SWITCH_TASKS_MAX];
static DEFINE_PER_CPU(struct arch_cpu, cpus);

static uint32_t cfg_c_msr(unsigned int bit)
{
	return bit >= FIXED_SHIFT
		       ? MSR_IA32_PMC_FX0_CFG_C + MSR_IA32_PMC_CFG_C_STRIDE * (bit - FIXED_SHIFT)
		       : MSR_IA32_PMC_GP0_CFG_C + MSR_IA32_PMC_CFG_C_STRIDE * bit;
}

static uint64_t context_base(const struct arch_context *context)
{
	return context ? context->phys | context->code : 0;
}

struct ds_arch_pebs_writes ds_arch_pebs_writes(void)
{
	return this_cpu_ptr(cpus)->writes;
}

/* Every CFG_C write: only when the cached value differs (Linux cfg_c_val[], 52448a0a7390). */
static void write_cfg_c(struct arch_cpu *cpu, unsigned int bit, uint64_t value)
{
	if (cpu->cfg_c[bit] == value)
		return;
	wrmsr(cfg_c_msr(bit), value);
	cpu->cfg_c[bit] = value;
	cpu->writes.cfg_c++;
}

static void write_base(struct arch_cpu *cpu, uint64_t value)
{
	if (cpu->base == value)
		return;
	wrmsr(MSR_IA32_PEBS_BASE, value);
	cpu->base = value;
	cpu->writes.base++;
}

static void write_index(struct arch_cpu *cpu, uint64_t value)
{
	if (cpu->index == value)
		return;
	wrmsr(MSR_IA32_PEBS_INDEX, value);
	cpu->index = value;
	cpu->writes.index++;
}

static bool live(const struct arch_context *context)
{
	return context->phys && !context->stopping;
}

/*
 * Make this CPU's registers what context needs (NULL: none), ds_lock held. The outgoing
 * buffer's INDEX is read back first (the CPU moved WR), so a task's records stay in its own
 * buffer across switches and CPUs. A counter context enables gets its CFG_C; a counter whose
 * cached CFG_C has EN and that context does not enable is cleared: ds/ cannot see whether the
 * next task's events count on it (pmu/), and an armed EN would write into a buffer that is not
 * theirs. Any other CFG_C is left alone. PEBS_BASE after the CFG_Cs, INDEX after PEBS_BASE.
 */
static void apply(struct arch_context *context)
{
	struct arch_cpu *cpu = this_cpu_ptr(cpus);
	uint64_t enable = context ? context->config.enable : 0, global;
	bool changes = cpu->active != context;

	for (unsigned int bit = 0; !changes && bit < COUNTER_BITS; bit++)
		changes = (enable & (1ull << bit)) && cpu->cfg_c[bit] != context->cfg_c;
	if (!changes)
		return;
	global = ds_counters_pause();
	if (cpu->active && cpu->active != context) {
		cpu->index = rdmsr(MSR_IA32_PEBS_INDEX);
		cpu->active->index = cpu->index;
	}
	for (unsigned int bit = 0; bit < COUNTER_BITS; bit++) {
		if (enable & (1ull << bit))
			write_cfg_c(cpu, bit, context->cfg_c);
		else if (cpu->cfg_c[bit] & ARCH_PEBS_EN)
			write_cfg_c(cpu, bit, 0);
	}
	write_base(cpu, context_base(context));
	if (context)
		write_index(cpu, context->index);
	cpu->active = context;
	ds_counters_resume(global);
}

static struct arch_context *context_for(unsigned int task)
{
	return live(&contexts[task]) ? &contexts[task] : NULL;
}

void ds_arch_pebs_switch_in(const struct switch_task *next)
{
	if (!ds_support()->arch_pebs.usable)
		return;
	ds_lock_irqs_off();
	apply(context_for(next->index));
	ds_unlock_irqs_off();
}

/* On the CPU concerned: apply, and forget translations of a user view that was unmapped. */
static void apply_here(void *unmapped_root)
{
	unsigned long flags = ds_lock_irqsave();

	apply(context_for(switch_task_current()->index));
	ds_unlock_irqrestore(flags);
	if (unmapped_root)
		address_space_flush_if_loaded((uint64_t)unmapped_root);
}

/* The CPU whose PEBS_BASE names context's buffer, or -1. ds_lock held. */
static int active_cpu(const struct arch_context *context)
{
	for (unsigned int cpu = 0; cpu < smp_cpus(); cpu++)
		if (per_cpu_ptr(cpus, cpu)->active == context)
			return (int)cpu;
	return -1;
}

/* Make the CPU that runs task (if any) apply what its context says now. */
static void sync_task(unsigned int task)
{
	int cpu = switch_task_running_cpu(task);

	if (cpu < 0 || (unsigned int)cpu >= smp_cpus())
		return;
	if (!smp_call((unsigned int)cpu, apply_here, NULL))
		panic("ds: CPU %d did not apply an arch-PEBS change within %u ms", cpu,
		      SMP_CALL_TIMEOUT_MS);
}

/*
 * A user task's read-only, no-execute view of its buffer at USER_DS_BASE + USER_DS_PEBS_OFFSET,
 * where a DS-area part shows its PEBS buffer. The task cannot read INDEX (an MSR): the view's
 * records end at the first header of 16 zero bytes, since the buffer starts zeroed and a drain
 * zeroes what it took (drain_locked()).
 */
static bool view_map(uint64_t root, uint64_t phys, unsigned int pages)
{
	bool mapped = true;

	for (unsigned int i = 0; i < pages; i++)
		mapped &=
			address_space_map(root, USER_DS_BASE + USER_DS_PEBS_OFFSET + i * PAGE_SIZE,
					  phys + i * PAGE_SIZE, PTE_USER | PTE_NO_EXECUTE);
	return mapped;
}

static void view_unmap(uint64_t root, unsigned int pages)
{
	for (unsigned int i = 0; i < pages; i++)
		address_space_unmap(root, USER_DS_BASE + USER_DS_PEBS_OFFSET + i * PAGE_SIZE);
}

/*
 * The CPU's own threshold, in 16-byte units: the PMI comes when WR reaches it (one record a
 * PMI: THRESH 1, as Linux writes it for single-record PEBS).
 */
static uint64_t thresh_units(const struct ds_pebs_config *config)
{
	if (config->threshold_records == 1)
		return 1;
	return config->threshold_records * config->record_size / ARCH_PEBS_INDEX_UNIT;
}

static uint64_t index_armed(const struct ds_pebs_config *config)
{
	return ARCH_PEBS_INDEX_EN | thresh_units(config) << ARCH_PEBS_INDEX_THRESH_SHIFT;
}

/* A counter bitmap's GP half (bits 31:0) and fixed half (bits 47:32), as leaf 23H splits it. */
static uint32_t gp_half(uint64_t bits)
{
	return (uint32_t)bits;
}

static uint32_t fixed_half(uint64_t bits)
{
	return (uint32_t)(bits >> FIXED_SHIFT);
}

/*
 * What the CPU can take: counters that exist and that leaf 23H.5 names (PDIST ones among its
 * PDIST bitmaps), groups 23H.4 allows, a record at least a header and the basic group in whole
 * 16-byte units, a reload value the CPU sign-extends to reset_value, and the threshold rules
 * of ds_pebs_fields(); the buffer's size code in code. false with the first broken rule in
 * reason.
 */
static bool config_check(const struct ds_pebs_config *config, unsigned int *code, char *reason,
			 size_t size)
{
	const struct ds_arch_pebs_support *arch = &ds_support()->arch_pebs;
	uint64_t absent = config->enable & ~arch->counters;
	uint64_t no_pebs = config->enable & ~arch->pebs;
	uint64_t no_pdist = config->pdist & ~arch->pdist;
	size_t bytes;

	if (config->format != PERF_CAP_PEBS_FORMAT_ARCH) {
		format(reason, size, "PEBS format %u: this CPU's is architectural PEBS (0x%x)",
		       config->format, PERF_CAP_PEBS_FORMAT_ARCH);
		return false;
	}
	if (config->data_cfg) {
		format(reason, size,
		       "PEBS_DATA_CFG 0x%llx: no such MSR with architectural PEBS (CFG_C has the "
		       "groups)",
		       (unsigned long long)config->data_cfg);
		return false;
	}
	if (config->enable == 0 || (config->enable >> COUNTER_BITS)) {
		format(reason, size,
		       "enable 0x%llx: no counter, or a bit above fixed counter 15 (bit 47)",
		       (unsigned long long)config->enable);
		return false;
	}
	if (absent) {
		format(reason, size, "counters 0x%llx do not exist: the CPU has 0x%llx",
		       (unsigned long long)absent, (unsigned long long)arch->counters);
		return false;
	}
	if (gp_half(no_pebs)) {
		format(reason, size, "GP counters 0x%x cannot PEBS: CPUID.23H.5:EAX is 0x%x",
		       gp_half(no_pebs), gp_half(arch->pebs));
		return false;
	}
	if (fixed_half(no_pebs)) {
		format(reason, size, "fixed counters 0x%x cannot PEBS: CPUID.23H.5:ECX is 0x%x",
		       fixed_half(no_pebs), fixed_half(arch->pebs));
		return false;
	}
	if (config->pdist & ~config->enable) {
		format(reason, size, "pdist 0x%llx names counters enable (0x%llx) lacks",
		       (unsigned long long)config->pdist, (unsigned long long)config->enable);
		return false;
	}
	if (gp_half(no_pdist)) {
		format(reason, size,
		       "GP counters 0x%x lack precise distribution: CPUID.23H.5:EBX is 0x%x",
		       gp_half(no_pdist), gp_half(arch->pdist));
		return false;
	}
	if (fixed_half(no_pdist)) {
		format(reason, size,
		       "fixed counters 0x%x lack precise distribution: CPUID.23H.5:EDX is 0x%x",
		       fixed_half(no_pdist), fixed_half(arch->pdist));
		return false;
	}
	if (config->groups & ~arch->caps) {
		format(reason, size, "CFG_C group bits 0x%llx: CPUID.23H.4:EBX (0x%x) lacks them",
		       (unsigned long long)(config->groups & ~arch->caps),
		       (unsigned int)(arch->caps >> CPUID_23_PEBS_CAPS_SHIFT));
		return false;
	}
	if (config->record_size < ARCH_PEBS_HEADER_BYTES + ARCH_PEBS_BASIC_BYTES ||
	    config->record_size % ARCH_PEBS_INDEX_UNIT) {
		format(reason, size,
		       "record size %zu: at least %u bytes (a header and the basic group), a "
		       "multiple of %u",
		       config->record_size, ARCH_PEBS_HEADER_BYTES + ARCH_PEBS_BASIC_BYTES,
		       ARCH_PEBS_INDEX_UNIT);
		return false;
	}
	if (!(config->reset_value & RELOAD_SIGN)) {
		format(reason, size,
		       "reset value 0x%llx: bit 31 clear, so CFG_C's sign-extended reload is no "
		       "-period",
		       (unsigned long long)config->reset_value);
		return false;
	}
	if (__builtin_mul_overflow(config->records, config->record_size, &bytes) ||
	    config->threshold_records == 0 || config->threshold_records > config->records ||
	    (config->threshold_records > 1 &&
	     config->threshold_records + ds_threshold_room(config->records) > config->records)) {
		format(reason, size,
		       "%zu records with a threshold of %zu: the threshold is 1, or leaves %zu "
		       "records of room below the end",
		       config->records, config->threshold_records,
		       ds_threshold_room(config->records));
		return false;
	}
	for (*code = 0; *code <= SIZE_CODE_MAX; (*code)++)
		if (ARCH_PEBS_BUFFER_BYTES(*code) >= bytes)
			return true;
	format(reason, size, "%zu bytes of records: beyond %llu (size code %u)", bytes,
	       ARCH_PEBS_BUFFER_BYTES(SIZE_CODE_MAX), SIZE_CODE_MAX);
	return false;
}

enum ds_error ds_arch_pebs_check(const struct ds_pebs_config *config, char *reason, size_t size)
{
	unsigned int code;

	if (size)
		reason[0] = '\0';
	return config_check(config, &code, reason, size) ? DS_OK : DS_ERROR_CONFIG;
}

enum ds_error ds_arch_pebs_attach(const struct ds_target *target,
				  const struct ds_pebs_config *config)
{
	struct arch_context *context;
	unsigned int code, pages;
	unsigned long flags;
	uint64_t phys, root;

	if (target->cpu)
		return DS_ERROR_UNSUPPORTED;
	if (target->index >= SWITCH_TASKS_MAX)
		return DS_ERROR_NO_TARGET;
	if (!config_check(config, &code, NULL, 0))
		return DS_ERROR_CONFIG;
	pages = 1u << code;
	phys = pfa_alloc_pages(pages);
	if (!phys)
		return DS_ERROR_NO_MEMORY;
	/* Write-back RAM the CPU can store to (the SDM recommends WB for PEBS buffers). */
	if (phys + (uint64_t)pages * PAGE_SIZE > DIRECT_MAP_UNCACHED) {
		pfa_free_pages(phys, pages);
		return DS_ERROR_NO_MEMORY;
	}
	memset(phys_to_virt(phys), 0, ARCH_PEBS_BUFFER_BYTES(code));
	context = &contexts[target->index];
	flags = ds_lock_irqsave();
	if (!switch_task_live(target->index) || context->phys || context->detaching) {
		enum ds_error error = !switch_task_live(target->index) ? DS_ERROR_NO_TARGET
				      : context->detaching	       ? DS_ERROR_DETACHING
								       : DS_ERROR_BUSY;

		ds_unlock_irqrestore(flags);
		pfa_free_pages(phys, pages);
		return error;
	}
	root = switch_task_address_space(target->index);
	if (root && !view_map(root, phys, pages)) {
		view_unmap(root, pages);
		ds_unlock_irqrestore(flags);
		pfa_free_pages(phys, pages);
		return DS_ERROR_NO_MEMORY;
	}
	*context = (struct arch_context){
		.phys = phys,
		.address_space = root,
		.code = code,
		.pages = pages,
		.config = *config,
		.cfg_c = ARCH_PEBS_EN | config->groups |
			 (config->reset_value & ARCH_PEBS_RELOAD_MASK),
		.index = index_armed(config),
	};
	ds_unlock_irqrestore(flags);
	sync_task(target->index);
	return DS_OK;
}

/* The bytes WR says were written, within the buffer. */
static uint64_t written(const struct arch_context *context, uint64_t index)
{
	uint64_t bytes = ((index & ARCH_PEBS_INDEX_WR_MASK) >> ARCH_PEBS_INDEX_WR_SHIFT) *
			 ARCH_PEBS_INDEX_UNIT;

	return bytes < ARCH_PEBS_BUFFER_BYTES(context->code)
		       ? bytes
		       : ARCH_PEBS_BUFFER_BYTES(context->code);
}

/* Credit the records between context->credited and WR (index) to task. ds_lock held. */
static void credit(struct arch_context *context, uint64_t index, unsigned int task)
{
	const uint8_t *base = phys_to_virt(context->phys);
	uint64_t end = written(context, index);
	struct ds_credit *out = ds_credit_of(task);

	while (context->credited < end) {
		struct arch_pebs_sample sample;
		enum arch_pebs_decode result = arch_pebs_decode(
			base + context->credited, (size_t)(end - context->credited), &sample);

		if (result == ARCH_PEBS_NO_BASIC) {
			out->pebs_dropped++;
		} else if (result == ARCH_PEBS_DECODED) {
			uint64_t mine = sample.applicable_counters & context->config.enable;

			out->pebs_records++;
			out->pebs_samples += bits_set(mine);
			out->pebs_dropped += !mine;
			out->last_pebs_ip = sample.ip;
			out->last_pebs_groups = sample.groups;
			out->last_pebs_fragments = sample.fragments;
			out->last_pebs_counters = sample.applicable_counters;
		} else {
			break; /* a truncated or malformed record: nothing after it can be trusted
				*/
		}
		context->credited += sample.bytes;
	}
}

/*
 * Credit, then give the buffer back: WR and FULL to 0, EN and THRESH kept (Linux
 * intel_pmu_drain_arch_pebs()). Where the buffer is active, here, with the counters stopped;
 * else in the saved INDEX. ds_lock held; the caller made sure it is not active on another CPU.
 */
static void drain_locked(struct arch_context *context, unsigned int task)
{
	struct arch_cpu *cpu = this_cpu_ptr(cpus);
	bool here = cpu->active == context;
	uint64_t global = here ? ds_counters_pause() : 0;
	uint64_t index = here ? rdmsr(MSR_IA32_PEBS_INDEX) : context->index;

	if (here)
		cpu->index = index;
	credit(context, index, task);
	if (index & ARCH_PEBS_INDEX_FULL)
		ds_credit_of(task)->pebs_full++;
	memset(phys_to_virt(context->phys), 0, (size_t)written(context, index));
	index &= ~(ARCH_PEBS_INDEX_WR_MASK | ARCH_PEBS_INDEX_FULL);
	context->index = index;
	context->credited = 0;
	if (here)
		write_index(cpu, index);
	ds_counters_resume(global);
}

struct drain_request {
	struct arch_context *context;
	unsigned int task;
	bool done;
};

static void drain_here(void *arg)
{
	struct drain_request *request = arg;
	unsigned long flags = ds_lock_irqsave();
	int cpu = active_cpu(request->context);

	if (cpu < 0 || (unsigned int)cpu == this_cpu_index()) {
		drain_locked(request->context, request->task);
		request->done = true;
	}
	ds_unlock_irqrestore(flags);
}

/* Drain where the buffer is, following it if its task moves meanwhile. */
static void drain_where_active(struct arch_context *context, unsigned int task)
{
	struct drain_request request = { context, task, false };

	while (!request.done) {
		unsigned long flags = ds_lock_irqsave();
		int cpu = context->phys ? active_cpu(context) : -2;

		ds_unlock_irqrestore(flags);
		if (cpu == -2)
			return;
		if (cpu < 0)
			drain_here(&request);
		else if (!smp_call((unsigned int)cpu, drain_here, &request))
			panic("ds: CPU %d did not drain an arch-PEBS buffer within %u ms", cpu,
			      SMP_CALL_TIMEOUT_MS);
	}
}

void ds_arch_pebs_drain(const struct ds_target *target)
{
	if (target->cpu || target->index >= SWITCH_TASKS_MAX)
		return;
	drain_where_active(&contexts[target->index], switch_task_current()->index);
}

/*
 * In the order Linux's review settled: the hardware is told first (the CPU that has the buffer
 * clears the counters' CFG_C.EN and writes PEBS_BASE = 0), then what was written is drained and
 * credited to the task, and only then is the buffer freed.
 */
enum ds_error ds_arch_pebs_detach(const struct ds_target *target)
{
	struct arch_context *context;
	unsigned long flags;
	int cpu;

	if (target->cpu)
		return DS_ERROR_NOT_ATTACHED;
	if (target->index >= SWITCH_TASKS_MAX)
		return DS_ERROR_NO_TARGET;
	context = &contexts[target->index];
	flags = ds_lock_irqsave();
	if (context->detaching) {
		ds_unlock_irqrestore(flags);
		return DS_ERROR_DETACHING;
	}
	if (!context->phys) {
		ds_unlock_irqrestore(flags);
		return DS_ERROR_NOT_ATTACHED;
	}
	context->stopping = true;
	context->detaching = true;
	if (context->address_space)
		view_unmap(context->address_space, context->pages);
	while ((cpu = active_cpu(context)) >= 0) {
		ds_unlock_irqrestore(flags);
		if (!smp_call((unsigned int)cpu, apply_here, (void *)context->address_space))
			panic("ds: CPU %d did not withdraw an arch-PEBS buffer within %u ms", cpu,
			      SMP_CALL_TIMEOUT_MS);
		flags = ds_lock_irqsave();
	}
	drain_locked(context, target->index);
	pfa_free_pages(context->phys, context->pages);
	*context = (struct arch_context){ 0 };
	ds_unlock_irqrestore(flags);
	return DS_OK;
}

unsigned int ds_arch_pebs_release(unsigned int task)
{
	struct ds_target target = { false, task };

	if (!ds_support()->arch_pebs.usable || task >= SWITCH_TASKS_MAX || !contexts[task].phys)
		return 0;
	return ds_arch_pebs_detach(&target) == DS_OK;
}

void ds_arch_pebs_pmi_drain(void)
{
	struct arch_cpu *cpu = this_cpu_ptr(cpus);
	uint64_t status = 0;

	if (!ds_support()->arch_pebs.usable)
		return;
	ds_lock_irqs_off();
	if (cpu->active)
		drain_locked(cpu->active, switch_task_current()->index);
	ds_unlock_irqs_off();
	/* Acknowledge the threshold, as handle_pmi_common() does bit 54 (GLOBAL_STATUS_ARCH_PEBS).
	 */
	if (rdmsr_safe(MSR_IA32_PERF_GLOBAL_STATUS, &status) == 0 &&
	    (status & PERF_GLOBAL_STATUS_ARCH_PEBS_THRESHOLD))
		wrmsr_safe(MSR_IA32_PERF_GLOBAL_OVF_CTRL, PERF_GLOBAL_STATUS_ARCH_PEBS_THRESHOLD);
}

/* A known state, so that the cache says what the registers hold. */
void ds_arch_pebs_init_cpu(void)
{
	struct arch_cpu *cpu = this_cpu_ptr(cpus);
	uint64_t pebs = ds_support()->arch_pebs.pebs;

	if (!ds_support()->arch_pebs.usable)
		return;
	for (unsigned int bit = 0; bit < COUNTER_BITS; bit++)
		if (pebs & (1ull << bit))
			wrmsr(cfg_c_msr(bit), 0);
	wrmsr(MSR_IA32_PEBS_BASE, 0);
	wrmsr(MSR_IA32_PEBS_INDEX, 0);
	*cpu = (struct arch_cpu){ 0 };
}
