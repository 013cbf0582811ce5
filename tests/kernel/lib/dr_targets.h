/* SPDX-License-Identifier: MIT */
/* What the dr suite's breakpoints watch: a function to execute, data to read and write. */
#ifndef TESTS_KERNEL_LIB_DR_TARGETS_H
#define TESTS_KERNEL_LIB_DR_TARGETS_H

#include <stdint.h>

#include "dr/dr.h"

/* Executes one instruction and returns: an execute breakpoint at its address fires once per
 * call. Calls are counted, so a test can tell a missed hit from a missed call. */
void dr_target_function(void);
extern volatile unsigned int dr_target_calls;

/* 64-byte aligned, so that every length and offset is aligned as DR7 wants. */
extern volatile uint64_t dr_target_data[8];

/* Install on the calling task, and fail the test with the reason if it is refused. */
int dr_target_install(uint64_t address, enum dr_type type, unsigned int length);

/* The hits of the calling task since the last call (at most 16). */
unsigned int dr_target_hits(struct dr_hit *hits);

/* Eight more functions to execute, for the stress test: distinct addresses. */
#define DR_STRESS_TARGETS 8
extern void (*const dr_stress_targets[DR_STRESS_TARGETS])(void);

/* A never-touched address, for breakpoints that only take up a slot. */
extern volatile uint64_t dr_target_unused[8];

#endif
