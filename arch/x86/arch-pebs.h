/* SPDX-License-Identifier: MIT */
/* Architectural PEBS: its MSRs, CPUID leaf 23H and record layout, as Linux's patches define them.
 */
#ifndef ARCH_X86_ARCH_PEBS_H
#define ARCH_X86_ARCH_PEBS_H

/*
 * The Intel document that defines architectural PEBS (the ISE) was not available: every value
 * here is typed from the Linux patches written against it (arch/x86/include/asm/msr-index.h,
 * perf_event.h; arch/x86/events/intel/core.c update_pmu_cap(), ds.c; merged in November 2025).
 * docs/emulated-cpu.md says which parts the model plays.
 */

/* IA32_PERF_CAPABILITIES PEBS_FMT (bits 11:8) of an arch-PEBS part. */
#define PERF_CAP_PEBS_FORMAT_ARCH 0xf

/* CPUID leaf 23H, "Architectural Performance Monitoring Extended" (Linux ARCH_PERFMON_EXT_LEAF). */
#define CPUID_LEAF_PERFMON_EXT 0x23
#define CPUID_23_SUBLEAF_COUNTERS 1 /* EAX: GP counter bitmap, EBX: fixed counter bitmap */
#define CPUID_23_SUBLEAF_PEBS_CAPS 4 /* EBX: capabilities, bit n = CFG_C bit 32 + n */
#define CPUID_23_SUBLEAF_PEBS_COUNTERS 5 /* EAX/ECX: GP/fixed PEBS; EBX/EDX: GP/fixed PDIST */
#define CPUID_23_EAX_COUNTERS_SUBLEAF (1u << 1) /* sub-leaf 0 EAX: sub-leaf 1 exists */
#define CPUID_23_EAX_PEBS_CAPS_SUBLEAF (1u << 4) /* sub-leaf 4 exists */
#define CPUID_23_EAX_PEBS_COUNTERS_SUBLEAF (1u << 5) /* sub-leaf 5 exists */
#define CPUID_23_PEBS_CAPS_SHIFT 32 /* sub-leaf 4 EBX << 32: the CFG_C bits it allows */

/*
 * IA32_PEBS_BASE: the buffer's physical address, 4 KiB aligned, OR'd with a size code in the
 * low bits, size = 4 KiB << code (Linux writes code 4, 64 KiB). Writing 0 stops the hardware.
 */
#define MSR_IA32_PEBS_BASE 0x000003f4
#define ARCH_PEBS_BASE_ADDRESS_ALIGN 4096
#define ARCH_PEBS_BASE_SIZE_MASK 0xfull /* bits 3:0 (the model's width: choice) */
#define ARCH_PEBS_BASE_ADDRESS_MASK (~0xfffull)
#define ARCH_PEBS_BUFFER_BYTES(code) (4096ull << (code))

/* IA32_PEBS_INDEX (Linux union arch_pebs_index). */
#define MSR_IA32_PEBS_INDEX 0x000003f5
#define ARCH_PEBS_INDEX_WR_SHIFT 4 /* bits 26:4: write offset in 16-byte units */
#define ARCH_PEBS_INDEX_WR_MASK (0x7fffffull << ARCH_PEBS_INDEX_WR_SHIFT)
#define ARCH_PEBS_INDEX_FULL (1ull << 31)
#define ARCH_PEBS_INDEX_EN (1ull << 32)
#define ARCH_PEBS_INDEX_THRESH_SHIFT 36 /* bits 58:36: threshold offset in 16-byte units */
#define ARCH_PEBS_INDEX_THRESH_MASK (0x7fffffull << ARCH_PEBS_INDEX_THRESH_SHIFT)
#define ARCH_PEBS_INDEX_UNIT 16 /* bytes of one WR or THRESH unit */
#define ARCH_PEBS_INDEX_DEFINED                                                \
	(ARCH_PEBS_INDEX_WR_MASK | ARCH_PEBS_INDEX_FULL | ARCH_PEBS_INDEX_EN | \
	 ARCH_PEBS_INDEX_THRESH_MASK)

