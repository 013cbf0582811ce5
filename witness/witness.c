/* SPDX-License-Identifier: MIT */
/*
 * The outside witness: a QEMU TCG plugin (API version 1) that records, for the chosen vCPUs,
 * the guest's instruction stream between the markers the kernel executes
 * (arch/x86/witness_marker.h), and every distinct instruction the run executed.
 *
 * Loaded as -plugin build/witness/libwitness.so,out=PATH[,vcpu=N|all][,limit=N]. It sees what
 * QEMU translates and executes, nothing of switchyard's state: its record is independent of
 * the kernel's own counters and of the emulated CPU (emulator/).
 *
 * The output file (read by scripts/switchyard_witness.py), little-endian, after the 8 bytes
 * "SYWITN01":
 *   'I' u32 id, u64 vaddr, u8 length, bytes[length], u16 n, disas[n]   a distinct instruction
 *   'B' u32 vcpu, u16 window                                           a window opens
 *   'S' u32 vcpu, u32 count, u32 id[count]                             executed, in order
 *   'E' u32 vcpu, u16 window, u8 how                                   it closes (WINDOW_*)
 *   'C' u32 count, {u32 id, u64 executions}[count]                     at exit
 *   'Z'                                                                the end, at exit
 * An instruction is recorded when it starts (QEMU calls the exec callback before it runs), so
 * one that faults is in the stream though it did not retire.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "witness/qemu-plugin-api.h"

#define OUTPUT_MAGIC "SYWITN01"
#define MAX_INSN_BYTES 16
#define BUCKETS (1u << 18)
#define CHUNK 65536
#define DEFAULT_LIMIT 50000000ull /* instructions in one window */

/* The marker: nopl disp32(%rax), 0F 1F 80 d32, d32 = magic << 24 | op << 16 | id. */
#define MARKER_LENGTH 7
#define MARKER_MAGIC 0x5a
#define OP_BEGIN 1
#define OP_END 2

/* How a window closed. */
#define WINDOW_CLOSED 0 /* by its end marker */
#define WINDOW_SUPERSEDED 1 /* a begin marker opened another */
#define WINDOW_TRUNCATED 2 /* at the instruction limit */
#define WINDOW_OPEN_AT_EXIT 3

QEMU_PLUGIN_EXPORT int qemu_plugin_version = 1;

struct insn {
	uint32_t id;
	uint8_t length;
	uint8_t marker_op;
	uint16_t marker_id;
	uint64_t vaddr;
	uint64_t executions; /* not atomic: exact with one vCPU, at least 1 if run with more */
	uint8_t bytes[MAX_INSN_BYTES];
	struct insn *next;
};

struct vcpu_state {
	int recording;
	uint16_t window;
	uint64_t recorded;
	uint32_t used;
	uint32_t buffer[CHUNK];
};

static FILE *out;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct insn *buckets[BUCKETS];
static struct insn **by_id;
static uint32_t insn_count, by_id_capacity;
static struct vcpu_state *vcpus;
static int vcpu_count;
static int only_vcpu = -1; /* -1: every vCPU */
static uint64_t limit = DEFAULT_LIMIT;

static void put(const void *data, size_t size)
{
	fwrite(data, 1, size, out);
}

static void put_u8(uint8_t value)
{
	put(&value, 1);
}

static void put_u16(uint16_t value)
{
	put(&value, 2);
}

static void put_u32(uint32_t value)
{
	put(&value, 4);
}

static void put_u64(uint64_t value)
{
	put(&value, 8);
}

/* With lock held. */
static void flush_stream(unsigned int vcpu, struct vcpu_state *state)
{
	if (!state->used)
		return;
	put_u8('S');
	put_u32(vcpu);
	put_u32(state->used);
	put(state->buffer, state->used * sizeof(uint32_t));
	state->used = 0;
}

static void close_window(unsigned int vcpu, struct vcpu_state *state, uint8_t how)
{
	pthread_mutex_lock(&lock);
	flush_stream(vcpu, state);
	put_u8('E');
	put_u32(vcpu);
	put_u16(state->window);
	put_u8(how);
	fflush(out);
	pthread_mutex_unlock(&lock);
	state->recording = 0;
}

static void open_window(unsigned int vcpu, struct vcpu_state *state, uint16_t window)
{
	if (state->recording)
		close_window(vcpu, state, WINDOW_SUPERSEDED);
	pthread_mutex_lock(&lock);
	put_u8('B');
	put_u32(vcpu);
	put_u16(window);
	pthread_mutex_unlock(&lock);
	state->recording = 1;
	state->window = window;
	state->recorded = 0;
}

static void on_exec(unsigned int vcpu, void *userdata)
{
	struct insn *insn = userdata;
	struct vcpu_state *state;

	insn->executions++;
	if ((int)vcpu >= vcpu_count || (only_vcpu >= 0 && (int)vcpu != only_vcpu))
		return;
	state = &vcpus[vcpu];
	if (insn->marker_op == OP_BEGIN) {
		open_window(vcpu, state, insn->marker_id);
		return;
	}
	if (!state->recording)
		return;
	if (insn->marker_op == OP_END && insn->marker_id == state->window) {
		close_window(vcpu, state, WINDOW_CLOSED);
		return;
	}
	state->buffer[state->used++] = insn->id;
	if (state->used == CHUNK) {
		pthread_mutex_lock(&lock);
		flush_stream(vcpu, state);
		pthread_mutex_unlock(&lock);
	}
	if (++state->recorded >= limit)
		close_window(vcpu, state, WINDOW_TRUNCATED);
}

