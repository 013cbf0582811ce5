/* SPDX-License-Identifier: MIT */
/* fuzz suite (manual): dr/, ds/ and pmu/ entry points with random and boundary arguments. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/cpuid.h"
#include "arch/x86/percpu.h"
#include "dr/bpext.h"
#include "dr/dr.h"
#include "ds/ds.h"
#include "ds/records.h"
#include "kernel/smp.h"
#include "lib/format.h"
#include "lib/string.h"
#include "pmu/pmu.h"
#include "runner/test.h"
#include "sched/sched.h"
#include "tests/kernel/lib/budget.h"
#include "tests/kernel/lib/smp_util.h"

/*
 * Run with tests=fuzz.* seed=N (make fuzz boots it on 2 CPUs): each operation calls one entry
 * point with arguments drawn from the seed, half of them boundary values, and checks the result
 * against a model of what the call must accept, then the invariants: a failure changes nothing,
 * a success changes exactly what it says, buffers handed in are written only where allowed (a
 * canary after them), every Debug Store buffer's canary holds, and the fields of every DS area
 * obey the SDM's rules. The first failures print the operation and a command that replays it.
 *
 * Targets are a stopped kernel task of the test's own (it never runs until the end, so no
 * breakpoint fires and no trace or counter runs under the emulated CPU) and, for Debug Store
 * areas, the CPUs other than this one (a CPU's area is active only after ds_activate_cpu()
 * there). The test's own task gets only data breakpoints on its own buffer. Indices outside
 * the live tasks and CPUs, and enum values outside their enums, are not passed: dr/, ds/ and
 * pmu/ index their tables with them unchecked, and the fuzzer would write out of bounds itself.
 *
 * The second test makes its calls from another CPU (a task on the last one), whose Debug Store
 * target is then CPU 0. Budget, each: quick 3,000 operations, soak 200,000.
 */

#define FUZZ_REPORT_MAX 8 /* failures printed in full; the rest are counted */
#define HITS_ARRAY 16
#define MANY_MAX 5
#define CANARY_WORD 0x5afec0de5afec0deull
#define DR_SLOT_COUNT 4
#define FUZZ_CPUS_MAX 8 /* CPUs whose pinned breakpoints the model follows */

struct fuzz {
	uint64_t state;
	uint64_t op;
	unsigned int failures;
	uint64_t accepted; /* calls that succeeded: the fuzzer is not only knocking on closed doors
			    */
	char what[160]; /* the operation under way */
};

/* The model: what each target holds, as the calls that succeeded say. */
struct model {
	bool dr_slot[2][DR_SLOT_COUNT]; /* [0]: the test's task, [1]: the helper */
	bool dr_system[DR_SLOT_COUNT];
	bool dr_pinned[FUZZ_CPUS_MAX][DR_SLOT_COUNT];
	bool ds_user[2][DS_USERS]; /* [0]: the helper, [1]: the other CPU */
	unsigned int pmu_events;
};

static uint8_t watched[64] __attribute__((aligned(64)));

static uint64_t fuzz_next(struct fuzz *fuzz)
{
	/* xorshift64* (Vigna) */
	fuzz->state ^= fuzz->state >> 12;
	fuzz->state ^= fuzz->state << 25;
	fuzz->state ^= fuzz->state >> 27;
	return fuzz->state * 0x2545f4914f6cdd1dull;
}

static uint64_t fuzz_below(struct fuzz *fuzz, uint64_t bound)
{
	return bound ? fuzz_next(fuzz) % bound : 0;
}

/* Half the time a boundary value (and its neighbours), else random bits of a random width. */
static uint64_t fuzz_value(struct fuzz *fuzz)
{
	static const uint64_t boundaries[] = {
		0,
		1,
		2,
		3,
		4,
		7,
		8,
		15,
		16,
		63,
		64,
		170,
		171,
		255,
		256,
		4095,
		4096,
		0x7fffffff,
		0xffffffff,
		0x100000000,
		SIZE_MAX / 24,
		SIZE_MAX / 24 + 1,
		SIZE_MAX / 2,
		SIZE_MAX - 1,
		SIZE_MAX,
	};
	uint64_t value;

	if (fuzz_next(fuzz) & 1) {
		value = boundaries[fuzz_below(fuzz, sizeof(boundaries) / sizeof(boundaries[0]))];
		return value + fuzz_below(fuzz, 3) - 1; /* and one either side */
	}
	value = fuzz_next(fuzz);
	return value >> fuzz_below(fuzz, 64);
}

