/* SPDX-License-Identifier: MIT */
/* ds/'s start: what the boot CPU supports, and each other CPU's PEBS counters. */
#include "ds/ds.h"
#include "ds/detect.h"
#include "lib/ktap.h"

void ds_init(void)
{
	const struct ds_support *support;

	ds_detect();
	support = ds_support();
	ktap_diag(0, "ds: bts=%s pebs=%s pebs_format=%u pebs_arch_regs=%u",
		  support->bts_reason[0] ? support->bts_reason : "yes",
		  support->pebs_reason[0] ? support->pebs_reason : "yes", support->pebs_format,
		  support->pebs_arch_regs ? 1u : 0u);
}

void ds_init_cpu(void)
{
	ds_detect_cpu();
}
