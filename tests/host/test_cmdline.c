/* SPDX-License-Identifier: MIT */
/* Host tests of cmdline_parse and cmdline_usage over the kernel's option table. */
#include <stdint.h>
#include <string.h>

#include "lib/cmdline.h"
#include "tests/host/host_test.h"

#define OPTION_COUNT 7

/* The kernel's option table, pointing into one fixture so that tests share no state. */
struct cmdline_fixture {
	struct cmdline_option options[OPTION_COUNT];
	char tests[CMDLINE_STRING_MAX];
	bool list;
	uint64_t seed;
	uint64_t timeout_ms;
	struct console_config console;
	char exit_method[CMDLINE_STRING_MAX];
	bool dr_lazy;
	char file_name[CMDLINE_STRING_MAX];
	char err[256];
};

static void fixture_init(struct cmdline_fixture *f)
{
	memset(f, 0, sizeof(*f));
	f->options[0] = (struct cmdline_option){
		"tests", "GLOB[,GLOB...]", cmdline_parse_globs, f->tests, 0, 0
	};
	f->options[1] = (struct cmdline_option){ "list", NULL, cmdline_parse_flag, &f->list, 0, 0 };
	f->options[2] =
		(struct cmdline_option){ "seed", "N", cmdline_parse_u64, &f->seed, 0, UINT64_MAX };
	f->options[3] = (struct cmdline_option){ "timeout",	 "D", cmdline_parse_duration_ms,
						 &f->timeout_ms, 1,   600000 };
	f->options[4] = (struct cmdline_option){
		"console", "ttyS0|ttyS1|0xPORT[,BAUD]", cmdline_parse_console, &f->console, 0, 0
	};
	f->options[5] = (struct cmdline_option){ "exit",	 "isa-debug", cmdline_parse_string,
						 f->exit_method, 0,	      0 };
	f->options[6] =
		(struct cmdline_option){ "dr.lazy", "0|1", cmdline_parse_bool, &f->dr_lazy, 0, 0 };
	f->seed = 12345; /* a default, to show what a failed or absent option leaves alone */
	strcpy(f->file_name, "stale");
	strcpy(f->err, "stale");
}

static bool fixture_parse(struct cmdline_fixture *f, const char *line)
{
	return cmdline_parse(line, f->options, OPTION_COUNT, f->file_name, f->err, sizeof(f->err));
}

/* Lines that parse; the per-option results are checked in the tests below. */
static const struct {
	const char *line;
	const char *file_name;
} accepted_lines[] = {
	{ "", "" },
	{ " \t  \t", "" },
	{ "list", "" },
	{ "switchyard.elf", "switchyard.elf" },
	{ "build/switchyard32.elf tests=a.*", "build/switchyard32.elf" },
	{ "tftp://10.0.2.2/k.elf list", "tftp://10.0.2.2/k.elf" },
	{ "(hd0,msdos1)/boot/k", "(hd0,msdos1)/boot/k" },
	{ "  \tk.elf\t\tlist  ", "k.elf" },
	{ "tests=arch.*,boot.* list seed=0x10 timeout=250ms console=ttyS1,9600 exit=isa-debug "
	  "dr.lazy=1",
	  "" },
};

HOST_TEST(cmdline_accepts_good_lines_and_reports_the_file_name)
{
	struct cmdline_fixture f;

	for (size_t i = 0; i < sizeof(accepted_lines) / sizeof(accepted_lines[0]); i++) {
		fixture_init(&f);
		host_checkf(fixture_parse(&f, accepted_lines[i].line), "\"%s\": rejected: %s",
			    accepted_lines[i].line, f.err);
		host_check_str(accepted_lines[i].file_name, f.file_name);
		host_check_str("", f.err);
	}
}

HOST_TEST(cmdline_sets_every_option_it_is_given)
{
	struct cmdline_fixture f;

	fixture_init(&f);
	host_check(fixture_parse(&f, "tests=arch.*,boot.* list seed=0x10 timeout=250ms "
				     "console=ttyS1,9600 exit=isa-debug dr.lazy=1"));
	host_check_str("arch.*,boot.*", f.tests);
	host_check(f.list);
	host_check_eq_u64(16, f.seed);
	host_check_eq_u64(250, f.timeout_ms);
	host_check_eq_u64(0x2f8, f.console.port);
	host_check_eq_u64(9600, f.console.baud);
	host_check_str("isa-debug", f.exit_method);
	host_check(f.dr_lazy);
}