static void fuzz_fail(struct fuzz *fuzz, const char *message, int64_t result)
{
	if (fuzz->failures++ < FUZZ_REPORT_MAX)
		check(false,
		      "operation %llu, %s: %s (returned %lld); replay: scripts/run --accel tcg "
		      "--smp 2 --cmdline 'tests=fuzz.* seed=%llu%s'",
		      (unsigned long long)fuzz->op, fuzz->what, message, (long long)result,
		      (unsigned long long)test_seed(), budget_soak() ? " budget=soak" : "");
}

static bool model_has_bpext(void)
{
	return cpuid(CPUID_LEAF_EXTENDED, 0).eax >= CPUID_LEAF_AMD_FEATURES &&
	       (cpuid(CPUID_LEAF_AMD_FEATURES, 0).ecx & CPUID_80000001_ECX_BPEXT);
}

/* The first rule of dr/breakpoint.h a kernel request breaks, in enum dr_error order. */
static enum dr_error dr_model_error(const struct dr_breakpoint *breakpoint)
{
	uint64_t address = breakpoint->address;
	unsigned int length = breakpoint->length;
	uint64_t top = address >> 47;

	/* A range (16 bytes and more) is a data breakpoint of a power of two (dr/bpext.h). */
	bool range = length >= DR_RANGE_MIN_LENGTH;

	if ((unsigned int)breakpoint->type > DR_TYPE_READ_WRITE)
		return DR_ERROR_TYPE;
	if (range ? (length & (length - 1)) != 0
		  : length != 1 && length != 2 && length != 4 && length != 8)
		return DR_ERROR_LENGTH;
	if ((breakpoint->type == DR_TYPE_EXECUTE && length != 1) ||
	    (range && breakpoint->type == DR_TYPE_IO))
		return DR_ERROR_EXECUTE_LENGTH;
	if (address % length)
		return DR_ERROR_ALIGNMENT;
	if (breakpoint->type == DR_TYPE_IO)
		return length == 8 || address >= DR_IO_PORT_LIMIT ? DR_ERROR_IO_PORT : DR_OK;
	if (top != 0 && top != 0x1ffff)
		return DR_ERROR_NON_CANONICAL;
	if (range) /* taken through the address masks, or refused with BPEXT's CPUID reason */
		return model_has_bpext() ? DR_OK : DR_ERROR_NEEDS_BPEXT;
	return DR_OK;
}

/* A request for the helper: any type, length and address. */
static struct dr_breakpoint dr_random_breakpoint(struct fuzz *fuzz)
{
	struct dr_breakpoint breakpoint;
	uint64_t kind = fuzz_below(fuzz, 4);

	breakpoint.type = (enum dr_type)(fuzz_below(fuzz, 8) < 7 ? fuzz_below(fuzz, 4)
								 : (uint32_t)fuzz_value(fuzz));
	breakpoint.length =
		fuzz_below(fuzz, 4) ? 1u << fuzz_below(fuzz, 4) : (unsigned int)fuzz_value(fuzz);
	if (kind == 0)
		breakpoint.address = (uint64_t)watched + fuzz_below(fuzz, sizeof(watched));
	else if (kind == 1)
		breakpoint.address = fuzz_value(fuzz);
	else if (kind == 2)
		breakpoint.address = ~fuzz_value(fuzz); /* the top of the address space */
	else
		breakpoint.address = fuzz_next(fuzz);
	return breakpoint;
}

/* A data breakpoint the test's own task can carry safely: on its own buffer, valid or not. */
static struct dr_breakpoint dr_self_breakpoint(struct fuzz *fuzz)
{
	struct dr_breakpoint breakpoint = dr_random_breakpoint(fuzz);

	if (breakpoint.type == DR_TYPE_EXECUTE || breakpoint.type == DR_TYPE_IO)
		breakpoint.type = DR_TYPE_WRITE;
	breakpoint.address = (uint64_t)watched + fuzz_below(fuzz, sizeof(watched));
	return breakpoint;
}

