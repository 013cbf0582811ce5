/* SPDX-License-Identifier: MIT */
/* MSR numbers, each followed by its bits (SDM Vol. 4; Linux msr-index.h for the names). */
#ifndef ARCH_X86_MSR_INDEX_H
#define ARCH_X86_MSR_INDEX_H

#define MSR_IA32_APIC_BASE 0x0000001b
#define APIC_BASE_BSP (1ull << 8)
#define APIC_BASE_X2APIC_ENABLE (1ull << 10)
#define APIC_BASE_GLOBAL_ENABLE (1ull << 11)
#define APIC_BASE_ADDRESS_MASK 0x000ffffffffff000ull

#define MSR_IA32_XAPIC_DISABLE_STATUS 0x000000bd /* where ARCH_CAP_XAPIC_DISABLE says so */
#define XAPIC_DISABLE_STATUS_LEGACY_XAPIC_DISABLED (1ull << 0) /* x2APIC locked on */

#define MSR_IA32_ARCH_CAPABILITIES 0x0000010a /* exists when CPUID.(7,0):EDX[29] says so */
#define ARCH_CAP_XAPIC_DISABLE (1ull << 21) /* IA32_XAPIC_DISABLE_STATUS exists */

/* SYSENTER's target (SDM Vol. 2B SYSENTER): a null CS selector makes it #GP(0). */
#define MSR_IA32_SYSENTER_CS 0x00000174
#define MSR_IA32_SYSENTER_ESP 0x00000175
#define MSR_IA32_SYSENTER_EIP 0x00000176

#define MSR_IA32_MISC_ENABLE 0x000001a0
#define MISC_ENABLE_PERFMON_AVAILABLE (1ull << 7)
#define MISC_ENABLE_BTS_UNAVAILABLE (1ull << 11) /* read-only */
#define MISC_ENABLE_PEBS_UNAVAILABLE (1ull << 12) /* read-only */

#define MSR_IA32_DEBUGCTL 0x000001d9
#define DEBUGCTL_LBR (1ull << 0)
#define DEBUGCTL_BTF (1ull << 1)
#define DEBUGCTL_TR (1ull << 6)
#define DEBUGCTL_BTS (1ull << 7)
#define DEBUGCTL_BTINT (1ull << 8)
#define DEBUGCTL_BTS_OFF_OS (1ull << 9) /* needs CPUID DS-CPL */
#define DEBUGCTL_BTS_OFF_USR (1ull << 10) /* needs CPUID DS-CPL */
#define DEBUGCTL_FREEZE_LBRS_ON_PMI (1ull << 11)
#define DEBUGCTL_FREEZE_PERFMON_ON_PMI (1ull << 12)

/*
 * Model-specific (legacy) LBR (SDM Vol. 3B "Last Branch Recording"; Vol. 4 model tables; Linux
 * lbr.c): the stack is a ring of FROM/TO pairs, TOS the index of the newest.
 */
