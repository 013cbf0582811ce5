/* SPDX-License-Identifier: MIT */
/* The host shim under ds/ and pmu/: an emulated CPU, its MSR write log, pool and hooks. */
#ifndef TESTS_HOST_SHIM_SHIM_H
#define TESTS_HOST_SHIM_SHIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "emulator/profile.h"
#include "emulator/registers.h"
#include "kernel/switch_hooks.h"
#include "tests/host/host_test.h"

/*
 * A test of the real ds/ and pmu/ on one emulated CPU. cpu is what the kernel's
 * emulate=cpu:NAME[,KEY:VALUE...] takes: "icelake", "core2,leftovers:1". Each test runs in a
 * process of its own, forked from the runner, so it starts from power-on: the statics of ds/,
 * pmu/ and arch/x86 as at boot, the model's registers out of RESET for the profile, an empty
 * log and pool. A check that fails prints; the runner's test fails when the process printed
 * anything or did not exit 0 (a #GP, a sanitizer report, a time limit).
 */
#define SHIM_TEST(test_name, cpu)                                 \
	static void shim_body_##test_name(void);                  \
	HOST_TEST(test_name)                                      \
	{                                                         \
		shim_run(#test_name, cpu, shim_body_##test_name); \
	}                                                         \
	static void shim_body_##test_name(void)

void shim_run(const char *name, const char *cpu, void (*body)(void));

/*
 * Boot as boot/main.c does on the boot CPU: IA32_DEBUGCTL's shadow from the MSR (dr_init()),
 * pmu_init(), ds_init(), debugstate_init(). Then the log is emptied; the console capture keeps
 * their diagnostics.
 */
void shim_boot(void);

/* The CPU. */
const struct emulator_profile *shim_profile(void);
/* CPU cpu's registers, for a test to read, or to play the CPU (a count, GLOBAL_STATUS bits). */
struct emulator_registers *shim_registers(unsigned int cpu);
/* The CPU the code runs on from now (this_cpu_index()); and how many are online (smp_cpus()). */
void shim_set_cpu(unsigned int cpu);
void shim_set_cpus(unsigned int count);

/* The MSR write log: every wrmsr and wrmsr_safe in order, on every CPU, faulted ones too. */
struct shim_write {
	uint32_t msr;
	uint64_t value;
};

struct shim_logged_write {
	unsigned int cpu;
	uint32_t msr;
	uint64_t value;
	bool safe; /* wrmsr_safe() */
	bool faulted; /* the model raised #GP(0): nothing changed */
};

size_t shim_writes(void);
const struct shim_logged_write *shim_write_at(size_t i);
void shim_log_clear(void);
/* "IA32_DS_AREA", "IA32_PERFEVTSEL2", ...: for messages. */
const char *shim_msr_name(uint32_t msr, char *buffer, size_t size);

/* The log holds exactly these writes, in this order, none faulted; else print both lists. */
bool shim_check_writes_at(const char *file, int line, const struct shim_write *expected,
			  size_t count);
#define SHIM_WRITE_LIST(...) ((const struct shim_write[]){ __VA_ARGS__ })
#define shim_check_writes(...)                                                 \
	shim_check_writes_at(__FILE__, __LINE__, SHIM_WRITE_LIST(__VA_ARGS__), \
			     sizeof(SHIM_WRITE_LIST(__VA_ARGS__)) / sizeof(struct shim_write))
#define shim_check_no_writes() shim_check_writes_at(__FILE__, __LINE__, NULL, 0)

/*
 * The page pool behind pfa_alloc() and pfa_alloc_pages(): SHIM_POOL_PAGES zeroed pages at
 * physical SHIM_POOL_PHYS and up (write-back: below DIRECT_MAP_UNCACHED). Freed pages are
 * poisoned. A free of a page that is not out, or with another count than it was taken with,
 * fails the test.
 */
#define SHIM_POOL_PAGES 256
#define SHIM_POOL_PHYS 0x10000000ull
unsigned int shim_pages_out(void);
/* Let only the next n allocations succeed (out of memory after them); -1: no limit. */
void shim_pool_limit(int n);

/* Task descriptors as the scheduler fills them: index, a unique id, a kernel task. */
struct switch_task shim_task(unsigned int index);
/* The current task of this CPU (switch_hooks_set_current()), no hooks run. */
void shim_set_current(unsigned int index);
/* A task switch on this CPU: switch_hooks_run(prev, next), as sched/ calls it. */
void shim_switch(unsigned int prev, unsigned int next);

/* Interrupts, as arch/x86/apic.c dispatches them: registered PMI hooks and timer hooks. */
unsigned int shim_pmi_hooks(void);
unsigned int shim_timer_hooks(void);
/* Every enter in registration order, then every exit in reverse: apic.c pmi_interrupt(). */
void shim_pmi(void);
void shim_tick(void);

/*
 * smp_call() runs fn at once, on the CPU it names (this_cpu_index() is that CPU meanwhile), and
 * returns true when it did, as the real one waits; false for a CPU that is not online. Calls to
 * another CPU are recorded: how many, and the target of the i-th.
 */
unsigned int shim_smp_calls(void);
unsigned int shim_smp_call_target(unsigned int i);

/* address_space_map(), _unmap() and _flush_if_loaded() calls, recorded in order. */
enum shim_mapping_op {
	SHIM_MAP,
	SHIM_UNMAP,
	SHIM_FLUSH,
};

struct shim_mapping {
	enum shim_mapping_op op;
	uint64_t root, virt, phys, flags;
};

size_t shim_mappings(void);
const struct shim_mapping *shim_mapping_at(size_t i);

/*
 * The CPU stores a BTS record (from, to) through the DS area IA32_DS_AREA names, as the SDM has
 * it: at the index, which then advances; a circular buffer wraps at the absolute maximum; in
 * interrupt mode (DEBUGCTL.BTINT) reaching the threshold sets GLOBAL_STATUS bit 62 (the
 * emulator's bts_status:1). BTS must be on (DEBUGCTL.TR and BTS), else the test fails.
 */
void shim_bts_store(uint64_t from, uint64_t to);

/*
 * The rules the shim enforces besides #GP (docs/emulated-cpu.md), each a failure of the test:
 * rule 3, a BTS or PEBS buffer field of the active area changed while that feature is on (found
 * at the next MSR write, store, or shim_check_clean()); rule 4, IA32_DS_AREA replaced while BTS
 * or PEBS is on.
 *
 * At the end of a test, as the kernel's runner checks: DEBUGCTL, DS_AREA and PEBS_ENABLE at
 * their reset values on every CPU, and no page of the pool out.
 */
void shim_check_clean(void);

#endif
