/* SPDX-License-Identifier: MIT */
/* The host shim: the arch/x86 services ds/ and pmu/ call, over the emulated CPU's registers. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arch/x86/apic.h"
#include "arch/x86/cpu.h"
#include "arch/x86/cpuid.h"
#include "arch/x86/debugctl.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/extable.h"
#include "arch/x86/msr.h"
#include "arch/x86/paging.h"
#include "arch/x86/percpu.h"
#include "debugstate/debugstate.h"
#include "dr/dr.h"
#include "ds/buffer.h"
#include "ds/ds.h"
#include "ds/records.h"
#include "ds/save_area.h"
#include "kernel/address_space.h"
#include "kernel/pfa.h"
#include "kernel/smp.h"
#include "kernel/spinlock.h"
#include "kernel/switch_hooks.h"
#include "lib/panic.h"
#include "pmu/pmu.h"
#include "tests/host/console_capture.h"
#include "tests/host/shim/shim.h"

#define TIME_LIMIT_S 20 /* a test's process is killed after it */
#define LOG_MAX 4096
#define CALLS_MAX 64
#define MAPPINGS_MAX 1024
#define TSC_STEP 1000 /* cycles per rdtsc_ordered() */
#define POISON 0x6b /* fills a page when it goes back to the pool */
#define BTS_ON (DEBUGCTL_TR | DEBUGCTL_BTS)

static struct emulator_profile profile;
static struct emulator_registers registers[SHIM_CPUS];
static struct cpu cpus[SHIM_CPUS];
static unsigned int cpu_now, cpu_count = 1;
static bool interrupts_on = true;
static uint64_t tsc;

static struct shim_logged_write log_entries[LOG_MAX];
static size_t log_count;

static uint8_t pool[SHIM_POOL_PAGES * PAGE_SIZE] __attribute__((aligned(PAGE_SIZE)));
static bool page_out[SHIM_POOL_PAGES];
static unsigned int run_pages[SHIM_POOL_PAGES]; /* at an allocation's first page: its count */
static unsigned int pages_out;
static int allocations_left = -1;

static const struct pmi_hooks *pmi_hooks[PMI_HOOKS];
static timer_hook timer_hooks[TIMER_HOOKS];

static unsigned int calls[CALLS_MAX]; /* the target CPU of each smp_call() to another */
static unsigned int call_count;

static struct shim_mapping mappings[MAPPINGS_MAX];
static size_t mapping_count;

/* Rule 3: a feature's buffer fields as they were when it turned on (or the CPU last stored). */
enum feature {
	FEATURE_BTS,
	FEATURE_PEBS,
	FEATURES,
};
static const char *const feature_names[FEATURES] = { "BTS", "PEBS" };
static struct {
	bool on;
	struct ds_buffer_fields seen;
} tracked[SHIM_CPUS][FEATURES];

static void print_log(void);

/* A fault the kernel would take: the test ends here, failed, with the log so far. */
static void __attribute__((noreturn, format(printf, 1, 2))) fail_now(const char *fmt, ...)
{
	char message[256];
	va_list args;

	va_start(args, fmt);
	vsnprintf(message, sizeof(message), fmt, args);
	va_end(args);
	host_checkf(false, "CPU %u: %s", cpu_now, message);
	print_log();
	fflush(stdout);
	_exit(1);
}

/* The panic handler (lib/panic.h), as kernel/shutdown registers one: the test ends, failed. */
static void __attribute__((noreturn)) shim_panic(const char *reason)
{
	fail_now("Bail out! %s", reason);
}

/* Running a test in a process of its own. */

