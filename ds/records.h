/* SPDX-License-Identifier: MIT */
/* BTS and PEBS record layouts and their decoders. Pure: no hardware access, host-testable. */
#ifndef DS_RECORDS_H
#define DS_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * BTS record, 64-bit (DTES64) format: SDM Vol. 3B "Branch Trace Store (BTS)", Linux ds.c
 * struct bts_record. The processor writes one per taken branch at the DS area's BTS index.
 */
struct bts_record {
	uint64_t from; /* linear address of the branch instruction */
	uint64_t to; /* linear address of the branch target */
	uint64_t flags; /* BTS_FLAGS_*; every other bit is reserved */
};

#define BTS_RECORD_SIZE 24
#define BTS_RECORD_FROM 0x00
#define BTS_RECORD_TO 0x08
#define BTS_RECORD_FLAGS 0x10
/* The branch was predicted. The SDM says Core and Atom microarchitectures do not fill it. */
#define BTS_FLAGS_PREDICTED (1ULL << 4)

struct bts_sample {
	uint64_t from;
	uint64_t to;
	uint64_t flags; /* as recorded, reserved bits included */
	bool predicted; /* BTS_FLAGS_PREDICTED */
};

/* Decode the record at bytes (any alignment). False if bytes is NULL or length < 24. */
bool bts_decode(const void *bytes, size_t length, struct bts_sample *out);

/*
 * PEBS record format: IA32_PERF_CAPABILITIES bits 11:8 (SDM Vol. 3B "PEBS Record Format").
 * Format 6 (Lunar Lake, Arrow Lake) has the format 5 record and DS layout, so every function
 * here treats 6 as 5; formats above 6 are unknown and rejected.
 */
enum pebs_format {
	PEBS_FORMAT_0 = 0, /* Core 2, Bonnell: 144-byte record, flags, ip and 16 GPRs */
	PEBS_FORMAT_1 = 1, /* Nehalem: 176 bytes, adds status, data address, source, latency */
	PEBS_FORMAT_2 = 2, /* Haswell: 192 bytes, adds eventing ip and TSX tuning */
	PEBS_FORMAT_3 = 3, /* Skylake: 200 bytes, adds the TSC */
	PEBS_FORMAT_4 = 4, /* Ice Lake (baseline): adaptive, size in each record */
	PEBS_FORMAT_5 = 5, /* adaptive as 4; the DS reset array grows to 32 GP + 16 fixed */
	PEBS_FORMAT_6 = 6, /* Lunar Lake, Arrow Lake: handled exactly as format 5 */
};

#define PEBS_FORMAT_MAX_KNOWN PEBS_FORMAT_6

/*
 * Fixed-size records (formats 0-3), Linux ds.c pebs_record_core/nhm/hsw/skl. Each format
 * extends the one before, so an offset holds in the format named and every later one up to 3.
 */
#define PEBS_REC_FLAGS 0x00 /* fmt 0: RFLAGS */
#define PEBS_REC_IP 0x08 /* fmt 0: RIP after the assist, normally the next instruction */
#define PEBS_REC_RAX 0x10 /* fmt 0: RAX RBX RCX RDX RSI RDI RBP RSP R8-R15, in this order */
#define PEBS_REC_RBX 0x18
#define PEBS_REC_RCX 0x20
#define PEBS_REC_RDX 0x28
#define PEBS_REC_RSI 0x30
#define PEBS_REC_RDI 0x38
#define PEBS_REC_RBP 0x40
#define PEBS_REC_RSP 0x48
#define PEBS_REC_R8 0x50 /* R8 + 8 * n holds R(8 + n), up to R15 */
#define PEBS_REC_STATUS 0x90 /* fmt 1: counters that overflowed (IA32_PERF_GLOBAL_STATUS) */
#define PEBS_REC_DATA_ADDRESS 0x98 /* fmt 1: data linear address (load latency, stores) */
#define PEBS_REC_DATA_SOURCE 0xa0 /* fmt 1: data source encoding */
#define PEBS_REC_LATENCY 0xa8 /* fmt 1: load latency in core cycles */
#define PEBS_REC_EVENTING_IP 0xb0 /* fmt 2: RIP of the instruction that caused the event */
#define PEBS_REC_TSX_TUNING 0xb8 /* fmt 2: TSX abort information */
#define PEBS_REC_TSC 0xc0 /* fmt 3: TSC when the record was written */

