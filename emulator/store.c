/* SPDX-License-Identifier: MIT */
/* The emulated CPU's Debug Store: BTS and PEBS stores, by the SDM's buffer rules, checked. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/cpu.h"
#include "arch/x86/msr-index.h"
#include "arch/x86/paging.h"
#include "arch/x86/processor-flags.h"
#include "arch/x86/tsc.h"
#include "emulator/internal.h"
#include "emulator/pebs_record.h"

#define BTS_RECORD_BYTES 24 /* from, to, flags: the 64-bit (DTES64) format */
#define DS_BTS_FIELDS 0x00 /* base, index, absolute maximum, interrupt threshold */
#define DS_PEBS_FIELDS 0x20
#define DS_PEBS_RESET 0x40 /* reset value of GP counter i at 0x40 + 8 i */
#define DS_FIELDS_BYTES 0x20
#define PEBS_RESET_FIXED_FMT4 8 /* fixed counter i at slot 8 + i up to format 4 */
#define PEBS_RESET_FIXED_FMT5 32 /* and at 32 + i from format 5 */
#define PEBS_FORMAT0_BUFFER_MAX 4096 /* Linux: larger buffers hang Core 2 (rule 12) */
#define PEBS_RECORD_GROUPS_MASK 0xffffffffffffull /* basic group's format field, bits 47:0 */
#define CLOSE_RECORDS 2 /* "several records short" of the maximum: fewer is a warning */
#define PAGING_LEVELS 4
#define PAGE_TABLE_INDEX_MASK 0x1ffu
#define HUGE_LEVEL_1G 1 /* a PDPT entry with PS */
#define HUGE_LEVEL_2M 2 /* a PD entry with PS */

enum feature {
	FEATURE_BTS,
	FEATURE_PEBS,
};

static const char *const feature_names[] = { "BTS", "PEBS" };

/* Rule 1: linear address present, supervisor-writable, accessed and dirty in the current CR3. */
static bool page_usable(uint64_t linear, uint64_t *bad_entry)
{
	uint64_t table = read_cr3() & PTE_ADDRESS_MASK;

	for (unsigned int level = 0; level < PAGING_LEVELS; level++) {
		unsigned int shift = 39 - 9 * level;
		const uint64_t *entries = phys_to_virt(table);
		uint64_t entry = entries[(linear >> shift) & PAGE_TABLE_INDEX_MASK];
		bool leaf =
			level == PAGING_LEVELS - 1 ||
			((level == HUGE_LEVEL_1G || level == HUGE_LEVEL_2M) && (entry & PTE_HUGE));
		uint64_t need = PTE_PRESENT | PTE_WRITE | PTE_ACCESSED | (leaf ? PTE_DIRTY : 0);

		if ((entry & need) != need || (leaf && (entry & PTE_USER))) {
			*bad_entry = entry;
			return false;
		}
		if (leaf) {
			*bad_entry = entry; /* the leaf, for its memory type */
			return true;
		}
		table = entry & PTE_ADDRESS_MASK;
	}
	return false;
}

static bool range_usable(unsigned int rule, const char *what, uint64_t linear, uint64_t bytes)
{
	uint64_t bad = 0;

	for (uint64_t page = linear & ~(PAGE_SIZE - 1); page < linear + bytes; page += PAGE_SIZE) {
		if (!page_usable(page, &bad)) {
			emulator_violation(rule,
					   "%s at 0x%llx is not present, supervisor-writable, "
					   "accessed and dirty in CR3 0x%lx (entry 0x%llx)",
					   what, (unsigned long long)linear, read_cr3(),
					   (unsigned long long)bad);
			return false;
		}
		if (bad & (PTE_PCD | PTE_PWT))
			emulator_warning(1, "%s at 0x%llx is not write-back memory (entry 0x%llx)",
					 what, (unsigned long long)linear, (unsigned long long)bad);
	}
	return true;
}

