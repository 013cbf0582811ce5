/* SPDX-License-Identifier: MIT */
/* pmu suite: ring-3 tasks read their own counters with RDPMC, as perf's self-monitoring does. */
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/apic.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/percpu.h"
#include "arch/x86/tsc.h"
#include "arch/x86/user-abi.h"
#include "pmu/pmu.h"
#include "pmu/rotate.h"
#include "runner/test.h"
#include "sched/sched.h"
#include "tests/kernel/lib/budget.h"

/* Shared with tests/kernel/lib/pmu_self_programs.asm: the offsets are fixed there. */
struct self_rounds {
	uint64_t iterations, rounds;
	uint64_t event; /* offsetof(struct pmu_user_page, event[i]) */
	uint64_t retries, regressions, last;
	volatile uint64_t done;
	uint64_t t0, t1, t2, repeat;
	uint64_t race; /* nonzero: each round also reads racing a yield */
};

_Static_assert(offsetof(struct self_rounds, race) == 88, "pmu_self_programs.asm SELF_RACE");
_Static_assert(offsetof(struct pmu_user_page, event[0].mask) == 40,
	       "pmu_self_programs.asm EVENT_MASK");
_Static_assert(USER_PMU_BASE == 0x40000000ul, "pmu_self_programs.asm USER_PMU_BASE");

extern const char user_self_rounds[], user_self_read_cost[];
extern const char
	user_rdpmc[]; /* tests/kernel/lib/pmu_user.asm: ECX at rdi, the value at rdi + 8 */

/*
 * What a task's counting of ring-3 instructions holds beyond its last self-read: the RDPMC
 * itself (RDPMC reads the counter before it retires), the 8 instructions after it in the read,
 * and the 6 from its return to the SYSCALL that parks the task (pmu_self_programs.asm). Exact:
 * a read polluted by another task's counter or count, or a stale base, is off by thousands.
 */
#define SELF_READ_TAIL 15
#define PARK_WAIT_MS 5000
/* How often the runner looks: each look is a switch, which rewrites a page (and a self-read
 * racing it retries); under KVM-PVM a ring-3 RDPMC takes long enough to race 1 ms looks. */
#define POLL_MS 50

static const struct pmu_event user_instructions = { .event = 0xc0, .user = true };

static uint64_t event_offset(unsigned int i)
{
	return offsetof(struct pmu_user_page, event[0]) + i * sizeof(struct pmu_user_event);
}

static struct task *self_task(const char *program, struct self_rounds rounds)
{
	struct task *task = task_create_user("self", program, USER_DATA_BASE, TASK_START_STOPPED);

	if (!task)
		test_abort("task_create_user failed");
	if (sched_migrate(task, this_cpu_index()) != 0)
		test_abort("sched_migrate to CPU %u failed", this_cpu_index());
	if (pmu_self_monitor(task->index) != 0)
		test_abort("pmu_self_monitor failed");
	*(struct self_rounds *)task_user_data(task) = rounds;
	return task;
}

static const struct self_rounds *rounds_of(const struct task *task)
{
	return task_user_data((struct task *)task);
}

static bool parked(const struct task *task)
{
	return rounds_of(task)->done && task->state == TASK_BLOCKED;
}

/* Both parked in their last system call, or the time is up (then false, and both ended). */
static bool wait_parked(struct task *a, struct task *b)
{
	uint64_t deadline = rdtsc_ordered() + tsc_cycles_from_ms(PARK_WAIT_MS);

	while ((!parked(a) || !parked(b)) && rdtsc_ordered() < deadline)
		sched_sleep_ms(POLL_MS);
	if (check(parked(a) && parked(b), "after %u ms: %s, %s", PARK_WAIT_MS,
		  parked(a) ? "parked" : "running", parked(b) ? "parked" : "running"))
		return true;
	sched_kill_others();
	return false;
}

static void finish(struct task *task)
{
	sched_wake(task);
	check_eq(0, task_join(task, NULL));
}

/*
 * A task that does not self-monitor, run on this CPU after tasks that do: CR4.PCE is clear for
 * it, so its RDPMC takes #GP(0) (SDM Vol. 2B RDPMC).
 */
static void check_rdpmc_refused_to_others(void)
{
	struct task *task =
		task_create_user("other", user_rdpmc, USER_DATA_BASE, TASK_START_STOPPED);
	struct user_fault fault;
	long code;

	if (!task)
		test_abort("task_create_user failed");
	if (sched_migrate(task, this_cpu_index()) != 0)
		test_abort("sched_migrate to CPU %u failed", this_cpu_index());
	task_continue(task);
	code = task_join(task, &fault);
	check(code == TASK_EXIT_FAULTED && fault.valid && fault.vector == X86_EXC_GP,
	      "RDPMC of a task that does not self-monitor: exit %ld, vector %u; expected #GP(0)",
	      code, fault.valid ? fault.vector : 0);
}