static unsigned int model_count(const bool *slots)
{
	unsigned int count = 0;

	for (unsigned int i = 0; i < DR_SLOT_COUNT; i++)
		count += slots[i];
	return count;
}

/* A result of an install: an error the model allows, or a free slot the model now records. */
static void dr_check_install(struct fuzz *fuzz, int result, const struct dr_breakpoint *breakpoint,
			     bool *slots, unsigned int task, unsigned int count_before)
{
	enum dr_error expected = dr_model_error(breakpoint);

	if (expected != DR_OK) {
		if (result != -(int)expected)
			fuzz_fail(fuzz, "an invalid request got another answer than its rule's",
				  result);
	} else if (result >= 0) {
		if (result >= DR_SLOT_COUNT || slots[result])
			fuzz_fail(fuzz, "a valid request got a slot that is no free slot", result);
		else
			slots[result] = true;
		fuzz->accepted++;
	} else if (result != -DR_ERROR_NO_SLOT && result != -DR_ERROR_DEBUG_MEMORY &&
		   result != -DR_ERROR_IO_NEEDS_DE) {
		fuzz_fail(fuzz, "a valid request was refused for no reason the rules give", result);
	}
	if (dr_task_count(task) != count_before + (expected == DR_OK && result >= 0))
		fuzz_fail(fuzz, "the task's breakpoint count moved otherwise than the result says",
			  (int64_t)dr_task_count(task));
	if (dr_task_count(task) + dr_task_free_slots(task) > DR_SLOT_COUNT)
		fuzz_fail(fuzz, "count and free slots add up to more than 4 debug registers",
			  (int64_t)dr_task_free_slots(task));
}

/* Every CPU's registers hold its pinned, the system-wide and the running task's breakpoints. */
static void dr_check_registers_suffice(struct fuzz *fuzz, const struct model *model,
				       unsigned int self, unsigned int helper)
{
	unsigned int cpus = smp_cpus() < FUZZ_CPUS_MAX ? smp_cpus() : FUZZ_CPUS_MAX;
	unsigned int tasks = dr_task_count(self) > dr_task_count(helper) ? dr_task_count(self)
									 : dr_task_count(helper);

	for (unsigned int cpu = 0; cpu < cpus; cpu++)
		if (model_count(model->dr_pinned[cpu]) + model_count(model->dr_system) + tasks >
		    DR_SLOT_COUNT)
			fuzz_fail(fuzz,
				  "pinned, system-wide and task breakpoints exceed 4 registers",
				  cpu);
}

/* Pinned breakpoints, on the CPUs that exist and past them. */
static void fuzz_dr_pinned(struct fuzz *fuzz, struct model *model, unsigned int self,
			   unsigned int helper)
{
	static const unsigned int beyond[] = { 0, 1, 2, UINT32_MAX };
	struct dr_breakpoint breakpoint = dr_self_breakpoint(fuzz);
	unsigned int cpu = fuzz_below(fuzz, 2) ? (unsigned int)fuzz_below(fuzz, smp_cpus())
					       : smp_cpus() + beyond[fuzz_below(fuzz, 4)];
	bool *slots = cpu < smp_cpus() && cpu < FUZZ_CPUS_MAX ? model->dr_pinned[cpu] : NULL;
	int slot = (int)fuzz_below(fuzz, DR_SLOT_COUNT + 1), result;

	if (cpu < smp_cpus() && !slots)
		return; /* a CPU the model does not follow */
	if (fuzz_next(fuzz) & 1) {
		enum dr_error rule = dr_model_error(&breakpoint);

		format(fuzz->what, sizeof(fuzz->what),
		       "dr_install_pinned(CPU %u, address 0x%llx, type %u, length %u)", cpu,
		       (unsigned long long)breakpoint.address, (unsigned int)breakpoint.type,
		       breakpoint.length);
		result = dr_install_pinned(cpu, &breakpoint, NULL, NULL);
		if (rule != DR_OK) {
			if (result != -(int)rule)
				fuzz_fail(fuzz, "an invalid request got another answer", result);
		} else if (!slots) {
			if (result != -DR_ERROR_NO_CPU)
				fuzz_fail(fuzz, "a CPU that is not online was not refused", result);
		} else if (result >= 0) {
			if (result >= DR_SLOT_COUNT || slots[result])
				fuzz_fail(fuzz, "a pinned slot that is not free", result);
			else
				slots[result] = true;
			fuzz->accepted++;
		} else if (result != -DR_ERROR_NO_SLOT) {
			fuzz_fail(fuzz, "a valid request refused for no reason", result);
		}
	} else {
		bool held = slots && slot < DR_SLOT_COUNT && slots[slot];

		format(fuzz->what, sizeof(fuzz->what), "dr_uninstall_pinned(CPU %u, slot %d)", cpu,
		       slot);
		result = dr_uninstall_pinned(cpu, slot);
		if (result != (held ? 0 : -DR_ERROR_NOT_INSTALLED))
			fuzz_fail(fuzz, "uninstall disagrees with the model", result);
		if (held && result == 0)
			slots[slot] = false;
	}
	dr_check_registers_suffice(fuzz, model, self, helper);
}