#define MSR_LBR_SELECT 0x000001c8 /* Nehalem and later; a set bit suppresses */
#define LBR_SELECT_CPL_EQ_0 (1ull << 0) /* branches ending in ring 0 */
#define LBR_SELECT_CPL_NEQ_0 (1ull << 1) /* branches ending in ring > 0 */
#define LBR_SELECT_JCC (1ull << 2)
#define LBR_SELECT_NEAR_REL_CALL (1ull << 3)
#define LBR_SELECT_NEAR_IND_CALL (1ull << 4)
#define LBR_SELECT_NEAR_RET (1ull << 5)
#define LBR_SELECT_NEAR_IND_JMP (1ull << 6)
#define LBR_SELECT_NEAR_REL_JMP (1ull << 7)
#define LBR_SELECT_FAR_BRANCH (1ull << 8)
#define LBR_SELECT_EN_CALLSTACK (1ull << 9) /* set = on; Haswell and later */
#define LBR_SELECT_NEHALEM_MASK 0x1ffull
#define LBR_SELECT_CALLSTACK_MASK 0x3ffull
#define MSR_LBR_TOS 0x000001c9
#define MSR_LBR_CORE2_FROM 0x00000040 /* + i: Core 2, Atom, Silvermont */
#define MSR_LBR_CORE2_TO 0x00000060
#define MSR_LBR_CORE2_BANK_MAX 8 /* Atom's depth: the most that bank holds */
#define MSR_LBR_NHM_FROM 0x00000680 /* + i: Nehalem and later */
#define MSR_LBR_NHM_TO 0x000006c0
#define MSR_LBR_INFO_0 0x00000dc0 /* + i: LBR_FORMAT_INFO (Skylake and later) */
#define LBR_FROM_MISPREDICT (1ull << 63) /* formats EIP_FLAGS and EIP_FLAGS2 */
#define LBR_FROM_IN_TSX (1ull << 62) /* EIP_FLAGS2 */
#define LBR_FROM_TSX_ABORT (1ull << 61) /* EIP_FLAGS2 */
#define LBR_INFO_MISPREDICT (1ull << 63)
#define LBR_INFO_IN_TSX (1ull << 62)
#define LBR_INFO_TSX_ABORT (1ull << 61)
#define LBR_INFO_CYCLES 0xffffull /* bits 15:0: core cycles since the previous entry */
#define LBR_LEGACY_MAX_DEPTH 32 /* Skylake and later (Linux MAX_LBR_ENTRIES) */

/*
 * Architectural LBR (CPUID.(7,0):EDX[19], leaf 0x1C; SDM Vol. 3B "Architectural Last Branch
 * Records"; Linux msr-index.h MSR_ARCH_LBR_*): entry 0 is the newest, no TOS.
 */
#define MSR_ARCH_LBR_CTL 0x000014ce
#define ARCH_LBR_CTL_LBREN (1ull << 0)
#define ARCH_LBR_CTL_OS (1ull << 1) /* record branches that end in ring 0 */
#define ARCH_LBR_CTL_USR (1ull << 2) /* ... in ring > 0 */
#define ARCH_LBR_CTL_CALL_STACK (1ull << 3)
#define ARCH_LBR_CTL_JCC (1ull << 16) /* a set filter bit records that kind */
#define ARCH_LBR_CTL_NEAR_REL_JMP (1ull << 17)
#define ARCH_LBR_CTL_NEAR_IND_JMP (1ull << 18)
#define ARCH_LBR_CTL_NEAR_REL_CALL (1ull << 19)
#define ARCH_LBR_CTL_NEAR_IND_CALL (1ull << 20)
#define ARCH_LBR_CTL_NEAR_RET (1ull << 21)
#define ARCH_LBR_CTL_OTHER_BRANCH (1ull << 22)
#define ARCH_LBR_CTL_DEFINED 0x7f000full
#define MSR_ARCH_LBR_DEPTH 0x000014cf /* a write zeroes every record */
#define MSR_ARCH_LBR_FROM_0 0x00001500
#define MSR_ARCH_LBR_TO_0 0x00001600
#define MSR_ARCH_LBR_INFO_0 0x00001200
#define MSR_ARCH_LBR_BLOCK 0x100 /* each family's block of MSR numbers */

/* IA32_XSS (SDM Vol. 1 §13.3): the supervisor state components XSAVES and XRSTORS manage. */
#define MSR_IA32_XSS 0x00000da0
#define XSS_ARCH_LBR_COMPONENT 15 /* state component 15: architectural LBR */
#define XSS_ARCH_LBR (1ull << XSS_ARCH_LBR_COMPONENT)
#define ARCH_LBR_INFO_DEFINED 0xff0000000000ffffull /* flags 63:56, cycle count 15:0 */