HOST_TEST(cmdline_leaves_absent_options_alone)
{
	struct cmdline_fixture f;

	fixture_init(&f);
	host_check(fixture_parse(&f, "build/switchyard32.elf tests=a.*"));
	host_check_str("a.*", f.tests);
	host_check(!f.list);
	host_check_eq_u64(12345, f.seed);
	host_check_eq_u64(0, f.timeout_ms);
}

/* Lines that do not parse, and the exact error for each. */
static const struct {
	const char *line;
	const char *err;
} rejected_lines[] = {
	{ "lsit", "unknown option 'lsit'" },
	{ "switchyard.elf lsit", "unknown option 'lsit'" },
	{ "list switchyard.elf", "unknown option 'switchyard.elf'" },
	{ "k.elf=3", "unknown option 'k.elf=3'" },
	{ "bogus=1 list", "unknown option 'bogus=1'" },
	{ "=x", "unknown option '=x'" },
	{ "LIST", "unknown option 'LIST'" },
	{ "seed=1 seed=2", "option 'seed' given twice" },
	{ "list list", "option 'list' given twice" },
	{ "seed=1 list seed", "option 'seed' given twice" },
	{ "k.elf dr.lazy=0 dr.lazy=1", "option 'dr.lazy' given twice" },
	{ "list=1", "option 'list': takes no value; write just 'list'" },
	{ "list=", "option 'list': takes no value; write just 'list'" },
	{ "seed", "option 'seed': needs a value: seed=N" },
	{ "tests=", "option 'tests': needs a value: tests=GLOB[,GLOB...]" },
	{ "dr.lazy", "option 'dr.lazy': needs a value: dr.lazy=0|1" },
	{ "seed=18446744073709551616",
	  "option 'seed': '18446744073709551616' does not fit in 64 bits" },
	{ "timeout=0", "option 'timeout': '0' is out of range 1ms..600s" },
	{ "console=ttyS9", "option 'console': port 'ttyS9' is not ttyS0..ttyS3, 0x1..0xfff8, "
			   "mmio,ADDR or mmio32,ADDR" },
	{ "console=ttyS0,1",
	  "option 'console': baud '1' needs divisor 115200; the 16550's is at most 65535" },
	/* Bytes outside printable ASCII are echoed escaped, never raw (a terminal would act). */
	{ "\x1b[31mred", "unknown option '\\x1b[31mred'" },
	{ "a\\b\x7f\xff", "unknown option 'a\\\\b\\x7f\\xff'" },
	{ "seed=\x1b", "option 'seed': '\\x1b' is not a decimal or 0x-prefixed hex number" },
	{ "tests=a\x1b"
	  "b",
	  "option 'tests': 'a\\x1bb' has byte 0x1b; globs use only [A-Za-z0-9_.*?]" },
	{ "tests=a.*,", "option 'tests': 'a.*,' has an empty glob" },
	{ "seed=7=8", "option 'seed': '7=8' is not a decimal or 0x-prefixed hex number" },
};

HOST_TEST(cmdline_rejects_bad_lines_naming_the_option)
{
	struct cmdline_fixture f;

	for (size_t i = 0; i < sizeof(rejected_lines) / sizeof(rejected_lines[0]); i++) {
		fixture_init(&f);
		host_checkf(!fixture_parse(&f, rejected_lines[i].line), "\"%s\": accepted",
			    rejected_lines[i].line);
		host_check_str(rejected_lines[i].err, f.err);
	}
}

HOST_TEST(cmdline_runs_every_parser_in_order_and_reports_the_first_error)
{
	struct cmdline_fixture f;

	fixture_init(&f);
	host_check(!fixture_parse(&f, "seed=5 timeout=0 list bogus"));
	host_check_eq_u64(5, f.seed);
	host_check(f.list);
	host_check_str("option 'timeout': '0' is out of range 1ms..600s", f.err);
}

/* How a rejected line ends (exit=) must not depend on where the bad word stands. */
HOST_TEST(cmdline_parses_exit_after_a_bad_word)
{
	struct cmdline_fixture f;

	fixture_init(&f);
	host_check(!fixture_parse(&f, "k.elf bogus console=ttyS1 exit=isa-debug"));
	host_check_str("unknown option 'bogus'", f.err);
	host_check_str("isa-debug", f.exit_method);
	host_check_str("k.elf", f.file_name);
}

