/* SPDX-License-Identifier: MIT */
/* KTAP version 1 emitter. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "lib/console.h"
#include "lib/format.h"
#include "lib/ktap.h"

#define KTAP_LINE_MAX 512
#define KTAP_INDENT 4

/*
 * Write one line: indentation, prefix, then fmt formatted in place with newlines flattened, then
 * '\n'. Formatted once, straight into the line: each pass over a line's bytes costs where every
 * guest instruction does (docs/platforms.md, KVM-PVM).
 */
static void ktap_vline(unsigned int depth, const char *prefix, const char *fmt, va_list args)
{
	char line[KTAP_LINE_MAX];
	size_t length = 0, start;

	for (unsigned int i = 0; i < depth * KTAP_INDENT && length < sizeof(line) - 1; i++)
		line[length++] = ' ';
	for (; *prefix && length < sizeof(line) - 1; prefix++)
		line[length++] = *prefix;
	start = length;
	length += (size_t)vformat(line + start, sizeof(line) - start, fmt, args);
	if (length > sizeof(line) - 1)
		length = sizeof(line) - 1; /* vformat returns what it would have written */
	for (size_t i = start; i < length; i++)
		if (line[i] == '\n' || line[i] == '\r')
			line[i] = ' ';
	line[length++] = '\n';
	console_write(line, length);
}

static void ktap_linef(unsigned int depth, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void ktap_linef(unsigned int depth, const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	ktap_vline(depth, "", fmt, args);
	va_end(args);
}

static void ktap_line(unsigned int depth, const char *text)
{
	ktap_linef(depth, "%s", text);
}

void ktap_version(unsigned int depth)
{
	ktap_line(depth, "KTAP version 1");
}

void ktap_plan(unsigned int depth, unsigned int count)
{
	ktap_linef(depth, "1..%u", count);
}

void ktap_subtest(unsigned int depth, const char *name)
{
	ktap_linef(depth, "# Subtest: %s", name);
}

void ktap_result(unsigned int depth, unsigned int number, enum ktap_result result, const char *name,
		 const char *reason)
{
	/* The result word, and the directive that follows "# " (docs/output.md). */
	static const struct {
		const char *word;
		const char *directive;
	} forms[] = {
		[KTAP_PASS] = { "ok", NULL }, /* passed */
		[KTAP_FAIL] = { "not ok", NULL }, /* failed */
		[KTAP_SKIP] = { "ok", "SKIP" }, /* skipped, with the reason */
		[KTAP_XFAIL] = { "ok", "XFAIL" }, /* as kselftest's ksft_test_result_xfail() */
		[KTAP_XPASS] = { "not ok", "XPASS" }, /* strict: kselftest's xpass says "ok" */
	};

	if (forms[result].directive)
		ktap_linef(depth, "%s %u %s # %s %s", forms[result].word, number, name,
			   forms[result].directive, reason && *reason ? reason : "no reason given");
	else
		ktap_linef(depth, "%s %u %s", forms[result].word, number, name);
}

void ktap_diag(unsigned int depth, const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	ktap_vline(depth, "# ", fmt, args);
	va_end(args);
}

void ktap_vdiag(unsigned int depth, const char *fmt, va_list args)
{
	ktap_vline(depth, "# ", fmt, args);
}

void ktap_bail_out(const char *reason)
{
	ktap_linef(0, "Bail out! %s", reason);
}

void ktap_end(void)
{
	uint32_t crc = console_crc32();
	unsigned long lines = console_lines();

	ktap_linef(0, "# switchyard-end crc32=0x%08x lines=%lu", crc, lines);
}

bool ktap_name_is_valid(const char *name)
{
	if (!*name)
		return false;
	for (; *name; name++) {
		char c = *name;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_'))
			return false;
	}
	return true;
}
