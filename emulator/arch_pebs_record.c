/* SPDX-License-Identifier: MIT */
/* Architectural PEBS record builder for the emulated CPU: header, groups and fragments. */
#include "emulator/arch_pebs_record.h"

#include "arch/x86/arch-pebs.h"

#define QWORD_SIZE 8
#define BITS_PER_BYTE 8
#define DWORD_BITS 32

/* The groups in the order a record holds them (ds.c setup_arch_pebs_sample_data()). */
enum group {
	GROUP_BASIC,
	GROUP_AUX,
	GROUP_GPR,
	GROUP_XMM,
	GROUP_LBR,
	GROUP_COUNTERS,
	GROUP_COUNT,
};

#define COUNTER_SNAPSHOTS (ARCH_PEBS_CNTR_GP | ARCH_PEBS_CNTR_FIXED | ARCH_PEBS_CNTR_METRICS)

unsigned int arch_pebs_lbr_entries(uint64_t cfg_c)
{
	unsigned int code = (unsigned int)((cfg_c & ARCH_PEBS_LBR_MASK) >> ARCH_PEBS_LBR_SHIFT);

	return code == ARCH_PEBS_LBR_VARIABLE ? ARCH_PEBS_MODEL_VARIABLE_DEPTH
					      : code * ARCH_PEBS_LBR_BASE_ENTRIES;
}

static bool group_present(const struct arch_pebs_assist *a, enum group g)
{
	switch (g) {
	case GROUP_BASIC:
		return true;
	case GROUP_AUX:
		return a->cfg_c & ARCH_PEBS_AUX;
	case GROUP_GPR:
		return a->cfg_c & ARCH_PEBS_GPR;
	case GROUP_XMM:
		return a->cfg_c & ARCH_PEBS_XMM;
	case GROUP_LBR:
		return a->cfg_c & ARCH_PEBS_LBR_MASK;
	case GROUP_COUNTERS:
		return a->cfg_c & COUNTER_SNAPSHOTS;
	default:
		return false;
	}
}

/* Set bits of a counter bitmap (no libgcc in the freestanding build). */
static unsigned int bits_set(uint32_t bits)
{
	unsigned int n = 0;

	for (; bits; bits &= bits - 1)
		n++;
	return n;
}

/* The counters the counter group snapshots: those allowed, of the kinds CFG_C asks for. */
static uint32_t snapshot_gp(const struct arch_pebs_assist *a)
{
	return a->cfg_c & ARCH_PEBS_CNTR_GP ? a->gp_allowed & ((1u << EMULATOR_MAX_GP) - 1) : 0;
}

static uint32_t snapshot_fixed(const struct arch_pebs_assist *a)
{
	return a->cfg_c & ARCH_PEBS_CNTR_FIXED ? a->fixed_allowed & ((1u << EMULATOR_MAX_FIXED) - 1)
					       : 0;
}

static size_t group_bytes(const struct arch_pebs_assist *a, enum group g)
{
	switch (g) {
	case GROUP_BASIC:
		return ARCH_PEBS_BASIC_BYTES;
	case GROUP_AUX:
		return ARCH_PEBS_AUX_BYTES;
	case GROUP_GPR:
		return ARCH_PEBS_GPR_BYTES;
	case GROUP_XMM:
		return ARCH_PEBS_XER_HEADER_BYTES + ARCH_PEBS_XMM_BYTES;
	case GROUP_LBR:
		return ARCH_PEBS_LBR_HEADER_BYTES +
		       (size_t)arch_pebs_lbr_entries(a->cfg_c) * ARCH_PEBS_LBR_ENTRY_BYTES;
	case GROUP_COUNTERS:
		/*
		 * Perf metrics are not modelled: a METRICS request adds no values. An odd number
		 * of values is padded with a zero qword (choice): INDEX counts 16-byte units.
		 */
		return ARCH_PEBS_CNTR_HEADER_BYTES +
		       ((size_t)(bits_set(snapshot_gp(a)) + bits_set(snapshot_fixed(a))) *
				ARCH_PEBS_CNTR_VALUE_BYTES +
			ARCH_PEBS_INDEX_UNIT - 1) /
			       ARCH_PEBS_INDEX_UNIT * ARCH_PEBS_INDEX_UNIT;
	default:
		return 0;
	}
}

/* The header bits that say a fragment holds group g. */
static uint64_t group_header_bits(const struct arch_pebs_assist *a, enum group g)
{
	switch (g) {
	case GROUP_BASIC:
		return ARCH_PEBS_HEADER_BASIC;
	case GROUP_AUX:
		return ARCH_PEBS_AUX;
	case GROUP_GPR:
		return ARCH_PEBS_GPR;
	case GROUP_XMM:
		return ARCH_PEBS_XMM;
	case GROUP_LBR:
		return a->cfg_c & ARCH_PEBS_LBR_MASK;
	case GROUP_COUNTERS:
		return a->cfg_c & COUNTER_SNAPSHOTS;
	default:
		return 0;
	}
}