static void fuzz_dr(struct fuzz *fuzz, struct model *model, unsigned int self, unsigned int helper)
{
	bool on_helper = fuzz_next(fuzz) & 1;
	unsigned int task = on_helper ? helper : self;
	bool *slots = model->dr_slot[on_helper];
	unsigned int before = dr_task_count(task);

	switch (fuzz_below(fuzz, 6)) {
	case 0: {
		struct dr_breakpoint breakpoint =
			on_helper ? dr_random_breakpoint(fuzz) : dr_self_breakpoint(fuzz);
		int result;

		format(fuzz->what, sizeof(fuzz->what),
		       "dr_install(%s, address 0x%llx, type %u, length %u)",
		       on_helper ? "helper" : "self", (unsigned long long)breakpoint.address,
		       (unsigned int)breakpoint.type, breakpoint.length);
		result = dr_install(task, &breakpoint, NULL, NULL);
		dr_check_install(fuzz, result, &breakpoint, slots, task, before);
		break;
	}
	case 1: {
		int slot = fuzz_below(fuzz, 2) ? (int)fuzz_below(fuzz, DR_SLOT_COUNT + 1)
					       : (int)fuzz_value(fuzz);
		bool held = slot >= 0 && slot < DR_SLOT_COUNT && slots[slot];
		int result;

		format(fuzz->what, sizeof(fuzz->what), "dr_uninstall(%s, slot %d)",
		       on_helper ? "helper" : "self", slot);
		result = dr_uninstall(task, slot);
		if (result != (held ? 0 : -DR_ERROR_NOT_INSTALLED))
			fuzz_fail(fuzz,
				  held ? "a held slot was not uninstalled"
				       : "a slot that holds nothing was uninstalled",
				  result);
		if (held && result == 0)
			slots[slot] = false;
		if (dr_task_count(task) != model_count(slots))
			fuzz_fail(fuzz, "the count does not match the slots held",
				  (int64_t)dr_task_count(task));
		break;
	}
	case 2: {
		struct dr_breakpoint many[MANY_MAX];
		int out[MANY_MAX + 1];
		unsigned int count = (unsigned int)fuzz_below(fuzz, MANY_MAX + 1);
		bool valid = true;
		int result;

		for (unsigned int i = 0; i < count; i++) {
			many[i] = on_helper ? dr_random_breakpoint(fuzz) : dr_self_breakpoint(fuzz);
			valid &= dr_model_error(&many[i]) == DR_OK;
		}
		for (unsigned int i = 0; i <= MANY_MAX; i++)
			out[i] = (int)CANARY_WORD;
		format(fuzz->what, sizeof(fuzz->what), "dr_install_many(%s, %u breakpoints)",
		       on_helper ? "helper" : "self", count);
		result = dr_install_many(task, many, count, out);
		if (out[count] != (int)CANARY_WORD)
			fuzz_fail(fuzz, "wrote past the slots array", out[count]);
		if (result == 0) {
			fuzz->accepted++;
			if (!valid)
				fuzz_fail(fuzz, "installed a set with an invalid request", result);
			for (unsigned int i = 0; i < count && valid; i++) {
				if (out[i] < 0 || out[i] >= DR_SLOT_COUNT || slots[out[i]])
					fuzz_fail(fuzz, "gave a slot that was not free", out[i]);
				else
					slots[out[i]] = true;
			}
		} else if (result > 0 || result <= -DR_ERROR_COUNT) {
			fuzz_fail(fuzz, "returned neither 0 nor an error", result);
		}
		if (dr_task_count(task) != model_count(slots))
			fuzz_fail(fuzz, "all or none: the count does not match the slots held",
				  (int64_t)dr_task_count(task));
		break;
	}
	case 3: {
		struct dr_hit hits[HITS_ARRAY + 1];
		unsigned int capacity = (unsigned int)fuzz_below(fuzz, HITS_ARRAY + 1);
		unsigned int lost, taken;

		memset(hits, 0xa5, sizeof(hits));
		format(fuzz->what, sizeof(fuzz->what), "dr_read_hits(%s, capacity %u)",
		       on_helper ? "helper" : "self", capacity);
		taken = dr_read_hits(task, hits, capacity, &lost);
		if (taken > capacity)
			fuzz_fail(fuzz, "took more hits than the capacity", taken);
		for (size_t i = capacity * sizeof(hits[0]); i < sizeof(hits); i++) {
			if (((uint8_t *)hits)[i] != 0xa5) {
				fuzz_fail(fuzz, "wrote past the capacity", (int64_t)i);
				break;
			}
		}
		break;
	}
	case 4:
		fuzz_dr_pinned(fuzz, model, self, helper);
		break;
	default: {
		struct dr_breakpoint breakpoint = dr_self_breakpoint(fuzz);
		int result, slot = (int)fuzz_below(fuzz, DR_SLOT_COUNT + 1);

		if (fuzz_next(fuzz) & 1) {
			format(fuzz->what, sizeof(fuzz->what),
			       "dr_install_system(address 0x%llx, type %u, length %u)",
			       (unsigned long long)breakpoint.address,
			       (unsigned int)breakpoint.type, breakpoint.length);
			result = dr_install_system(&breakpoint, NULL, NULL);
			if (dr_model_error(&breakpoint) != DR_OK) {
				if (result != -(int)dr_model_error(&breakpoint))
					fuzz_fail(fuzz, "an invalid request got another answer",
						  result);
			} else if (result >= 0) {
				if (result >= DR_SLOT_COUNT || model->dr_system[result])
					fuzz_fail(fuzz, "a slot that is not free", result);
				else
					model->dr_system[result] = true;
			} else if (result != -DR_ERROR_NO_SLOT) {
				fuzz_fail(fuzz, "a valid request refused for no reason", result);
			}
		} else {
			bool held = slot < DR_SLOT_COUNT && model->dr_system[slot];

			format(fuzz->what, sizeof(fuzz->what), "dr_uninstall_system(slot %d)",
			       slot);
			result = dr_uninstall_system(slot);
			if (result != (held ? 0 : -DR_ERROR_NOT_INSTALLED))
				fuzz_fail(fuzz, "uninstall disagrees with the model", result);
			if (held && result == 0)
				model->dr_system[slot] = false;
		}
		dr_check_registers_suffice(fuzz, model, self, helper);
		break;
	}
	}
}