#define PEBS_FORMAT_0_SIZE 144
#define PEBS_FORMAT_1_SIZE 176
#define PEBS_FORMAT_2_SIZE 192
#define PEBS_FORMAT_3_SIZE 200

/*
 * Adaptive records (formats 4-6): SDM Vol. 3B "Adaptive PEBS", Linux perf_event.h pebs_basic,
 * pebs_meminfo, pebs_gprs, pebs_xmm, lbr_entry. The basic group always comes first; the others
 * follow in this order when the record's format field names them: memory info, GPRs, XMM, LBRs.
 * Offsets below are from the start of their group.
 */
#define PEBS_BASIC_FORMAT_SIZE 0x00 /* record format (which groups) and record size */
#define PEBS_BASIC_IP 0x08 /* RIP of the instruction that caused the event */
#define PEBS_BASIC_APPLICABLE_COUNTERS 0x10 /* counters this record applies to */
#define PEBS_BASIC_TSC 0x18
#define PEBS_BASIC_GROUP_SIZE 32

/*
 * The basic group's first qword. Bits 31:0 are the record format, laid out like PEBS_DATA_CFG
 * bits 31:0 and naming the groups this record holds. Bits 47:32 are reserved before format 6
 * and the retire latency with PEBS timing info. Bits 63:48 are the record size in bytes.
 */
#define PEBS_BASIC_GROUPS_MASK 0xffffffffULL
#define PEBS_BASIC_SIZE_SHIFT 48
#define PEBS_BASIC_SIZE_MASK 0xffffULL

#define PEBS_MEMINFO_DATA_ADDRESS 0x00 /* data linear address */
#define PEBS_MEMINFO_DATA_SOURCE 0x08 /* "aux": data source encoding */
#define PEBS_MEMINFO_LATENCY 0x10
#define PEBS_MEMINFO_TSX_TUNING 0x18
#define PEBS_MEMINFO_GROUP_SIZE 32

#define PEBS_GPRS_FLAGS 0x00 /* RFLAGS */
#define PEBS_GPRS_IP 0x08 /* RIP with the register state: the next instruction */
#define PEBS_GPRS_RAX 0x10 /* RAX RCX RDX RBX RSP RBP RSI RDI R8-R15: encoding order */
#define PEBS_GPRS_GROUP_SIZE 144

#define PEBS_XMM_GROUP_SIZE 256 /* XMM0-XMM15, two qwords each, low qword first */

#define PEBS_LBR_FROM 0x00
#define PEBS_LBR_TO 0x08
#define PEBS_LBR_INFO 0x10
#define PEBS_LBR_ENTRY_SIZE 24

/*
 * MSR_PEBS_DATA_CFG (0x3F2), adaptive PEBS only (Linux perf_event.h PEBS_DATACFG_*). The same
 * bits appear in each record's format field. Build and parse the LBR count with
 * pebs_data_cfg_lbrs() and pebs_data_cfg_lbr_count(), not by shifting.
 */
#define PEBS_DATA_CFG_MEMINFO (1ULL << 0) /* memory info group, 4 qwords */
#define PEBS_DATA_CFG_GPRS (1ULL << 1) /* GPR group, 18 qwords */
#define PEBS_DATA_CFG_XMMS (1ULL << 2) /* XMM group, 32 qwords */
#define PEBS_DATA_CFG_LBRS (1ULL << 3) /* LBR group, N entries of 3 qwords */
#define PEBS_DATA_CFG_LBR_SHIFT 24 /* bits 31:24 hold N - 1 */
#define PEBS_DATA_CFG_LBR_MASK 0xffULL
#define PEBS_DATA_CFG_LBR_MAX 256

