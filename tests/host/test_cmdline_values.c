/* SPDX-License-Identifier: MIT */
/* Host tests of lib/cmdline.c's value parsers, called directly. */
#include <stdint.h>
#include <string.h>

#include "lib/cmdline.h"
#include "tests/host/host_test.h"

#define ERR_SIZE 256
/* One call of one parser: option named name with range [min, max], the value, the verdict. */
struct parser_case {
	const char *value;
	bool accepted;
	uint64_t expected; /* the number stored, when accepted (u64, duration, bool) */
	const char *reason; /* the exact reason, when rejected and not NULL */
};

static void check_number_parser_at(const char *file, int line, cmdline_parser parse,
				   const char *name, uint64_t min, uint64_t max,
				   const struct parser_case *cases, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		uint64_t number = 0xdead;
		bool flag = false;
		bool is_bool = parse == cmdline_parse_bool || parse == cmdline_parse_flag;
		struct cmdline_option opt = { name, "N", parse, is_bool ? (void *)&flag : &number,
					      min,  max };
		char reason[ERR_SIZE] = "";
		bool accepted = parse(&opt, cases[i].value, reason, sizeof(reason));
		uint64_t stored = is_bool ? flag : number;

		host_checkf_at(file, line, accepted == cases[i].accepted,
			       "%s=%s: expected %s, got %s (reason \"%s\")", name,
			       cases[i].value ? cases[i].value : "(no value)",
			       cases[i].accepted ? "accepted" : "rejected",
			       accepted ? "accepted" : "rejected", reason);
		if (accepted && cases[i].accepted)
			host_checkf_at(file, line, stored == cases[i].expected,
				       "%s=%s: expected %llu, got %llu", name, cases[i].value,
				       (unsigned long long)cases[i].expected,
				       (unsigned long long)stored);
		if (!accepted) {
			host_checkf_at(file, line, reason[0] != '\0', "%s=%s: empty reason", name,
				       cases[i].value);
			if (cases[i].reason != NULL)
				host_check_str_at(file, line, cases[i].reason, "reason",
						  cases[i].reason, reason);
		} else if (stored == 0xdead) {
			host_checkf_at(file, line, false, "%s: accepted but stored nothing", name);
		}
	}
}

#define check_number_parser(parse, name, min, max, cases)                        \
	check_number_parser_at(__FILE__, __LINE__, parse, name, min, max, cases, \
			       sizeof(cases) / sizeof(cases[0]))

HOST_TEST(cmdline_u64_accepts_decimal_and_hex_and_rejects_the_rest)
{
	static const struct parser_case cases[] = {
		{ "0", true, 0, NULL },
		{ "7", true, 7, NULL },
		{ "007", true, 7, NULL },
		{ "18446744073709551615", true, UINT64_MAX, NULL },
		{ "0x0", true, 0, NULL },
		{ "0xff", true, 255, NULL },
		{ "0xFf", true, 255, NULL },
		{ "0xffffffffffffffff", true, UINT64_MAX, NULL },
		{ "0x0000000000000000001", true, 1, NULL },
		{ NULL, false, 0, "needs a value: seed=N" },
		{ "", false, 0, "needs a value: seed=N" },
		{ "18446744073709551616", false, 0,
		  "'18446744073709551616' does not fit in 64 bits" },
		{ "99999999999999999999", false, 0, NULL },
		{ "0x10000000000000000", false, 0,
		  "'0x10000000000000000' does not fit in 64 bits" },
		{ "abc", false, 0, "'abc' is not a decimal or 0x-prefixed hex number" },
		{ "-1", false, 0, NULL },
		{ "+1", false, 0, NULL },
		{ "0x", false, 0, NULL },
		{ "0X10", false, 0, NULL },
		{ "x10", false, 0, NULL },
		{ "10x", false, 0, NULL },
		{ "0xg", false, 0, NULL },
		{ "1a", false, 0, NULL },
		{ "1.5", false, 0, NULL },
		{ "99999999999999999999z", false, 0,
		  "'99999999999999999999z' is not a decimal or 0x-prefixed hex number" },
	};

	check_number_parser(cmdline_parse_u64, "seed", 0, UINT64_MAX, cases);
}

