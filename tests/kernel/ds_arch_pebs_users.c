/* SPDX-License-Identifier: MIT */
/* ds suite: architectural-PEBS users: records, thresholds, groups, switches, BTS beside them. */
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/msr.h"
#include "arch/x86/percpu.h"
#include "kernel/smp.h"
#include "lib/format.h"
#include "tests/kernel/lib/budget.h"
#include "tests/kernel/lib/ds_util.h"
#include "tests/kernel/lib/handler_margin.h"
#include "tests/kernel/lib/user_programs.h"

/*
 * Typed here from the Linux arch-PEBS series, apart from arch/x86/arch-pebs.h: PEBS_BASE
 * 0x3F4 (4 KiB-aligned physical address, size code in bits 3:0), the header's BASIC bit 63, the
 * CFG_C group bits AUX 62 and GPR 61 (leaf 23H.4 EBX bits 30 and 29). A record of the basic
 * group alone is its 16-byte header and 48 bytes. Runs unchanged on silicon; skips elsewhere.
 */
#define T_FORMAT_ARCH 0xfu
#define T_PEBS_BASE 0x3f4u
#define T_SIZE_CODE_MASK 0xfull
#define T_BASIC (1ull << 63)
#define T_AUX (1ull << 62)
#define T_GPR (1ull << 61)
#define T_BASIC_RECORD 64
#define T_LARGE_RECORD 512 /* header, basic, aux, GPR and fragment headers: well within */

/* As ds/pebs.c's tests: a record every PERIOD kernel instructions, loops in fractions of it. */
#define PERIOD 400
#define RECORDS 8
#define THRESHOLD 3
#define SEVEN_AND_A_HALF_PERIODS (15 * PERIOD / 4)
#define TWO_AND_A_QUARTER_PERIODS (9 * PERIOD / 8)

static void require_arch_pebs(void)
{
	if (!ds_support()->arch_pebs.usable)
		test_skip("no architectural PEBS: %s", ds_support()->arch_pebs.reason);
	if (!(ds_support()->arch_pebs.pebs & 1))
		test_skip("CPUID.23H.5:EAX bit 0 clear: GP counter 0 cannot PEBS");
	if (!pmu_usable())
		test_skip("%s", pmu_info()->reason);
}

static struct ds_pebs_config arch_config(size_t records, size_t threshold, uint64_t period,
					 size_t record_size, uint64_t groups)
{
	return (struct ds_pebs_config){
		.format = T_FORMAT_ARCH,
		.record_size = record_size,
		.records = records,
		.threshold_records = threshold,
		.enable = 1,
		.reset_value = (0 - period) & UINT32_MAX,
		.groups = groups,
	};
}

/* PEBS on GP counter 0 over a counted loop (tests/kernel/lib/ds_util.h), with PEBS_BASE. */
static void sample_loop(const struct ds_pebs_config *config, unsigned long iterations,
			struct pebs_sampled *out)
{
	pebs_sample_loop(config, iterations, PERIOD, T_PEBS_BASE, out);
	test_diag("records %llu (%llu by %llu PMIs), PEBS_BASE 0x%llx attached, 0x%llx detached, "
		  "last record: groups 0x%llx in %u fragments",
		  (unsigned long long)out->total, (unsigned long long)out->credited,
		  (unsigned long long)out->pmis, (unsigned long long)out->base_attached,
		  (unsigned long long)out->base_detached,
		  (unsigned long long)out->credit.last_pebs_groups,
		  out->credit.last_pebs_fragments);
}

/*
 * 7.5 periods: 7 or 8 records, and one more for each PMI whose handler's counted instructions
 * cross a period (rule 21; 9 with 3 PMIs on the model), as ds.pebs_records_are_drained_*; the
 * threshold PMI (GLOBAL_STATUS bit 54) at the 3rd and 6th drains 3 each, the detach the rest.
 * PEBS_BASE names a 4 KiB-aligned buffer whose size code holds RECORDS records (code 0: 4 KiB), and
 * is 0 once detached, before the buffer is freed.
 */