/* The SDM's rules for one user's fields of a DS area (Vol. 3 §18.6.8.2 / §20.6.3.4). */
static void ds_check_area(struct fuzz *fuzz, const struct ds_target *target, enum ds_user user,
			  const struct model *model, unsigned int which)
{
	const struct ds_area *area = ds_area_get(target);
	uint64_t base, index, max, threshold;

	if (!model->ds_user[which][user])
		return;
	if (!area) {
		fuzz_fail(fuzz, "an attached user's area is gone", user);
		return;
	}
	if (user == DS_USER_BTS) {
		base = area->bts_base, index = area->bts_index;
		max = area->bts_max, threshold = area->bts_threshold;
	} else {
		base = area->pebs_base, index = area->pebs_index;
		max = area->pebs_max, threshold = area->pebs_threshold;
	}
	if (!(base <= index && index <= max && base < max))
		fuzz_fail(fuzz, "DS fields out of order: base <= index <= max broken", user);
	if (threshold < base || (user == DS_USER_PEBS && threshold > max))
		fuzz_fail(fuzz, "DS threshold outside its buffer", user);
	if (!ds_canary_intact(target, user))
		fuzz_fail(fuzz, "something wrote past a DS buffer's maximum", user);
}

/* The record the CPU writes for config: its format's, or for adaptive formats the groups'. */
static size_t pebs_model_record_size(const struct ds_pebs_config *config)
{
	enum pebs_format format = (enum pebs_format)config->format;

	return pebs_format_is_adaptive(format) ? pebs_adaptive_record_size(config->data_cfg)
					       : pebs_record_size(format);
}

