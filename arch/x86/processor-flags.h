/* SPDX-License-Identifier: MIT */
/* RFLAGS, CR0, CR4 and EFER bits (SDM Vol. 3 §2.5, §2.6). */
#ifndef ARCH_X86_PROCESSOR_FLAGS_H
#define ARCH_X86_PROCESSOR_FLAGS_H

#define RFLAGS_CF (1ul << 0)
#define RFLAGS_FIXED (1ul << 1) /* reserved, always 1 */
#define RFLAGS_TF (1ul << 8)
#define RFLAGS_IF (1ul << 9)
#define RFLAGS_DF (1ul << 10)
#define RFLAGS_IOPL_MASK (3ul << 12)
#define RFLAGS_NT (1ul << 14)
#define RFLAGS_RF (1ul << 16)
#define RFLAGS_AC (1ul << 18)

#define CR0_PE (1ul << 0)
#define CR0_MP (1ul << 1)
#define CR0_EM (1ul << 2)
#define CR0_TS (1ul << 3)
#define CR0_NE (1ul << 5)
#define CR0_WP (1ul << 16)
#define CR0_AM (1ul << 18) /* alignment checks (#AC) at CPL 3 with RFLAGS.AC */
#define CR0_PG (1ul << 31)

#define CR4_DE (1ul << 3) /* debugging extensions: I/O breakpoints, DR4/DR5 #UD */
#define CR4_PAE (1ul << 5)
#define CR4_PGE (1ul << 7)
#define CR4_PCE (1ul << 8) /* RDPMC allowed at any CPL */
#define CR4_OSFXSR (1ul << 9)
#define CR4_OSXMMEXCPT (1ul << 10)
#define CR4_UMIP (1ul << 11) /* SGDT, SIDT, SLDT, SMSW, STR: #GP(0) at CPL > 0 */
#define CR4_FSGSBASE (1ul << 16)
#define CR4_OSXSAVE (1ul << 18)

#endif
