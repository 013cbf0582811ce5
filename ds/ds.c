/* SPDX-License-Identifier: MIT */
/* ds/'s start: what the boot CPU supports, and each other CPU's PEBS counters. */
#include "ds/ds.h"
#include "ds/arch_pebs_context.h"
#include "ds/detect.h"
#include "lib/ktap.h"

void ds_init(void)
{
	const struct ds_support *support;

	ds_detect();
	ds_arch_pebs_init_cpu();
	support = ds_support();
	ktap_diag(0, "ds: bts=%s pebs=%s pebs_format=%u pebs_arch_regs=%u arch_pebs=%s",
		  support->bts_reason[0] ? support->bts_reason : "yes",
		  support->pebs_reason[0] ? support->pebs_reason : "yes", support->pebs_format,
		  support->pebs_arch_regs ? 1u : 0u,
		  support->arch_pebs.usable ? "yes" : support->arch_pebs.reason);
}

void ds_init_cpu(void)
{
	ds_detect_cpu();
	ds_arch_pebs_init_cpu();
}
