/* SPDX-License-Identifier: MIT */
/* Host tests of console=mmio,ADDR and console=mmio32,ADDR, earlycon's memory-mapped forms. */
#include <stdbool.h>
#include <stdint.h>

#include "lib/cmdline.h"
#include "tests/host/host_test.h"

HOST_TEST(cmdline_console_takes_mmio_and_mmio32_addresses_as_earlycon_does)
{
	static const struct {
		const char *value;
		bool accepted;
		enum uart_io io;
		uint64_t mmio;
		uint32_t baud;
		const char *reason;
	} cases[] = {
		{ "mmio,0xfe030000", true, UART_IO_MMIO8, 0xfe030000, 115200, NULL },
		{ "mmio,0xFE030001,9600", true, UART_IO_MMIO8, 0xfe030001, 9600, NULL },
		{ "mmio,4261609472", true, UART_IO_MMIO8, 0xfe030000, 115200, NULL },
		{ "mmio32,0xfe032000", true, UART_IO_MMIO32, 0xfe032000, 115200, NULL },
		{ "mmio32,0x4010002000,57600", true, UART_IO_MMIO32, 0x4010002000, 57600, NULL },
		{ "mmio32,0xfe032002", false, 0, 0, 0,
		  "mmio32 address 0xfe032002 is not aligned to its 4-byte registers" },
		{ "mmio,0", false, 0, 0, 0,
		  "mmio address '0' is not a nonzero decimal or 0x-prefixed hex number: "
		  "mmio,ADDR[,BAUD]" },
		{ "mmio,", false, 0, 0, 0,
		  "mmio address '' is not a nonzero decimal or 0x-prefixed hex number: "
		  "mmio,ADDR[,BAUD]" },
		{ "mmio32,0xfe03zz00", false, 0, 0, 0,
		  "mmio32 address '0xfe03zz00' is not a nonzero decimal or 0x-prefixed hex number: "
		  "mmio32,ADDR[,BAUD]" },
		{ "mmio,0x10000000000000000", false, 0, 0, 0, NULL },
		{ "mmio,0xfffffffffffffff8", true, UART_IO_MMIO8, 0xfffffffffffffff8, 115200,
		  NULL },
		{ "mmio,0xfffffffffffffff9", false, 0, 0, 0, NULL }, /* registers past 2^64 */
		{ "mmio32,0xffffffffffffffe0", true, UART_IO_MMIO32, 0xffffffffffffffe0, 115200,
		  NULL },
		{ "mmio32,0xffffffffffffffe4", false, 0, 0, 0, NULL },
		{ "mmio,0xfe030000,9601", false, 0, 0, 0,
		  "baud '9601' is not a divisor of 115200, such as 115200 or 9600" },
		{ "mmio,0xfe030000,", false, 0, 0, 0, NULL },
		{ "mmio", false, 0, 0, 0, NULL },
		{ "mmio16,0xfe030000", false, 0, 0, 0, NULL },
		{ "MMIO,0xfe030000", false, 0, 0, 0, NULL },
		{ "io,0x3f8", false, 0, 0, 0, NULL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct console_config config = { 0 };
		struct cmdline_option opt = { "console", "ttyS0|...", cmdline_parse_console,
					      &config,	 0,	      0 };
		char reason[256] = "";
		bool accepted = cmdline_parse_console(&opt, cases[i].value, reason, sizeof(reason));

		host_checkf(accepted == cases[i].accepted,
			    "console=%s: expected %s (reason \"%s\")", cases[i].value,
			    cases[i].accepted ? "accepted" : "rejected", reason);
		if (accepted && cases[i].accepted) {
			host_checkf(config.io == cases[i].io, "console=%s: io %d", cases[i].value,
				    config.io);
			host_check_eq_u64(cases[i].mmio, config.mmio);
			host_check_eq_u64(cases[i].baud, config.baud);
			host_check_eq_u64(0, config.port);
			host_check(config.given);
		}
		if (!accepted) {
			host_check(reason[0] != '\0');
			host_check(!config.given); /* nothing stored on failure */
			if (cases[i].reason != NULL)
				host_check_str(cases[i].reason, reason);
		}
	}
}

HOST_TEST(cmdline_console_port_forms_are_io_ports_and_given)
{
	struct console_config config = { 0 };
	struct cmdline_option opt = {
		"console", "ttyS0|...", cmdline_parse_console, &config, 0, 0
	};
	char reason[256] = "";

	host_check(cmdline_parse_console(&opt, "ttyS1,9600", reason, sizeof(reason)));
	host_check_eq_u64(UART_IO_PORT, config.io);
	host_check_eq_u64(0x2f8, config.port);
	host_check_eq_u64(0, config.mmio);
	host_check(config.given);
}