HOST_TEST(cmdline_u64_enforces_its_inclusive_range)
{
	static const struct parser_case cases[] = {
		{ "9", false, 0, "'9' is out of range 10..20" },
		{ "10", true, 10, NULL },
		{ "20", true, 20, NULL },
		{ "0x14", true, 20, NULL },
		{ "21", false, 0, "'21' is out of range 10..20" },
		{ "0x15", false, 0, NULL },
		{ "0", false, 0, NULL },
	};

	check_number_parser(cmdline_parse_u64, "count", 10, 20, cases);
}

HOST_TEST(cmdline_duration_takes_seconds_or_milliseconds_within_range)
{
	static const struct parser_case cases[] = {
		{ "10", true, 10000, NULL },
		{ "10s", true, 10000, NULL },
		{ "500ms", true, 500, NULL },
		{ "1ms", true, 1, NULL },
		{ "600", true, 600000, NULL },
		{ "600s", true, 600000, NULL },
		{ "600000ms", true, 600000, NULL },
		{ "0001s", true, 1000, NULL },
		{ "0", false, 0, "'0' is out of range 1ms..600s" },
		{ "0s", false, 0, NULL },
		{ "0ms", false, 0, NULL },
		{ "601s", false, 0, "'601s' is out of range 1ms..600s" },
		{ "600001ms", false, 0, NULL },
		{ NULL, false, 0, "needs a value: timeout=N" },
		{ "", false, 0, NULL },
		{ "s", false, 0, NULL },
		{ "ms", false, 0, NULL },
		{ "10m", false, 0, "'10m' is not a duration: N or Ns (seconds), or Nms" },
		{ "10S", false, 0, NULL },
		{ "10mss", false, 0, NULL },
		{ "1.5s", false, 0, NULL },
		{ "-1", false, 0, NULL },
		{ "0x10", false, 0, NULL },
		{ "18446744073709551s", false, 0,
		  "'18446744073709551s' is out of range 1ms..600s" },
		{ "18446744073709552s", false, 0,
		  "'18446744073709552s' does not fit in 64 bits of milliseconds" },
		{ "18446744073709551616ms", false, 0, NULL },
	};

	check_number_parser(cmdline_parse_duration_ms, "timeout", 1, 600000, cases);
}

HOST_TEST(cmdline_duration_names_odd_bounds_in_milliseconds)
{
	static const struct parser_case cases[] = {
		{ "2s", false, 0, "'2s' is out of range 1500ms..1999ms" },
		{ "1500ms", true, 1500, NULL },
	};

	check_number_parser(cmdline_parse_duration_ms, "timeout", 1500, 1999, cases);
}

HOST_TEST(cmdline_bool_accepts_only_0_and_1)
{
	static const struct parser_case cases[] = {
		{ "0", true, 0, NULL },
		{ "1", true, 1, NULL },
		{ "2", false, 0, "'2' is not 0 or 1" },
		{ "true", false, 0, NULL },
		{ "01", false, 0, NULL },
		{ "", false, 0, NULL },
		{ NULL, false, 0, "needs a value: dr.lazy=N" },
	};

	check_number_parser(cmdline_parse_bool, "dr.lazy", 0, 0, cases);
}

HOST_TEST(cmdline_flag_accepts_only_the_bare_word)
{
	static const struct parser_case cases[] = {
		{ NULL, true, 1, NULL },
		{ "", false, 0, "takes no value; write just 'list'" },
		{ "1", false, 0, "takes no value; write just 'list'" },
	};

	check_number_parser(cmdline_parse_flag, "list", 0, 0, cases);
}