static bool canonical(uint64_t linear)
{
	return (uint64_t)((int64_t)(linear << 16) >> 16) == linear;
}

/*
 * The four fields of a feature, read as the CPU reads them; false (reported) if unusable. An
 * IA32_DS_AREA of 0 breaks rule 19 (SDM "Setting Up the DS Save Area": the area is set up and
 * IA32_DS_AREA written before BTS or PEBS is enabled; silicon would read a management area at
 * linear address 0). rule is the one an unmapped area breaks: 19 when the feature is turned on,
 * 1 at a store.
 */
static bool fields_read(struct emulator_cpu *cpu, enum feature feature, unsigned int rule,
			struct emulator_ds_fields *out)
{
	uint64_t area = cpu->registers.ds_area;
	uint64_t at = area + (feature == FEATURE_BTS ? DS_BTS_FIELDS : DS_PEBS_FIELDS);
	const uint64_t *fields = (const uint64_t *)at;

	if (!area) {
		emulator_violation(
			19, "%s on with IA32_DS_AREA = 0 (DEBUGCTL=0x%llx PEBS_ENABLE=0x%llx)",
			feature_names[feature], (unsigned long long)cpu->registers.debugctl,
			(unsigned long long)cpu->registers.pebs_enable);
		return false;
	}
	if (!canonical(area) || !range_usable(rule, "the DS save area", at, DS_FIELDS_BYTES))
		return false;
	*out = (struct emulator_ds_fields){ fields[0], fields[1], fields[2], fields[3] };
	return true;
}

static void index_write(struct emulator_cpu *cpu, enum feature feature, uint64_t index)
{
	uint64_t at = cpu->registers.ds_area +
		      (feature == FEATURE_BTS ? DS_BTS_FIELDS : DS_PEBS_FIELDS) + 8;

	*(volatile uint64_t *)at = index;
	(feature == FEATURE_BTS ? &cpu->bts_seen : &cpu->pebs_seen)->index = index;
}

/*
 * Rule 2: the layout of a buffer that is about to be used, in records of record bytes. With
 * whole_threshold false (rule 20) the threshold may fall between records.
 */
static bool layout_valid(enum feature feature, const struct emulator_ds_fields *f, uint64_t record,
			 bool interrupt, bool whole_threshold)
{
	const char *name = feature_names[feature];

	if (f->base % 4 || f->max < f->base + record || (f->max - f->base) % record) {
		emulator_violation(2,
				   "%s buffer base 0x%llx max 0x%llx: not whole %llu-byte records "
				   "from a 4-byte aligned base",
				   name, (unsigned long long)f->base, (unsigned long long)f->max,
				   (unsigned long long)record);
		return false;
	}
	if (!interrupt) {
		/* Circular BTS: "the threshold must lie beyond the absolute maximum". */
		if (f->threshold <= f->max) {
			emulator_violation(
				2, "circular BTS with threshold 0x%llx not beyond max 0x%llx",
				(unsigned long long)f->threshold, (unsigned long long)f->max);
			return false;
		}
		return true;
	}
	if (f->threshold <= f->base || f->threshold > f->max ||
	    (whole_threshold && (f->threshold - f->base) % record)) {
		emulator_violation(2,
				   "%s threshold 0x%llx outside (base 0x%llx, max 0x%llx] or not "
				   "a whole number of %llu-byte records",
				   name, (unsigned long long)f->threshold,
				   (unsigned long long)f->base, (unsigned long long)f->max,
				   (unsigned long long)record);
		return false;
	}
	if (f->threshold + CLOSE_RECORDS * record > f->max && f->threshold != f->base + record)
		emulator_warning(2,
				 "%s threshold 0x%llx is less than %u records short of max 0x%llx",
				 name, (unsigned long long)f->threshold, CLOSE_RECORDS,
				 (unsigned long long)f->max);
	return true;
}

