/* SPDX-License-Identifier: MIT */
/* Host tests of console_fresh_line(): a line break the sink gets and the CRC never counts. */
#include <stdint.h>
#include <string.h>

#include "lib/console.h"
#include "tests/host/console_capture.h"
#include "tests/host/host_test.h"

static unsigned int guard_entries, guard_exits;

static unsigned long count_enter(void)
{
	guard_entries++;
	return 7;
}

static void count_leave(unsigned long state)
{
	guard_exits += state == 7;
}

HOST_TEST(console_fresh_line_reaches_the_sink_outside_the_crc_and_the_line_count)
{
	static const char first[] = "KTAP version 1\n";

	console_capture_start();
	console_fresh_line();
	console_write(first, strlen(first));
	host_check_eq_u64(1 + strlen(first), console_capture_length());
	host_check(memcmp(console_capture_text(), "\nKTAP version 1\n", 1 + strlen(first)) == 0);
	/* zlib.crc32(b"KTAP version 1\n"): the kernel's line only. */
	host_check_eq_u64(0x0874fc0a, console_crc32());
	host_check_eq_u64(1, console_lines());
}

HOST_TEST(console_fresh_line_is_one_critical_section)
{
	console_capture_start();
	guard_entries = guard_exits = 0;
	console_set_guard(count_enter, count_leave);
	console_fresh_line();
	console_set_guard(NULL, NULL);
	host_check_eq_u64(1, guard_entries);
	host_check_eq_u64(1, guard_exits);
	host_check_eq_u64(1, console_capture_length());
}
