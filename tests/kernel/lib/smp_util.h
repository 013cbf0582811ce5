/* SPDX-License-Identifier: MIT */
/* smp suite helpers: skipping without CPUs, placing tasks, reading another CPU's registers. */
#ifndef TESTS_KERNEL_LIB_SMP_UTIL_H
#define TESTS_KERNEL_LIB_SMP_UTIL_H

#include <stdint.h>

#include "arch/x86/percpu.h"
#include "dr/dr.h"
#include "runner/test.h"
#include "sched/sched.h"

/* Skip unless at least count CPUs are online, with the reason there are fewer. */
void smp_require_cpus(unsigned int count);

/* What a CPU's debug registers and DS MSRs hold, read on that CPU by a call IPI. */
struct smp_registers {
	unsigned int cpu;
	uint64_t dr7, dr_address[4];
	uint64_t ds_area, debugctl, pebs_enable; /* as ds/ holds them (hardware or synthetic) */
};
struct smp_registers smp_read_registers(unsigned int cpu);

/* Whether the registers have an enabled slot at address. */
bool smp_breakpoint_live(const struct smp_registers *registers, uint64_t address);

/* A kernel task created stopped, placed on cpu, then let run; fails the test if refused. */
struct task *smp_task_on(unsigned int cpu, const char *name, void (*fn)(void *), void *arg);

/* The calling task moves to cpu; fails the test if it did not land there. */
void smp_move_self(unsigned int cpu);

/* A dr_handler that counts hits per CPU, read by smp_hits_on(cpu); smp_hits_reset() zeroes them. */
unsigned int smp_hits_on(unsigned int cpu);
void smp_hits_reset(void);
void smp_count_hit(const struct dr_hit *hit, struct cpu_regs *regs, void *context);

/* count tasks (at most SMP_CALLERS_MAX) on cpu, each calling dr_target_function() once;
 * returns when all are joined. */
#define SMP_CALLERS_MAX 8
void smp_call_target_from(unsigned int cpu, unsigned int count);

/* xorshift64* (Vigna), seeded from the run's seed: reproducible. */
uint64_t smp_random(uint64_t *state);

#endif