TEST_OBSERVING(ds, arch_pebs_records_are_drained_at_each_threshold_pmi_and_at_detach, 3500)
{
	struct ds_pebs_config config;
	struct pebs_sampled seen;
	uint64_t most;

	require_arch_pebs();
	config = arch_config(RECORDS, THRESHOLD, PERIOD, T_BASIC_RECORD, 0);
	sample_loop(&config, SEVEN_AND_A_HALF_PERIODS, &seen);
	most = pebs_records_max(8, seen.pmis, seen.ticks, PERIOD);
	check(seen.total >= 7 && seen.total <= most,
	      "%llu records in 7.5 periods, expected 7 to %llu (%llu PMIs, %llu ticks)",
	      (unsigned long long)seen.total, (unsigned long long)most,
	      (unsigned long long)seen.pmis, (unsigned long long)seen.ticks);
	check_eq(seen.total / THRESHOLD, seen.pmis);
	check_eq(seen.pmis * THRESHOLD, seen.credited);
	check_eq(0, seen.base_attached & T_SIZE_CODE_MASK);
	check(seen.base_attached != 0, "PEBS_BASE 0 while attached");
	check_eq(0, seen.base_detached);
	check_eq(T_BASIC, seen.credit.last_pebs_groups);
}

/*
 * Below the threshold: no PMI, both records drained at the detach, the last one inside the
 * loop. With AUX and GPR in CFG_C, each record carries them (however the CPU splits it).
 */
static void partial_then_detach(uint64_t groups)
{
	struct ds_pebs_config config;
	struct pebs_sampled seen;

	config = arch_config(RECORDS, RECORDS - 2, PERIOD, groups ? T_LARGE_RECORD : T_BASIC_RECORD,
			     groups);
	sample_loop(&config, TWO_AND_A_QUARTER_PERIODS, &seen);
	check_eq(2, seen.total);
	check_eq(0, seen.pmis);
	check_eq(0, seen.credited);
	check_last_pebs_ip(seen.credit.last_pebs_ip, &seen.loop, seen.nmis, seen.ticks,
			   "the second record");
	check_eq(T_BASIC | groups, seen.credit.last_pebs_groups);
}

TEST_OBSERVING(ds, arch_pebs_partial_buffer_is_drained_when_its_user_detaches, 1500)
{
	require_arch_pebs();
	partial_then_detach(0);
}

TEST_OBSERVING(ds, arch_pebs_records_carry_the_groups_cfg_c_asks_for, 1500)
{
	uint64_t caps;

	require_arch_pebs();
	caps = ds_support()->arch_pebs.caps;
	if ((caps & (T_AUX | T_GPR)) != (T_AUX | T_GPR))
		test_skip("CPUID.23H.4:EBX 0x%llx lacks AUX or GPR",
			  (unsigned long long)(caps >> 32));
	partial_then_detach(T_AUX);
	partial_then_detach(T_GPR);
	partial_then_detach(T_AUX | T_GPR);
}

/* A refused configuration changes nothing: the counters leaf 23H.5 lacks, groups 23H.4 lacks. */
TEST(ds, arch_pebs_refuses_what_leaf_23_does_not_offer)
{
	struct ds_target target;
	struct ds_pebs_config config;

	require_arch_pebs();
	target = self_target();
	config = arch_config(RECORDS, THRESHOLD, PERIOD, T_BASIC_RECORD, 0);
	config.enable = ~ds_support()->arch_pebs.pebs & ((1ull << 48) - 1);
	config.enable &= config.enable & -config.enable; /* its lowest such counter */
	check_eq(DS_ERROR_CONFIG, ds_attach_pebs(&target, &config));
	config = arch_config(RECORDS, THRESHOLD, PERIOD, T_BASIC_RECORD, 0);
	config.groups = 1ull << 38; /* perf metrics: the emulated part lacks it */
	if (!(ds_support()->arch_pebs.caps & config.groups))
		check_eq(DS_ERROR_CONFIG, ds_attach_pebs(&target, &config));
	config = arch_config(RECORDS, THRESHOLD, PERIOD, T_BASIC_RECORD, 0);
	config.reset_value = 1; /* bit 31 clear: the CPU would reload a positive count */
	check_eq(DS_ERROR_CONFIG, ds_attach_pebs(&target, &config));
	check_eq(DS_ERROR_NOT_ATTACHED, ds_detach(&target, DS_USER_PEBS));
	check_eq(0, rdmsr(T_PEBS_BASE));
}

/*
 * Two tasks on one CPU, each with its own buffer, each looping its own share in chunks with a
 * yield between: each gets the records of its own loops (a record a period, plus at most one a
 * chunk for the kernel path around the yield; measured under TCG: 25 for 24, 11 for 8). Were
 * PEBS_BASE or INDEX not switched, one task's records would land in the other's buffer, or
 * over its own earlier ones.
 */