/*
 * The per-counter PEBS configuration: IA32_PMC_GPx_CFG_C and IA32_PMC_FXx_CFG_C (Linux
 * MSR_IA32_PMC_V6_GP0_CFG_C, MSR_IA32_PMC_V6_FX0_CFG_C, stride 4).
 */
#define MSR_IA32_PMC_GP0_CFG_C 0x00001903 /* + 4x */
#define MSR_IA32_PMC_FX0_CFG_C 0x00001983 /* + 4x */
#define MSR_IA32_PMC_CFG_C_STRIDE 4
#define ARCH_PEBS_RELOAD_MASK 0xffffffffull /* bits 31:0: the reload value, -period */
#define ARCH_PEBS_CNTR_ALLOW (1ull << 35) /* this counter may be snapshotted */
#define ARCH_PEBS_CNTR_GP (1ull << 36) /* snapshot the GP counters */
#define ARCH_PEBS_CNTR_FIXED (1ull << 37) /* snapshot the fixed counters */
#define ARCH_PEBS_CNTR_METRICS (1ull << 38) /* snapshot the perf metrics */
#define ARCH_PEBS_LBR_SHIFT 40 /* bits 41:40: 0 none, 1 8 entries, 2 16, 3 variable */
#define ARCH_PEBS_LBR_MASK (0x3ull << ARCH_PEBS_LBR_SHIFT)
#define ARCH_PEBS_XMM (1ull << 49)
#define ARCH_PEBS_GPR (1ull << 61)
#define ARCH_PEBS_AUX (1ull << 62) /* memory info */
#define ARCH_PEBS_EN (1ull << 63)

/* IA32_PERF_GLOBAL_STATUS bit 54: the arch-PEBS buffer reached its threshold. */
#define PERF_GLOBAL_STATUS_ARCH_PEBS_THRESHOLD (1ull << 54)

/*
 * A record: one or more fragments, each a 16-byte header (a format qword and a reserved one)
 * followed by the groups its format names, in this order: basic, aux, GPR, XMM, LBR, counters.
 * A fragment whose CONT bit is set, or whose format has bits 63:16 clear (a "null" fragment),
 * is followed by another fragment of the same record (Linux arch_pebs_record_continued()).
 * The header's group bits sit where CFG_C's sit, with BASIC at 63.
 */
#define ARCH_PEBS_HEADER_BYTES 16
#define ARCH_PEBS_HEADER_SIZE_MASK 0xffffull /* bits 15:0: the fragment's bytes */
#define ARCH_PEBS_HEADER_CONT (1ull << 31)
#define ARCH_PEBS_HEADER_CNTR_SHIFT 35 /* bits 39:35: the CFG_C counter-snapshot bits */
#define ARCH_PEBS_HEADER_CNTR_MASK (0x1full << ARCH_PEBS_HEADER_CNTR_SHIFT)
#define ARCH_PEBS_HEADER_BASIC (1ull << 63)
#define ARCH_PEBS_HEADER_NOT_NULL_MASK (~0xffffull) /* bits 63:16 clear: a null fragment */
#define ARCH_PEBS_BASIC_BYTES 48 /* ip, applicable counters, tsc, retire latency, 2 reserved */
#define ARCH_PEBS_AUX_BYTES 64 /* address, 4 reserved, aux, latencies, tsx tuning */
#define ARCH_PEBS_GPR_BYTES 160 /* flags, ip, 16 GPRs, ssp, reserved */
#define ARCH_PEBS_XER_HEADER_BYTES 16 /* xstate, reserved */
#define ARCH_PEBS_XMM_BYTES 256 /* XMM0-15, low qword first */
#define ARCH_PEBS_LBR_HEADER_BYTES 48 /* reserved, ctl, depth, ler_from, ler_to, ler_info */
#define ARCH_PEBS_LBR_ENTRY_BYTES 24 /* from, to, info */
#define ARCH_PEBS_LBR_BASE_ENTRIES 8 /* LBR group code n: 8n entries (n < 3) */
#define ARCH_PEBS_LBR_VARIABLE 3 /* LBR group code 3: the LBR header's depth */
#define ARCH_PEBS_CNTR_HEADER_BYTES 16 /* u32 GP bitmap, u32 fixed bitmap, u32 metrics, rsvd */
#define ARCH_PEBS_CNTR_VALUE_BYTES 8

#endif
