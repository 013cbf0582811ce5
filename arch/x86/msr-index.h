/* SPDX-License-Identifier: MIT */
/* MSR numbers, each followed by its bits (SDM Vol. 4; Linux msr-index.h for the names). */
#ifndef ARCH_X86_MSR_INDEX_H
#define ARCH_X86_MSR_INDEX_H

#define MSR_IA32_APIC_BASE 0x0000001b
#define APIC_BASE_BSP (1ull << 8)
#define APIC_BASE_X2APIC_ENABLE (1ull << 10)
#define APIC_BASE_GLOBAL_ENABLE (1ull << 11)
#define APIC_BASE_ADDRESS_MASK 0x000ffffffffff000ull

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

#define MSR_IA32_PERF_CAPABILITIES 0x00000345 /* exists when CPUID.1:ECX.PDCM=1 */
#define PERF_CAP_PEBS_FORMAT_SHIFT 8
#define PERF_CAP_PEBS_FORMAT_MASK (0xfull << PERF_CAP_PEBS_FORMAT_SHIFT)
#define PERF_CAP_FULL_WIDTH_WRITE (1ull << 13) /* counts writable through IA32_A_PMCx */
#define PERF_CAP_PEBS_BASELINE (1ull << 14)

/* Architectural performance monitoring (SDM Vol. 4 Table 2-2; hardware.md A6). */
#define MSR_IA32_PMC0 0x000000c1 /* + i; a write sign-extends bit 31 (SDM §20.2.6) */
#define MSR_IA32_PERFEVTSEL0 0x00000186 /* + i */
#define MSR_IA32_FIXED_CTR0 0x00000309 /* + i */
#define MSR_IA32_FIXED_CTR_CTRL 0x0000038d
#define MSR_IA32_PERF_GLOBAL_CTRL 0x0000038f
#define MSR_IA32_A_PMC0 0x000004c1 /* + i; full-width writes, PERF_CAPABILITIES bit 13 */
#define MSR_IA32_PERF_GLOBAL_STATUS 0x0000038e
#define MSR_IA32_PERF_GLOBAL_OVF_CTRL 0x00000390 /* write 1 to clear; STATUS_RESET from v4 */
#define PERF_GLOBAL_STATUS_BUFFER_OVF (1ull << 62) /* DS buffer reached its threshold */
#define PERF_GLOBAL_STATUS_COND_CHANGED (1ull << 63)

#define MSR_IA32_PEBS_ENABLE 0x000003f1
#define MSR_IA32_DS_AREA 0x00000600

#define MSR_EFER 0xc0000080
#define EFER_SCE (1ull << 0)
#define EFER_LME (1ull << 8)
#define EFER_LMA (1ull << 10)
#define EFER_NXE (1ull << 11)

#define MSR_STAR 0xc0000081
#define MSR_LSTAR 0xc0000082
#define MSR_SYSCALL_MASK 0xc0000084
#define MSR_FS_BASE 0xc0000100
#define MSR_GS_BASE 0xc0000101
#define MSR_KERNEL_GS_BASE 0xc0000102

#endif
