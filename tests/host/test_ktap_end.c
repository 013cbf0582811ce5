/* SPDX-License-Identifier: MIT */
/* Host tests of ktap_end(): the final line's CRC and line count over everything before it. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lib/console.h"
#include "lib/crc32.h"
#include "lib/ktap.h"
#include "tests/host/console_capture.h"
#include "tests/host/host_test.h"

HOST_TEST(ktap_end_of_a_known_log_has_a_known_crc)
{
	console_capture_start();
	ktap_version(0);
	ktap_plan(0, 0);
	ktap_end();
	/* zlib.crc32(b"KTAP version 1\n1..0\n") is 0x0aeff11b: the zero must be printed. */
	console_capture_check("KTAP version 1\n"
			      "1..0\n"
			      "# switchyard-end crc32=0x0aeff11b lines=2\n");

	console_capture_start();
	ktap_version(0);
	ktap_diag(0, "switchyard 0.1 (x86-64)");
	ktap_plan(0, 1);
	ktap_version(1);
	ktap_subtest(1, "arch");
	ktap_plan(1, 2);
	ktap_result(1, 1, KTAP_PASS, "first_test", NULL);
	ktap_diag(1, "reason");
	ktap_result(1, 2, KTAP_FAIL, "second_test", NULL);
	ktap_result(0, 1, KTAP_FAIL, "arch", NULL);
	ktap_end();
	console_capture_check("KTAP version 1\n"
			      "# switchyard 0.1 (x86-64)\n"
			      "1..1\n"
			      "    KTAP version 1\n"
			      "    # Subtest: arch\n"
			      "    1..2\n"
			      "    ok 1 first_test\n"
			      "    # reason\n"
			      "    not ok 2 second_test\n"
			      "not ok 1 arch\n"
			      "# switchyard-end crc32=0x1d1f4125 lines=10\n");
}

HOST_TEST(ktap_end_pads_the_crc_to_eight_digits)
{
	console_capture_start();
	ktap_end();
	console_capture_check("# switchyard-end crc32=0x00000000 lines=0\n");

	console_capture_start();
	ktap_diag(0, "pad 216");
	ktap_end();
	/* zlib.crc32(b"# pad 216\n") */
	console_capture_check("# pad 216\n"
			      "# switchyard-end crc32=0x00662169 lines=1\n");
}

HOST_TEST(ktap_end_covers_every_byte_before_it)
{
	char expected[128];
	const char *text;
	const char *final;
	uint32_t crc;

	console_capture_start();
	ktap_version(0);
	ktap_diag(0, "cmdline: tests=%s seed=%d", "arch.*", 7);
	ktap_plan(0, 3);
	for (unsigned int i = 1; i <= 3; i++)
		ktap_result(0, i, i == 2 ? KTAP_SKIP : KTAP_PASS, "test_name", "why");
	ktap_bail_out("unexpected #GP");
	ktap_end();

	text = console_capture_text();
	final = strstr(text, "# switchyard-end");
	if (!host_check(final != NULL))
		return;
	crc = crc32_update(0, text, (size_t)(final - text));
	snprintf(expected, sizeof(expected), "# switchyard-end crc32=0x%08x lines=7\n", crc);
	host_check_str(expected, final);
	/* The final line is counted too, after it is written. */
	host_check_eq_u64(8, console_lines());
	host_check_eq_u64(crc32_update(0, text, console_capture_length()), console_crc32());
}