HOST_TEST(cmdline_string_must_be_nonempty_and_fit)
{
	char dest[CMDLINE_STRING_MAX] = "";
	char value[CMDLINE_STRING_MAX + 1];
	char reason[ERR_SIZE] = "";
	struct cmdline_option opt = { "exit", "isa-debug", cmdline_parse_string, dest, 0, 0 };

	host_check(cmdline_parse_string(&opt, "isa-debug", reason, sizeof(reason)));
	host_check_str("isa-debug", dest);
	host_check(!cmdline_parse_string(&opt, "", reason, sizeof(reason)));
	host_check_str("needs a value: exit=isa-debug", reason);
	host_check(!cmdline_parse_string(&opt, NULL, reason, sizeof(reason)));

	memset(value, 'x', CMDLINE_STRING_MAX - 1);
	value[CMDLINE_STRING_MAX - 1] = '\0';
	host_check(cmdline_parse_string(&opt, value, reason, sizeof(reason)));
	host_check_str(value, dest);
	value[CMDLINE_STRING_MAX - 1] = 'x';
	value[CMDLINE_STRING_MAX] = '\0';
	host_check(!cmdline_parse_string(&opt, value, reason, sizeof(reason)));
	host_check_str("value is 256 characters long; the limit is 255", reason);
}

