/* SPDX-License-Identifier: MIT */
/* Host tests of lib/console.c: the sink, the running CRC and line count, the guard, the reset. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "lib/console.h"
#include "lib/crc32.h"
#include "tests/host/console_capture.h"
#include "tests/host/host_test.h"

static void write_text(const char *text)
{
	console_write(text, strlen(text));
}

HOST_TEST(console_counts_crc_and_lines_of_everything_written)
{
	console_capture_start();
	host_check_eq_u64(0, console_crc32());
	host_check_eq_u64(0, console_lines());
	write_text("KTAP version 1\n# switchyard 0.1 (x86-64)\n");
	write_text("1..");
	write_text("0\n");
	/* zlib.crc32(b"KTAP version 1\n# switchyard 0.1 (x86-64)\n1..0\n") */
	host_check_eq_u64(0xf98d079b, console_crc32());
	host_check_eq_u64(3, console_lines());
}

HOST_TEST(console_sink_receives_exactly_the_bytes_written_in_order)
{
	static const char bytes[] = { 'a', '\0', 'b', '\n', (char)0xff };

	console_capture_start();
	console_write("xyz", 2);
	console_write(bytes, sizeof(bytes));
	console_write("tail", 0);
	host_check_eq_u64(2 + sizeof(bytes), console_capture_length());
	host_check(memcmp(console_capture_text(), "xy", 2) == 0);
	host_check(memcmp(console_capture_text() + 2, bytes, sizeof(bytes)) == 0);
	host_check_eq_u64(crc32_update(0, console_capture_text(), console_capture_length()),
			  console_crc32());
	host_check_eq_u64(1, console_lines());
}

HOST_TEST(console_counts_only_line_feeds_as_lines)
{
	console_capture_start();
	write_text("no line feed\r");
	host_check_eq_u64(0, console_lines());
	write_text("\n\n\n");
	host_check_eq_u64(3, console_lines());
	write_text("a\r\nb");
	host_check_eq_u64(4, console_lines());
}

HOST_TEST(console_without_a_sink_still_counts)
{
	console_capture_start();
	console_set_sink(NULL);
	write_text("a\r\nb");
	/* zlib.crc32(b"a\r\nb") */
	host_check_eq_u64(0xf35534d7, console_crc32());
	host_check_eq_u64(1, console_lines());
	host_check_eq_u64(0, console_capture_length());
}

HOST_TEST(console_reset_starts_counting_afresh)
{
	console_capture_start();
	write_text("first line\nsecond line\n");
	console_reset();
	host_check_eq_u64(0, console_crc32());
	host_check_eq_u64(0, console_lines());
	write_text("a");
	host_check_eq_u64(0xe8b7be43, console_crc32()); /* zlib.crc32(b"a") */
	host_check_eq_u64(0, console_lines());
	write_text("\n");
	host_check_eq_u64(1, console_lines());
}

/* What the guard saw: calls, nesting and the token passed from enter() to leave(). */
static struct {
	unsigned int enters;
	unsigned int leaves;
	bool inside;
	bool bad_nesting;
	bool sink_outside_guard;
	unsigned long last_token;
	unsigned long wrong_token;
} guard_log;

static unsigned long guard_enter(void)
{
	if (guard_log.inside)
		guard_log.bad_nesting = true;
	guard_log.inside = true;
	guard_log.enters++;
	guard_log.last_token = 0x1000 + guard_log.enters;
	return guard_log.last_token;
}

static void guard_leave(unsigned long token)
{
	if (!guard_log.inside)
		guard_log.bad_nesting = true;
	if (token != guard_log.last_token)
		guard_log.wrong_token++;
	guard_log.inside = false;
	guard_log.leaves++;
}

static void guarded_sink(const char *text, size_t length)
{
	(void)text;
	(void)length;
	if (!guard_log.inside)
		guard_log.sink_outside_guard = true;
}

HOST_TEST(console_guard_brackets_every_write_and_gets_its_token_back)
{
	console_capture_start();
	memset(&guard_log, 0, sizeof(guard_log));
	console_set_sink(guarded_sink);
	console_set_guard(guard_enter, guard_leave);
	write_text("one\n");
	write_text("two\n");
	console_write("", 0);
	host_check_eq_u64(3, guard_log.enters);
	host_check_eq_u64(3, guard_log.leaves);
	host_check(!guard_log.inside);
	host_check(!guard_log.bad_nesting);
	host_check(!guard_log.sink_outside_guard);
	host_check_eq_u64(0, guard_log.wrong_token);
	host_check_eq_u64(2, console_lines());

	console_set_guard(NULL, NULL);
	write_text("three\n");
	host_check_eq_u64(3, guard_log.enters);
	host_check_eq_u64(3, guard_log.leaves);
	host_check_eq_u64(3, console_lines());
}