#define MSR_IA32_PERF_CAPABILITIES 0x00000345 /* exists when CPUID.1:ECX.PDCM=1 */
#define PERF_CAP_LBR_FORMAT_MASK 0x3full /* bits 5:0; 0 with no LBR (Linux lbr.c LBR_FORMAT_*) */
#define PERF_CAP_LBR_FORMAT_EIP 0x02 /* 64-bit offsets, no flags */
#define PERF_CAP_LBR_FORMAT_EIP_FLAGS 0x03 /* FROM bit 63 mispredict */
#define PERF_CAP_LBR_FORMAT_EIP_FLAGS2 0x04 /* FROM bits 63 mispredict, 62 in-TSX, 61 abort */
#define PERF_CAP_LBR_FORMAT_INFO 0x05 /* flags in MSR_LBR_INFO_x (Skylake and later) */
#define PERF_CAP_LBR_FORMAT_ARCH 0x3f /* architectural LBR (CPUID.(7,0):EDX[19]) */
#define PERF_CAP_PEBS_TRAP (1ull << 6) /* a PEBS record's IP is the next instruction's */
#define PERF_CAP_PEBS_ARCH_REGS (1ull << 7) /* PEBSSaveArchRegs: records hold the registers */
#define PERF_CAP_PEBS_FORMAT_SHIFT 8
#define PERF_CAP_PEBS_FORMAT_MASK (0xfull << PERF_CAP_PEBS_FORMAT_SHIFT)
#define PERF_CAP_FULL_WIDTH_WRITE (1ull << 13) /* counts writable through IA32_A_PMCx */
#define PERF_CAP_PEBS_BASELINE (1ull << 14)

/* Architectural performance monitoring (SDM Vol. 4 Table 2-2; docs/hardware-facts.md §5). */
#define MSR_IA32_PMC0 0x000000c1 /* + i; a write sign-extends bit 31 (SDM §20.2.6) */
#define MSR_IA32_PERFEVTSEL0 0x00000186 /* + i */
#define PERFEVTSEL_EVENT_CORE_CYCLES 0x3cull /* architectural "UnHalted Core Cycles" (umask 0) */
#define PERFEVTSEL_EVENT_MASK 0xffull
#define PERFEVTSEL_UMASK_SHIFT 8
#define PERFEVTSEL_UMASK_MASK (0xffull << PERFEVTSEL_UMASK_SHIFT)
#define PERFEVTSEL_USR (1ull << 16)
#define PERFEVTSEL_OS (1ull << 17)
#define PERFEVTSEL_EDGE (1ull << 18) /* count deasserted-to-asserted transitions */
#define PERFEVTSEL_ANY_THREAD (1ull << 21) /* perfmon v3 and v4; deprecated from v5 */
#define PERFEVTSEL_INT (1ull << 20) /* PMI on overflow */
#define PERFEVTSEL_EN (1ull << 22)
#define PERFEVTSEL_INV (1ull << 23) /* invert the counter-mask comparison */
#define PERFEVTSEL_CMASK_SHIFT 24
#define PERFEVTSEL_CMASK_MASK (0xffull << PERFEVTSEL_CMASK_SHIFT)
#define PERFEVTSEL_ARCH_BITS 0xffffffffull /* event, umask, flags and cmask: bits 31:0 */
#define PERFEVTSEL_ADAPTIVE (1ull << 34) /* adaptive PEBS record (Linux ICL_EVENTSEL_ADAPTIVE) */
#define MSR_IA32_FIXED_CTR0 0x00000309 /* + i */
#define MSR_IA32_FIXED_CTR_CTRL 0x0000038d
#define FIXED_CTR_CTRL_FIELD_BITS 4 /* fixed counter i's field: bits 4i+3:4i */
#define FIXED_CTR_CTRL_OS (1ull << 0)
#define FIXED_CTR_CTRL_USR (1ull << 1)
#define FIXED_CTR_CTRL_ANY_THREAD (1ull << 2) /* perfmon v3 and v4; deprecated from v5 */
#define FIXED_CTR_CTRL_PMI (1ull << 3)
#define FIXED_CTR_CTRL_ADAPTIVE (1ull << 32) /* counter i at bit 32 + 4i (ICL_FIXED_0_ADAPTIVE) */
#define MSR_IA32_PERF_GLOBAL_CTRL 0x0000038f
#define MSR_IA32_A_PMC0 0x000004c1 /* + i; full-width writes, PERF_CAPABILITIES bit 13 */
#define MSR_IA32_PERF_GLOBAL_STATUS 0x0000038e
#define MSR_IA32_PERF_GLOBAL_OVF_CTRL 0x00000390 /* write 1 to clear; STATUS_RESET from v4 */
#define MSR_IA32_PERF_GLOBAL_STATUS_SET 0x00000391 /* perfmon v4: write 1 to set a status bit */
#define MSR_IA32_PERF_GLOBAL_INUSE 0x00000392 /* perfmon v4, read-only (SDM §20.2.4.3) */
/* RDPMC's ECX (SDM Vol. 2B RDPMC): the counter in bits 29:0, bit 30 for a fixed counter. */
#define RDPMC_INDEX_MASK 0x3fffffffu
#define RDPMC_FIXED (1u << 30)
#define RDPMC_FAST (1u << 31) /* the low 32 bits only (older parts; KVM plays it everywhere) */
#define PERF_GLOBAL_INUSE_PMI (1ull << 63) /* a counter interrupts, or PEBS is enabled */
#define PERF_GLOBAL_FIXED_CTR0 (1ull << 32) /* << i: fixed counter i in CTRL, STATUS, OVF_CTRL */
#define PERF_GLOBAL_STATUS_LBRS_FROZEN (1ull << 58) /* perfmon v4 */
#define PERF_GLOBAL_STATUS_COUNTERS_FROZEN (1ull << 59) /* perfmon v4 */
#define PERF_GLOBAL_STATUS_BUFFER_OVF (1ull << 62) /* DS buffer reached its threshold */
#define PERF_GLOBAL_STATUS_COND_CHANGED (1ull << 63)