#define CHUNKS 8
#define LONG_PERIOD 2000 /* the yield path around a chunk stays below one period */
struct looper {
	unsigned long periods; /* per chunk */
	struct loop_span loop;
	struct ds_credit credit;
	volatile bool ready, failed;
	volatile bool *go;
};

static void loop_in_chunks(void *arg)
{
	struct looper *l = arg;
	struct ds_target target = self_target();
	struct pmu_event event = instructions_retired();
	struct ds_pebs_config config = arch_config(64, 16, LONG_PERIOD, T_BASIC_RECORD, 0);

	ds_credit_reset(target.index);
	if (ds_attach_pebs(&target, &config) != DS_OK)
		l->failed = true;
	l->ready = true;
	while (!*l->go)
		sched_yield();
	if (pmu_add_sampling_event(target.index, &event, LONG_PERIOD) != 0)
		l->failed = true;
	for (unsigned int i = 0; i < CHUNKS; i++) {
		counted_loop(l->periods * LONG_PERIOD / 2, &l->loop);
		sched_yield();
	}
	pmu_release(target.index);
	ds_detach(&target, DS_USER_PEBS);
	l->credit = ds_credit(target.index);
}

static struct task *looper_here(struct looper *l)
{
	struct task *task = task_create("looper", loop_in_chunks, l, TASK_START_STOPPED);

	if (!task || sched_migrate(task, this_cpu_index()) != 0)
		test_abort("no looper on CPU %u", this_cpu_index());
	return task;
}

static void check_looper(const struct looper *l)
{
	uint64_t records = l->credit.pebs_records;

	test_diag("%lu periods a chunk: %llu records", l->periods, (unsigned long long)records);
	check(records >= CHUNKS * l->periods - 1 && records <= CHUNKS * (l->periods + 1),
	      "%llu records for %lu periods", (unsigned long long)records, CHUNKS * l->periods);
	check_eq(0, l->credit.pebs_dropped);
}

TEST_OBSERVING(ds, arch_pebs_buffers_of_two_tasks_stay_apart_across_switches, 90000)
{
	volatile bool go = false;
	struct looper a = { .periods = 3, .go = &go }, b = { .periods = 1, .go = &go };
	struct task *ta, *tb;

	require_arch_pebs();
	ta = looper_here(&a);
	tb = looper_here(&b);
	task_continue(ta);
	task_continue(tb);
	while (!a.ready || !b.ready)
		sched_yield();
	go = true;
	check_eq(0, task_join(ta, NULL));
	check_eq(0, task_join(tb, NULL));
	check(!a.failed && !b.failed, "attach or event failed");
	check_looper(&a);
	check_looper(&b);
}

/*
 * Write elision (Linux cfg_c_val[], 52448a0a7390), for make bench: two tasks with PEBS events
 * on GP counter 0 yield to each other, each with its own buffer; each switch names the other
 * buffer (one PEBS_BASE write) and restores an INDEX equal to the one it saves (WR 0, the same
 * THRESH: no write). Identical events write no CFG_C; events whose periods differ differ in
 * CFG_C's reload value, one CFG_C write a switch: the cache elides only what is equal. The
 * events count ring-3 instructions, which kernel tasks never run: no record, no PMI.
 * budget=quick 20 yields a configuration, budget=soak (make bench) 1,000.
 */
#define YIELDS_QUICK 20
#define YIELDS_SOAK 1000
#define IDENTICAL_PERIOD 100000
#define OTHER_PERIOD 100001
struct yielder {
	volatile bool *go, *done;
	volatile bool failed, ready;
	uint64_t period;
	struct ds_arch_pebs_writes writes;
	uint64_t switches;
};

static void attach_user_pebs(struct yielder *y)
{
	static const struct pmu_event user_pebs = { .event = INST_RETIRED,
						    .user = true,
						    .pebs = true };
	struct ds_target target = self_target();
	struct ds_pebs_config config = arch_config(16, 8, y->period, T_BASIC_RECORD, 0);

	if (ds_attach_pebs(&target, &config) != DS_OK ||
	    pmu_add_sampling_event(target.index, &user_pebs, y->period) != 0)
		y->failed = true;
}

static void measuring(void *arg)
{
	struct yielder *y = arg;
	struct ds_arch_pebs_writes before, after;
	uint64_t switches;

	attach_user_pebs(y);
	y->ready = true;
	while (!*y->go)
		sched_yield();
	before = ds_arch_pebs_writes();
	switches = sched_stats_cpu(this_cpu_index()).switches;
	for (uint64_t i = budget_count(YIELDS_QUICK, YIELDS_SOAK); i; i--)
		sched_yield();
	after = ds_arch_pebs_writes();
	y->switches = sched_stats_cpu(this_cpu_index()).switches - switches;
	y->writes =
		(struct ds_arch_pebs_writes){ after.cfg_c - before.cfg_c, after.base - before.base,
					      after.index - before.index };
	*y->done = true;
	pmu_release(self_target().index);
}

