/* SPDX-License-Identifier: MIT */
/* Host tests of ds/ on CPUs without BTS or without PEBS: attaches they cannot take. */
#include <stddef.h>

#include "ds/ds.h"
#include "ds/records.h"
#include "tests/host/shim/shim.h"

#define TASK_A 1

static void check_unsupported(enum ds_error error, const struct ds_target *target)
{
	host_check_str(ds_error_name(DS_ERROR_UNSUPPORTED), ds_error_name(error));
	shim_check_no_writes();
	host_check_eq_u64(0, shim_pages_out());
	host_check(ds_area_get(target) == NULL);
}

/*
 * kvm_pebs: IA32_MISC_ENABLE.BTS_UNAVAILABLE is set and DEBUGCTL.TR/BTS raise #GP (KVM). ds.h
 * promises that a failed attach changes nothing, and ds_pebs_config_valid() that what the CPU
 * cannot take is "refused here rather than met as a #GP under ds_lock"; BTS is not refused.
 */
SHIM_TEST(ds_host_attach_bts_is_refused_where_bts_is_unavailable, "kvm_pebs")
{
	struct ds_target a = { false, TASK_A }, self = { false, 0 };
	struct ds_bts_config config = { .records = 64, .circular = true };
	enum ds_error error;

	shim_boot();
	host_check_str("IA32_MISC_ENABLE.BTS_UNAVAILABLE=1", ds_support()->bts_reason);
	/* A task that is not running: the #GP would come at its switch-in, under sched_lock. */
	error = ds_attach_bts(&a, &config);
	check_unsupported(error, &a);
	if (error == DS_OK)
		ds_detach(&a, DS_USER_BTS);
	/* The running task: DEBUGCTL is written at once. */
	check_unsupported(ds_attach_bts(&self, &config), &self);
	shim_check_clean();
}

/* The same for PEBS: IA32_MISC_ENABLE.PEBS_UNAVAILABLE, and IA32_PEBS_ENABLE raises #GP. */
SHIM_TEST(ds_host_attach_pebs_is_refused_where_pebs_is_unavailable, "icelake,baseline:0,pebs:0")
{
	struct ds_target self = { false, 0 };
	struct ds_pebs_config config = {
		.format = PEBS_FORMAT_0,
		.record_size = PEBS_FORMAT_0_SIZE,
		.records = 16,
		.threshold_records = 1,
		.enable = 1,
	};

	shim_boot();
	host_check_str("IA32_MISC_ENABLE.PEBS_UNAVAILABLE=1", ds_support()->pebs_reason);
	check_unsupported(ds_attach_pebs(&self, &config), &self);
	shim_check_clean();
}