HOST_TEST(cmdline_console_takes_a_uart_name_or_port_and_a_baud_dividing_115200)
{
	static const struct {
		const char *value;
		bool accepted;
		uint16_t port;
		uint32_t baud;
		const char *reason;
	} cases[] = {
		{ "ttyS0", true, 0x3f8, 115200, NULL },
		{ "ttyS1", true, 0x2f8, 115200, NULL },
		{ "ttyS2", true, 0x3e8, 115200, NULL },
		{ "ttyS3", true, 0x2e8, 115200, NULL },
		{ "ttyS1,9600", true, 0x2f8, 9600, NULL },
		{ "ttyS0,2", true, 0x3f8, 2, NULL }, /* divisor 57600: the slowest that fits */
		{ "ttyS0,1", false, 0, 0,
		  "baud '1' needs divisor 115200; the 16550's is at most 65535" },
		{ "0x3f8", true, 0x3f8, 115200, NULL },
		{ "0x2F8,57600", true, 0x2f8, 57600, NULL },
		{ "0xfff8,115200", true, 0xfff8, 115200, NULL }, /* registers up to 0xffff */
		{ "0xfff9", false, 0, 0,
		  "port '0xfff9' is not ttyS0..ttyS3, 0x1..0xfff8, mmio,ADDR or mmio32,ADDR" },
		{ "0xffff,115200", false, 0, 0, NULL },
		{ "0x1", true, 1, 115200, NULL },
		{ "ttyS4", false, 0, 0,
		  "port 'ttyS4' is not ttyS0..ttyS3, 0x1..0xfff8, mmio,ADDR or mmio32,ADDR" },
		{ "ttys0", false, 0, 0, NULL },
		{ "ttyS", false, 0, 0, NULL },
		{ "ttyS00", false, 0, 0, NULL },
		{ "COM1", false, 0, 0, NULL },
		{ "1016", false, 0, 0, NULL },
		{ "0x", false, 0, 0, NULL },
		{ "0x0", false, 0, 0, NULL },
		{ "0x10000", false, 0, 0,
		  "port '0x10000' is not ttyS0..ttyS3, 0x1..0xfff8, mmio,ADDR or mmio32,ADDR" },
		{ "0x3fg", false, 0, 0, NULL },
		{ ",9600", false, 0, 0,
		  "port '' is not ttyS0..ttyS3, 0x1..0xfff8, mmio,ADDR or mmio32,ADDR" },
		{ "ttyS0,", false, 0, 0, NULL },
		{ "ttyS0,0", false, 0, 0, NULL },
		{ "ttyS0,9601", false, 0, 0,
		  "baud '9601' is not a divisor of 115200, such as 115200 or 9600" },
		{ "ttyS0,230400", false, 0, 0, NULL },
		{ "ttyS0,-9600", false, 0, 0, NULL },
		{ "ttyS0,0x2580", false, 0, 0, NULL },
		{ "ttyS0,9600,1", false, 0, 0, NULL },
		{ "", false, 0, 0, "needs a value: console=ttyS0|ttyS1|0xPORT[,BAUD]" },
		{ NULL, false, 0, 0, NULL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct console_config config = { 0 };
		struct cmdline_option opt = {
			"console", "ttyS0|ttyS1|0xPORT[,BAUD]", cmdline_parse_console, &config, 0, 0
		};
		char reason[ERR_SIZE] = "";
		bool accepted = cmdline_parse_console(&opt, cases[i].value, reason, sizeof(reason));

		host_checkf(accepted == cases[i].accepted,
			    "console=%s: expected %s (reason \"%s\")",
			    cases[i].value ? cases[i].value : "(no value)",
			    cases[i].accepted ? "accepted" : "rejected", reason);
		if (accepted && cases[i].accepted) {
			host_check_eq_u64(cases[i].port, config.port);
			host_check_eq_u64(cases[i].baud, config.baud);
		}
		if (!accepted) {
			host_check(reason[0] != '\0');
			host_check_eq_u64(0, config.port); /* nothing stored on failure */
			if (cases[i].reason != NULL)
				host_check_str(cases[i].reason, reason);
		}
	}
}

HOST_TEST(cmdline_globs_are_nonempty_lists_of_name_characters)
{
	static const struct {
		const char *value;
		bool accepted;
		const char *reason;
	} cases[] = {
		{ "arch.*", true, NULL },
		{ "arch.*,boot.long_mode_is_active", true, NULL },
		{ "*", true, NULL },
		{ "a?c,*.x,Z_9", true, NULL },
		{ "", false, "needs a value: tests=GLOB[,GLOB...]" },
		{ NULL, false, "needs a value: tests=GLOB[,GLOB...]" },
		{ ",", false, "',' has an empty glob" },
		{ "a,", false, "'a,' has an empty glob" },
		{ ",a", false, NULL },
		{ "a,,b", false, "'a,,b' has an empty glob" },
		{ "arch#1", false, "'arch#1' has '#'; globs use only [A-Za-z0-9_.*?]" },
		{ "arch-x", false, NULL },
		{ "[ab]", false, NULL },
		{ "a b", false, "'a b' has byte 0x20; globs use only [A-Za-z0-9_.*?]" },
		{ "a\x01", false, NULL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char dest[CMDLINE_STRING_MAX] = "untouched";
		struct cmdline_option opt = {
			"tests", "GLOB[,GLOB...]", cmdline_parse_globs, dest, 0, 0
		};
		char reason[ERR_SIZE] = "";
		bool accepted = cmdline_parse_globs(&opt, cases[i].value, reason, sizeof(reason));

		host_checkf(accepted == cases[i].accepted, "tests=%s: expected %s (reason \"%s\")",
			    cases[i].value ? cases[i].value : "(no value)",
			    cases[i].accepted ? "accepted" : "rejected", reason);
		if (accepted && cases[i].accepted)
			host_check_str(cases[i].value, dest);
		if (!accepted) {
			host_check_str("untouched", dest);
			if (cases[i].reason != NULL)
				host_check_str(cases[i].reason, reason);
		}
	}
}

HOST_TEST(cmdline_globs_must_fit_the_string_limit)
{
	char dest[CMDLINE_STRING_MAX];
	char value[CMDLINE_STRING_MAX + 1];
	char reason[ERR_SIZE];
	struct cmdline_option opt = { "tests", "GLOB", cmdline_parse_globs, dest, 0, 0 };

	memset(value, 'a', CMDLINE_STRING_MAX - 1);
	value[CMDLINE_STRING_MAX - 1] = '\0';
	host_check(cmdline_parse_globs(&opt, value, reason, sizeof(reason)));
	host_check_str(value, dest);
	value[CMDLINE_STRING_MAX - 1] = 'a';
	value[CMDLINE_STRING_MAX] = '\0';
	host_check(!cmdline_parse_globs(&opt, value, reason, sizeof(reason)));
	host_check_str("value is 256 characters long; the limit is 255", reason);
}
