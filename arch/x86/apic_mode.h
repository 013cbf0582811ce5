/* SPDX-License-Identifier: MIT */
/* The local APIC's two modes: register addresses, apic=, and the choice. Pure, host-tested. */
#ifndef ARCH_X86_APIC_MODE_H
#define ARCH_X86_APIC_MODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/msr-index.h"
#include "lib/cmdline.h"
#include "lib/format.h"
#include "lib/string.h"

/*
 * Registers by their xAPIC MMIO offset (SDM Vol. 3 Table 11-1). In x2APIC mode the same register
 * is MSR 0x800 + offset / 16 (apic_x2apic_msr()); the ICR is one 64-bit MSR there, and
 * APIC_INTERRUPT_COMMAND_HIGH has no MSR. APIC_SELF_IPI exists in x2APIC mode only.
 */
#define APIC_REGISTER_STRIDE 16
#define APIC_ID 0x020
#define APIC_EOI 0x0b0
#define APIC_SPURIOUS 0x0f0
#define APIC_SPURIOUS_ENABLE (1u << 8) /* the APIC software enable */
#define APIC_IN_SERVICE 0x100 /* ISR: 8 registers; vector v is bit v % 32 of register v / 32 */
#define APIC_INTERRUPT_REQUEST 0x200 /* IRR: the same layout */
#define APIC_VECTORS_PER_REGISTER 32
#define APIC_ERROR_STATUS 0x280
#define APIC_INTERRUPT_COMMAND_LOW 0x300
#define APIC_INTERRUPT_COMMAND_HIGH 0x310
#define APIC_LVT_TIMER 0x320
#define APIC_LVT_TIMER_PERIODIC (1u << 17)
#define APIC_LVT_PERFORMANCE 0x340
#define APIC_LVT_LINT0 0x350
#define APIC_LVT_LINT1 0x360
#define APIC_LVT_ERROR 0x370
#define APIC_TIMER_INITIAL 0x380
#define APIC_TIMER_CURRENT 0x390
#define APIC_TIMER_DIVIDE 0x3e0
#define APIC_TIMER_DIVIDE_BY_16 0x3 /* bits 3, 1:0 = 0, 11 */
#define APIC_SELF_IPI 0x3f0 /* bits 7:0 the vector (SDM Vol. 3 §11.12.11) */

/* The x2APIC MSR of the register at xAPIC offset (SDM Vol. 3 §11.12.1.2, Table 11-6). */
static inline uint32_t apic_x2apic_msr(uint32_t offset)
{
	return MSR_X2APIC_FIRST + offset / APIC_REGISTER_STRIDE;
}

/*
 * The largest APIC id an ICR can name as one physical destination: 8 bits in xAPIC mode, where
 * 0xff is the broadcast; 32 in x2APIC mode, where 0xffffffff is (SDM Vol. 3 §11.6.1, §11.12.9).
 */
#define APIC_XAPIC_ID_MAX 0xfeu
#define APIC_X2APIC_ID_MAX 0xfffffffeu

enum apic_mode {
	APIC_MODE_XAPIC, /* MMIO at IA32_APIC_BASE's address, 8-bit ids */
	APIC_MODE_X2APIC, /* MSRs 0x800-0x8ff, 32-bit ids; left only through a disabled APIC */
};

/* apic=: what the command line asked for. */
enum apic_request {
	APIC_REQUEST_DEFAULT, /* x2APIC where CPUID has it, as Linux does */
	APIC_REQUEST_XAPIC,
	APIC_REQUEST_X2APIC,
};

/* Whether destination can be sent an IPI, and so be started, in mode. */
static inline bool apic_id_reachable(enum apic_mode mode, uint32_t destination)
{
	return destination <= (mode == APIC_MODE_X2APIC ? APIC_X2APIC_ID_MAX : APIC_XAPIC_ID_MAX);
}

/* The parser of apic=xapic|x2apic; dest is an enum apic_request. */
static inline bool apic_parse_request(const struct cmdline_option *opt, const char *value,
				      char *err, size_t err_size)
{
	enum apic_request *request = opt->dest;

	if (value && strcmp(value, "xapic") == 0) {
		*request = APIC_REQUEST_XAPIC;
		return true;
	}
	if (value && strcmp(value, "x2apic") == 0) {
		*request = APIC_REQUEST_X2APIC;
		return true;
	}
	format(err, err_size, "'%s' is not an APIC mode: xapic or x2apic", value ? value : "");
	return false;
}

/* What apic_init() does with the boot CPU's APIC. */
struct apic_choice {
	enum apic_mode mode;
	bool enable_x2apic; /* switchyard sets IA32_APIC_BASE.EXTD (firmware did not) */
	const char *reason; /* the rest of the "# apic:" line after the mode */
	const char *refused; /* NULL, or why apic= is not honoured (the mode above is kept) */
	const char *error; /* NULL, or why apic= is a usage error: then nothing else holds */
};

/*
 * The mode, from apic=, CPUID.1:ECX[21] (cpuid_x2apic) and IA32_APIC_BASE.EXTD as firmware left
 * it (firmware_x2apic). x2APIC wherever CPUID has it, as Linux's x2apic_setup() chooses; a
 * firmware-enabled x2APIC is always kept, since leaving x2APIC mode takes the APIC through its
 * disabled state (SDM Vol. 3 §11.12.5) and may be locked (IA32_XAPIC_DISABLE_STATUS);
 * apic=x2apic without it is a usage error, as tsc.source= naming a missing source is.
 */
static inline struct apic_choice apic_mode_choose(enum apic_request request, bool cpuid_x2apic,
						  bool firmware_x2apic)
{
	struct apic_choice choice = { APIC_MODE_X2APIC, false, "enabled by firmware", NULL, NULL };

	if (firmware_x2apic) {
		if (request == APIC_REQUEST_XAPIC)
			choice.refused =
				"apic=xapic not honoured: firmware handed over in x2APIC "
				"mode, which switchyard never leaves (only a disabled APIC "
				"can go back to xAPIC: SDM Vol. 3 11.12.5); x2APIC kept";
		return choice;
	}
	if (!cpuid_x2apic) {
		choice.mode = APIC_MODE_XAPIC;
		choice.reason = "(CPUID.1:ECX[21] is 0: no x2APIC)";
		if (request == APIC_REQUEST_X2APIC)
			choice.error = "option 'apic': x2apic: CPUID.1:ECX[21] is 0: this CPU has "
				       "no x2APIC";
		return choice;
	}
	if (request == APIC_REQUEST_XAPIC) {
		choice.mode = APIC_MODE_XAPIC;
		choice.reason = "(apic=xapic, though CPUID.1:ECX[21] has x2APIC)";
		return choice;
	}
	choice.enable_x2apic = true;
	choice.reason = request == APIC_REQUEST_X2APIC
				? "enabled by switchyard (apic=x2apic; CPUID.1:ECX[21] has it)"
				: "enabled by switchyard (CPUID.1:ECX[21] has it)";
	return choice;
}

#endif