static void partner(void *arg)
{
	struct yielder *y = arg;

	attach_user_pebs(y);
	y->ready = true;
	while (!*y->done)
		sched_yield();
	pmu_release(self_target().index);
}

/* Per switch, in thousandths: "1.000". */
static void per_switch(char *out, size_t size, uint64_t writes, uint64_t switches)
{
	uint64_t s = switches ? switches : 1;

	format(out, size, "%llu.%03llu", (unsigned long long)(writes / s),
	       (unsigned long long)(writes * 1000 / s % 1000));
}

static void measure_switches(const char *name, uint64_t partner_period)
{
	volatile bool go = false, done = false;
	struct yielder m = { .go = &go, .done = &done, .period = IDENTICAL_PERIOD },
		       p = { .go = &go, .done = &done, .period = partner_period };
	char cfg_c[24], base[24], index[24];
	struct task *tm, *tp;

	tm = task_create("measuring", measuring, &m, TASK_START_STOPPED);
	tp = task_create("partner", partner, &p, TASK_START_STOPPED);
	if (!tm || !tp || sched_migrate(tm, this_cpu_index()) != 0 ||
	    sched_migrate(tp, this_cpu_index()) != 0)
		test_abort("no tasks on CPU %u", this_cpu_index());
	task_continue(tm);
	task_continue(tp);
	while (!m.ready || !p.ready)
		sched_yield();
	go = true;
	check_eq(0, task_join(tm, NULL));
	check_eq(0, task_join(tp, NULL));
	check(!m.failed && !p.failed, "%s: attach or event failed", name);
	per_switch(cfg_c, sizeof(cfg_c), m.writes.cfg_c, m.switches);
	per_switch(base, sizeof(base), m.writes.base, m.switches);
	per_switch(index, sizeof(index), m.writes.index, m.switches);
	test_diag("metric ds.arch_pebs_switch_writes.%s cfg_c_per_switch=%s base_per_switch=%s "
		  "index_per_switch=%s switches=%llu",
		  name, cfg_c, base, index, (unsigned long long)m.switches);
	check(m.switches >= budget_count(YIELDS_QUICK, YIELDS_SOAK),
	      "%s: %llu switches in %llu yields", name, (unsigned long long)m.switches,
	      (unsigned long long)budget_count(YIELDS_QUICK, YIELDS_SOAK));
	check_eq(partner_period == IDENTICAL_PERIOD ? 0 : m.switches, m.writes.cfg_c);
	check_eq(m.switches, m.writes.base);
	check_eq(0, m.writes.index);
}

TEST(ds, benchmark_arch_pebs_writes_per_switch)
{
	require_arch_pebs();
	measure_switches("identical", IDENTICAL_PERIOD);
	measure_switches("other_period", OTHER_PERIOD);
}

/*
 * A BTS user and an architectural-PEBS user on one task: BTS in the DS area, PEBS in its own
 * buffer beside it. The task loops on CPU 0, moves to CPU 1 and loops again: both follow it
 * (IA32_DS_AREA and PEBS_BASE name its area and buffer on CPU 1, and neither on CPU 0 once it
 * left), its branch records are exact on both CPUs, and its PEBS records are those of both
 * loops: 4.5 periods each, so at least 4 drained before the move and 4 more after it.
 */
#define T_DS_AREA 0x600u
#define T_TRACING 0xc0ull /* DEBUGCTL.TR and BTS */
#define MOVE_PROBE_ROUNDS 2
#define FOUR_AND_A_HALF_PERIODS (9 * PERIOD / 4)

struct held {
	uint64_t ds_area, debugctl, pebs_base;
};

static void read_held(void *arg)
{
	struct held *held = arg;

	held->ds_area = rdmsr(T_DS_AREA);
	held->debugctl = rdmsr(MSR_IA32_DEBUGCTL);
	held->pebs_base = rdmsr(T_PEBS_BASE);
}

struct sharer {
	const struct ds_area *area;
	struct probe_run before, after;
	struct held on_0, on_1, left_0;
	unsigned int cpu_before, cpu_after;
	struct ds_credit credit;
	uint64_t before_move; /* PEBS records drained on CPU 0 */
	bool failed;
};