/* PEBS_DATA_CFG_LBRS with room for entries (1-256) LBR entries; 0 if entries is out of range. */
uint64_t pebs_data_cfg_lbrs(unsigned int entries);
/* The number of LBR entries data_cfg (or a record's format field) asks for; 0 without LBRS. */
unsigned int pebs_data_cfg_lbr_count(uint64_t data_cfg);
/* Size of an adaptive record holding the groups data_cfg selects; 0 if it names unknown bits. */
size_t pebs_adaptive_record_size(uint64_t data_cfg);

/* The fixed record size of formats 0-3; 0 for the adaptive formats 4-6 and unknown formats. */
size_t pebs_record_size(enum pebs_format format);
/* Formats 4, 5 and 6. */
bool pebs_format_is_adaptive(enum pebs_format format);

/* Indexes into struct pebs_sample.gprs[], in the instruction-encoding order. */
enum pebs_gpr {
	PEBS_GPR_RAX,
	PEBS_GPR_RCX,
	PEBS_GPR_RDX,
	PEBS_GPR_RBX,
	PEBS_GPR_RSP,
	PEBS_GPR_RBP,
	PEBS_GPR_RSI,
	PEBS_GPR_RDI,
	PEBS_GPR_R8,
	PEBS_GPR_R9,
	PEBS_GPR_R10,
	PEBS_GPR_R11,
	PEBS_GPR_R12,
	PEBS_GPR_R13,
	PEBS_GPR_R14,
	PEBS_GPR_R15,
	PEBS_GPR_COUNT
};

/* One PEBS record in a format-independent form. A field is valid only if its has_ flag is set. */
struct pebs_sample {
	/*
	 * Always valid. Formats 0-3: the record's ip, the instruction after the one that caused
	 * the event (trap-like assist). Adaptive: the basic group's ip, the eventing instruction.
	 */
	uint64_t ip;
	uint64_t eventing_ip; /* fmt 2-3 eventing ip; adaptive basic ip. has_eventing_ip */
	uint64_t status; /* fmt 1-3 status; adaptive applicable counters. has_status */
	uint64_t data_address; /* has_memory */
	uint64_t data_source; /* has_memory */
	uint64_t latency; /* has_memory */
	uint64_t tsx_tuning; /* fmt 2-3, or adaptive memory info. has_tsx_tuning */
	uint64_t tsc; /* has_tsc */
	uint64_t rflags; /* has_gprs */
	uint64_t register_ip; /* has_gprs: RIP saved with the registers (the next instruction) */
	uint64_t gprs[PEBS_GPR_COUNT]; /* has_gprs, indexed by enum pebs_gpr */
	size_t xmm_offset; /* has_xmm: byte offset of the XMM group in the record */
	size_t lbr_offset; /* has_lbrs: byte offset of the first LBR entry in the record */
	unsigned int lbr_count; /* has_lbrs */
	bool has_eventing_ip;
	bool has_status;
	bool has_memory;
	bool has_tsx_tuning;
	bool has_tsc;
	bool has_gprs;
	bool has_xmm;
	bool has_lbrs;
};

struct pebs_lbr_entry {
	uint64_t from;
	uint64_t to;
	uint64_t info;
};

