/* SPDX-License-Identifier: MIT */
/*
 * Exact 64-bit multiply-then-divide, and perf-style count scaling (docs/hardware-facts.md
 * §7). Pure.
 */
#ifndef PMU_SCALE_H
#define PMU_SCALE_H

#include <stdint.h>

/*
 * floor(a * b / c), exact for every 64-bit a, b and c: the product is formed in 128 bits (two
 * uint64_t halves) and divided by shift-and-subtract, with no 128-bit type and no libgcc helper.
 * Saturates: UINT64_MAX when the true quotient does not fit in 64 bits, and when c is 0 and the
 * product is not (a * b / 0 has no value; the caller decides what that means). 0 when a * b is 0.
 * A product that fits in 64 bits takes one native 64-bit division; a wider one 64 iterations.
 */
uint64_t pmu_mul_div(uint64_t a, uint64_t b, uint64_t c);

/*
 * The estimate of what count would have been had the event been on a counter for all of
 * enabled: floor(count * enabled / running). 0 when running is 0 (the event never ran, so
 * nothing is known; perf reports 0 too). Saturates at UINT64_MAX. The accounting keeps
 * running <= enabled; if a caller passes running > enabled anyway, the result is still the
 * exact quotient, which is then at most count.
 */
uint64_t pmu_scale(uint64_t count, uint64_t enabled, uint64_t running);

#endif