static void share_and_move(void *arg)
{
	static const struct ds_bts_config circular = { .records = 16, .circular = true };
	struct sharer *s = arg;
	struct ds_target target = self_target();
	struct pmu_event event = instructions_retired();
	struct ds_pebs_config config = arch_config(64, 16, PERIOD, T_BASIC_RECORD, 0);
	struct loop_span loop;

	ds_credit_reset(target.index);
	if (ds_attach_bts(&target, &circular) != DS_OK ||
	    ds_attach_pebs(&target, &config) != DS_OK ||
	    pmu_add_sampling_event(target.index, &event, PERIOD) != 0) {
		s->failed = true;
		return;
	}
	s->area = ds_area_get(&target);
	s->cpu_before = this_cpu_index();
	counted_loop(FOUR_AND_A_HALF_PERIODS, &loop);
	probe_run(s->area, MOVE_PROBE_ROUNDS, &s->before);
	read_held(&s->on_0);
	ds_drain(&target);
	s->before_move = ds_credit(target.index).pebs_records;
	if (sched_migrate(sched_current(), 1) != 0)
		s->failed = true;
	s->cpu_after = this_cpu_index();
	if (!smp_call(0, read_held, &s->left_0))
		s->failed = true;
	counted_loop(FOUR_AND_A_HALF_PERIODS, &loop);
	probe_run(s->area, MOVE_PROBE_ROUNDS + 1, &s->after);
	read_held(&s->on_1);
	pmu_release(target.index);
	if (ds_detach(&target, DS_USER_PEBS) != DS_OK || ds_detach(&target, DS_USER_BTS) != DS_OK)
		s->failed = true;
	s->credit = ds_credit(target.index);
}

TEST_OBSERVING(ds, arch_pebs_and_bts_on_one_task_follow_it_across_switches_and_cpus, 22000)
{
	struct sharer s = { 0 };
	struct task *task;

	require_arch_pebs();
	require_bts();
	if (smp_cpus() < 2)
		test_skip("%u CPU online: the move needs 2", smp_cpus());
	task = task_create("sharer", share_and_move, &s, TASK_START_STOPPED);
	if (!task || sched_migrate(task, 0) != 0)
		test_abort("no task on CPU 0");
	task_continue(task);
	check_eq(0, task_join(task, NULL));
	check(!s.failed, "an attach, the move or a detach failed");
	test_diag("CPU %u then %u; PEBS_BASE 0x%llx on 0, 0x%llx on 1, 0x%llx left on 0; "
		  "DS area 0x%llx; %llu PEBS records before the move, %llu in all",
		  s.cpu_before, s.cpu_after, (unsigned long long)s.on_0.pebs_base,
		  (unsigned long long)s.on_1.pebs_base, (unsigned long long)s.left_0.pebs_base,
		  (unsigned long long)(uintptr_t)s.area, (unsigned long long)s.before_move,
		  (unsigned long long)s.credit.pebs_records);
	check_eq(0, s.cpu_before);
	check_eq(1, s.cpu_after);
	check_probe_run(&s.before, MOVE_PROBE_ROUNDS);
	check_probe_run(&s.after, MOVE_PROBE_ROUNDS + 1);
	check(s.on_0.pebs_base != 0 && s.on_0.pebs_base == s.on_1.pebs_base,
	      "PEBS_BASE 0x%llx on CPU 0, 0x%llx on CPU 1", (unsigned long long)s.on_0.pebs_base,
	      (unsigned long long)s.on_1.pebs_base);
	check_eq((uint64_t)(uintptr_t)s.area, s.on_0.ds_area);
	check_eq((uint64_t)(uintptr_t)s.area, s.on_1.ds_area);
	check_eq(T_TRACING, s.on_1.debugctl & T_TRACING);
	check_eq(0, s.left_0.pebs_base);
	check(s.left_0.ds_area != (uint64_t)(uintptr_t)s.area || !(s.left_0.debugctl & T_TRACING),
	      "CPU 0 still traces into the area the task took to CPU 1");
	check(s.before_move >= 4, "%llu PEBS records on CPU 0", (unsigned long long)s.before_move);
	check(s.credit.pebs_records >= s.before_move + 4, "%llu PEBS records on CPU 1",
	      (unsigned long long)(s.credit.pebs_records - s.before_move));
}