static void fuzz_ds(struct fuzz *fuzz, struct model *model, const struct ds_target *targets,
		    unsigned int target_count)
{
	unsigned int which = (unsigned int)fuzz_below(fuzz, target_count);
	const struct ds_target *target = &targets[which];
	bool had_area = ds_area_get(target) != NULL;
	enum ds_user user = fuzz_next(fuzz) & 1 ? DS_USER_BTS : DS_USER_PEBS;
	enum ds_error error;

	switch (fuzz_below(fuzz, 3)) {
	case 0: {
		struct ds_bts_config config = {
			.records = fuzz_value(fuzz),
			.circular = fuzz_next(fuzz) & 1,
			.threshold_records = fuzz_value(fuzz),
			.off_os = fuzz_below(fuzz, 4) == 0,
			.off_usr = fuzz_below(fuzz, 4) == 0,
		};
		size_t bytes;

		user = DS_USER_BTS;
		format(fuzz->what, sizeof(fuzz->what),
		       "ds_attach_bts(%s, %zu records, %s, threshold %zu)",
		       target->cpu ? "CPU" : "helper", config.records,
		       config.circular ? "circular" : "interrupt", config.threshold_records);
		error = ds_attach_bts(target, &config);
		if (error == DS_OK &&
		    (__builtin_mul_overflow(config.records, (size_t)BTS_RECORD_SIZE, &bytes) ||
		     (!config.circular && config.threshold_records > config.records)))
			fuzz_fail(fuzz, "took a buffer or threshold whose size does not fit",
				  error);
		break;
	}
	case 1: {
		struct ds_pebs_config config = {
			.format = fuzz_below(fuzz, 4) ? ds_support()->pebs_format
						      : (unsigned int)fuzz_value(fuzz),
			.record_size = fuzz_value(fuzz),
			.records = fuzz_value(fuzz),
			.threshold_records = fuzz_value(fuzz),
			.enable = fuzz_below(fuzz, 2) ? 1ull << fuzz_below(fuzz, 64)
						      : fuzz_value(fuzz),
			.reset_value = fuzz_value(fuzz),
		};
		size_t bytes;

		user = DS_USER_PEBS;
		format(fuzz->what, sizeof(fuzz->what),
		       "ds_attach_pebs(%s, format %u, %zu records of %zu, threshold %zu, enable "
		       "0x%llx)",
		       target->cpu ? "CPU" : "helper", config.format, config.records,
		       config.record_size, config.threshold_records,
		       (unsigned long long)config.enable);
		error = ds_attach_pebs(target, &config);
		if (error == DS_OK &&
		    (__builtin_mul_overflow(config.records, config.record_size, &bytes) ||
		     config.threshold_records > config.records))
			fuzz_fail(fuzz, "took a buffer or threshold whose size does not fit",
				  error);
		/* The CPU moves the index by its own record: smaller slots overrun max. */
		if (error == DS_OK && config.record_size < pebs_model_record_size(&config))
			fuzz_fail(fuzz, "took records smaller than the CPU's", error);
		break;
	}
	default:
		format(fuzz->what, sizeof(fuzz->what), "ds_detach(%s, %s)",
		       target->cpu ? "CPU" : "helper", user == DS_USER_BTS ? "BTS" : "PEBS");
		error = ds_detach(target, user);
		if (error != (model->ds_user[which][user] ? DS_OK : DS_ERROR_NOT_ATTACHED))
			fuzz_fail(fuzz, "detach disagrees with the model", error);
		if (error == DS_OK)
			model->ds_user[which][user] = false;
		if (ds_area_get(target) && !model->ds_user[which][DS_USER_BTS] &&
		    !model->ds_user[which][DS_USER_PEBS])
			fuzz_fail(fuzz, "the area outlived its last user", error);
		return;
	}
	if ((unsigned int)error >= DS_ERROR_COUNT)
		fuzz_fail(fuzz, "returned no enum ds_error", error);
	if (error == DS_OK) {
		fuzz->accepted++;
		if (model->ds_user[which][user])
			fuzz_fail(fuzz, "attached a user that was attached already", error);
		model->ds_user[which][user] = true;
	} else if ((ds_area_get(target) != NULL) != had_area) {
		fuzz_fail(fuzz, "a failed attach changed whether the area exists", error);
	}
	if (error == DS_ERROR_BUSY && !model->ds_user[which][user])
		fuzz_fail(fuzz, "busy, but the user is not attached", error);
	ds_check_area(fuzz, target, DS_USER_BTS, model, which);
	ds_check_area(fuzz, target, DS_USER_PEBS, model, which);
}