static void power_on(const char *spec)
{
	char copy[256], err[128];
	char *save = NULL, *item;
	const struct emulator_profile *found;

	snprintf(copy, sizeof(copy), "%s", spec);
	item = strtok_r(copy, ",", &save);
	found = emulator_profile_find(item);
	if (!found)
		fail_now("no emulated CPU profile '%s' (%s)", item ? item : "",
			 emulator_profile_names());
	profile = *found;
	while ((item = strtok_r(NULL, ",", &save)) != NULL) {
		char *value = strchr(item, ':');

		if (!value)
			fail_now("override '%s' is not KEY:VALUE", item);
		*value++ = '\0';
		if (!emulator_profile_override(&profile, item, value, err, sizeof(err)))
			fail_now("override %s:%s: %s", item, value, err);
	}
	for (unsigned int i = 0; i < SHIM_CPUS; i++) {
		emulator_registers_reset(&registers[i], &profile);
		cpus[i].self = &cpus[i];
		cpus[i].index = i;
	}
	panic_set_handler(shim_panic);
	console_capture_start();
}

void shim_run(const char *name, const char *cpu, void (*body)(void))
{
	char output[4096];
	bool printed = false;
	int fds[2], status = 0;
	unsigned int checks_before;
	ssize_t got;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	if (!host_check(pipe(fds) == 0))
		return;
	pid = fork();
	if (!host_check(pid >= 0))
		return;
	if (pid == 0) {
		close(fds[0]);
		if (dup2(fds[1], STDOUT_FILENO) < 0)
			_exit(125);
		close(fds[1]);
		alarm(TIME_LIMIT_S);
		power_on(cpu);
		checks_before = host_test_checks_made();
		body();
		/* A body that checked nothing asserted nothing: it fails, as the kernel's runner
		 * does. */
		if (host_test_checks_made() == checks_before)
			printf("    %s (cpu:%s): no check was made\n", name, cpu);
		fflush(stdout);
		/* No exit-time leak check: the code under test has no heap; the pool counts. */
		_exit(0);
	}
	close(fds[1]);
	while ((got = read(fds[0], output, sizeof(output))) != 0) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			break;
		fwrite(output, 1, (size_t)got, stdout);
		printed = true;
	}
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			host_checkf(false, "%s: waitpid failed", name);
			return;
		}
	}
	if (WIFSIGNALED(status))
		host_checkf(false, "%s (cpu:%s): killed by signal %d%s", name, cpu,
			    WTERMSIG(status), WTERMSIG(status) == SIGALRM ? ": time limit" : "");
	else if (WEXITSTATUS(status) != 0)
		host_checkf(false, "%s (cpu:%s): ended with status %d", name, cpu,
			    WEXITSTATUS(status));
	else
		host_checkf(!printed, "%s (cpu:%s): a check failed", name, cpu);
}

void shim_boot(void)
{
	uint64_t debugctl;

	debugctl_init_cpu(&debugctl); /* dr_init() */
	/* Every index is a live task's here: the shim switches between them, never creating one. */
	for (unsigned int index = 0; index < SWITCH_TASKS_MAX; index++)
		switch_task_set_live(index, true);
	pmu_init();
	ds_init();
	debugstate_init(); /* the one switch hook and PMI handler, as boot/main.c registers them */
	shim_log_clear();
}

/* dr/ is not linked here: its switch steps, which debugstate/ calls, do nothing. */
void dr_switch_in(const struct switch_task *prev, const struct switch_task *next)
{
	(void)prev;
	(void)next;
}

void dr_task_exit(const struct switch_task *task)
{
	(void)task;
}

/* The CPU. */

const struct emulator_profile *shim_profile(void)
{
	return &profile;
}

struct emulator_registers *shim_registers(unsigned int cpu)
{
	return &registers[cpu];
}

void shim_set_cpu(unsigned int cpu)
{
	if (cpu >= SHIM_CPUS)
		fail_now("no CPU %u", cpu);
	cpu_now = cpu;
}

void shim_set_cpus(unsigned int count)
{
	if (count == 0 || count > SHIM_CPUS)
		fail_now("%u CPUs: 1 to %u", count, SHIM_CPUS);
	cpu_count = count;
}

unsigned int shim_cpu_checked(unsigned int cpu)
{
	if (cpu >= SHIM_CPUS)
		fail_now("per-CPU data of CPU %u asked for: the shim has %u", cpu, SHIM_CPUS);
	return cpu;
}