static bool bts_on(const struct emulator_registers *r)
{
	return (r->debugctl & (DEBUGCTL_TR | DEBUGCTL_BTS)) == (DEBUGCTL_TR | DEBUGCTL_BTS);
}

/* Snapshot a feature's fields when it turns on: later changes break rule 3. */
static void start_tracking(struct emulator_cpu *cpu, enum feature feature)
{
	struct emulator_ds_fields *seen = feature == FEATURE_BTS ? &cpu->bts_seen : &cpu->pebs_seen;
	bool *tracking = feature == FEATURE_BTS ? &cpu->bts_tracking : &cpu->pebs_tracking;

	*tracking = fields_read(cpu, feature, 19, seen);
}

void emulator_ds_features_changed(struct emulator_cpu *cpu, uint64_t old_debugctl,
				  uint64_t old_pebs_enable)
{
	const struct emulator_registers *r = &cpu->registers;
	struct emulator_registers old = *r;

	old.debugctl = old_debugctl;
	if (!bts_on(r))
		cpu->bts_tracking = false;
	else if (!bts_on(&old))
		start_tracking(cpu, FEATURE_BTS);
	if (!r->pebs_enable) {
		cpu->pebs_tracking = false;
		cpu->pebs_armed = 0;
	} else if (!old_pebs_enable && !emulator_profile()->arch_pebs) {
		start_tracking(cpu, FEATURE_PEBS);
	}
}

static void check_one(struct emulator_cpu *cpu, enum feature feature)
{
	struct emulator_ds_fields *seen = feature == FEATURE_BTS ? &cpu->bts_seen : &cpu->pebs_seen;
	struct emulator_ds_fields now;

	if (!fields_read(cpu, feature, 1, &now))
		return;
	if (now.base != seen->base || now.index != seen->index || now.max != seen->max ||
	    now.threshold != seen->threshold) {
		emulator_violation(3,
				   "%s fields changed while it was on: base 0x%llx->0x%llx index "
				   "0x%llx->0x%llx max 0x%llx->0x%llx threshold 0x%llx->0x%llx",
				   feature_names[feature], (unsigned long long)seen->base,
				   (unsigned long long)now.base, (unsigned long long)seen->index,
				   (unsigned long long)now.index, (unsigned long long)seen->max,
				   (unsigned long long)now.max, (unsigned long long)seen->threshold,
				   (unsigned long long)now.threshold);
		*seen = now; /* report a change once */
	}
}

void emulator_ds_check_fields(struct emulator_cpu *cpu)
{
	if (cpu->bts_tracking && bts_on(&cpu->registers))
		check_one(cpu, FEATURE_BTS);
	if (cpu->pebs_tracking && cpu->registers.pebs_enable)
		check_one(cpu, FEATURE_PEBS);
}

/*
 * Rule 5: the groups of the first record the PEBS buffer holds, when it holds one in an
 * adaptive format; false when it is empty (or unreadable: rule 1 reports that at the store).
 */
bool emulator_pebs_buffered_groups(struct emulator_cpu *cpu, uint64_t *groups)
{
	struct emulator_ds_fields f;
	uint64_t bad;

	if (emulator_profile()->pebs_format < 4 || emulator_profile()->arch_pebs ||
	    !cpu->registers.ds_area || !canonical(cpu->registers.ds_area) ||
	    !page_usable(cpu->registers.ds_area + DS_PEBS_FIELDS, &bad))
		return false;
	f = *(const struct emulator_ds_fields *)(cpu->registers.ds_area + DS_PEBS_FIELDS);
	if (f.index <= f.base || !canonical(f.base) || !page_usable(f.base, &bad))
		return false;
	*groups = *(const uint64_t *)f.base & PEBS_RECORD_GROUPS_MASK;
	return true;
}

/* Whether DS-CPL's BTS_OFF_OS or BTS_OFF_USR keeps records at this privilege out (SDM
 * "CPL-Qualified Branch Trace Mechanism"). */