size_t arch_pebs_record_bytes(const struct arch_pebs_assist *a)
{
	size_t bytes = 0, fragments = 1, nulls = 0;

	if (!a)
		return 0;
	for (enum group g = GROUP_BASIC; g < GROUP_COUNT; g++) {
		if (!group_present(a, g))
			continue;
		bytes += group_bytes(a, g);
		if (g != GROUP_BASIC && a->split != ARCH_PEBS_SPLIT_NONE) {
			fragments++;
			nulls += a->split == ARCH_PEBS_SPLIT_GROUPS_NULL;
		}
	}
	return bytes + (fragments + nulls) * ARCH_PEBS_HEADER_BYTES;
}

/*
 * Store value little-endian at at, byte by byte, and return the next qword. volatile keeps the
 * compiler from turning runs of zero stores into a memset call (freestanding build).
 */
static inline uint8_t *emit(uint8_t *at, uint64_t value)
{
	return pebs_record_emit(at, value);
}

static uint8_t *emit_zeros(uint8_t *at, size_t bytes)
{
	for (size_t i = 0; i < bytes / QWORD_SIZE; i++)
		at = emit(at, 0);
	return at;
}

static uint8_t *emit_header(uint8_t *at, uint64_t format)
{
	at = emit(at, format);
	return emit(at, 0); /* reserved */
}

static uint8_t *emit_group(uint8_t *at, const struct arch_pebs_assist *a, enum group g)
{
	const struct pebs_machine_state *s = &a->state;

	switch (g) {
	case GROUP_BASIC:
		/* ip: the eventing IP, as adaptive PEBS's basic group; no retire latency (0). */
		at = emit(at, a->eventing_ip);
		at = emit(at, a->applicable_counters);
		at = emit(at, a->tsc);
		return emit_zeros(at, 3 * QWORD_SIZE);
	case GROUP_AUX:
		/* Memory info: the model has no load-latency facility; all 0. */
		return emit_zeros(at, ARCH_PEBS_AUX_BYTES);
	case GROUP_GPR:
		/* The adaptive GPR group's layout, then ssp and a reserved qword. */
		at = pebs_record_emit_gprs(at, s);
		at = emit(at, a->ssp);
		return emit(at, 0);
	case GROUP_XMM:
		/* The kernel never loads an XMM register and the model keeps none: 0. */
		return emit_zeros(at, ARCH_PEBS_XER_HEADER_BYTES + ARCH_PEBS_XMM_BYTES);
	case GROUP_LBR:
		/* Header: reserved, ctl, depth (the entries that follow), LER; no LBR stack. */
		at = emit_zeros(at, 2 * QWORD_SIZE);
		at = emit(at, arch_pebs_lbr_entries(a->cfg_c));
		at = emit_zeros(at, 3 * QWORD_SIZE);
		return emit_zeros(at, (size_t)arch_pebs_lbr_entries(a->cfg_c) *
					      ARCH_PEBS_LBR_ENTRY_BYTES);
	case GROUP_COUNTERS: {
		uint32_t gp = snapshot_gp(a), fixed = snapshot_fixed(a);

		at = emit(at, (uint64_t)fixed << DWORD_BITS | gp);
		at = emit(at, 0); /* metrics (not modelled), reserved */
		for (unsigned int i = 0; i < EMULATOR_MAX_GP; i++)
			if (gp & (1u << i))
				at = emit(at, a->gp[i]);
		for (unsigned int i = 0; i < EMULATOR_MAX_FIXED; i++)
			if (fixed & (1u << i))
				at = emit(at, a->fixed[i]);
		if ((bits_set(gp) + bits_set(fixed)) % 2)
			at = emit(at, 0); /* the pad */
		return at;
	}
	default:
		return at;
	}
}

/* The groups of the fragment that starts at group first: all, or first alone when split. */
static enum group fragment_end(const struct arch_pebs_assist *a, enum group first)
{
	enum group g = first + 1;

	if (a->split == ARCH_PEBS_SPLIT_NONE)
		return GROUP_COUNT;
	while (g < GROUP_COUNT && !group_present(a, g))
		g++;
	return g;
}

size_t arch_pebs_record_write(const struct arch_pebs_assist *a, void *out, size_t room)
{
	size_t bytes = arch_pebs_record_bytes(a);
	uint8_t *at = out;
	enum group first = GROUP_BASIC;

	if (!a || !out || room < bytes)
		return 0;
	while (first < GROUP_COUNT) {
		enum group end = fragment_end(a, first);
		uint64_t format = ARCH_PEBS_HEADER_BYTES;
		bool last;

		for (enum group g = first; g < end; g++) {
			if (!group_present(a, g))
				continue;
			format += group_bytes(a, g);
			format |= group_header_bits(a, g);
		}
		last = end >= GROUP_COUNT;
		at = emit_header(at, format | (last ? 0 : ARCH_PEBS_HEADER_CONT));
		for (enum group g = first; g < end; g++)
			if (group_present(a, g))
				at = emit_group(at, a, g);
		if (!last && a->split == ARCH_PEBS_SPLIT_GROUPS_NULL)
			at = emit_header(at, ARCH_PEBS_HEADER_BYTES); /* null: bits 63:16 clear */
		first = end;
	}
	return (size_t)(at - (uint8_t *)out);
}