/*
 * Decode the record at bytes (any alignment), of which available bytes are readable, into out,
 * and store its size in *record_size (if not NULL). False, with *out and *record_size
 * unspecified, if the arguments are NULL, the format is unknown, or the record is not valid.
 *
 * Formats 0-3: valid if available >= pebs_record_size(format). data_cfg is ignored.
 *
 * Formats 4-6: the record describes itself. Let size be format_size bits 63:48 and groups its
 * bits 31:0. The record is rejected, in this order, when:
 *   1. available < 8, so the header cannot be read;
 *   2. size == 0;
 *   3. size is not a multiple of 8;
 *   4. size < 32, the basic group;
 *   5. groups sets a bit that is neither a known group (PEBS_DATA_CFG bits 3:0) nor, with
 *      LBRS, the LBR count (bits 31:24);
 *   6. groups names a group data_cfg does not enable, or more LBR entries than data_cfg asks
 *      for. data_cfg must be every PEBS_DATA_CFG value programmed since the buffer was last
 *      drained, OR-ed together (LBR count: the largest): normally just the current value. A
 *      record may hold fewer groups than data_cfg, since it may predate a DATA_CFG change;
 *   7. size != pebs_adaptive_record_size(groups), the size the record's own groups need;
 *   8. size > available.
 */
bool pebs_decode(enum pebs_format format, const void *bytes, size_t available, uint64_t data_cfg,
		 struct pebs_sample *out, size_t *record_size);

/* LBR entry index (0 = most recent) of a record sample came from. False if out of range. */
bool pebs_lbr_entry(const void *record, const struct pebs_sample *sample, unsigned int index,
		    struct pebs_lbr_entry *out);
/* XMM register reg (0-15) as two qwords, low first. False if the record has no XMM group. */
bool pebs_xmm_register(const void *record, const struct pebs_sample *sample, unsigned int reg,
		       uint64_t out[2]);

/*
 * Walk the used_bytes the processor wrote from base (PEBS index - PEBS base) one record at a
 * time, each adaptive record by its own size, never a fixed stride. Return the byte offset of
 * the last complete record and store the number of complete records in *count (if not NULL).
 * A tail shorter than its record (or than the 8-byte header) is a truncated record: the walk
 * stops before it. Return SIZE_MAX, with *count = 0, if there is no complete record, or a
 * record fails pebs_decode()'s rules 2-7 (the buffer is malformed), or the format is unknown.
 */
size_t pebs_find_last(enum pebs_format format, const void *base, size_t used_bytes,
		      uint64_t data_cfg, size_t *count);

/*
 * The samples one record gives, as Linux's intel_pmu_drain_pebs_nhm() hands them out: to the
 * counters its status names among enabled (PEBS_ENABLE); a status of 0 where one counter is
 * enabled is that counter's (the status raced with clearing GLOBAL_STATUS); from format 3 every
 * counter named gets the record; before it, a record naming more than one (a collision) gives
 * none, and neither does one naming none of them: those add 1 to *dropped. Format 0 has no status
 * and one PEBS counter: 1.
 */
unsigned int pebs_record_samples(enum pebs_format format, bool has_status, uint64_t status,
				 uint64_t enabled, unsigned int *dropped);

/*
 * Counter reset values in the DS area: slot i is at byte 0x40 + 8 * i (docs/hardware-facts.md
 * §2, Linux intel_ds.h). Before format 5 there are 8 GP slots and 4 fixed ones after them; from
 * format 5 there are 32 GP slots and 16 fixed ones.
 */
#define PEBS_RESET_GP_SLOTS_FMT4 8
#define PEBS_RESET_FIXED_SLOTS_FMT4 4
#define PEBS_RESET_GP_SLOTS_FMT5 32
#define PEBS_RESET_FIXED_SLOTS_FMT5 16
#define PEBS_RESET_SLOTS_MAX (PEBS_RESET_GP_SLOTS_FMT5 + PEBS_RESET_FIXED_SLOTS_FMT5)
#define PEBS_RESET_SLOT_NONE 0xffffffffU

/*
 * The reset-value slot of GP counter `counter` (slot = counter) or fixed counter `counter`
 * (slot = 8 + counter before format 5, 32 + counter from format 5). PEBS_RESET_SLOT_NONE if the
 * format is unknown or the counter has no slot in that format's layout.
 */
unsigned int pebs_reset_slot(enum pebs_format format, bool fixed_counter, unsigned int counter);

#endif
