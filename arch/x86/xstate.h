/* SPDX-License-Identifier: MIT */
/* The compacted XSAVE area's layout: its header and state component 15 (architectural LBR). */
#ifndef ARCH_X86_XSTATE_H
#define ARCH_X86_XSTATE_H

#include <stdint.h>

/*
 * The compacted XSAVE area (SDM Vol. 1 §13.4): the 512-byte legacy region, the 64-byte header,
 * then each component of XCOMP_BV in order. XSTATE_BV bit n: component n is not in its initial
 * configuration; XCOMP_BV bit 63: the compacted form (XRSTORS raises #GP without it); bytes
 * 16-63 of the header are reserved and must be 0 for XRSTORS.
 */
#define XSAVE_LEGACY_SIZE 512
#define XSAVE_HEADER_SIZE 64
#define XSAVE_ALIGNMENT 64
#define XCOMP_BV_COMPACTED (1ull << 63)

struct xsave_header {
	uint64_t xstate_bv;
	uint64_t xcomp_bv;
	uint64_t reserved[6];
};

/*
 * State component 15, architectural LBR (SDM Vol. 1 ch. 13 "Arch LBR State"; Linux struct
 * arch_lbr_state):
 * IA32_LBR_CTL, IA32_LBR_DEPTH, the LER MSRs, then DEPTH entries of FROM, TO and INFO. With
 * nothing before it in XCOMP_BV it starts right after the header.
 */
struct xsave_arch_lbr_entry {
	uint64_t from, to, info;
};

struct xsave_arch_lbr {
	uint64_t lbr_ctl, lbr_depth;
	uint64_t ler_from, ler_to, ler_info;
	struct xsave_arch_lbr_entry entries[];
};

#define XSAVE_ARCH_LBR_SIZE(depth) \
	(sizeof(struct xsave_arch_lbr) + (depth) * sizeof(struct xsave_arch_lbr_entry))
#define XSAVE_ARCH_LBR_OFFSET (XSAVE_LEGACY_SIZE + XSAVE_HEADER_SIZE)

#endif