unsigned int percpu_count(void)
{
	return SHIM_CPUS;
}

struct cpu *this_cpu(void)
{
	return &cpus[cpu_now];
}

unsigned int this_cpu_index(void)
{
	return cpu_now;
}

void local_irq_enable(void)
{
	interrupts_on = true;
}

void local_irq_disable(void)
{
	interrupts_on = false;
}

unsigned long local_irq_save(void)
{
	unsigned long flags = interrupts_on ? SHIM_RFLAGS_IF : 0;

	interrupts_on = false;
	return flags;
}

void local_irq_restore(unsigned long flags)
{
	if (flags & SHIM_RFLAGS_IF)
		interrupts_on = true;
}

uint64_t rdtsc_ordered(void)
{
	tsc += TSC_STEP;
	return tsc;
}

struct cpuid_result cpuid(uint32_t leaf, uint32_t subleaf)
{
	struct cpuid_result none = { 0 };

	return emulator_owns_cpuid(leaf) ? emulator_cpuid(&profile, leaf, subleaf, none) : none;
}

/* The DS area the CPU would read: IA32_DS_AREA, if it names pool memory. */
static struct ds_area *model_area(unsigned int cpu)
{
	uint64_t address = registers[cpu].ds_area;

	if (address < (uint64_t)pool ||
	    address + sizeof(struct ds_area) > (uint64_t)pool + sizeof(pool))
		return NULL;
	return (struct ds_area *)address;
}

static bool feature_on(unsigned int cpu, enum feature feature)
{
	return feature == FEATURE_BTS ? (registers[cpu].debugctl & BTS_ON) == BTS_ON
				      : registers[cpu].pebs_enable != 0;
}

static bool area_fields(unsigned int cpu, enum feature feature, struct ds_buffer_fields *out)
{
	const struct ds_area *area = model_area(cpu);

	if (!area)
		return false;
	if (feature == FEATURE_BTS)
		*out = (struct ds_buffer_fields){ area->bts_base, area->bts_index, area->bts_max,
						  area->bts_threshold };
	else
		*out = (struct ds_buffer_fields){ area->pebs_base, area->pebs_index, area->pebs_max,
						  area->pebs_threshold };
	return true;
}

/* Rule 3, for both features of a CPU. */
static void check_fields(unsigned int cpu)
{
	for (unsigned int f = 0; f < FEATURES; f++) {
		struct ds_buffer_fields now, *seen = &tracked[cpu][f].seen;

		if (!tracked[cpu][f].on || !feature_on(cpu, f) || !area_fields(cpu, f, &now))
			continue;
		if (memcmp(&now, seen, sizeof(now)) == 0)
			continue;
		host_checkf(
			false,
			"CPU %u: rule 3: %s fields changed while it was on: base 0x%llx->0x%llx "
			"index 0x%llx->0x%llx max 0x%llx->0x%llx threshold 0x%llx->0x%llx",
			cpu, feature_names[f], (unsigned long long)seen->base,
			(unsigned long long)now.base, (unsigned long long)seen->index,
			(unsigned long long)now.index, (unsigned long long)seen->max,
			(unsigned long long)now.max, (unsigned long long)seen->threshold,
			(unsigned long long)now.threshold);
		*seen = now; /* report a change once */
	}
}

/* After a write: a feature that turned on (or got another area) is tracked from here. */
static void track(unsigned int cpu, uint32_t msr)
{
	for (unsigned int f = 0; f < FEATURES; f++) {
		bool on = feature_on(cpu, f);

		if (on && (!tracked[cpu][f].on || msr == MSR_IA32_DS_AREA)) {
			tracked[cpu][f].on = area_fields(cpu, f, &tracked[cpu][f].seen);
			if (!tracked[cpu][f].on)
				host_checkf(false,
					    "CPU %u: %s on with IA32_DS_AREA 0x%llx: not memory",
					    cpu, feature_names[f],
					    (unsigned long long)registers[cpu].ds_area);
		} else if (!on) {
			tracked[cpu][f].on = false;
		}
	}
}