static void fuzz_pmu(struct fuzz *fuzz, struct model *model, unsigned int helper)
{
	struct pmu_event event = {
		.event = (uint8_t)fuzz_next(fuzz),
		.umask = (uint8_t)fuzz_next(fuzz),
		.cmask = fuzz_below(fuzz, 4) ? 0 : (uint8_t)fuzz_next(fuzz),
		.user = fuzz_next(fuzz) & 1,
		.kernel = fuzz_next(fuzz) & 1,
		.edge = fuzz_below(fuzz, 4) == 0,
		.invert = fuzz_below(fuzz, 4) == 0,
		.interrupt = fuzz_below(fuzz, 4) == 0,
	};
	struct pmu_reading reading;
	int index;

	switch (fuzz_below(fuzz, 5)) {
	case 0:
		format(fuzz->what, sizeof(fuzz->what), "pmu_add_event(helper, event 0x%02x)",
		       event.event);
		index = pmu_add_event(helper, &event);
		break;
	case 1: {
		unsigned int fixed = (unsigned int)(fuzz_below(fuzz, 2) ? fuzz_below(fuzz, 8)
									: fuzz_value(fuzz));

		format(fuzz->what, sizeof(fuzz->what), "pmu_add_fixed_event(helper, counter %u)",
		       fixed);
		index = pmu_add_fixed_event(helper, fixed, &event);
		break;
	}
	case 2: {
		uint64_t period = fuzz_value(fuzz);

		format(fuzz->what, sizeof(fuzz->what),
		       "pmu_add_sampling_event(helper, period %llu)", (unsigned long long)period);
		index = pmu_add_sampling_event(helper, &event, period);
		if (index >= 0 && (period == 0 || model->pmu_events != 0))
			fuzz_fail(fuzz, "a sampling event must be first, with a period", index);
		break;
	}
	case 3: {
		unsigned int at = (unsigned int)(fuzz_below(fuzz, 2) ? fuzz_below(fuzz, 40)
								     : fuzz_value(fuzz));

		format(fuzz->what, sizeof(fuzz->what), "pmu_read(helper, %u)", at);
		reading = pmu_read(helper, at);
		/* The helper never ran: nothing counted, no time enabled. */
		if (reading.count || reading.time_enabled || reading.time_running ||
		    reading.overflows)
			fuzz_fail(fuzz, "a task that never ran has counts", (int64_t)reading.count);
		return;
	}
	default:
		format(fuzz->what, sizeof(fuzz->what), "pmu_release(helper)");
		if (pmu_release(helper) != (model->pmu_events != 0))
			fuzz_fail(fuzz, "release disagrees with the model", model->pmu_events);
		model->pmu_events = 0;
		return;
	}
	if (index >= 0 && (unsigned int)index != model->pmu_events)
		fuzz_fail(fuzz, "an added event is not the next index", index);
	if (index >= 0) {
		model->pmu_events++;
		fuzz->accepted++;
	} else if (index != -1)
		fuzz_fail(fuzz, "returned neither an index nor -1", index);
}