/* One task's reads against the kernel's count of the same event, after it parked. */
static void judge(const char *name, const struct task *task, unsigned int event)
{
	const struct self_rounds *r = rounds_of(task);
	uint64_t kernel = pmu_read(task->index, event).count;

	test_diag("%s: last self-read %llu, kernel count %llu, %llu retries", name,
		  (unsigned long long)r->last, (unsigned long long)kernel,
		  (unsigned long long)r->retries);
	check(kernel - r->last == SELF_READ_TAIL,
	      "%s: the kernel counted %llu, the task read %llu: %lld apart, expected %u", name,
	      (unsigned long long)kernel, (unsigned long long)r->last,
	      (long long)(kernel - r->last), SELF_READ_TAIL);
	check_eq(0, r->regressions);
}

/*
 * Two user tasks on one CPU, each with its own page: one counts its ring-3 instructions on a GP
 * counter, the other on fixed counter 0 and on a GP counter too (the same counter as the first
 * task's: the same event, a different count). Each round: a loop, a self-read, a yield to the
 * other, so every read follows switches. Each task's last read must be the kernel's count less
 * the read's exact tail, and no read may go backwards. Ring 3 is stepped on the emulated CPU
 * (3 to 10 ms a step under KVM-PVM, so sized as pmu.a_tasks_count_is_not_polluted_by_other_tasks):
 * 3 rounds x (2 x 25 + about 35) for one task, 3 x (2 x 75 + 35) for the other: about 800.
 */
/*
 * pmu/ usable, on Intel: the page names counters by Intel's RDPMC index (fixed counters at
 * bit 30, SDM Vol. 2B RDPMC); pmu_self_monitor() on AMD is not built.
 */
static void require_self_monitoring(void)
{
	if (!pmu_usable())
		test_skip("%s", pmu_info()->reason);
	if (pmu_info()->amd)
		test_skip("AMD: self-monitoring pages name Intel's RDPMC indices only");
}

#define ROUNDS 3ull
#define ITERATIONS 25ull

TEST_OBSERVING_USER(pmu, tasks_read_their_own_counts_with_rdpmc_exactly_across_switches, 800)
{
	struct task *a, *b;

	require_self_monitoring();
	if (pmu_info()->fixed_counters == 0)
		test_skip("CPUID.0AH:EDX[4:0]=0: no fixed counter");
	a = self_task(user_self_rounds, (struct self_rounds){ .iterations = ITERATIONS,
							      .rounds = ROUNDS,
							      .event = event_offset(0) });
	b = self_task(user_self_rounds, (struct self_rounds){ .iterations = 3 * ITERATIONS,
							      .rounds = ROUNDS,
							      .event = event_offset(0) });
	check_eq(0, pmu_add_event(a->index, &user_instructions));
	check_eq(0, pmu_add_fixed_event(b->index, 0, &user_instructions));
	check_eq(1, pmu_add_event(b->index, &user_instructions));
	task_continue(a);
	task_continue(b);
	if (!wait_parked(a, b))
		return;
	judge("GP counter", a, 0);
	judge("fixed counter", b, 0);
	check(pmu_read(b->index, 0).count == pmu_read(b->index, 1).count,
	      "the other task's GP count %llu differs from its fixed count %llu",
	      (unsigned long long)pmu_read(b->index, 1).count,
	      (unsigned long long)pmu_read(b->index, 0).count);
	check_rdpmc_refused_to_others();
	finish(a);
	finish(b);
}

/*
 * A read racing a switch: each round, the task takes its page, yields to a partner counting on
 * the same GP counter, and only then reads the counter (pmu_self_programs.asm
 * self_read_racing). The page changed meanwhile: every such read must retry (ROUNDS retries at
 * least; a tick may add more), none may return more than the plain read right after it (the
 * partner's count in it), and the last read is exact as above. The partner yields three times
 * as often, so it is always there to switch to. Steps: 3 rounds x (50 + about 70) and 9 x
 * (50 + about 35): about 1,150.
 */
TEST_OBSERVING_USER(pmu,
		    a_self_read_racing_a_switch_retries_and_never_returns_the_other_tasks_count,
		    1150)
{
	struct task *a, *b;

	require_self_monitoring();
	a = self_task(user_self_rounds, (struct self_rounds){ .iterations = ITERATIONS,
							      .rounds = ROUNDS,
							      .event = event_offset(0),
							      .race = 1 });
	b = self_task(user_self_rounds, (struct self_rounds){ .iterations = 3 * ITERATIONS,
							      .rounds = 3 * ROUNDS,
							      .event = event_offset(0) });
	check_eq(0, pmu_add_event(a->index, &user_instructions));
	check_eq(0, pmu_add_event(b->index, &user_instructions));
	task_continue(a);
	task_continue(b);
	if (!wait_parked(a, b))
		return;
	check(rounds_of(a)->retries >= ROUNDS, "%llu retries for %llu racing reads",
	      (unsigned long long)rounds_of(a)->retries, ROUNDS);
	judge("racing", a, 0);
	judge("partner", b, 0);
	finish(a);
	finish(b);
}

