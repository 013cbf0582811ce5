/* SPDX-License-Identifier: MIT */
/* A loop of known length for the handler tests (tests/kernel/lib/handler_probe.asm). */
#ifndef TESTS_KERNEL_LIB_HANDLER_PROBE_H
#define TESTS_KERNEL_LIB_HANDLER_PROBE_H

#include <stdint.h>

/* iterations (at least 1) times DEC and JNZ: 2 * iterations + 2 instructions with its MOV and
 * RET, iterations + 1 branches, iterations taken (iterations - 1 JNZ back, the RET). */
void handler_probe_loop(uint64_t iterations);
extern const char handler_probe_loop_head[], handler_probe_loop_branch[], handler_probe_loop_ret[];

#endif
