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

/* Write one line: indentation, then text with newlines flattened, then '\n'. */
static void ktap_line(unsigned int depth, const char *text)
{
	char line[KTAP_LINE_MAX];
	size_t length = 0;

	for (unsigned int i = 0; i < depth * KTAP_INDENT && length < sizeof(line) - 1; i++)
		line[length++] = ' ';
	for (; *text && length < sizeof(line) - 1; text++)
		line[length++] = (*text == '\n' || *text == '\r') ? ' ' : *text;
	line[length++] = '\n';
	console_write(line, length);
}

static void ktap_linef(unsigned int depth, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void ktap_linef(unsigned int depth, const char *fmt, ...)
{
	char text[KTAP_LINE_MAX];
	va_list args;

	va_start(args, fmt);
	vformat(text, sizeof(text), fmt, args);
	va_end(args);
	ktap_line(depth, text);
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
	char text[KTAP_LINE_MAX];
	va_list args;

	text[0] = '#';
	text[1] = ' ';
	va_start(args, fmt);
	vformat(text + 2, sizeof(text) - 2, fmt, args);
	va_end(args);
	ktap_line(depth, text);
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