/*
 * Rotation: a task with one GP event more than the GP counters, with the tick at ROTATE_HZ, so
 * events move on and off counters under it, and a partner yielding to it. Reads of a rotating
 * event never go backwards and never pass the kernel's count; reads race the ticks (each
 * retried read is counted, a diagnostic: how many depends on where the ticks land). Steps: 2
 * tasks x 8 rounds x (50 + about 35): about 1,400.
 */
#define ROTATE_HZ 4000
#define ROTATE_ROUNDS 8ull

TEST_OBSERVING_USER(pmu, self_reads_of_rotating_events_retry_and_never_go_backwards, 1400)
{
	unsigned int gp = pmu_info()->gp_counters, hz = timer_hz();
	struct task *a, *b;
	uint64_t kernel;

	require_self_monitoring();
	if (gp + 1 > PMU_SET_MAX_EVENTS)
		test_skip("%u GP counters: a set of %u cannot rotate", gp, PMU_SET_MAX_EVENTS);
	a = self_task(user_self_rounds, (struct self_rounds){ .iterations = ITERATIONS,
							      .rounds = ROTATE_ROUNDS,
							      .event = event_offset(0) });
	b = self_task(user_self_rounds, (struct self_rounds){ .iterations = ITERATIONS,
							      .rounds = ROTATE_ROUNDS,
							      .event = event_offset(0) });
	for (unsigned int i = 0; i <= gp; i++)
		check_eq(i, pmu_add_event(a->index, &user_instructions));
	check_eq(0, pmu_add_event(b->index, &user_instructions));
	timer_set_hz(ROTATE_HZ);
	task_continue(a);
	task_continue(b);
	if (!wait_parked(a, b)) {
		timer_set_hz(hz);
		return;
	}
	timer_set_hz(hz);
	kernel = pmu_read(a->index, 0).count;
	test_diag("rotating: last self-read %llu, kernel count %llu (running %llu of %llu), "
		  "%llu retries",
		  (unsigned long long)rounds_of(a)->last, (unsigned long long)kernel,
		  (unsigned long long)pmu_read(a->index, 0).time_running,
		  (unsigned long long)pmu_read(a->index, 0).time_enabled,
		  (unsigned long long)rounds_of(a)->retries);
	check_eq(0, rounds_of(a)->regressions);
	check(rounds_of(a)->last <= kernel, "read %llu, beyond the kernel's %llu",
	      (unsigned long long)rounds_of(a)->last, (unsigned long long)kernel);
	judge("partner", b, 0);
	finish(a);
	finish(b);
}

/*
 * make bench: a self-read against a system call (SYSCALL_GET_TASK_ID), in TSC cycles each. The
 * event is one the emulated CPU does not count (LLC references), so nothing is stepped; there
 * each RDPMC is a #UD round trip through the model, and the figure says nothing of silicon.
 */
#define COST_REPEAT_QUICK 10
#define COST_REPEAT_SOAK 10000

TEST(pmu, benchmark_self_read_against_a_system_call)
{
	static const struct pmu_event llc = { .event = 0x2e, .umask = 0x4f, .user = true };
	struct self_rounds rounds = {
		.event = event_offset(0),
		.repeat = budget_count(COST_REPEAT_QUICK, COST_REPEAT_SOAK),
	};
	struct self_rounds result, *r = &result;
	uint64_t deadline;
	struct task *task;

	require_self_monitoring();
	task = self_task(user_self_read_cost, rounds);
	check_eq(0, pmu_add_event(task->index, &llc));
	task_continue(task);
	/* Its data pages go at the join: read them once it has exited. */
	deadline = rdtsc_ordered() + tsc_cycles_from_ms(PARK_WAIT_MS);
	while (task->state != TASK_DEAD && rdtsc_ordered() < deadline)
		sched_sleep_ms(POLL_MS);
	if (task->state != TASK_DEAD) {
		sched_kill_others();
		test_skip("%llu reads and calls took over %u ms here (a loaded KVM-PVM takes about "
			  "100 ms a ring-3 exception): no figure",
			  (unsigned long long)rounds.repeat, PARK_WAIT_MS);
	}
	result = *rounds_of(task);
	check_eq(0, task_join(task, NULL));
	test_diag("metric pmu.self_read cycles_per_read=%llu cycles_per_syscall=%llu "
		  "retries=%llu repeat=%llu",
		  (unsigned long long)((r->t1 - r->t0) / rounds.repeat),
		  (unsigned long long)((r->t2 - r->t1) / rounds.repeat),
		  (unsigned long long)r->retries, (unsigned long long)rounds.repeat);
	check(r->t2 > r->t1 && r->t1 > r->t0, "TSC t0 %llu t1 %llu t2 %llu",
	      (unsigned long long)r->t0, (unsigned long long)r->t1, (unsigned long long)r->t2);
}
