/* SPDX-License-Identifier: MIT */
/*
 * Witness markers: multi-byte NOPs that QEMU's TCG witness (witness/witness.c) recognises from
 * their bytes alone, to open and close a window of the instruction stream it records, or to
 * mark a point in it. On silicon and under KVM each is one NOP (SDM Vol. 2B NOP, 0F 1F /0) that
 * costs about nothing; the emulated CPU steps and counts it like any other instruction.
 *
 * Encoding: nopl disp32(%rax), bytes 0F 1F 80 d0 d1 d2 d3, where the little-endian disp32 is
 * WITNESS_MAGIC << 24 | op << 16 | id. scripts/switchyard_witness.py reads the same numbers.
 */
#ifndef ARCH_X86_WITNESS_MARKER_H
#define ARCH_X86_WITNESS_MARKER_H

#define WITNESS_MAGIC 0x5a
#define WITNESS_OP_BEGIN 1 /* start recording this CPU's stream: window id */
#define WITNESS_OP_END 2 /* stop recording, if window id is open */
#define WITNESS_OP_POINT 3 /* a point in the stream, recorded as an instruction */

/* Window and point ids; a window id may open many times (the harness pairs them in order). */
enum witness_id {
	/* Point: the emulated CPU consumed this #DB (its own single step); arch/x86/traps.c. */
	WITNESS_STEP_CONSUMED = 1,
	/* Point: the emulated CPU steps the handler from the next instruction (divert.c). */
	WITNESS_HANDLER_STEPPED = 2,
	/* Windows over the counted switches of the write-count tests and benchmarks. */
	WITNESS_DR_WRITES = 10,
	WITNESS_DR_BENCHMARK = 11,
	WITNESS_DS_SWITCH_WRITES = 12,
	WITNESS_PMU_SWITCH_WRITES = 13,
	WITNESS_SCHED_SWITCH_WRITES = 14,
	/* Windows over counted loops (pmu) and a traced loop (bts). */
	WITNESS_PMU_COUNTED = 20,
	WITNESS_BTS_TRACED = 21,
	WITNESS_PMU_BRANCHES = 22,
	WITNESS_PMU_USER_COUNTED = 23,
	WITNESS_PEBS_EVENTING = 24,
	WITNESS_BTS_USER = 25,
	WITNESS_BTS_NMI = 26,
	/* Windows over a loop traced or counted with and without ticks (rule 21's tick margin). */
	WITNESS_TICKS = 27,
	/* A window over a fault whose handler the model steps (rule 21). */
	WITNESS_BTS_HANDLER = 28,
};

#define WITNESS_DISP(op, id) ((WITNESS_MAGIC << 24) | ((op) << 16) | (id))

/* The memory clobber keeps the compiler's loads and stores on their side of the marker. */
#define witness_marker(op, id) \
	asm volatile("nopl %c0(%%rax)" : : "i"(WITNESS_DISP(op, id)) : "memory")
#define witness_begin(id) witness_marker(WITNESS_OP_BEGIN, id)
#define witness_end(id) witness_marker(WITNESS_OP_END, id)
#define witness_point(id) witness_marker(WITNESS_OP_POINT, id)

#endif