static bool model_read(uint32_t index, uint64_t *value)
{
	if (!emulator_owns_msr(index))
		return true;
	return emulator_read_msr(&registers[cpu_now], &profile, index, value);
}

/* A write as the CPU takes it: checked against rules 3 and 4, logged, #GP or done. */
static bool model_write(uint32_t index, uint64_t value, bool safe)
{
	struct emulator_registers *r = &registers[cpu_now];
	bool faulted;

	this_cpu()->writes.msr++;
	check_fields(cpu_now);
	if (index == MSR_IA32_DS_AREA && value != r->ds_area &&
	    ((r->debugctl & BTS_ON) == BTS_ON || r->pebs_enable))
		host_checkf(false,
			    "CPU %u: rule 4: IA32_DS_AREA 0x%llx -> 0x%llx while BTS or PEBS is on "
			    "(DEBUGCTL 0x%llx, PEBS_ENABLE 0x%llx)",
			    cpu_now, (unsigned long long)r->ds_area, (unsigned long long)value,
			    (unsigned long long)r->debugctl, (unsigned long long)r->pebs_enable);
	faulted = !emulator_owns_msr(index) || emulator_write_msr(r, &profile, index, value);
	if (log_count == LOG_MAX)
		fail_now("more than %u MSR writes", LOG_MAX);
	log_entries[log_count++] =
		(struct shim_logged_write){ cpu_now, index, value, safe, faulted };
	if (!faulted)
		track(cpu_now, index);
	return faulted;
}

uint64_t rdmsr(uint32_t index)
{
	char name[32];
	uint64_t value = 0;

	if (model_read(index, &value))
		fail_now("rdmsr(%s) raised #GP(0)%s", shim_msr_name(index, name, sizeof(name)),
			 emulator_owns_msr(index) ? "" : ": an MSR the model does not have");
	return value;
}

uint32_t rdmsr_safe(uint32_t index, uint64_t *value)
{
	if (model_read(index, value)) {
		*value = 0;
		return EXINFO(X86_EXC_GP, 0);
	}
	return 0;
}

void wrmsr(uint32_t index, uint64_t value)
{
	char name[32];

	if (model_write(index, value, false))
		fail_now("wrmsr(%s, 0x%llx) raised #GP(0)%s",
			 shim_msr_name(index, name, sizeof(name)), (unsigned long long)value,
			 emulator_owns_msr(index) ? "" : ": an MSR the model does not have");
}

uint32_t wrmsr_safe(uint32_t index, uint64_t value)
{
	return model_write(index, value, true) ? EXINFO(X86_EXC_GP, 0) : 0;
}

/* The log. */

size_t shim_writes(void)
{
	return log_count;
}

const struct shim_logged_write *shim_write_at(size_t i)
{
	return &log_entries[i];
}

void shim_log_clear(void)
{
	log_count = 0;
}