/*
 * The owning user task's read-only view: user_arch_pebs_peek counts ring-3 instructions with a
 * PEBS event, then reads the first record through its view, as the DS-area view shows its
 * PEBS buffer. Its header is the basic group's alone (64 bytes, BASIC), its eventing IP in the
 * task's loop ("mov rsi, rdi" 3 bytes, "mov ecx, 400" 5, then DEC at +8 and JNZ at +10, checked
 * before use); 800 instructions give 4 records, drained at its exit.
 */
#define PEEK_LOOP_DEC 8
#define PEEK_LOOP_JNZ 10
#define T_JNZ_REL8 0x75
#define USER_PERIOD 200

struct peek {
	uint64_t header, ip, pmis, loop_start, loop_end;
	struct ds_credit credit;
};

static void peek_at_view(size_t threshold, struct peek *out)
{
	static const struct pmu_event user_pebs = { .event = INST_RETIRED,
						    .user = true,
						    .pebs = true };
	struct ds_pebs_config config = arch_config(64, threshold, USER_PERIOD, T_BASIC_RECORD, 0);
	const uint8_t *code = (const uint8_t *)user_arch_pebs_peek;
	struct ds_target target;
	const uint64_t *seen;
	struct task *task;
	uint64_t pmis;

	out->loop_start = user_text_address(user_arch_pebs_peek) + PEEK_LOOP_DEC;
	out->loop_end = user_text_address(user_arch_pebs_peek) + PEEK_LOOP_JNZ;
	if (code[PEEK_LOOP_JNZ] != T_JNZ_REL8 ||
	    (int8_t)code[PEEK_LOOP_JNZ + 1] != PEEK_LOOP_DEC - PEEK_LOOP_JNZ - 2)
		test_abort("user_arch_pebs_peek changed: no JNZ to +%u at +%u", PEEK_LOOP_DEC,
			   PEEK_LOOP_JNZ);
	task = task_create_user("peeker", user_arch_pebs_peek, USER_DATA_BASE, TASK_START_STOPPED);
	if (!task)
		test_abort("task_create_user failed");
	target = task_target(task);
	ds_credit_reset(target.index);
	check_attached(ds_attach_pebs(&target, &config));
	if (pmu_add_sampling_event(target.index, &user_pebs, USER_PERIOD) != 0)
		test_abort("pmu_add_sampling_event failed");
	pmis = ds_pmi_count();
	task_continue(task);
	while (task->state != TASK_DEAD)
		sched_sleep_ms(1);
	seen = task_user_data(task);
	out->header = seen[0];
	out->ip = seen[1];
	out->credit = ds_credit(target.index);
	check_eq(0, task_join(task, NULL));
	out->pmis = ds_pmi_count() - pmis;
	test_diag("threshold %zu: the view's first record: header 0x%llx, IP 0x%llx (loop "
		  "0x%llx-0x%llx); %llu records, %llu PMIs",
		  threshold, (unsigned long long)out->header, (unsigned long long)out->ip,
		  (unsigned long long)out->loop_start, (unsigned long long)out->loop_end,
		  (unsigned long long)out->credit.pebs_records, (unsigned long long)out->pmis);
}

TEST_OBSERVING_USER(ds, arch_pebs_owner_user_task_reads_its_records_in_its_view, 1000)
{
	struct peek peek;

	require_arch_pebs();
	peek_at_view(48, &peek);
	check_eq(T_BASIC | T_BASIC_RECORD, peek.header);
	check(peek.ip >= peek.loop_start && peek.ip <= peek.loop_end,
	      "IP 0x%llx outside the loop 0x%llx-0x%llx", (unsigned long long)peek.ip,
	      (unsigned long long)peek.loop_start, (unsigned long long)peek.loop_end);
	check_eq(4, peek.credit.pebs_records);
	check_eq(0, peek.pmis);
}

/*
 * With a threshold of one record, each record's PMI drains it (THRESH 1, as Linux writes it for
 * one record a PMI), and a drain zeroes what it took: the view then ends at once.
 */
TEST_OBSERVING_USER(ds, arch_pebs_records_drained_by_each_pmi_leave_the_view_empty, 1000)
{
	struct peek peek;

	require_arch_pebs();
	peek_at_view(1, &peek);
	check_eq(0, peek.header);
	check_eq(0, peek.ip);
	check_eq(4, peek.credit.pebs_records);
	check_eq(4, peek.pmis);
}

/*
 * Attach and detach from this CPU while the task counts on the other: the attach reaches it by
 * a call IPI, and records come once the task adds its event (after the attach: a PEBS event
 * that overflows before its CFG_C is enabled is not reloaded, and its records never come); the
 * detach, while the counter counts, withdraws the buffer there (PEBS_BASE 0; CFG_C.EN cleared
 * with the counter paused, else the runner fails a rule 18 report) before it is drained.
 */
