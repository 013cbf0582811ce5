/* SPDX-License-Identifier: MIT */
/* Which Last Branch Records this CPU has: format from PERF_CAPABILITIES, banks and depth probed. */
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/cpuid.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/msr-index.h"
#include "arch/x86/msr.h"
#include "arch/x86/xsave.h"
#include "lbr/amd.h"
#include "lbr/detect.h"
#include "lbr/lbr.h"
#include "lib/format.h"

/*
 * Sources: SDM Vol. 3B "Last Branch, Interrupt, and Exception Recording" and Vol. 4; Linux
 * arch/x86/events/intel/lbr.c (formats, intel_pmu_lbr_init_*(), lbr_from_signext_quirk_wr())
 * and kvm-unit-tests x86/pmu_lbr.c, which finds the FROM/TO bank by probing for #GP rather
 * than by model: so does lbr/, which then runs unchanged on any part, the model included.
 */

#define PERFMON_FREEZE_BY_STATUS 4 /* perfmon v4: LBR_FRZ in GLOBAL_STATUS (SDM §20.2.4) */

static struct lbr_support support;
static const unsigned int depths[] = { 32, 16, 8, 4 }; /* Linux intel_pmu_lbr_init_*() */

const struct lbr_support *lbr_support(void)
{
	return &support;
}

static bool msr_reads(uint32_t index)
{
	uint64_t value;

	return rdmsr_safe(index, &value) == 0;
}

/*
 * The FROM/TO pairs that read, from entry 0 up to the first #GP, at most 32 (kvm-unit-tests
 * pmu_lbr.c counts them so). Not "the next one faults": an MSR beyond every bank may read 0
 * without a fault on a platform that answers unknown MSRs (QEMU TCG, docs/platforms.md).
 */
static unsigned int probe_depth(uint32_t from, uint32_t to)
{
	unsigned int depth = 0;

	while (depth < LBR_LEGACY_MAX_DEPTH && msr_reads(from + depth) && msr_reads(to + depth))
		depth++;
	for (unsigned int i = 0; i < sizeof(depths) / sizeof(depths[0]); i++)
		if (depth == depths[i])
			return depth;
	return 0;
}

/* LBR_SELECT.EN_CALLSTACK takes a write (Haswell and later; reserved, so #GP, before). */
static bool probe_call_stack(void)
{
	uint64_t old;
	bool taken;

	if (rdmsr_safe(MSR_LBR_SELECT, &old))
		return false;
	taken = wrmsr_safe(MSR_LBR_SELECT, LBR_SELECT_EN_CALLSTACK) == 0;
	wrmsr_safe(MSR_LBR_SELECT, old);
	return taken;
}

static bool intel(void)
{
	struct cpuid_result leaf = cpuid(0, 0);

	return leaf.ebx == CPUID_VENDOR_INTEL_EBX && leaf.edx == CPUID_VENDOR_INTEL_EDX &&
	       leaf.ecx == CPUID_VENDOR_INTEL_ECX;
}

/* Architectural LBR: CPUID.(7,0):EDX[19] with leaf 0x1C in range (SDM CPUID leaf 1CH). */
static bool architectural(void)
{
	return cpuid(0, 0).eax >= CPUID_LEAF_ARCH_LBR &&
	       (cpuid(CPUID_LEAF_EXTENDED_FEATURES, 0).edx & CPUID_7_EDX_ARCH_LBR);
}

static void fail(const char *reason)
{
	format(support.reason, sizeof(support.reason), "%s", reason);
}

/* The perfmon version, and with it the freeze: DEBUGCTL bit 11 with PDCM and v2, bit 58 from v4. */
static void detect_freeze(void)
{
	unsigned int perfmon = CPUID_PERFMON_VERSION(
		cpuid(0, 0).eax >= CPUID_LEAF_PERFMON ? cpuid(CPUID_LEAF_PERFMON, 0).eax : 0);

	support.freeze = perfmon >= 2;
	support.freeze_by_status = perfmon >= PERFMON_FREEZE_BY_STATUS;
}

static void xsaves_fail(const char *reason)
{
	format(support.xsaves_reason, sizeof(support.xsaves_reason), "%s", reason);
}

