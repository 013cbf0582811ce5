/* SPDX-License-Identifier: MIT */
/* Functions that fault on purpose, for the tests of isolation (arch and smp suites). */
#ifndef TESTS_KERNEL_LIB_FAULTS_H
#define TESTS_KERNEL_LIB_FAULTS_H

#include <stdbool.h>
#include <stdint.h>

/* UD2: #UD at a RIP that is_ud2_in(raise_invalid_opcode, rip) recognises. arg is unused. */
void raise_invalid_opcode(void *arg);

/* #UD is a fault: the RIP it reports is the UD2 itself (0F 0B), within fn (SDM Vol. 3 §6.15). */
bool is_ud2_in(void (*fn)(void *), uint64_t rip);

/* Store one byte at arg: #PF when arg is not mapped writable. */
void write_unmapped(void *arg);

#endif