struct remote {
	volatile bool attached, stop, failed;
	volatile unsigned long rounds;
};

static void count_until_stopped(void *arg)
{
	struct remote *r = arg;
	struct pmu_event event = instructions_retired();
	struct loop_span loop;

	while (!r->attached)
		cpu_relax();
	if (pmu_add_sampling_event(self_target().index, &event, PERIOD) != 0)
		r->failed = true;
	while (!r->stop) {
		counted_loop(PERIOD, &loop);
		r->rounds++;
	}
	pmu_release(self_target().index);
}

TEST_OBSERVING(ds, arch_pebs_attach_and_detach_reach_the_cpu_the_task_runs_on, 20000)
{
	struct ds_pebs_config config = arch_config(64, 48, PERIOD, T_BASIC_RECORD, 0);
	struct held attached, detached;
	struct remote r = { 0 };
	struct ds_target target;
	unsigned int other;
	struct task *task;

	require_arch_pebs();
	if (smp_cpus() < 2)
		test_skip("%u CPU online: the test needs 2", smp_cpus());
	other = this_cpu_index() == 0 ? 1 : 0;
	task = task_create("remote", count_until_stopped, &r, TASK_START_STOPPED);
	if (!task || sched_migrate(task, other) != 0)
		test_abort("no task on CPU %u", other);
	target = task_target(task);
	ds_credit_reset(target.index);
	task_continue(task);
	while (switch_task_running_cpu(target.index) != (int)other)
		cpu_relax();
	check_attached(ds_attach_pebs(&target, &config));
	r.attached = true;
	while (r.rounds < 4 && !r.failed)
		cpu_relax();
	if (!smp_call(other, read_held, &attached))
		test_abort("CPU %u took no call", other);
	check_eq(DS_OK, ds_detach(&target, DS_USER_PEBS));
	if (!smp_call(other, read_held, &detached))
		test_abort("CPU %u took no call", other);
	r.stop = true;
	check_eq(0, task_join(task, NULL));
	check(!r.failed, "pmu_add_sampling_event failed");
	test_diag("PEBS_BASE on CPU %u: 0x%llx attached, 0x%llx detached; %llu records", other,
		  (unsigned long long)attached.pebs_base, (unsigned long long)detached.pebs_base,
		  (unsigned long long)ds_credit(target.index).pebs_records);
	check(attached.pebs_base != 0, "the attach did not reach CPU %u", other);
	check_eq(0, detached.pebs_base);
	check(ds_credit(target.index).pebs_records >= 3, "%llu records in 4 periods or more",
	      (unsigned long long)ds_credit(target.index).pebs_records);
}

/*
 * A task that samples without PEBS (EVTSEL.INT) and one that PEBS-samples, on GP counter 0 of
 * one CPU, yielding to each other; on a DS-area part too. Into the PEBS task: PEBS is enabled
 * on the counter (PEBS_ENABLE or CFG_C.EN) before pmu/ rewrites its select, so pmu/'s
 * switch-out must have taken the sampler's INT off it (rule 15: a PEBS counter never has INT).
 * Into the sampler, on an arch-PEBS part ("unless needed"): ds/ cannot see the next task's
 * events, so a CFG_C with EN that the next task does not enable is cleared; left set, the
 * sampler's overflows would arm PEBS with PEBS_BASE 0 (rule 25). The runner fails a report.
 * The sampler takes its PMIs, the PEBS task its records (two periods a chunk). The sampler
 * starts once the PEBS task is attached: an attach applied while the CPU still holds another
 * task's select with INT on that counter breaks rule 15 until pmu/ writes the PEBS event's
 * select (docs/emulated-cpu.md, "Not done").
 */
struct alternating {
	bool pebs;
	unsigned int bit; /* the counter, GP i at bit i, fixed i at 32 + i */
	volatile bool *pebs_ready; /* the PEBS task attached and added its event */
	struct ds_credit credit;
	uint64_t overflows;
	bool failed;
};

