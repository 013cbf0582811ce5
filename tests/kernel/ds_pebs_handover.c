/* SPDX-License-Identifier: MIT */
/* ds suite: a PEBS user without its event yet is switched in after a sampler of its counter. */
#include <stdbool.h>

#include "ds/ds.h"
#include "pmu/pmu.h"
#include "runner/test.h"
#include "sched/sched.h"
#include "sched/task.h"
#include "tests/kernel/lib/ds_util.h"

#define PERIOD 100000 /* no overflow in the test: the writes alone are judged */

static volatile bool attached, sampled;

/* Attaches PEBS on GP counter 0 and, before adding its event, lets the sampler run. */
static void pebs_user(void *arg)
{
	struct ds_target target = self_target();
	struct ds_pebs_config config = pebs_config(16, 12, PERIOD);

	(void)arg;
	if (ds_attach_pebs(&target, &config) != DS_OK)
		return;
	attached = true;
	while (!sampled)
		sched_yield(); /* switched in again after the sampler: PEBS_ENABLE bit 0 set */
	check_eq(DS_OK, ds_detach(&target, DS_USER_PEBS));
}

/* An ordinary sampling event on GP counter 0: its select has INT (SDM EVTSEL.INT). */
static void sampler(void *arg)
{
	struct ds_target target = self_target();
	struct pmu_event event = { .event = INST_RETIRED, .kernel = true };

	(void)arg;
	while (!attached)
		sched_yield();
	check_eq(0, pmu_add_sampling_event_on(target.index, 0, &event, PERIOD));
	sampled = true;
	sched_yield(); /* to the PEBS user, with this select programmed */
	pmu_release(target.index);
}

/*
 * A task with a PEBS_ENABLE bit from ds/ but no event in pmu/ yet (between its attach and its
 * add, or between its release and its detach), switched in after a task that samples on the
 * same counter with INT: the switch must clear that select before ds/ sets PEBS_ENABLE, or
 * for a moment the counter is PEBS-enabled with INT set, which the SDM forbids ("Do NOT set
 * local counter PMI/INT bit", "Requirements to Program PEBS"; the model's rule 15, which the
 * runner reports as this test's failure). make check saw it in the alternation tests,
 * when a tick came in that span (rule 15 at tcg-pebs-fmt0 and tcg-arch-pebs, 2 of 25 boots).
 */
TEST_OBSERVING(ds, a_pebs_user_without_its_event_follows_a_sampler_of_its_counter_breaking_no_rule,
	       1000)
{
	struct task *user, *other;

	require_pebs();
	if (!(ds_support()->pebs_enable_valid & 1))
		test_skip("PEBS_ENABLE bit 0 is reserved here: GP counter 0 cannot PEBS");
	attached = sampled = false;
	user = task_create("pebs user", pebs_user, NULL, TASK_START_STOPPED);
	other = task_create("sampler", sampler, NULL, TASK_START_STOPPED);
	if (!user || !other || sched_migrate(user, this_cpu_index()) != 0 ||
	    sched_migrate(other, this_cpu_index()) != 0)
		test_abort("no tasks on CPU %u", this_cpu_index());
	task_continue(user);
	task_continue(other);
	check_eq(0, task_join(user, NULL));
	check_eq(0, task_join(other, NULL));
	check(attached && sampled, "the PEBS user attached: %d, the sampler sampled: %d", attached,
	      sampled);
}
