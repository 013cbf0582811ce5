/* SPDX-License-Identifier: MIT */
/* Kernel command-line parsing against a table of options: pure, no hardware. */
#ifndef LIB_CMDLINE_H
#define LIB_CMDLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/uart.h"

#define CMDLINE_MAX 1024
#define CMDLINE_STRING_MAX 256

struct cmdline_option;

/*
 * Parse one option's value into opt->dest. value is NULL when the word had no '='
 * ("list"), and "" for "tests=". Return true on success; on failure write a one-line
 * reason to err (without the option name: the caller adds it) and return false.
 */
typedef bool (*cmdline_parser)(const struct cmdline_option *opt, const char *value, char *err,
			       size_t err_size);

struct cmdline_option {
	const char *name; /* "tests", "dr.lazy": matched exactly against the text before '=' */
	const char *syntax; /* value syntax for the usage line, "GLOB[,GLOB...]"; NULL for a flag */
	cmdline_parser parse;
	void *dest;
	uint64_t min,
		max; /* inclusive range, for cmdline_parse_u64 and cmdline_parse_duration_ms */
};

/*
 * CMDLINE_OPTION(identifier, .name = ..., ...) adds an option to the kernel command line from
 * any subsystem; the parser sees every option registered in section .cmdline_options.
 */
#define CMDLINE_OPTION(identifier, ...)               \
	static const struct cmdline_option identifier \
		__attribute__((used, section(".cmdline_options"), aligned(8))) = { __VA_ARGS__ }

/* dest: bool. Accepts only the bare word; "list=1" is an error. */
bool cmdline_parse_flag(const struct cmdline_option *opt, const char *value, char *err,
			size_t err_size);
/* dest: bool. Accepts 0 or 1. */
bool cmdline_parse_bool(const struct cmdline_option *opt, const char *value, char *err,
			size_t err_size);
/* dest: uint64_t. Decimal or 0x-prefixed hex, no sign, no overflow, within [min, max]. */
bool cmdline_parse_u64(const struct cmdline_option *opt, const char *value, char *err,
		       size_t err_size);
/* dest: uint64_t milliseconds. "N" and "Ns" are seconds, "Nms" milliseconds; within [min, max] ms.
 */
bool cmdline_parse_duration_ms(const struct cmdline_option *opt, const char *value, char *err,
			       size_t err_size);
/* dest: char[CMDLINE_STRING_MAX]. Non-empty, shorter than CMDLINE_STRING_MAX. */
bool cmdline_parse_string(const struct cmdline_option *opt, const char *value, char *err,
			  size_t err_size);

/*
 * dest: struct console_config, with .given set. "ttyS0" (0x3f8), "ttyS1" (0x2f8), "ttyS2" (0x3e8),
 * "ttyS3" (0x2e8) or "0xPORT" up to 0xfff8 (the UART's eight registers stay below 0x10000); or,
 * as Linux's earlycon uart8250 takes them, "mmio,ADDR" (byte registers) or "mmio32,ADDR" (32-bit
 * registers 4 bytes apart, ADDR aligned to 4), ADDR a nonzero physical address in decimal or
 * 0x-prefixed hex. Each optionally followed by ",BAUD" where 115200 % BAUD == 0 and the divisor
 * 115200 / BAUD fits the 16-bit latch; 115200 when not given. Whether a 16550 answers there,
 * and whether the address can be reached, is for the caller to find out.
 */
bool cmdline_parse_console(const struct cmdline_option *opt, const char *value, char *err,
			   size_t err_size);

/* dest: char[CMDLINE_STRING_MAX]. Comma-separated globs of [A-Za-z0-9_.*?], none empty. */
bool cmdline_parse_globs(const struct cmdline_option *opt, const char *value, char *err,
			 size_t err_size);

/*
 * Parse a whole command line. Words are separated by spaces or tabs. The first word is the boot
 * file name or URI when it contains '/', '.' or ':' and no '='; it is skipped and, when file_name
 * is not NULL, copied there (char[CMDLINE_STRING_MAX], "" when there is none). A first word that
 * is exactly an option's name is that option, not a file name. Every other word must be NAME or
 * NAME=VALUE for an option in the table, each at most once. Parsers run in the order the words
 * appear, every one of them even after an error, so that a rejected line still says how to exit
 * (exit=). On error write the first one, "option 'NAME': reason" (or "unknown option 'WORD'",
 * "option 'NAME' given twice"), escaped as cmdline_escape() does, to err and return false: the
 * caller must then not use what the line set. Lines of CMDLINE_MAX or more characters are
 * rejected whole, and set nothing.
 */
bool cmdline_parse(const char *line, const struct cmdline_option *options, size_t count,
		   char *file_name, char *err, size_t err_size);

/*
 * Copy text into dest (size bytes, NUL-terminated) with every byte outside printable ASCII
 * written as \xHH and '\' as \\, so that a line echoed to the console cannot carry terminal
 * escape sequences. Stops before an escape that would not fit. Returns the length written.
 */
size_t cmdline_escape(char *dest, size_t size, const char *text);

/* Write "name=SYNTAX name ..." for every option, separated by single spaces, into buf. */
void cmdline_usage(const struct cmdline_option *options, size_t count, char *buf, size_t size);

#endif