static bool bts_filtered(const struct emulator_registers *r, bool user)
{
	return emulator_profile()->ds_cpl &&
	       (r->debugctl & (user ? DEBUGCTL_BTS_OFF_USR : DEBUGCTL_BTS_OFF_OS));
}

static void bts_store(struct emulator_cpu *cpu, uint64_t from, uint64_t to);

void emulator_bts_store(struct emulator_cpu *cpu, uint64_t from, uint64_t to, bool user)
{
	if (bts_on(&cpu->registers) && !bts_filtered(&cpu->registers, user))
		bts_store(cpu, from, to);
}

/*
 * Rule 21: a far transfer (an interrupt's or exception's delivery, INT n, SYSCALL, IRET) is one
 * record "when the processor detects a taken branch, interrupt, or exception" (SDM DEBUGCTL.TR).
 * One between rings is stored when either ring is traced: Linux drops such records from a trace
 * that excludes the kernel because "BTS leaks kernel addresses in branches across the cpl
 * boundary, such as traps or system calls" (intel_pmu_drain_bts_buffer()).
 */
void emulator_bts_store_transfer(struct emulator_cpu *cpu, uint64_t from, bool from_user,
				 uint64_t to, bool to_user)
{
	const struct emulator_registers *r = &cpu->registers;

	if (bts_on(r) && !(bts_filtered(r, from_user) && bts_filtered(r, to_user)))
		bts_store(cpu, from, to);
}

static void bts_store(struct emulator_cpu *cpu, uint64_t from, uint64_t to)
{
	struct emulator_registers *r = &cpu->registers;
	bool interrupt = r->debugctl & DEBUGCTL_BTINT;
	struct emulator_ds_fields f;
	uint64_t record[3] = { from, to, 0 };
	uint64_t *slot;

	if (!fields_read(cpu, FEATURE_BTS, 1, &f) ||
	    !layout_valid(FEATURE_BTS, &f, BTS_RECORD_BYTES, interrupt, true))
		return;
	if (f.index < f.base || f.index + BTS_RECORD_BYTES > f.max) {
		if (interrupt)
			return; /* full: not circular with BTINT, nothing more is stored */
		emulator_violation(2, "BTS index 0x%llx outside base 0x%llx max 0x%llx",
				   (unsigned long long)f.index, (unsigned long long)f.base,
				   (unsigned long long)f.max);
		return;
	}
	if (!range_usable(1, "the BTS record", f.index, BTS_RECORD_BYTES))
		return;
	slot = (uint64_t *)f.index;
	for (unsigned int i = 0; i < 3; i++)
		slot[i] = record[i];
	cpu->stats.bts_records++;
	f.index += BTS_RECORD_BYTES;
	if (!interrupt && f.index >= f.max)
		f.index = f.base; /* circular */
	index_write(cpu, FEATURE_BTS, f.index);
	if (interrupt && f.index == f.threshold) {
		if (emulator_bts_sets_status())
			emulator_status_change(r, emulator_profile(), PERF_GLOBAL_STATUS_BUFFER_OVF,
					       0);
		emulator_pmi_request(cpu);
	}
}

static unsigned int reset_slot(unsigned int bit)
{
	if (bit < PEBS_ENABLE_FIXED_SHIFT)
		return bit;
	return (emulator_profile()->pebs_format >= 5 ? PEBS_RESET_FIXED_FMT5
						     : PEBS_RESET_FIXED_FMT4) +
	       bit - PEBS_ENABLE_FIXED_SHIFT;
}

static bool event_adaptive(const struct emulator_registers *r, unsigned int bit)
{
	if (bit < PEBS_ENABLE_FIXED_SHIFT)
		return r->evtsel[bit] & PERFEVTSEL_ADAPTIVE;
	return r->fixed_ctrl & (FIXED_CTR_CTRL_ADAPTIVE
				<< (FIXED_CTR_CTRL_FIELD_BITS * (bit - PEBS_ENABLE_FIXED_SHIFT)));
}

