/* SPDX-License-Identifier: MIT */
/* PEBS record builder for the emulated CPU: fixed formats 0-3 and adaptive formats 4-6. */
#include "emulator/pebs_record.h"

#define QWORD_SIZE 8
#define BITS_PER_BYTE 8

/* Record sizes of the fixed formats: sizeof(struct pebs_record_core/nhm/hsw/skl) in ds.c. */
#define PEBS_FMT0_BYTES 144 /* flags, ip, 16 GPRs */
#define PEBS_FMT1_BYTES 176 /* + status, dla, dse, lat */
#define PEBS_FMT2_BYTES 192 /* + real_ip, tsx_tuning */
#define PEBS_FMT3_BYTES 200 /* + tsc */
#define PEBS_FMT_LAST 6 /* format 6 has the format 5 record (ds.c intel_ds_init) */

/* Adaptive group sizes in qwords (perf_event.h struct pebs_basic etc., ds.c lbr_entry). */
#define BASIC_QWORDS 4 /* format_size, ip, applicable_counters, tsc */
#define MEMINFO_QWORDS 4 /* address, aux, latency, tsx_tuning */
#define GPRS_QWORDS 18 /* flags, ip, ax, cx, dx, bx, sp, bp, si, di, r8-r15 */
#define XMM_QWORDS 32 /* xmm[16 * 2]: XMM0-XMM15, low qword first */
#define LBR_ENTRY_QWORDS 3 /* from, to, info */

/*
 * Basic group, first qword (SDM Vol. 3B "Adaptive PEBS", basic info group): bits 47:0 are the
 * record format, the MSR_PEBS_DATA_CFG value in effect, or 0 when no counter that caused the
 * record asked for an adaptive record; bits 63:48 are the record size in bytes. Linux reads
 * the size as format_size >> 48 (setup_pebs_adaptive_sample_data). With PEBS timing info
 * (format 6, PERF_CAPABILITIES bit 17) bits 47:32 hold the retire latency; this model has no
 * timing info and leaves them 0.
 */
#define BASIC_SIZE_SHIFT 48

#define CFG_GROUPS                                                               \
	(PEBS_ASSIST_CFG_MEMINFO | PEBS_ASSIST_CFG_GPRS | PEBS_ASSIST_CFG_XMMS | \
	 PEBS_ASSIST_CFG_LBRS)

static bool pebs_format_adaptive(unsigned int format)
{
	return format >= 4;
}

/*
 * The record format the basic group reports: the data_cfg bits this model implements, when
 * the record is adaptive. Adaptive records need the event's adaptive bit; format 4 also needs
 * PEBS baseline (ds.c intel_ds_init leaves a format 4 PMU without baseline the basic record).
 * Formats 5 and 6 are taken to imply it, by this model's contract: Linux applies the same
 * baseline test to format 5, so a format 5 part without baseline is a model choice.
 */
static uint64_t pebs_record_groups(const struct pebs_assist *assist)
{
	uint64_t groups;

	if (!assist->adaptive || (!assist->baseline && assist->format < 5))
		return 0;
	groups = assist->data_cfg & CFG_GROUPS;
	if (groups & PEBS_ASSIST_CFG_LBRS)
		groups |=
			assist->data_cfg & (PEBS_ASSIST_CFG_LBR_MASK << PEBS_ASSIST_CFG_LBR_SHIFT);
	return groups;
}

/* LBR entries the groups ask for: DATA_CFG bits 31:24 plus one, 0 without the LBR group. */
static unsigned int pebs_lbr_entries(uint64_t groups)
{
	if (!(groups & PEBS_ASSIST_CFG_LBRS))
		return 0;
	return (unsigned int)((groups >> PEBS_ASSIST_CFG_LBR_SHIFT) & PEBS_ASSIST_CFG_LBR_MASK) + 1;
}

/* Size of an adaptive record holding groups (ds.c adaptive_pebs_record_size_update). */
static size_t pebs_adaptive_bytes(uint64_t groups)
{
	size_t qwords = BASIC_QWORDS;

	if (groups & PEBS_ASSIST_CFG_MEMINFO)
		qwords += MEMINFO_QWORDS;
	if (groups & PEBS_ASSIST_CFG_GPRS)
		qwords += GPRS_QWORDS;
	if (groups & PEBS_ASSIST_CFG_XMMS)
		qwords += XMM_QWORDS;
	qwords += (size_t)pebs_lbr_entries(groups) * LBR_ENTRY_QWORDS;
	return qwords * QWORD_SIZE;
}

size_t pebs_record_bytes(const struct pebs_assist *assist)
{
	if (!assist)
		return 0;
	switch (assist->format) {
	case 0:
		return PEBS_FMT0_BYTES;
	case 1:
		return PEBS_FMT1_BYTES;
	case 2:
		return PEBS_FMT2_BYTES;
	case 3:
		return PEBS_FMT3_BYTES;
	case 4:
	case 5:
	case PEBS_FMT_LAST:
		return pebs_adaptive_bytes(pebs_record_groups(assist));
	default:
		return 0;
	}
}

/*
 * Store value little-endian at at, byte by byte (the buffer may be unaligned), and return the
 * next qword. volatile keeps the compiler from turning runs of zero stores into a memset
 * call, which a freestanding build need not provide.
 */
uint8_t *pebs_record_emit(uint8_t *at, uint64_t value)
{
	volatile uint8_t *bytes = at;

	for (unsigned int i = 0; i < QWORD_SIZE; i++)
		bytes[i] = (uint8_t)(value >> (i * BITS_PER_BYTE));
	return at + QWORD_SIZE;
}

static inline uint8_t *emit(uint8_t *at, uint64_t value)
{
	return pebs_record_emit(at, value);
}