#define MSR_IA32_PEBS_ENABLE 0x000003f1 /* bit i: PEBS on PMC i */
#define PEBS_ENABLE_LOAD_LATENCY_PMC0 (1ull << 32) /* << i: PMC i, Nehalem to Skylake */
#define PEBS_ENABLE_FIXED_CTR0 (1ull << 32) /* << i: fixed counter i, with PEBS on all counters */
#define PEBS_ENABLE_FIXED_SHIFT 32 /* fixed counter i: bit 32 + i (Linux: INTEL_PMC_IDX_FIXED) */
#define PEBS_ENABLE_PRECISE_STORE (1ull << 63) /* Sandy Bridge to Skylake */
#define MSR_PEBS_DATA_CFG 0x000003f2 /* adaptive PEBS: format >= 4 with baseline */
#define PEBS_DATACFG_MEMINFO (1ull << 0)
#define PEBS_DATACFG_GP (1ull << 1)
#define PEBS_DATACFG_XMMS (1ull << 2)
#define PEBS_DATACFG_LBRS (1ull << 3)
#define PEBS_DATACFG_LBR_SHIFT 24 /* bits 31:24: LBR entries - 1 */
#define PEBS_DATACFG_LBR_MASK (0xffull << PEBS_DATACFG_LBR_SHIFT)
#define MSR_IA32_DS_AREA 0x00000600

/*
 * The x2APIC's registers: MSR 0x800 + xAPIC offset / 16 (SDM Vol. 3 §11.12.1.2, Table 11-6),
 * #GP(0) unless IA32_APIC_BASE.EXTD is set. arch/x86/apic_mode.h maps the offsets.
 */
#define MSR_X2APIC_FIRST 0x00000800
#define MSR_X2APIC_LAST 0x000008ff

#define MSR_EFER 0xc0000080
#define EFER_SCE (1ull << 0)
#define EFER_LME (1ull << 8)
#define EFER_LMA (1ull << 10)
#define EFER_NXE (1ull << 11)

