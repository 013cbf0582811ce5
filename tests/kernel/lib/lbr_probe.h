/* SPDX-License-Identifier: MIT */
/* Known branch sequences for the lbr suite (tests/kernel/lib/lbr_probe.asm): labels are addresses.
 */
#ifndef TESTS_KERNEL_LIB_LBR_PROBE_H
#define TESTS_KERNEL_LIB_LBR_PROBE_H

void lbr_probe(void);
extern const char lbr_probe_jcc[], lbr_probe_jcc_target[];
extern const char lbr_probe_call[], lbr_probe_call_return[];
extern const char lbr_probe_callee[], lbr_probe_callee_ret[];
extern const char lbr_probe_ind_jmp[], lbr_probe_ind_target[];
extern const char lbr_probe_rel_jmp[], lbr_probe_rel_target[];
extern const char lbr_probe_ind_call[], lbr_probe_ind_call_return[];
extern const char lbr_probe_last[], lbr_probe_end[];
/* lbr_probe() `calls` times (at least 1), from inside [lbr_probe, lbr_probe_end). */
void lbr_probe_loop(unsigned long calls);

/* Three taken JCCs in a loop, then RET: code no lbr_probe() branch comes from. */
void lbr_probe_other(void);
extern const char lbr_probe_other_end[];

#endif
