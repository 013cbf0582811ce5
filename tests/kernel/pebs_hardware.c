/* SPDX-License-Identifier: MIT */
/* pebs suite: real PEBS records; runs on hardware (or KVM with PEBS passthrough), skips elsewhere.
 */
#include "ds/ds.h"
#include "runner/test.h"
#include "sched/sched.h"

/*
 * The PEBS tests need what the Debug Store needs, plus a programmed performance counter. The
 * counters are issue 6's (arch perfmon); until they exist, a CPU that has PEBS is reported as a
 * skip with that reason, never as a pass.
 */
static void require_pebs(void)
{
	if (ds_support()->pebs_reason[0])
		test_skip("%s", ds_support()->pebs_reason);
	test_skip("PEBS is present (format %u), but switchyard does not program counters yet",
		  ds_support()->pebs_format);
}

TEST(pebs, record_count_follows_the_counter_period)
{
	require_pebs();
}

TEST(pebs, bts_and_pebs_are_active_at_once_on_one_ds_area)
{
	require_pebs();
}

TEST(pebs, user_task_polling_the_index_sees_every_record)
{
	require_pebs();
}
