/* SPDX-License-Identifier: MIT */
/* KTAP version 1 emitter (Linux Documentation/dev-tools/ktap.rst), one line per call. */
#ifndef LIB_KTAP_H
#define LIB_KTAP_H

#include <stdarg.h>
#include <stdbool.h>

/*
 * depth is the nesting level: 0 for the top level, 1 inside a suite; each level indents by four
 * spaces. Every call writes whole lines through console_write(). Text arguments have any
 * newline replaced by a space, so one call is always one line.
 */
enum ktap_result {
	KTAP_PASS,
	KTAP_FAIL,
	KTAP_SKIP,
	KTAP_XFAIL, /* a known defect of the platform occurred: "ok" (kselftest's XFAIL) */
	KTAP_XPASS, /* a known defect did not occur: "not ok", so every reader sees it (strict) */
};

void ktap_version(unsigned int depth);
void ktap_plan(unsigned int depth, unsigned int count);
void ktap_subtest(unsigned int depth, const char *name);
/*
 * "ok N name", "not ok N name", "ok N name # SKIP reason", "ok N name # XFAIL reason" or
 * "not ok N name # XPASS reason". reason is used only with a directive.
 */
void ktap_result(unsigned int depth, unsigned int number, enum ktap_result result, const char *name,
		 const char *reason);
void ktap_diag(unsigned int depth, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ktap_vdiag(unsigned int depth, const char *fmt, va_list args)
	__attribute__((format(printf, 2, 0)));
void ktap_bail_out(const char *reason);
/* The final line: "# switchyard-end crc32=0x... lines=N" over everything before it. */
void ktap_end(void);

/* True when name is a valid test or suite name: [A-Za-z0-9_]+. */
bool ktap_name_is_valid(const char *name);

#endif