const char *shim_msr_name(uint32_t msr, char *buffer, size_t size)
{
	static const struct {
		uint32_t first;
		unsigned int count;
		const char *name;
	} names[] = {
		{ MSR_IA32_DEBUGCTL, 1, "IA32_DEBUGCTL" },
		{ MSR_IA32_DS_AREA, 1, "IA32_DS_AREA" },
		{ MSR_IA32_PEBS_ENABLE, 1, "IA32_PEBS_ENABLE" },
		{ MSR_PEBS_DATA_CFG, 1, "MSR_PEBS_DATA_CFG" },
		{ MSR_IA32_PERF_CAPABILITIES, 1, "IA32_PERF_CAPABILITIES" },
		{ MSR_IA32_MISC_ENABLE, 1, "IA32_MISC_ENABLE" },
		{ MSR_IA32_FIXED_CTR_CTRL, 1, "IA32_FIXED_CTR_CTRL" },
		{ MSR_IA32_PERF_GLOBAL_CTRL, 1, "IA32_PERF_GLOBAL_CTRL" },
		{ MSR_IA32_PERF_GLOBAL_STATUS, 1, "IA32_PERF_GLOBAL_STATUS" },
		{ MSR_IA32_PERF_GLOBAL_OVF_CTRL, 1, "IA32_PERF_GLOBAL_OVF_CTRL" },
		{ MSR_IA32_PERFEVTSEL0, EMULATOR_MAX_GP, "IA32_PERFEVTSEL" },
		{ MSR_IA32_PMC0, EMULATOR_MAX_GP, "IA32_PMC" },
		{ MSR_IA32_A_PMC0, EMULATOR_MAX_GP, "IA32_A_PMC" },
		{ MSR_IA32_FIXED_CTR0, EMULATOR_MAX_FIXED, "IA32_FIXED_CTR" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (msr < names[i].first || msr - names[i].first >= names[i].count)
			continue;
		if (names[i].count == 1)
			snprintf(buffer, size, "%s", names[i].name);
		else
			snprintf(buffer, size, "%s%u", names[i].name, msr - names[i].first);
		return buffer;
	}
	snprintf(buffer, size, "MSR 0x%x", msr);
	return buffer;
}

/* One write, as "CPU n NAME value" (cpu < 0: an expected write, on no CPU in particular). */
static void print_write(const char *prefix, int cpu, uint32_t msr, uint64_t value, const char *how)
{
	char name[32], where[16] = "";

	if (cpu >= 0)
		snprintf(where, sizeof(where), "CPU %d", cpu);
	printf("        %-8s %-5s %-26s 0x%llx%s\n", prefix, where,
	       shim_msr_name(msr, name, sizeof(name)), (unsigned long long)value, how);
}

static const char *write_how(const struct shim_logged_write *w)
{
	return w->faulted ? (w->safe ? " (safe, #GP)" : " (#GP)") : w->safe ? " (safe)" : "";
}

static void print_log(void)
{
	printf("        the MSR writes made (%zu):\n", log_count);
	for (size_t i = 0; i < log_count; i++)
		print_write("", (int)log_entries[i].cpu, log_entries[i].msr, log_entries[i].value,
			    write_how(&log_entries[i]));
}

bool shim_check_writes_at(const char *file, int line, const struct shim_write *expected,
			  size_t count)
{
	bool same = log_count == count;

	for (size_t i = 0; same && i < count; i++)
		same = log_entries[i].msr == expected[i].msr &&
		       log_entries[i].value == expected[i].value && !log_entries[i].faulted;
	if (!host_checkf_at(file, line, same, "MSR writes differ from the %zu expected:", count)) {
		for (size_t i = 0; i < count; i++)
			print_write("expected", -1, expected[i].msr, expected[i].value, "");
		print_log();
	}
	return same;
}

/* Memory. */

static unsigned int page_of(uint64_t phys)
{
	return (unsigned int)((phys - SHIM_POOL_PHYS) / PAGE_SIZE);
}

static bool in_pool(uint64_t phys)
{
	return phys >= SHIM_POOL_PHYS && phys - SHIM_POOL_PHYS < sizeof(pool);
}

uint64_t pfa_alloc_pages(unsigned int count)
{
	if (count == 0 || count > 64)
		fail_now("pfa_alloc_pages(%u): 1 to 64 pages", count);
	if (allocations_left == 0)
		return 0;
	for (unsigned int first = 0; first + count <= SHIM_POOL_PAGES; first++) {
		unsigned int free = 0;

		while (free < count && !page_out[first + free])
			free++;
		if (free < count) {
			first += free;
			continue;
		}
		for (unsigned int i = 0; i < count; i++)
			page_out[first + i] = true;
		run_pages[first] = count;
		pages_out += count;
		if (allocations_left > 0)
			allocations_left--;
		memset(&pool[first * PAGE_SIZE], 0, count * PAGE_SIZE);
		return SHIM_POOL_PHYS + (uint64_t)first * PAGE_SIZE;
	}
	return 0;
}

uint64_t pfa_alloc(void)
{
	return pfa_alloc_pages(1);
}

void pfa_free_pages(uint64_t phys, unsigned int count)
{
	unsigned int first = page_of(phys);

	if (!in_pool(phys) || phys % PAGE_SIZE || !page_out[first] || run_pages[first] != count)
		fail_now("pfa_free_pages(0x%llx, %u): not an allocation of %u pages",
			 (unsigned long long)phys, count, count);
	for (unsigned int i = 0; i < count; i++)
		page_out[first + i] = false;
	run_pages[first] = 0;
	pages_out -= count;
	memset(&pool[first * PAGE_SIZE], POISON, count * PAGE_SIZE);
}

void pfa_free(uint64_t phys)
{
	pfa_free_pages(phys, 1);
}

unsigned int shim_pages_out(void)
{
	return pages_out;
}

void shim_pool_limit(int n)
{
	allocations_left = n;
}

void *phys_to_virt(uint64_t phys)
{
	if (!in_pool(phys))
		fail_now("phys_to_virt(0x%llx): not in the pool", (unsigned long long)phys);
	return &pool[phys - SHIM_POOL_PHYS];
}

uint64_t virt_to_phys(const void *virt)
{
	uint64_t address = (uint64_t)virt;

	if (address < (uint64_t)pool || address - (uint64_t)pool >= sizeof(pool))
		fail_now("virt_to_phys(%p): not in the pool", virt);
	return SHIM_POOL_PHYS + (address - (uint64_t)pool);
}

static void record_mapping(struct shim_mapping mapping)
{
	if (mapping_count == MAPPINGS_MAX)
		fail_now("more than %u address-space changes", MAPPINGS_MAX);
	mappings[mapping_count++] = mapping;
}

bool address_space_map(uint64_t root, uint64_t virt, uint64_t phys, uint64_t flags)
{
	record_mapping((struct shim_mapping){ SHIM_MAP, root, virt, phys, flags });
	return true;
}

bool address_space_unmap(uint64_t root, uint64_t virt)
{
	record_mapping((struct shim_mapping){ SHIM_UNMAP, root, virt, 0, 0 });
	return true;
}

void address_space_flush_if_loaded(uint64_t root)
{
	record_mapping((struct shim_mapping){ SHIM_FLUSH, root, 0, 0, 0 });
}

size_t shim_mappings(void)
{
	return mapping_count;
}

const struct shim_mapping *shim_mapping_at(size_t i)
{
	return &mappings[i];
}

/* Tasks. */

struct switch_task shim_task(unsigned int index)
{
	return (struct switch_task){ .index = index, .id = index + 1 };
}

void shim_set_current(unsigned int index)
{
	struct switch_task task = shim_task(index);

	switch_hooks_set_current(&task);
}

void shim_switch(unsigned int prev, unsigned int next)
{
	struct switch_task from = shim_task(prev), to = shim_task(next);
	unsigned long flags = local_irq_save(); /* the scheduler switches with interrupts off */

	switch_hooks_run(&from, &to);
	local_irq_restore(flags);
}

/* Interrupts and other CPUs. */

void pmi_register(const struct pmi_hooks *hooks)
{
	for (unsigned int i = 0; i < PMI_HOOKS; i++) {
		if (!pmi_hooks[i]) {
			pmi_hooks[i] = hooks;
			return;
		}
	}
	fail_now("more than %u PMI hooks", PMI_HOOKS);
}

void timer_register_hook(timer_hook hook)
{
	for (unsigned int i = 0; i < TIMER_HOOKS; i++) {
		if (!timer_hooks[i]) {
			timer_hooks[i] = hook;
			return;
		}
	}
	fail_now("more than %u timer hooks", TIMER_HOOKS);
}

unsigned int shim_pmi_hooks(void)
{
	unsigned int count = 0;

	while (count < PMI_HOOKS && pmi_hooks[count])
		count++;
	return count;
}

unsigned int shim_timer_hooks(void)
{
	unsigned int count = 0;

	while (count < TIMER_HOOKS && timer_hooks[count])
		count++;
	return count;
}

void shim_pmi(void)
{
	struct cpu_regs regs = { .vector = VECTOR_PMI };
	unsigned int count = shim_pmi_hooks();
	unsigned long flags = local_irq_save();

	for (unsigned int i = 0; i < count; i++)
		if (pmi_hooks[i]->enter)
			pmi_hooks[i]->enter(&regs);
	for (unsigned int i = count; i-- > 0;)
		if (pmi_hooks[i]->exit)
			pmi_hooks[i]->exit(&regs);
	local_irq_restore(flags);
}

void shim_tick(void)
{
	struct cpu_regs regs = { .vector = VECTOR_TIMER };
	unsigned long flags = local_irq_save();

	for (unsigned int i = 0; i < shim_timer_hooks(); i++)
		timer_hooks[i](&regs);
	local_irq_restore(flags);
}

unsigned int smp_cpus(void)
{
	return cpu_count;
}

/* Synchronous, as the real one: fn runs on the target CPU (as this CPU, meanwhile) and returns. */
bool smp_call(unsigned int cpu, void (*fn)(void *), void *arg)
{
	unsigned int caller = cpu_now;
	unsigned long flags;

	if (cpu >= cpu_count)
		return false; /* not online */
	if (cpu != caller) {
		if (call_count == CALLS_MAX)
			fail_now("more than %u smp_call()s to other CPUs", CALLS_MAX);
		calls[call_count++] = cpu;
	}
	cpu_now = cpu;
	flags = local_irq_save(); /* interrupt context */
	fn(arg);
	local_irq_restore(flags);
	cpu_now = caller;
	return true;
}

unsigned int shim_smp_calls(void)
{
	return call_count;
}

unsigned int shim_smp_call_target(unsigned int i)
{
	return calls[i];
}

/* The CPU's own side. */

void shim_bts_store(uint64_t from, uint64_t to)
{
	struct emulator_registers *r = &registers[cpu_now];
	struct ds_area *area = model_area(cpu_now);
	uint8_t *record;

	if ((r->debugctl & BTS_ON) != BTS_ON || !area)
		fail_now("a BTS store with BTS off (DEBUGCTL 0x%llx, DS_AREA 0x%llx)",
			 (unsigned long long)r->debugctl, (unsigned long long)r->ds_area);
	check_fields(cpu_now);
	if (area->bts_index + BTS_RECORD_SIZE > area->bts_max)
		return; /* full, not circular: the record is lost */
	record = (uint8_t *)area->bts_index;
	memcpy(record + BTS_RECORD_FROM, &from, sizeof(from));
	memcpy(record + BTS_RECORD_TO, &to, sizeof(to));
	memset(record + BTS_RECORD_FLAGS, 0, sizeof(uint64_t));
	area->bts_index += BTS_RECORD_SIZE;
	if ((r->debugctl & DEBUGCTL_BTINT) && area->bts_index == area->bts_threshold)
		r->global_status |= PERF_GLOBAL_STATUS_BUFFER_OVF;
	if (area->bts_index >= area->bts_max && area->bts_threshold > area->bts_max)
		area->bts_index = area->bts_base; /* circular */
	area_fields(cpu_now, FEATURE_BTS, &tracked[cpu_now][FEATURE_BTS].seen);
}

void shim_check_clean(void)
{
	for (unsigned int cpu = 0; cpu < SHIM_CPUS; cpu++) {
		const struct emulator_registers *r = &registers[cpu];

		check_fields(cpu);
		host_checkf(r->debugctl == 0 && r->ds_area == 0 && r->pebs_enable == 0,
			    "CPU %u left DEBUGCTL 0x%llx DS_AREA 0x%llx PEBS_ENABLE 0x%llx", cpu,
			    (unsigned long long)r->debugctl, (unsigned long long)r->ds_area,
			    (unsigned long long)r->pebs_enable);
	}
	host_checkf(pages_out == 0, "%u pages of the pool still out", pages_out);
}

static unsigned long shim_cr4;

unsigned long read_cr4(void)
{
	return shim_cr4;
}

void write_cr4(unsigned long value)
{
	shim_cr4 = value;
}