void emulator_machine_state(const struct cpu_regs *regs, struct pebs_machine_state *state)
{
	*state = (struct pebs_machine_state){
		.rflags = regs->rflags & ~RFLAGS_TF,
		.rip = regs->rip,
		.rax = regs->rax,
		.rbx = regs->rbx,
		.rcx = regs->rcx,
		.rdx = regs->rdx,
		.rsi = regs->rsi,
		.rdi = regs->rdi,
		.rbp = regs->rbp,
		.rsp = regs->rsp,
		.r8 = regs->r8,
		.r9 = regs->r9,
		.r10 = regs->r10,
		.r11 = regs->r11,
		.r12 = regs->r12,
		.r13 = regs->r13,
		.r14 = regs->r14,
		.r15 = regs->r15,
	};
}

/*
 * Rule 20. With adaptive PEBS (baseline) a record's size follows PEBS_DATA_CFG and whether the
 * event asked for adaptive records: the buffer holds whole basic records (Linux
 * alloc_pebs_buffer()), its threshold stands where software wants the interrupt
 * (pebs_update_threshold() subtracts adaptive records from the maximum), and a record is stored
 * when it fits below the maximum. Measuring the buffer in the current record's size would
 * refuse Linux's own layout.
 */
#define PEBS_BASIC_RECORD_BYTES 32

/*
 * The assist for the counters in bits (PEBS_ENABLE numbering), armed by their overflows: one
 * record at the PEBS index that applies to them all, each reloaded from its reset slot and its
 * overflow status cleared, and the PMI when the index reaches the threshold. The record is
 * adaptive as the lowest counter's event asks (choice: the SDM does not say for a mix). False
 * when no record could be written (reported).
 */
static bool assist(struct emulator_cpu *cpu, uint64_t bits, uint64_t eventing_ip,
		   struct cpu_regs *regs, bool late)
{
	unsigned int lowest = (unsigned int)__builtin_ctzll(bits);
	const struct emulator_profile *p = emulator_profile();
	struct emulator_registers *r = &cpu->registers;
	struct pebs_assist assist = {
		.format = p->pebs_format,
		.baseline = p->pebs_baseline,
		.adaptive = event_adaptive(r, lowest),
		.data_cfg = r->pebs_data_cfg,
		.applicable_counters = bits,
		.eventing_ip = eventing_ip,
		.tsc = rdtsc_ordered(),
	};
	struct emulator_ds_fields f;
	size_t bytes;
	uint64_t reset;

