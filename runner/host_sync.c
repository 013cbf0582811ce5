/* SPDX-License-Identifier: MIT */
/* host.sync: the kernel waits at a label until the harness has read the host's counters. */
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/cpu.h"
#include "arch/x86/tsc.h"
#include "lib/cmdline.h"
#include "lib/report.h"
#include "platform/pc/serial.h"
#include "runner/host_sync.h"

#define HOST_SYNC_LIMIT_MS 5000
#define HOST_SYNC_POLL_MS 1

static bool enabled;

CMDLINE_OPTION(option_host_sync, .name = "host.sync", .parse = cmdline_parse_flag,
	       .dest = &enabled);

bool host_sync_enabled(void)
{
	return enabled;
}

bool host_sync(const char *label)
{
	uint64_t start, poll;
	uint8_t byte;

	if (!enabled)
		return true;
	while (serial_read_byte(&byte))
		; /* a late answer to an earlier label */
	report_diag("host-sync %s", label);
	start = rdtsc_ordered();
	poll = tsc_cycles_from_ms(HOST_SYNC_POLL_MS);
	while (rdtsc_ordered() - start < tsc_cycles_from_ms(HOST_SYNC_LIMIT_MS)) {
		uint64_t next = rdtsc_ordered() + poll;

		if (serial_read_byte(&byte))
			return true;
		while (rdtsc_ordered() < next)
			cpu_relax();
	}
	report_diag("host-sync %s: no answer from the harness in %u ms", label, HOST_SYNC_LIMIT_MS);
	return false;
}