static uint8_t *emit_zeros(uint8_t *at, size_t qwords)
{
	for (size_t i = 0; i < qwords; i++)
		at = emit(at, 0);
	return at;
}

/* R8-R15, in that order: the tail of every layout's registers. */
static uint8_t *emit_r8_to_r15(uint8_t *at, const struct pebs_machine_state *s)
{
	const uint64_t r[] = { s->r8, s->r9, s->r10, s->r11, s->r12, s->r13, s->r14, s->r15 };

	for (unsigned int i = 0; i < sizeof(r) / sizeof(r[0]); i++)
		at = emit(at, r[i]);
	return at;
}

uint8_t *pebs_record_emit_gprs(uint8_t *at, const struct pebs_machine_state *s)
{
	at = emit(at, s->rflags);
	at = emit(at, s->rip);
	at = emit(at, s->rax);
	at = emit(at, s->rcx);
	at = emit(at, s->rdx);
	at = emit(at, s->rbx);
	at = emit(at, s->rsp);
	at = emit(at, s->rbp);
	at = emit(at, s->rsi);
	at = emit(at, s->rdi);
	return emit_r8_to_r15(at, s);
}

/*
 * Formats 0-3, in the field order of ds.c struct pebs_record_skl, each format a prefix of the
 * next. ip is the trap-like IP: the emulated CPU reports PERF_CAPABILITIES.PEBS_TRAP (bit 6),
 * so the assist runs after the eventing instruction retires and ip is the next instruction.
 */
static uint8_t *emit_fixed(uint8_t *at, const struct pebs_assist *assist)
{
	const struct pebs_machine_state *s = &assist->state;

	/* Format 0 (pebs_record_core): flags, ip, ax, bx, cx, dx, si, di, bp, sp, r8-r15. */
	at = emit(at, s->rflags);
	at = emit(at, s->rip);
	at = emit(at, s->rax);
	at = emit(at, s->rbx);
	at = emit(at, s->rcx);
	at = emit(at, s->rdx);
	at = emit(at, s->rsi);
	at = emit(at, s->rdi);
	at = emit(at, s->rbp);
	at = emit(at, s->rsp);
	at = emit_r8_to_r15(at, s);
	if (assist->format < 1)
		return at;
	/*
	 * Format 1 (pebs_record_nhm): status, the counters the record applies to; dla, dse, lat:
	 * the model has no load-latency or precise-store facility, so these are 0.
	 */
	at = emit(at, assist->applicable_counters);
	at = emit_zeros(at, 3);
	if (assist->format < 2)
		return at;
	/* Format 2 (pebs_record_hsw): real_ip, the eventing IP; tsx_tuning: no TSX, 0. */
	at = emit(at, assist->eventing_ip);
	at = emit(at, 0);
	if (assist->format < 3)
		return at;
	/* Format 3 (pebs_record_skl): tsc. */
	return emit(at, assist->tsc);
}

/*
 * Formats 4-6: the basic group, then the groups present in this order: memory info, GPRs,
 * XMM, LBRs (SDM Vol. 3B "Adaptive PEBS"; ds.c setup_pebs_adaptive_sample_data).
 */
static uint8_t *emit_adaptive(uint8_t *at, const struct pebs_assist *assist, size_t bytes)
{
	const struct pebs_machine_state *s = &assist->state;
	uint64_t groups = pebs_record_groups(assist);

	/* Basic group. From format 4 its ip is the eventing IP ("The ip in basic is EventingIP").
	 */
	at = emit(at, (uint64_t)bytes << BASIC_SIZE_SHIFT | groups);
	at = emit(at, assist->eventing_ip);
	at = emit(at, assist->applicable_counters);
	at = emit(at, assist->tsc);
	/* Memory info (pebs_meminfo): address, aux, latency, tsx_tuning; no facility, all 0. */
	if (groups & PEBS_ASSIST_CFG_MEMINFO)
		at = emit_zeros(at, MEMINFO_QWORDS);
	/*
	 * GPRs (pebs_gprs): flags, ip, then the registers in instruction-encoding order (ax, cx,
	 * dx, bx, sp, bp, si, di), unlike formats 0-3. ip is the off-by-one IP, the next
	 * instruction, which Linux uses only when precise_ip < 2.
	 */
	if (groups & PEBS_ASSIST_CFG_GPRS)
		at = pebs_record_emit_gprs(at, s);
	/*
	 * XMM (pebs_xmm): XMM0-XMM15. The kernel is built with -mno-sse and never loads an XMM
	 * register, and the model keeps no vector state, so all are 0.
	 */
	if (groups & PEBS_ASSIST_CFG_XMMS)
		at = emit_zeros(at, XMM_QWORDS);
	/*
	 * LBRs (lbr_entry from, to, info, most recent first): the stack at the assist as the MSRs
	 * hold it (rule 24); entries it does not have, 0.
	 */
	for (unsigned int i = 0; i < pebs_lbr_entries(groups); i++) {
		if (assist->lbr && i < assist->lbr_valid) {
			at = emit(at, assist->lbr[i].from);
			at = emit(at, assist->lbr[i].to);
			at = emit(at, assist->lbr[i].info);
		} else {
			at = emit_zeros(at, LBR_ENTRY_QWORDS);
		}
	}
	return at;
}

size_t pebs_record_write(const struct pebs_assist *assist, void *out, size_t room)
{
	size_t bytes = pebs_record_bytes(assist);
	uint8_t *end;

	if (bytes == 0 || !out || room < bytes)
		return 0;
	if (pebs_format_adaptive(assist->format))
		end = emit_adaptive(out, assist, bytes);
	else
		end = emit_fixed(out, assist);
	return (size_t)(end - (uint8_t *)out);
}