static uint32_t hash(uint64_t vaddr, const uint8_t *bytes, size_t length)
{
	uint64_t h = 1469598103934665603ull ^ vaddr;

	for (size_t i = 0; i < length; i++)
		h = (h ^ bytes[i]) * 1099511628211ull;
	return (uint32_t)(h ^ (h >> 32)) & (BUCKETS - 1);
}

static void classify_marker(struct insn *insn)
{
	const uint8_t *b = insn->bytes;

	if (insn->length != MARKER_LENGTH || b[0] != 0x0f || b[1] != 0x1f || b[2] != 0x80 ||
	    b[6] != MARKER_MAGIC)
		return;
	insn->marker_op = b[5];
	insn->marker_id = (uint16_t)(b[3] | b[4] << 8);
}

/* The record of a distinct instruction, made and written out the first time. Lock held. */
static struct insn *lookup(struct qemu_plugin_insn *handle)
{
	uint64_t vaddr = qemu_plugin_insn_vaddr(handle);
	size_t length = qemu_plugin_insn_size(handle);
	const uint8_t *bytes = qemu_plugin_insn_data(handle);
	uint32_t bucket;
	struct insn *insn;
	char *disas;
	size_t disas_length;

	if (length > MAX_INSN_BYTES)
		length = MAX_INSN_BYTES;
	bucket = hash(vaddr, bytes, length);
	for (insn = buckets[bucket]; insn; insn = insn->next)
		if (insn->vaddr == vaddr && insn->length == length &&
		    !memcmp(insn->bytes, bytes, length))
			return insn;
	insn = calloc(1, sizeof(*insn));
	if (!insn)
		abort();
	insn->id = insn_count++;
	insn->vaddr = vaddr;
	insn->length = (uint8_t)length;
	memcpy(insn->bytes, bytes, length);
	classify_marker(insn);
	insn->next = buckets[bucket];
	buckets[bucket] = insn;
	if (insn->id >= by_id_capacity) {
		by_id_capacity = by_id_capacity ? 2 * by_id_capacity : 65536;
		by_id = realloc(by_id, by_id_capacity * sizeof(*by_id));
		if (!by_id)
			abort();
	}
	by_id[insn->id] = insn;
	disas = qemu_plugin_insn_disas(handle);
	disas_length = disas ? strlen(disas) : 0;
	put_u8('I');
	put_u32(insn->id);
	put_u64(vaddr);
	put_u8(insn->length);
	put(bytes, length);
	put_u16((uint16_t)disas_length);
	put(disas ? disas : "", disas_length);
	free(disas);
	return insn;
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t count = qemu_plugin_tb_n_insns(tb);

	(void)id;
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < count; i++) {
		struct qemu_plugin_insn *handle = qemu_plugin_tb_get_insn(tb, i);

		qemu_plugin_register_vcpu_insn_exec_cb(handle, on_exec, QEMU_PLUGIN_CB_NO_REGS,
						       lookup(handle));
	}
	pthread_mutex_unlock(&lock);
}

static void on_qemu_exit(qemu_plugin_id_t id, void *userdata)
{
	uint32_t executed = 0;

	(void)id;
	(void)userdata;
	for (int vcpu = 0; vcpu < vcpu_count; vcpu++)
		if (vcpus[vcpu].recording)
			close_window((unsigned int)vcpu, &vcpus[vcpu], WINDOW_OPEN_AT_EXIT);
	pthread_mutex_lock(&lock);
	for (uint32_t i = 0; i < insn_count; i++)
		executed += by_id[i]->executions != 0;
	put_u8('C');
	put_u32(executed);
	for (uint32_t i = 0; i < insn_count; i++) {
		if (!by_id[i]->executions)
			continue;
		put_u32(i);
		put_u64(by_id[i]->executions);
	}
	put_u8('Z');
	fclose(out);
	out = NULL;
	pthread_mutex_unlock(&lock);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc,
					   char **argv)
{
	const char *path = NULL;

	if (!info->system_emulation) {
		qemu_plugin_outs("witness: system emulation only\n");
		return -1;
	}
	for (int i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4)) {
			path = argv[i] + 4;
		} else if (!strcmp(argv[i], "vcpu=all")) {
			only_vcpu = -1;
		} else if (!strncmp(argv[i], "vcpu=", 5)) {
			only_vcpu = atoi(argv[i] + 5);
		} else if (!strncmp(argv[i], "limit=", 6)) {
			limit = strtoull(argv[i] + 6, NULL, 0);
		} else {
			fprintf(stderr, "witness: unknown option %s (out=, vcpu=, limit=)\n",
				argv[i]);
			return -1;
		}
	}
	if (!path) {
		fprintf(stderr, "witness: out=PATH is required\n");
		return -1;
	}
	out = fopen(path, "wb");
	if (!out) {
		perror(path);
		return -1;
	}
	put(OUTPUT_MAGIC, strlen(OUTPUT_MAGIC));
	vcpu_count = info->system.max_vcpus;
	vcpus = calloc((size_t)vcpu_count, sizeof(*vcpus));
	if (!vcpus)
		return -1;
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, on_qemu_exit, NULL);
	return 0;
}
