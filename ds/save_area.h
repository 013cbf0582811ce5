/* SPDX-License-Identifier: MIT */
/* The 64-bit DS save area, what IA32_DS_AREA points at, as the SDM lays it out (§18.4.9). */
#ifndef DS_SAVE_AREA_H
#define DS_SAVE_AREA_H

#include <stdint.h>

/* 32 GP + 16 fixed: the format-5 layout (docs/hardware-facts.md §2) */
#define DS_PEBS_RESET_SLOTS 48

/* What IA32_DS_AREA points at: every field is a linear address except the reset values. */
struct ds_area {
	uint64_t bts_base; /* first record */
	uint64_t bts_index; /* where the next record goes */
	uint64_t bts_max; /* first byte past the last whole record */
	uint64_t bts_threshold; /* index that raises the PMI (with DEBUGCTL.BTINT) */
	uint64_t pebs_base;
	uint64_t pebs_index;
	uint64_t pebs_max;
	uint64_t pebs_threshold; /* index that raises the PMI, always */
	uint64_t pebs_reset[DS_PEBS_RESET_SLOTS];
};

_Static_assert(__builtin_offsetof(struct ds_area, pebs_base) == 0x20, "SDM DS layout");
_Static_assert(__builtin_offsetof(struct ds_area, pebs_reset) == 0x40, "SDM DS layout");

#endif