HOST_TEST(cmdline_escape_writes_bytes_outside_printable_ascii_as_hex)
{
	char small[8];
	char out[64];

	host_check_eq_u64(0, cmdline_escape(out, sizeof(out), ""));
	host_check_str("", out);
	host_check_eq_u64(12, cmdline_escape(out, sizeof(out), "tests=a.* ~!"));
	host_check_str("tests=a.* ~!", out);
	cmdline_escape(out, sizeof(out), "\x1b[2J\t\r\n\x7f\x80\xff");
	host_check_str("\\x1b[2J\\x09\\x0d\\x0a\\x7f\\x80\\xff", out);
	cmdline_escape(out, sizeof(out), "C:\\k");
	host_check_str("C:\\\\k", out);
	/* Only whole escapes: "ab" and the four bytes of \x1b take 7 with the NUL; in 6, "ab". */
	host_check_eq_u64(6, cmdline_escape(small, 7,
					    "ab\x1b"
					    "cd"));
	host_check_str("ab\\x1b", small);
	host_check_eq_u64(2, cmdline_escape(small, 6,
					    "ab\x1b"
					    "cd"));
	host_check_str("ab", small);
	small[0] = 'x';
	host_check_eq_u64(0, cmdline_escape(small, 0, "ab"));
	host_check_eq_u64('x', small[0]);
}

HOST_TEST(cmdline_rejects_overlong_lines_whole)
{
	static char line[CMDLINE_MAX + 1];
	struct cmdline_fixture f;

	/* CMDLINE_MAX - 1 characters: the longest line that is accepted. */
	memset(line, ' ', CMDLINE_MAX);
	memcpy(line, "list", 4);
	line[CMDLINE_MAX - 1] = '\0';
	fixture_init(&f);
	host_check(fixture_parse(&f, line));
	host_check(f.list);

	line[CMDLINE_MAX - 1] = ' ';
	line[CMDLINE_MAX] = '\0';
	fixture_init(&f);
	host_check(!fixture_parse(&f, line));
	host_check(!f.list);
	host_check_str("command line is 1024 characters or longer; the limit is 1023", f.err);
}

HOST_TEST(cmdline_truncates_a_long_file_name_and_error)
{
	char line[600];
	char err[16];
	struct cmdline_fixture f;

	memset(line, 'a', 500);
	memcpy(line, "tftp://", 7);
	strcpy(line + 500, " list");
	fixture_init(&f);
	host_check(fixture_parse(&f, line));
	host_check_eq_u64(CMDLINE_STRING_MAX - 1, strlen(f.file_name));
	host_check(strncmp(f.file_name, line, CMDLINE_STRING_MAX - 1) == 0);
	host_check(f.list);

	host_check(!cmdline_parse("lsit", f.options, OPTION_COUNT, NULL, err, sizeof(err)));
	host_check_str("unknown option ", err);
	host_check(cmdline_parse("k.elf list", f.options, OPTION_COUNT, NULL, err, sizeof(err)));
}

HOST_TEST(cmdline_usage_lists_every_option_with_its_syntax)
{
	struct cmdline_fixture f;
	char usage[512];
	char small[12];

	fixture_init(&f);
	cmdline_usage(f.options, OPTION_COUNT, usage, sizeof(usage));
	host_check_str("tests=GLOB[,GLOB...] list seed=N timeout=D "
		       "console=ttyS0|ttyS1|0xPORT[,BAUD] exit=isa-debug dr.lazy=0|1",
		       usage);

	cmdline_usage(f.options, OPTION_COUNT, small, sizeof(small));
	host_check_str("tests=GLOB[", small);
	cmdline_usage(f.options, 2, usage, sizeof(usage));
	host_check_str("tests=GLOB[,GLOB...] list", usage);
	cmdline_usage(f.options + 1, 1, usage, sizeof(usage));
	host_check_str("list", usage);
	cmdline_usage(f.options, 0, usage, sizeof(usage));
	host_check_str("", usage);

	small[0] = 'x';
	cmdline_usage(f.options, OPTION_COUNT, small, 0);
	host_check_eq_u64('x', small[0]);
}