/* A scratch area for the probe; boot CPU only, before the first switch. */
static struct {
	uint8_t bytes[XSAVE_ARCH_LBR_OFFSET + XSAVE_ARCH_LBR_SIZE(LBR_LEGACY_MAX_DEPTH)];
} __attribute__((aligned(XSAVE_ALIGNMENT))) probe_area;

/*
 * XSAVES of component 15 (Linux is_arch_lbr_xsave_available()): XSAVES enumerated
 * (CPUID.(0DH,1):EAX[3]) with IA32_XSS bit 15 (its ECX), the component exactly the size of
 * lbr/'s depth (CPUID.(0DH,15):EAX), IA32_XSS bit 15 settable, and one XSAVES that does not
 * fault (it raises #UD where CR4.OSXSAVE is clear: this kernel does not set it on silicon).
 * IA32_XSS is left as found here; each CPU sets bit 15 before its first XSAVES.
 */
static void detect_xsaves(void)
{
	struct cpuid_result sub1, sub15;
	uint64_t xss;
	uint32_t fault;

	if (cpuid(0, 0).eax < CPUID_LEAF_XSTATE)
		return xsaves_fail("CPUID leaf 0DH out of range: no XSAVE");
	sub1 = cpuid(CPUID_LEAF_XSTATE, 1);
	if (!(sub1.eax & CPUID_D1_EAX_XSAVES))
		return xsaves_fail("CPUID.(0DH,1):EAX[3]=0: no XSAVES");
	if (!(sub1.ecx & XSS_ARCH_LBR))
		return xsaves_fail("CPUID.(0DH,1):ECX[15]=0: IA32_XSS has no LBR component");
	sub15 = cpuid(CPUID_LEAF_XSTATE, XSS_ARCH_LBR_COMPONENT);
	if (sub15.eax != XSAVE_ARCH_LBR_SIZE(support.depth)) {
		format(support.xsaves_reason, sizeof(support.xsaves_reason),
		       "CPUID.(0DH,15):EAX=%u, not %u: component 15 is not %u entries deep",
		       sub15.eax, (unsigned int)XSAVE_ARCH_LBR_SIZE(support.depth), support.depth);
		return;
	}
	if (rdmsr_safe(MSR_IA32_XSS, &xss) || wrmsr_safe(MSR_IA32_XSS, xss | XSS_ARCH_LBR))
		return xsaves_fail("RDMSR or WRMSR of IA32_XSS with bit 15 raises #GP");
	fault = xsaves_safe(&probe_area, XSS_ARCH_LBR);
	wrmsr(MSR_IA32_XSS, xss);
	if (fault) {
		format(support.xsaves_reason, sizeof(support.xsaves_reason),
		       "XSAVES of component 15 raises vector %u%s", exinfo_vector(fault),
		       exinfo_vector(fault) == X86_EXC_UD ? " (CR4.OSXSAVE=0)" : "");
		return;
	}
	support.xsaves = true;
}

/*
 * Architectural LBR (SDM Vol. 3B "Architectural Last Branch Records"; Linux
 * intel_pmu_arch_lbr_init()): the depth is the deepest leaf 1CH enumerates (fls(EAX[7:0]) x 8),
 * filters need both the CPL and the branch filter (EBX[0], EBX[1]), call-stack mode EBX[2].
 */
static void detect_architectural(void)
{
	struct cpuid_result leaf;
	uint32_t depths;

	if (!support.architectural)
		return fail("IA32_PERF_CAPABILITIES.LBR_FMT=0x3f (architectural) but "
			    "CPUID.(7,0):EDX[19]=0 or leaf 0x1C out of range");
	leaf = cpuid(CPUID_LEAF_ARCH_LBR, 0);
	depths = leaf.eax & CPUID_1C_EAX_DEPTHS;
	if (!depths)
		return fail("CPUID.1CH:EAX[7:0]=0: architectural LBR with no supported depth");
	support.depth = 8 * (32 - (unsigned int)__builtin_clz(depths));
	if (support.depth > LBR_LEGACY_MAX_DEPTH) {
		format(support.reason, sizeof(support.reason),
		       "architectural LBR %u deep: lbr/ keeps at most %u entries", support.depth,
		       LBR_LEGACY_MAX_DEPTH);
		return;
	}
	support.from_msr = MSR_ARCH_LBR_FROM_0;
	support.to_msr = MSR_ARCH_LBR_TO_0;
	support.info_msr = MSR_ARCH_LBR_INFO_0;
	support.select =
		(leaf.ebx & CPUID_1C_EBX_CPL_FILTER) && (leaf.ebx & CPUID_1C_EBX_BRANCH_FILTER);
	support.call_stack = leaf.ebx & CPUID_1C_EBX_CALL_STACK;
	support.deep_c_reset = leaf.eax & CPUID_1C_EAX_DEEP_C_RESET;
	detect_freeze();
	support.present = true;
	detect_xsaves();
}