	if (p->arch_pebs) /* rule 25: not in the DS area */
		return emulator_arch_pebs_assist(cpu, bits, eventing_ip, regs);
	emulator_machine_state(regs, &assist.state);
	assist.lbr = cpu->pebs_lbr;
	assist.lbr_valid = emulator_lbr_newest(r, p, cpu->pebs_lbr, LBR_LEGACY_MAX_DEPTH);
	bytes = pebs_record_bytes(&assist);
	if (!fields_read(cpu, FEATURE_PEBS, 1, &f) ||
	    !layout_valid(FEATURE_PEBS, &f, p->pebs_baseline ? PEBS_BASIC_RECORD_BYTES : bytes,
			  true, !p->pebs_baseline))
		return false;
	if (p->pebs_format == 0 && f.max - f.base > PEBS_FORMAT0_BUFFER_MAX) {
		emulator_violation(12, "format-0 PEBS buffer of %llu bytes: more than one page",
				   (unsigned long long)(f.max - f.base));
		return false;
	}
	if (f.index < f.base || f.index + bytes > f.max)
		return false; /* full: the record is lost, as on silicon */
	if (!range_usable(1, "the PEBS record", f.index, bytes) ||
	    !range_usable(1, "the PEBS reset slot", cpu->registers.ds_area + DS_PEBS_RESET, 8 * 48))
		return false;
	if (late) {
		cpu->pebs_flight = (struct emulator_pebs_flight){
			.pending = true,
			.assist = assist,
			.at = f.index,
			.bytes = bytes,
			.area = cpu->registers.ds_area,
			.threshold = f.threshold,
			.lands = assist.tsc + tsc_hz() / 1000000 * EMULATOR_PEBS_FLIGHT_US,
		};
	} else {
		pebs_record_write(&assist, (void *)f.index, bytes);
		cpu->stats.pebs_records++;
		index_write(cpu, FEATURE_PEBS, f.index + bytes);
	}
	for (uint64_t left = bits; left; left &= left - 1) {
		unsigned int bit = (unsigned int)__builtin_ctzll(left);

		reset = ((const uint64_t *)(r->ds_area + DS_PEBS_RESET))[reset_slot(bit)];
		if (bit < PEBS_ENABLE_FIXED_SHIFT)
			r->counter[bit] = reset & emulator_counter_mask(p, false);
		else
			r->fixed_counter[bit - PEBS_ENABLE_FIXED_SHIFT] =
				reset & emulator_counter_mask(p, true);
	}
	emulator_status_change(r, p, 0, bits);
	if (!late && f.index < f.threshold && f.index + bytes >= f.threshold) {
		emulator_status_change(r, p, PERF_GLOBAL_STATUS_BUFFER_OVF, 0);
		emulator_pmi_request(cpu);
	}
	return true;
}

bool emulator_pebs_assist(struct emulator_cpu *cpu, uint64_t bits, uint64_t eventing_ip,
			  struct cpu_regs *regs)
{
	return assist(cpu, bits, eventing_ip, regs, false);
}

/*
 * Which record is still in flight when PEBS goes off the SDM does not say; the model plays the
 * assist of a counter armed at that moment (its overflow came, its next event did not): it
 * completes as the disabling WRMSR retires (its IP and registers), reloading the counter and
 * clearing its status then, and its bounds are checked against the fields as they are then.
 * Its record and the index update land later, at the addresses the fields gave then, whatever
 * the memory holds by then: so software must not free or reuse the buffer or the DS save area,
 * nor reset the index, until the quiescent period is over. One record is in flight at a time:
 * an earlier one lands first.
 */
void emulator_pebs_in_flight(struct emulator_cpu *cpu, uint64_t bits, struct cpu_regs *regs)
{
	if (!bits)
		return;
	if (cpu->pebs_flight.pending) {
		cpu->pebs_flight.lands = 0;
		emulator_pebs_land(cpu);
	}
	assist(cpu, bits, regs->rip, regs, true);
	cpu->pebs_armed &= ~bits;
}

void emulator_pebs_land(struct emulator_cpu *cpu)
{
	struct emulator_pebs_flight *f = &cpu->pebs_flight;
	uint64_t index_at = f->area + DS_PEBS_FIELDS + 8, index = f->at + f->bytes;

	if (!f->pending || rdtsc_ordered() < f->lands)
		return;
	f->pending = false;
	if (!range_usable(1, "a PEBS record in flight", f->at, f->bytes) ||
	    !range_usable(1, "the PEBS index of a record in flight", index_at, 8))
		return;
	pebs_record_write(&f->assist, (void *)f->at, f->bytes);
	*(volatile uint64_t *)index_at = index;
	if (f->area == cpu->registers.ds_area)
		cpu->pebs_seen.index = index;
	cpu->stats.pebs_records++;
	cpu->stats.pebs_late++;
	if (f->at < f->threshold && index >= f->threshold) {
		emulator_status_change(&cpu->registers, emulator_profile(),
				       PERF_GLOBAL_STATUS_BUFFER_OVF, 0);
		emulator_pmi_request(cpu);
	}
}