static void loop_and_yield(void *arg)
{
	struct alternating *a = arg;
	struct ds_target target = self_target();
	struct pmu_event event = instructions_retired();
	/* 24 records: within format 0's one page (Core 2) too. */
	struct ds_pebs_config config = ds_support()->arch_pebs.usable
					       ? arch_config(24, 20, PERIOD, T_BASIC_RECORD, 0)
					       : pebs_config(24, 20, PERIOD);
	struct loop_span loop;

	config.enable = 1ull << a->bit;
	event.pebs = a->pebs;
	ds_credit_reset(target.index);
	while (!a->pebs && !*a->pebs_ready)
		sched_yield();
	if ((a->pebs && ds_attach_pebs(&target, &config) != DS_OK) ||
	    pmu_add_sampling_event_on(target.index, a->bit, &event, PERIOD) != 0) {
		a->failed = true;
		*a->pebs_ready = true;
		return;
	}
	*a->pebs_ready = true;
	for (unsigned int i = 0; i < CHUNKS; i++) {
		counted_loop(PERIOD, &loop); /* two periods */
		sched_yield();
	}
	a->overflows = pmu_read(target.index, 0).overflows;
	pmu_release(target.index);
	if (a->pebs && ds_detach(&target, DS_USER_PEBS) != DS_OK)
		a->failed = true;
	a->credit = ds_credit(target.index);
}

static void alternate_on(unsigned int bit, const char *name)
{
	volatile bool pebs_ready = false;
	struct alternating pebs = { .pebs = true, .bit = bit, .pebs_ready = &pebs_ready },
			   plain = { .pebs = false, .bit = bit, .pebs_ready = &pebs_ready };
	struct ds_arch_pebs_writes before, after;
	struct task *tp, *ts;
	uint64_t switches;

	tp = task_create("pebs", loop_and_yield, &pebs, TASK_START_STOPPED);
	ts = task_create("sampler", loop_and_yield, &plain, TASK_START_STOPPED);
	if (!tp || !ts || sched_migrate(tp, this_cpu_index()) != 0 ||
	    sched_migrate(ts, this_cpu_index()) != 0)
		test_abort("no tasks on CPU %u", this_cpu_index());
	before = ds_arch_pebs_writes();
	switches = sched_stats_cpu(this_cpu_index()).switches;
	task_continue(tp);
	task_continue(ts);
	check_eq(0, task_join(tp, NULL));
	check_eq(0, task_join(ts, NULL));
	after = ds_arch_pebs_writes();
	switches = sched_stats_cpu(this_cpu_index()).switches - switches;
	check(!pebs.failed && !plain.failed, "an attach, an event or a detach failed");
	test_diag("metric ds.arch_pebs_alternating_writes.%s cfg_c=%llu base=%llu index=%llu "
		  "switches=%llu",
		  name, (unsigned long long)(after.cfg_c - before.cfg_c),
		  (unsigned long long)(after.base - before.base),
		  (unsigned long long)(after.index - before.index), (unsigned long long)switches);
	test_diag("PEBS task: %llu records, %llu overflows; sampler: %llu records, %llu overflows",
		  (unsigned long long)pebs.credit.pebs_records, (unsigned long long)pebs.overflows,
		  (unsigned long long)plain.credit.pebs_records,
		  (unsigned long long)plain.overflows);
	check(pebs.credit.pebs_records >= 2 * CHUNKS - 1, "%llu PEBS records in %u periods",
	      (unsigned long long)pebs.credit.pebs_records, 2 * CHUNKS);
	check(plain.overflows >= 2 * CHUNKS - 1, "%llu PMIs in %u periods",
	      (unsigned long long)plain.overflows, 2 * CHUNKS);
	check_eq(0, plain.credit.pebs_records);
}

TEST_OBSERVING(ds, pebs_and_plain_sampling_tasks_alternate_on_one_counter_breaking_no_rule, 30000)
{
	if (ds_support()->pebs_reason[0])
		require_arch_pebs();
	alternate_on(0, "gp0");
}

/*
 * The same on fixed counter 0 (instructions), where architectural PEBS has it: the sampler's
 * field in FIXED_CTR_CTRL has the PMI bit (Linux intel_pmu_enable_fixed(): 0x8 unless PEBS),
 * which pmu/'s switch-out takes off before ds/ sets that counter's CFG_C.EN; left on, rule 15
 * breaks at the CFG_C write. The sampler's PMIs reload the fixed counter.
 */
TEST_OBSERVING(ds, arch_pebs_and_plain_sampling_tasks_alternate_on_fixed_counter_0, 30000)
{
	require_arch_pebs();
	if (!(ds_support()->arch_pebs.pebs & (1ull << 32)))
		test_skip("CPUID.23H.5:ECX bit 0 clear: fixed counter 0 cannot PEBS");
	if (pmu_info()->fixed_counters == 0)
		test_skip("CPUID.0AH:EDX[4:0]=0: no fixed counter");
	alternate_on(32, "fixed0");
}
