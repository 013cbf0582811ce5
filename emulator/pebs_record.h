/* SPDX-License-Identifier: MIT */
/* The emulated CPU's PEBS assist: the bytes a PEBS-capable Intel CPU stores for one record. */
#ifndef EMULATOR_PEBS_RECORD_H
#define EMULATOR_PEBS_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * This is the "hardware" side, written from the SDM Vol. 3B "PEBS Record Format" sections and
 * Linux arch/x86/events/intel/ds.c (struct pebs_record_core/nhm/hsw/skl) and
 * arch/x86/include/asm/perf_event.h (struct pebs_basic/pebs_meminfo/pebs_gprs/pebs_xmm,
 * struct lbr_entry). It deliberately shares nothing with the driver's decoder in ds/.
 */

/*
 * MSR_PEBS_DATA_CFG (0x3F2) fields, adaptive PEBS only (SDM Vol. 3B "Adaptive PEBS";
 * Linux perf_event.h PEBS_DATACFG_*). The same bits name the groups in a record's basic group.
 */
#define PEBS_ASSIST_CFG_MEMINFO (1ULL << 0) /* memory info group: 4 qwords */
#define PEBS_ASSIST_CFG_GPRS (1ULL << 1) /* GPR group: 18 qwords */
#define PEBS_ASSIST_CFG_XMMS (1ULL << 2) /* XMM group: 32 qwords */
#define PEBS_ASSIST_CFG_LBRS (1ULL << 3) /* LBR group: N entries of 3 qwords */
#define PEBS_ASSIST_CFG_LBR_SHIFT 24 /* bits 31:24 hold N - 1 */
#define PEBS_ASSIST_CFG_LBR_MASK 0xffULL

/* The architectural state the assist captures. */
struct pebs_machine_state {
	uint64_t rflags, rip; /* rip: the instruction after the one that caused the event */
	uint64_t rax, rbx, rcx, rdx, rsi, rdi, rbp, rsp, r8, r9, r10, r11, r12, r13, r14, r15;
};

/* One LBR entry of the adaptive LBR group (Linux struct lbr_entry): as the LBR MSRs hold it. */
struct pebs_assist_lbr {
	uint64_t from, to, info;
};

struct pebs_assist {
	unsigned int format; /* PERF_CAPABILITIES[11:8]: 0-5 (6 is treated as 5) */
	bool baseline; /* PERF_CAPABILITIES bit 14 */
	/* The event asked for an adaptive record: EVTSEL bit 34 or FIXED_CTR_CTRL bit 32+4i. */
	bool adaptive;
	/* MSR_PEBS_DATA_CFG: bit 0 memory info, 1 GPRs, 2 XMM, 3 LBRs, 31:24 LBR entries - 1 */
	uint64_t data_cfg;
	/* GLOBAL_STATUS-style bits of the counters this record applies to */
	uint64_t applicable_counters;
	uint64_t eventing_ip; /* the instruction that caused the event */
	uint64_t tsc;
	struct pebs_machine_state state;
	/*
	 * The LBR stack at the assist, newest first: lbr_valid entries at lbr (NULL when none).
	 * The LBR group takes the newest of them; entries past lbr_valid are written 0.
	 */
	const struct pebs_assist_lbr *lbr;
	unsigned int lbr_valid;
};

/*
 * Bytes the record takes, 0 for an unknown format (above 6) or a NULL assist.
 *
 * Formats 0-3: 144, 176, 192, 200 (ds.c pebs_record_core, _nhm, _hsw, _skl).
 *
 * Formats 4-6: the 32-byte basic group, plus the groups data_cfg selects when the record is
 * adaptive: assist->adaptive and (assist->baseline or format >= 5). Format 4 without baseline
 * writes the basic group only (ds.c intel_ds_init: "Only basic record supported"). Bits of
 * data_cfg outside the four groups and, with LBRs, the entry count, are ignored: the MSR model
 * is expected to refuse them.
 */
size_t pebs_record_bytes(const struct pebs_assist *assist);
/* Store a qword little-endian at at (unaligned is fine); the next qword. */
uint8_t *pebs_record_emit(uint8_t *at, uint64_t value);
/*
 * An adaptive record's GPR group, and architectural PEBS's: flags, ip (the next instruction),
 * then RAX-R15 in instruction-encoding order (ax, cx, dx, bx, sp, bp, si, di, r8-r15), unlike
 * formats 0-3. The next qword.
 */
uint8_t *pebs_record_emit_gprs(uint8_t *at, const struct pebs_machine_state *s);

/*
 * Write the record at out (any alignment; room bytes writable), little-endian. Returns the bytes
 * written, pebs_record_bytes(assist); 0, with out untouched, when room is too small, out or
 * assist is NULL, or the format is unknown. Every byte of the record is written: fields the
 * model does not implement are stored as zero.
 */
size_t pebs_record_write(const struct pebs_assist *assist, void *out, size_t room);

#endif