#define MSR_STAR 0xc0000081
#define MSR_LSTAR 0xc0000082
#define MSR_CSTAR 0xc0000083 /* SYSCALL's target in compatibility mode (AMD; unused by Intel) */
#define MSR_SYSCALL_MASK 0xc0000084
#define MSR_FS_BASE 0xc0000100
#define MSR_GS_BASE 0xc0000101
#define MSR_KERNEL_GS_BASE 0xc0000102

/*
 * AMD's core performance counters (APM Vol. 2 §13.2 "Performance Monitoring Counters"; Linux
 * msr-index.h MSR_K7_*, MSR_F15H_PERF_*, MSR_AMD64_PERF_CNTR_GLOBAL_*). The legacy K7 MSRs
 * are counters 0-3 of the PerfCtrExtCore set (CPUID 0x80000001 ECX[23]), which interleaves
 * CTL and CTR. Counters are 48 bits wide.
 */
#define MSR_K7_EVNTSEL0 0xc0010000 /* + i, i < 4 */
#define MSR_K7_PERFCTR0 0xc0010004 /* + i, i < 4 */
#define AMD_K7_COUNTERS 4
#define MSR_F15H_PERF_CTL0 0xc0010200 /* + 2i */
#define MSR_F15H_PERF_CTR0 0xc0010201 /* + 2i */
#define AMD_CORE_COUNTERS 6 /* with PerfCtrExtCore */
#define AMD_COUNTER_WIDTH 48
/* PERF_CTL bits beyond Intel's (bits 31:0 are laid out as IA32_PERFEVTSELx without AnyThread
 * and pin control): EventSelect[11:8] and the host/guest-only pair. */
#define AMD_PERF_CTL_EVENT_HIGH (0xfull << 32) /* EventSelect[11:8] */
#define AMD_PERF_CTL_GUEST_ONLY (1ull << 40)
#define AMD_PERF_CTL_HOST_ONLY (1ull << 41)
#define AMD_PERF_CTL_RESERVED_LOW ((1ull << 19) | (1ull << 21)) /* in bits 31:0 */
/* PerfMonV2 (CPUID 0x80000022 EAX[0]): bit i per core counter in each. */
#define MSR_AMD64_PERF_CNTR_GLOBAL_STATUS 0xc0000300 /* read-only */
#define MSR_AMD64_PERF_CNTR_GLOBAL_CTL 0xc0000301
#define MSR_AMD64_PERF_CNTR_GLOBAL_STATUS_CLR 0xc0000302 /* write 1 to clear */
#define MSR_AMD64_PERF_CNTR_GLOBAL_STATUS_SET 0xc0000303 /* write 1 to set */
/* LbrExtV2 (CPUID 0x80000022 EAX[1]). */
#define MSR_AMD_SAMP_BR_FROM 0xc0010300 /* entry i FROM at + 2i, TO at + 2i + 1 */
#define MSR_AMD64_LBR_SELECT 0xc000010e /* bits 8:0 as Intel's LBR_SELECT: a set bit suppresses */
#define AMD_LBR_SELECT_MASK 0x1ffull
#define MSR_AMD_DBG_EXTN_CFG 0xc000010f
#define DBG_EXTN_CFG_LBRV2EN (1ull << 6)
/* An entry (Linux amd/lbr.c struct branch_entry): address bits 57:0 and their sign extension. */
#define AMD_LBR_FROM_MISPREDICT (1ull << 63) /* FROM 62:58 sign extension */
#define AMD_LBR_TO_RESERVED (1ull << 61) /* TO 60:58 sign extension */
#define AMD_LBR_TO_SPEC (1ull << 62)
#define AMD_LBR_TO_VALID (1ull << 63)
/* BPEXT (CPUID 0x80000001 ECX[26]): the address bits a DRn match ignores. */
#define MSR_F16H_DR0_ADDR_MASK 0xc0011027
#define MSR_F16H_DR1_ADDR_MASK 0xc0011019 /* DR1-DR3: + n - 1 */

#endif