static void idle_until_continued(void *arg)
{
	(void)arg;
}

/*
 * The whole run, on the calling task's CPU: arg is a mix (uint64_t) for the seed, so that each
 * test draws its own calls. The Debug Store CPU target is another CPU than this one.
 */
static void fuzz_run(void *arg)
{
	struct fuzz fuzz = { .state = test_seed() ^ *(const uint64_t *)arg };
	struct model model = { 0 };
	uint64_t ops = budget_count(3000, 200000);
	unsigned int self = sched_current()->index, target_count = 1;
	struct ds_target targets[2];
	struct task *helper =
		task_create("fuzz-helper", idle_until_continued, NULL, TASK_START_STOPPED);
	uint64_t counts[3] = { 0 };

	if (!helper)
		test_abort("task_create failed");
	if (!fuzz.state)
		fuzz.state = 1;
	targets[0] = (struct ds_target){ false, helper->index };
	if (smp_cpus() > 1)
		targets[target_count++] =
			(struct ds_target){ true, this_cpu_index() == 0 ? 1u : 0u };
	for (fuzz.op = 0; fuzz.op < ops; fuzz.op++) {
		unsigned int kind = (unsigned int)fuzz_below(&fuzz, 3);

		if (kind == 1 && ds_support()->bts_reason[0] && ds_support()->pebs_reason[0])
			kind = 0;
		if (kind == 2 && !pmu_usable())
			kind = 0;
		counts[kind]++;
		if (kind == 0)
			fuzz_dr(&fuzz, &model, self, helper->index);
		else if (kind == 1)
			fuzz_ds(&fuzz, &model, targets, target_count);
		else
			fuzz_pmu(&fuzz, &model, helper->index);
	}
	test_diag("fuzz: seed=%llu, CPU %u, %llu operations (dr %llu, ds %llu, pmu %llu), %llu "
		  "accepted, %u failed; "
		  "replay: scripts/run --accel tcg --smp 2 --cmdline 'tests=fuzz.* seed=%llu%s'",
		  (unsigned long long)test_seed(), this_cpu_index(), (unsigned long long)ops,
		  (unsigned long long)counts[0], (unsigned long long)counts[1],
		  (unsigned long long)counts[2], (unsigned long long)fuzz.accepted, fuzz.failures,
		  (unsigned long long)test_seed(), budget_soak() ? " budget=soak" : "");
	check_eq(0, fuzz.failures);
	/* Leave nothing behind: the runner checks the next test starts clean. */
	dr_uninstall_all(self);
	dr_uninstall_all(helper->index);
	dr_uninstall_all_system();
	dr_uninstall_all_pinned();
	for (unsigned int i = 0; i < target_count; i++) {
		ds_detach(&targets[i], DS_USER_BTS);
		ds_detach(&targets[i], DS_USER_PEBS);
	}
	pmu_release(helper->index);
	task_continue(helper);
	check_eq(0, task_join(helper, NULL));
}

TEST_FLAGS(fuzz, kernel_api_calls_keep_their_contracts, TEST_MANUAL)
{
	uint64_t mix = 0x9e3779b97f4a7c15ull;

	fuzz_run(&mix);
}

/* The same entry points called from another CPU than the one whose area and tasks they name. */
TEST_FLAGS(fuzz, kernel_api_calls_from_another_cpu_keep_their_contracts, TEST_MANUAL)
{
	uint64_t mix = 0xc2b2ae3d27d4eb4full;
	struct task *driver;

	smp_require_cpus(2);
	driver = smp_task_on(smp_cpus() - 1, "fuzz-driver", fuzz_run, &mix);
	check_eq(0, task_join(driver, NULL));
}

TEST_FLAGS(fuzz, the_next_test_starts_clean, TEST_MANUAL)
{
	unsigned int self = sched_current()->index;
	struct ds_target own = { false, self };

	check_eq(0, dr_task_count(self));
	check_eq(0, dr_uninstall_all_system());
	check_eq(0, dr_uninstall_all_pinned());
	check(ds_area_get(&own) == NULL, "the test's own task has a DS area");
	check(pmu_idle(), "counters run on this CPU");
}
