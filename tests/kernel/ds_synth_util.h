/* SPDX-License-Identifier: MIT */
/* ds_synth suite helpers: targets, and the check that the synthetic producer can run. */
#ifndef TESTS_KERNEL_DS_SYNTH_UTIL_H
#define TESTS_KERNEL_DS_SYNTH_UTIL_H

#include "ds/ds.h"
#include "ds/synth.h"
#include "runner/test.h"
#include "sched/sched.h"

#define SYNTH_FROM 0x401000ull /* made-up branch addresses: the records are synthetic */
#define SYNTH_TO 0x402000ull

static inline struct ds_target task_target(const struct task *task)
{
	return (struct ds_target){ false, task->index, task->address_space };
}

static inline struct ds_target self_target(void)
{
	return task_target(sched_current());
}

static inline struct ds_target cpu_target(void)
{
	return (struct ds_target){ true, 0, 0 };
}

/* The producer stands in for a CPU without a Debug Store; with one, the real path runs. */
static inline void require_synthetic_backend(void)
{
	if (ds_get_backend() != DS_BACKEND_SYNTHETIC)
		test_skip("this CPU has a Debug Store: the hardware backend is active");
}

static inline void check_attached(enum ds_error error)
{
	if (error != DS_OK)
		test_abort("attach: %s", ds_error_name(error));
}

#endif
