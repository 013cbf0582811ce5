/* SPDX-License-Identifier: MIT */
/* ds/'s steps of a task switch and of a task's exit (debugstate/ runs them in order). */
#include <stdbool.h>

#include "arch/x86/percpu.h"
#include "ds/activate.h"
#include "ds/arch_pebs_context.h"
#include "ds/context.h"
#include "ds/drain.h"
#include "ds/ds.h"
#include "ds/state.h"
#include "kernel/switch_hooks.h"

void ds_switch_out(const struct switch_task *prev, const struct switch_task *next)
{
	struct ds_context *context;

	(void)next;
	ds_lock_irqs_off();
	context = ds_context_for(prev->index);
	if (context && context == ds_context_cpu(this_cpu_index()))
		ds_credit_context(context, prev->index);
	ds_unlock_irqs_off();
}

void ds_switch_in(const struct switch_task *prev, const struct switch_task *next)
{
	(void)prev;
	ds_lock_irqs_off();
	ds_apply(ds_context_for(next->index));
	ds_unlock_irqs_off();
	ds_arch_pebs_switch_in(next);
}

void ds_task_exit(const struct switch_task *task)
{
	struct ds_target target = { false, task->index };

	ds_release_all(&target);
	ds_arch_pebs_release(task->index);
}
