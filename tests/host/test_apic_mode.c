/* SPDX-License-Identifier: MIT */
/* Host tests of arch/x86/apic_mode.h: x2APIC MSR addresses, apic=, and the choice of mode. */
#include <stdint.h>
#include <string.h>

#include "arch/x86/apic_mode.h"
#include "tests/host/host_test.h"

#define ERR_SIZE 256

/* SDM Vol. 3 Table 11-6, "Local APIC Register Address Map Supported by x2APIC", as printed. */
HOST_TEST(apic_x2apic_msr_is_the_sdm_table_address_of_each_register)
{
	static const struct {
		uint32_t offset, msr;
	} table[] = {
		{ APIC_ID, 0x802 },
		{ APIC_EOI, 0x80b },
		{ APIC_SPURIOUS, 0x80f },
		{ APIC_IN_SERVICE, 0x810 },
		{ APIC_IN_SERVICE + 7 * APIC_REGISTER_STRIDE, 0x817 },
		{ APIC_INTERRUPT_REQUEST, 0x820 },
		{ APIC_ERROR_STATUS, 0x828 },
		{ APIC_INTERRUPT_COMMAND_LOW, 0x830 },
		{ APIC_LVT_TIMER, 0x832 },
		{ APIC_LVT_PERFORMANCE, 0x834 },
		{ APIC_LVT_LINT0, 0x835 },
		{ APIC_LVT_LINT1, 0x836 },
		{ APIC_LVT_ERROR, 0x837 },
		{ APIC_TIMER_INITIAL, 0x838 },
		{ APIC_TIMER_CURRENT, 0x839 },
		{ APIC_TIMER_DIVIDE, 0x83e },
		{ APIC_SELF_IPI, 0x83f },
	};

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		host_checkf(apic_x2apic_msr(table[i].offset) == table[i].msr,
			    "offset 0x%x: expected MSR 0x%x, got 0x%x", table[i].offset,
			    table[i].msr, apic_x2apic_msr(table[i].offset));
}

HOST_TEST(apic_ids_reachable_are_8_bit_in_xapic_and_32_bit_in_x2apic_mode)
{
	host_check(apic_id_reachable(APIC_MODE_XAPIC, 0));
	host_check(apic_id_reachable(APIC_MODE_XAPIC, 254));
	host_check(!apic_id_reachable(APIC_MODE_XAPIC, 255)); /* the xAPIC broadcast */
	host_check(!apic_id_reachable(APIC_MODE_XAPIC, 256));
	host_check(apic_id_reachable(APIC_MODE_X2APIC, 255));
	host_check(apic_id_reachable(APIC_MODE_X2APIC, 0xfffffffe));
	host_check(!apic_id_reachable(APIC_MODE_X2APIC, 0xffffffff)); /* the x2APIC broadcast */
}

HOST_TEST(apic_parse_request_takes_xapic_and_x2apic_only)
{
	static const struct {
		const char *value;
		bool accepted;
		enum apic_request request;
		const char *reason;
	} cases[] = {
		{ "xapic", true, APIC_REQUEST_XAPIC, "" },
		{ "x2apic", true, APIC_REQUEST_X2APIC, "" },
		{ "X2APIC", false, APIC_REQUEST_DEFAULT,
		  "'X2APIC' is not an APIC mode: xapic or x2apic" },
		{ "x2apic,", false, APIC_REQUEST_DEFAULT,
		  "'x2apic,' is not an APIC mode: xapic or x2apic" },
		{ "", false, APIC_REQUEST_DEFAULT, "'' is not an APIC mode: xapic or x2apic" },
		{ NULL, false, APIC_REQUEST_DEFAULT, "'' is not an APIC mode: xapic or x2apic" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum apic_request request = APIC_REQUEST_DEFAULT;
		struct cmdline_option opt = {
			"apic", "xapic|x2apic", apic_parse_request, &request, 0, 0
		};
		char reason[ERR_SIZE] = "";
		bool accepted = apic_parse_request(&opt, cases[i].value, reason, sizeof(reason));

		host_checkf(accepted == cases[i].accepted, "apic=%s: expected %s",
			    cases[i].value ? cases[i].value : "(no value)",
			    cases[i].accepted ? "accepted" : "rejected");
		host_check_eq_u64(cases[i].request, request);
		host_check_str(cases[i].reason, reason);
	}
}

/* Every combination of apic=, CPUID.1:ECX[21] and a firmware-set EXTD. */
HOST_TEST(apic_mode_choose_prefers_x2apic_keeps_firmwares_and_refuses_what_is_missing)
{
	static const struct {
		enum apic_request request;
		bool cpuid, firmware;
		enum apic_mode mode;
		bool enable, refused, error;
		const char *reason;
	} cases[] = {
		{ APIC_REQUEST_DEFAULT, false, false, APIC_MODE_XAPIC, false, false, false,
		  "(CPUID.1:ECX[21] is 0: no x2APIC)" },
		{ APIC_REQUEST_XAPIC, false, false, APIC_MODE_XAPIC, false, false, false,
		  "(CPUID.1:ECX[21] is 0: no x2APIC)" },
		{ APIC_REQUEST_X2APIC, false, false, APIC_MODE_XAPIC, false, false, true,
		  "(CPUID.1:ECX[21] is 0: no x2APIC)" },
		{ APIC_REQUEST_DEFAULT, true, false, APIC_MODE_X2APIC, true, false, false,
		  "enabled by switchyard (CPUID.1:ECX[21] has it)" },
		{ APIC_REQUEST_XAPIC, true, false, APIC_MODE_XAPIC, false, false, false,
		  "(apic=xapic, though CPUID.1:ECX[21] has x2APIC)" },
		{ APIC_REQUEST_X2APIC, true, false, APIC_MODE_X2APIC, true, false, false,
		  "enabled by switchyard (apic=x2apic; CPUID.1:ECX[21] has it)" },
		{ APIC_REQUEST_DEFAULT, true, true, APIC_MODE_X2APIC, false, false, false,
		  "enabled by firmware" },
		{ APIC_REQUEST_XAPIC, true, true, APIC_MODE_X2APIC, false, true, false,
		  "enabled by firmware" },
		{ APIC_REQUEST_X2APIC, true, true, APIC_MODE_X2APIC, false, false, false,
		  "enabled by firmware" },
		/* EXTD set where CPUID says nothing: the MSR is the truth, x2APIC is on. */
		{ APIC_REQUEST_DEFAULT, false, true, APIC_MODE_X2APIC, false, false, false,
		  "enabled by firmware" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct apic_choice choice =
			apic_mode_choose(cases[i].request, cases[i].cpuid, cases[i].firmware);

		host_checkf(choice.mode == cases[i].mode &&
				    choice.enable_x2apic == cases[i].enable &&
				    !!choice.refused == cases[i].refused &&
				    !!choice.error == cases[i].error,
			    "case %zu: mode %u enable %u refused %u error %u", i, choice.mode,
			    choice.enable_x2apic, !!choice.refused, !!choice.error);
		host_check_str(cases[i].reason, choice.reason);
	}
	host_check_str("option 'apic': x2apic: CPUID.1:ECX[21] is 0: this CPU has no x2APIC",
		       apic_mode_choose(APIC_REQUEST_X2APIC, false, false).error);
	host_check_str("apic=xapic not honoured: firmware handed over in x2APIC mode, which "
		       "switchyard never leaves (only a disabled APIC can go back to xAPIC: SDM "
		       "Vol. 3 11.12.5); x2APIC kept",
		       apic_mode_choose(APIC_REQUEST_XAPIC, true, true).refused);
}