/* The first condition that fails, in the order Linux's intel_pmu_init() meets them. */
void lbr_detect(void)
{
	uint64_t caps = 0;
	bool pdcm;

	support = (struct lbr_support){ 0 };
	if (!intel())
		return lbr_amd_detect(&support);
	pdcm = cpuid(CPUID_LEAF_FEATURES, 0).ecx & CPUID_1_ECX_PDCM;
	if (!pdcm)
		return fail("CPUID.1:ECX.PDCM=0: no IA32_PERF_CAPABILITIES to give the LBR format");
	if (rdmsr_safe(MSR_IA32_PERF_CAPABILITIES, &caps))
		return fail("RDMSR IA32_PERF_CAPABILITIES raises #GP although CPUID.1:ECX.PDCM=1");
	support.format = (unsigned int)(caps & PERF_CAP_LBR_FORMAT_MASK);
	support.architectural = architectural();
	if (support.format == PERF_CAP_LBR_FORMAT_ARCH)
		return detect_architectural();
	if (support.format == 0 && !msr_reads(MSR_LBR_NHM_FROM) && !msr_reads(MSR_LBR_CORE2_FROM))
		return fail("IA32_PERF_CAPABILITIES.LBR_FMT=0 and RDMSR of LBR FROM 0x680 and 0x40 "
			    "raise #GP: no LBR stack (as in a KVM guest without lbr-fmt)");
	if (support.format < PERF_CAP_LBR_FORMAT_EIP || support.format > PERF_CAP_LBR_FORMAT_INFO) {
		format(support.reason, sizeof(support.reason),
		       "IA32_PERF_CAPABILITIES.LBR_FMT=%u: lbr/ reads formats 2 to 5 (64-bit EIP "
		       "to "
		       "INFO)",
		       support.format);
		return;
	}
	if (msr_reads(MSR_LBR_NHM_FROM)) {
		support.from_msr = MSR_LBR_NHM_FROM;
		support.to_msr = MSR_LBR_NHM_TO;
	} else if (msr_reads(MSR_LBR_CORE2_FROM)) {
		support.from_msr = MSR_LBR_CORE2_FROM;
		support.to_msr = MSR_LBR_CORE2_TO;
	} else {
		return fail("RDMSR of LBR FROM 0x680 and 0x40 raise #GP: no LBR stack found");
	}
	support.depth = probe_depth(support.from_msr, support.to_msr);
	if (!support.depth) {
		format(support.reason, sizeof(support.reason),
		       "LBR FROM/TO at 0x%x/0x%x: the pairs that read before a #GP are not 4, 8, "
		       "16 "
		       "or 32",
		       support.from_msr, support.to_msr);
		return;
	}
	if (msr_reads(MSR_LBR_TOS) == false)
		return fail("RDMSR MSR_LBR_TOS (0x1c9) raises #GP");
	if (support.format == PERF_CAP_LBR_FORMAT_INFO)
		support.info_msr = MSR_LBR_INFO_0;
	support.select = msr_reads(MSR_LBR_SELECT);
	support.call_stack = support.select && probe_call_stack();
	detect_freeze();
	support.from_sign_extend =
		support.format == PERF_CAP_LBR_FORMAT_EIP_FLAGS2 &&
		!(cpuid(CPUID_LEAF_EXTENDED_FEATURES, 0).ebx & (CPUID_7_EBX_HLE | CPUID_7_EBX_RTM));
	support.present = true;
}
