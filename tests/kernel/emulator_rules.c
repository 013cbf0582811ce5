/* SPDX-License-Identifier: MIT */
/* emulator suite: each rule of the emulated CPU, broken on purpose, is reported
 * (docs/emulated-cpu.md). */
#include <stdint.h>

#include "arch/x86/apic.h"
#include "arch/x86/cpu.h"
#include "arch/x86/cpuid.h"
#include "arch/x86/debugctl.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/extable.h"
#include "arch/x86/msr.h"
#include "arch/x86/nmi.h"
#include "arch/x86/paging.h"
#include "arch/x86/probe.h"
#include "arch/x86/syscall.h"
#include "arch/x86/traps.h"
#include "arch/x86/user.h"
#include "arch/x86/witness_marker.h"
#include "ds/ds.h"
#include "ds/records.h"
#include "ds/save_area.h"
#include "emulator/emulator.h"
#include "lib/format.h"
#include "lib/string.h"
#include "runner/test.h"
#include "tests/kernel/lib/ds_util.h"
#include "tests/kernel/lib/emulator_util.h"
#include "tests/kernel/lib/nmi_margin.h"
#include "tests/kernel/lib/user_script.h"

#define BTS_RECORD 24
#define RECORDS 16
#define UNMAPPED_BUFFER 0x0000100000000000ull /* lower half, never mapped in the runner's CR3 */

static struct ds_area area __attribute__((aligned(PAGE_SIZE)));
static uint8_t buffer[PAGE_SIZE] __attribute__((aligned(PAGE_SIZE)));

/* Circular BTS over buffer, by the SDM's rules, unless a test breaks one. */
static void area_fill_bts(uint64_t base, uint64_t records)
{
	memset(&area, 0, sizeof(area));
	area.bts_base = area.bts_index = base;
	area.bts_max = base + records * BTS_RECORD;
	area.bts_threshold = area.bts_max + BTS_RECORD;
}

/* The BTS rules need BTS: a PEBS-only guest (kvm_pebs) has none. */
static void require_emulated_bts(void)
{
	require_emulator();
	if (ds_support()->bts_reason[0])
		test_skip("%s", ds_support()->bts_reason);
}

static void bts_on(void)
{
	wrmsr(MSR_IA32_DS_AREA, (uint64_t)&area);
	debugctl_update(DEBUGCTL_TR | DEBUGCTL_BTS, DEBUGCTL_TR | DEBUGCTL_BTS);
}

static void bts_off(void)
{
	debugctl_update(DEBUGCTL_TR | DEBUGCTL_BTS, 0);
	wrmsr(MSR_IA32_DS_AREA, 0);
}

#define CALL_REL32_LENGTH 5

/*
 * The records of probe_branches(): the call, its two jumps and the return, in that order. An
 * interrupt that came between two of them adds its delivery and its IRETQ there (rule 21):
 * those are skipped. Returns the index of the call's record, or -1.
 */
static long find_probe_records(const struct bts_record *records, long used)
{
	for (long i = 0; i < used; i++) {
		const struct bts_record *probe[4] = { &records[i] };
		unsigned int found = 1;

		if (records[i].to != (uint64_t)probe_branches)
			continue;
		for (long j = i + 1; j < used && found < 4; j++)
			if (!record_of_an_entry(&records[j]))
				probe[found++] = &records[j];
		if (found == 4 && probe[1]->from == (uint64_t)probe_branch_1 &&
		    probe[1]->to == (uint64_t)probe_branch_1_target &&
		    probe[2]->from == (uint64_t)probe_branch_2 &&
		    probe[2]->to == (uint64_t)probe_branch_2_target &&
		    probe[3]->from == (uint64_t)probe_branch_2_target &&
		    probe[3]->to == probe[0]->from + CALL_REL32_LENGTH)
			return i;
	}
	return -1;
}

TEST(emulator, a_kept_rule_reports_nothing_and_every_branch_is_recorded)
{
	char text[EMULATOR_VIOLATION_MAX];
	long used;

	require_emulated_bts();
	/*
	 * The whole page: besides the probe's branches, silicon records each interrupt that comes
	 * in the window, its delivery and its IRETQ (rule 21). 16 records wrapped with 2 timer
	 * ticks and lost the probe's.
	 */
	area_fill_bts((uint64_t)buffer, sizeof(buffer) / BTS_RECORD);
	witness_begin(WITNESS_BTS_TRACED);
	bts_on();
	probe_branches();
	bts_off();
	witness_end(WITNESS_BTS_TRACED);
	used = (long)((area.bts_index - area.bts_base) / BTS_RECORD);
	for (long i = 0; i < used; i++)
		test_diag("bts record %ld: 0x%llx -> 0x%llx", i,
			  (unsigned long long)((const struct bts_record *)buffer)[i].from,
			  (unsigned long long)((const struct bts_record *)buffer)[i].to);
	check_eq(0, emulator_take_violations(text, sizeof(text)));
	check(find_probe_records((const struct bts_record *)buffer, used) >= 0,
	      "call, jmp, jmp, ret of probe_branches() not found in %ld records", used);
	for (long i = 0; i < used; i++)
		check_eq(0, ((const struct bts_record *)buffer)[i].flags);
}

static bool breakpoint_returns(struct cpu_regs *regs)
{
	(void)regs;
	return true; /* a trap: RIP is past the INT3 already */
}

/* An INT3 at a known address; returns that address. */
static uint64_t int3_at_known_site(void)
{
	uint64_t site;

	asm volatile("lea 1f(%%rip), %0\n1: int3" : "=r"(site) : : "memory");
	return site;
}

#define INT3_LENGTH 1

/*
 * Rule 21: a trap raised by an instruction in a traced window is a record from that instruction
 * to the IDT gate's target (SDM Vol. 3B DEBUGCTL.TR: a record is sent "when the processor detects
 * a taken branch, interrupt, or exception"; INT3 raises #BP, Vol. 2A INT3), and the IRETQ that
 * returns is a far branch, a record from it to the instruction after the INT3. The handler's own
 * branches may come between them on silicon; the two records themselves are exact.
 */
TEST(emulator, rule_21_an_int3_is_recorded_to_its_gate_and_its_iretq_back)
{
	exception_handler saved = exception_handler_of(X86_EXC_BP);
	const struct bts_record *records = (const struct bts_record *)buffer;
	uint64_t gate = idt_gate_target(X86_EXC_BP), iret = entry_iret_site(X86_EXC_BP), site;
	long used, delivery = -1, back = -1;

	require_emulated_bts();
	area_fill_bts((uint64_t)buffer, sizeof(buffer) / BTS_RECORD);
	exception_register(X86_EXC_BP, breakpoint_returns);
	bts_on();
	site = int3_at_known_site();
	bts_off();
	if (saved)
		exception_register(X86_EXC_BP, saved);
	else
		exception_unregister(X86_EXC_BP);
	used = (long)((area.bts_index - area.bts_base) / BTS_RECORD);
	for (long i = 0; i < used; i++) {
		test_diag("bts record %ld: 0x%llx -> 0x%llx", i,
			  (unsigned long long)records[i].from, (unsigned long long)records[i].to);
		if (records[i].from == site && records[i].to == gate)
			delivery = i;
		if (delivery >= 0 && back < 0 && records[i].from == iret &&
		    records[i].to == site + INT3_LENGTH)
			back = i;
	}
	check(delivery >= 0, "no record 0x%llx (INT3) -> 0x%llx (#BP gate) in %ld records",
	      (unsigned long long)site, (unsigned long long)gate, used);
	check(back > delivery, "no record 0x%llx (IRETQ) -> 0x%llx after the INT3's in %ld records",
	      (unsigned long long)iret, (unsigned long long)(site + INT3_LENGTH), used);
	check_eq(0, emulator_take_violations(NULL, 0));
}

static volatile bool nmi_armed;
static volatile unsigned int nmis_claimed;

/* Claims one NMI while armed (the test's own); every other goes on to the next handler. */
static bool claim_test_nmi(struct cpu_regs *regs)
{
	bool armed = true;

	(void)regs;
	if (!__atomic_compare_exchange_n(&nmi_armed, &armed, false, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_RELAXED))
		return false;
	__atomic_add_fetch(&nmis_claimed, 1, __ATOMIC_RELEASE);
	return true;
}

#define NMI_WAIT_ROUNDS 200 /* rounds of a stepped wait at most, until the NMI came */

/*
 * Rule 21 for an NMI: one sent to this CPU in a traced window comes between two instructions of
 * the traced flow (not held off by IF). Silicon records its delivery, from the instruction it
 * came before to the NMI gate's target, and its IRETQ back to that instruction (SDM Vol. 3B
 * DEBUGCTL.TR: a record "when the processor detects a taken branch, interrupt, or exception").
 * The model, whose single-step #DB comes first (SDM Vol. 3A "Priority Among Concurrent Events"),
 * takes it inside its own service and records it where silicon would. Each NMI in the window,
 * the watchdog's too, is one such pair; the handler's own branches (silicon's too) are not
 * recorded by the model (docs/emulated-cpu.md). The witness compares them in order.
 */
TEST(emulator, rule_21_an_nmi_is_recorded_to_its_gate_and_its_iretq_back)
{
	static bool registered;
	const struct bts_record *records = (const struct bts_record *)buffer;
	uint64_t gate = idt_gate_target(X86_EXC_NMI), iret = entry_iret_site(X86_EXC_NMI);
	unsigned int claimed = nmis_claimed, rounds = 0;
	unsigned long nmis, flags;
	long used, deliveries = 0, returns = 0, last_delivery = -1;
	struct emulator_stats before, after;

	require_emulated_bts();
	if (!registered)
		nmi_register(claim_test_nmi);
	registered = true;
	area_fill_bts((uint64_t)buffer, sizeof(buffer) / BTS_RECORD);
	flags = local_irq_save();
	nmis = nmi_count();
	before = emulator_stats();
	__atomic_store_n(&nmi_armed, true, __ATOMIC_RELEASE);
	witness_begin(WITNESS_BTS_NMI);
	bts_on();
	apic_send_nmi(apic_id());
	while (nmi_count() == nmis && rounds < NMI_WAIT_ROUNDS)
		rounds++;
	bts_off();
	witness_end(WITNESS_BTS_NMI);
	after = emulator_stats();
	nmis = nmi_count() - nmis;
	local_irq_restore(flags);
	nmi_armed = false;
	used = (long)((area.bts_index - area.bts_base) / BTS_RECORD);
	for (long i = 0; i < used; i++) {
		test_diag("bts record %ld: 0x%llx -> 0x%llx", i,
			  (unsigned long long)records[i].from, (unsigned long long)records[i].to);
		if (records[i].to == gate) {
			deliveries++;
			last_delivery = i;
		} else if (records[i].from == iret) {
			check(last_delivery >= 0 && records[i].to == records[last_delivery].from,
			      "record %ld: the IRETQ returns to 0x%llx, not to where the NMI came",
			      i, (unsigned long long)records[i].to);
			returns++;
		}
	}
	test_diag("%lu NMIs after %u rounds (%u claimed by the test's handler); %llu recorded, "
		  "%llu in handlers",
		  nmis, rounds, nmis_claimed - claimed,
		  (unsigned long long)(after.nmis_recorded - before.nmis_recorded),
		  (unsigned long long)(after.nmis_unobserved - before.nmis_unobserved));
	/*
	 * The count may take in NMIs just outside the traced span (the watchdog's), and another
	 * test's NMI handler may claim this one: every NMI counts, claimed by anyone.
	 */
	check(deliveries >= 1 && deliveries <= (long)nmis,
	      "%ld NMI deliveries recorded, expected 1 and at most the %lu NMIs taken", deliveries,
	      nmis);
	check_eq(deliveries, returns);
	check_eq((uint64_t)deliveries, after.nmis_recorded - before.nmis_recorded);
	check_eq(0, emulator_take_violations(NULL, 0));
}

extern const char user_syscall_gate[];
#define SYSCALL_LENGTH 2 /* 0F 05, or the UD2 that syscall_use_trap() puts there */
#define SYSCALL_TRACE_RECORDS 512

/*
 * Rule 21, across the ring boundary: a ring-3 task traced with BTS_OFF_OS makes one system call
 * that returns. Its SYSCALL is a record from the gate's instruction to IA32_LSTAR (SDM Vol. 2B
 * SYSCALL), or, where the gate is UD2, to the #UD gate; the kernel side is filtered out; the
 * IRETQ back is the next record, to the instruction after the gate's. Both are stored though
 * one end is ring 0 (the model's reading: Linux intel_pmu_drain_bts_buffer() drops such records
 * because BTS "leaks kernel addresses in branches across the cpl boundary, such as traps or
 * system calls").
 */
TEST(emulator, rule_21_a_system_call_is_recorded_to_its_entry_and_its_iretq_back)
{
	struct ds_bts_config config = { .records = SYSCALL_TRACE_RECORDS,
					.circular = true,
					.off_os = true };
	struct ds_target target = { true, this_cpu_index() }; /* this CPU's area: every task */
	struct user_syscall_script script = { .count = 1,
					      .calls = { { .number = SYSCALL_GET_TASK_ID } } };
	uint64_t gate = user_text_address(user_syscall_gate);
	bool trap = syscall_uses_trap();
	uint64_t entry = trap ? idt_gate_target(X86_EXC_UD) : rdmsr(MSR_LSTAR);
	uint64_t iret = trap ? entry_iret_site(X86_EXC_UD) : (uint64_t)syscall_entry_iret;
	const struct bts_record *records;
	struct ds_area *traced;
	enum ds_error attached;
	long used, found = -1;

	require_emulated_bts();
	if (!ds_support()->ds_cpl)
		test_skip("CPUID.1:ECX.DS-CPL=0");
	attached = ds_attach_bts(&target, &config);
	if (attached != DS_OK)
		test_abort("attach: %s", ds_error_name(attached));
	traced = ds_area_get(&target);
	user_script_run(&script, NULL, 0);
	records = (const struct bts_record *)traced->bts_base;
	used = (long)((traced->bts_index - traced->bts_base) / BTS_RECORD);
	for (long i = 0; i + 1 < used; i++)
		if (records[i].from == gate && records[i].to == entry &&
		    records[i + 1].from == iret && records[i + 1].to == gate + SYSCALL_LENGTH)
			found = i;
	for (long i = 0; found < 0 && i < used; i++)
		test_diag("bts record %ld: 0x%llx -> 0x%llx", i,
			  (unsigned long long)records[i].from, (unsigned long long)records[i].to);
	check_eq(DS_OK, ds_detach(&target, DS_USER_BTS));
	check(found >= 0,
	      "no records 0x%llx -> 0x%llx (%s) then 0x%llx -> 0x%llx (IRETQ) in %ld records",
	      (unsigned long long)gate, (unsigned long long)entry, trap ? "#UD" : "SYSCALL",
	      (unsigned long long)iret, (unsigned long long)(gate + SYSCALL_LENGTH), used);
}

TEST(emulator, rule_1_a_bts_buffer_that_is_not_mapped_is_reported)
{
	require_emulated_bts();
	area_fill_bts(UNMAPPED_BUFFER, RECORDS);
	bts_on();
	probe_branches();
	bts_off();
	expect_violation(1);
	check_eq(UNMAPPED_BUFFER, area.bts_index); /* nothing was stored */
}

TEST(emulator, rule_2_a_bts_maximum_below_one_record_is_reported)
{
	require_emulated_bts();
	area_fill_bts((uint64_t)buffer, RECORDS);
	area.bts_max = area.bts_base + BTS_RECORD - 8;
	bts_on();
	probe_branches();
	bts_off();
	expect_violation(2);
}

TEST(emulator, rule_2_a_circular_bts_threshold_inside_the_buffer_is_reported)
{
	require_emulated_bts();
	area_fill_bts((uint64_t)buffer, RECORDS);
	area.bts_threshold = area.bts_max; /* clearing BTINT is not enough: it must lie beyond */
	bts_on();
	probe_branches();
	bts_off();
	expect_violation(2);
}

TEST(emulator, rule_3_resetting_the_bts_index_while_tracing_is_reported)
{
	require_emulated_bts();
	/*
	 * The whole page: ticks in the window add records (rule 21), and 16 of them wrapped the
	 * index back to the base under KVM-PVM, so that the reset below changed nothing.
	 */
	area_fill_bts((uint64_t)buffer, sizeof(buffer) / BTS_RECORD);
	bts_on();
	probe_branches();
	area.bts_index = area.bts_base; /* a drain without turning BTS off first */
	probe_branches();
	bts_off();
	expect_violation(3);
}

TEST(emulator, rule_4_replacing_ds_area_while_tracing_is_reported)
{
	static struct ds_area other __attribute__((aligned(PAGE_SIZE)));

	require_emulated_bts();
	area_fill_bts((uint64_t)buffer, RECORDS);
	bts_on();
	wrmsr(MSR_IA32_DS_AREA, (uint64_t)&other);
	bts_off();
	expect_violation(4);
}

TEST(emulator, rule_6_a_reserved_pebs_enable_bit_raises_gp)
{
	require_emulator();
	/* Bit 48 is reserved on every part (bit 63 is precise store from Haswell to Skylake). */
	check_eq(EXINFO(X86_EXC_GP, 0), wrmsr_safe(MSR_IA32_PEBS_ENABLE, 1ull << 48));
	check_eq(EXINFO(X86_EXC_GP, 0), wrmsr_safe(MSR_IA32_DEBUGCTL, 1ull << 31));
	check_eq(EXINFO(X86_EXC_GP, 0), wrmsr_safe(MSR_IA32_DS_AREA, 0x0000800000000000ull));
}

static void plain_write_of_a_reserved_bit(void *arg)
{
	(void)arg;
	wrmsr(MSR_IA32_PEBS_ENABLE, 1ull << 48);
}

TEST(emulator, rule_6_a_plain_wrmsr_of_a_reserved_bit_takes_the_gp)
{
	struct isolation_outcome outcome;

	require_emulator();
	runner_isolate(plain_write_of_a_reserved_bit, NULL, 1000, &outcome);
	check_eq(ISOLATION_EXCEPTION, outcome.end);
	check_eq(X86_EXC_GP, outcome.vector);
	check_eq(0, outcome.error_code);
}

TEST(emulator, rule_7_a_legacy_counter_write_sign_extends_bit_31)
{
	unsigned int width = CPUID_PERFMON_GP_WIDTH(cpuid(CPUID_LEAF_PERFMON, 0).eax);
	uint64_t mask = width >= 64 ? UINT64_MAX : (1ull << width) - 1;
	uint64_t value = 0, saved, full_width = 0;

	require_emulated_intel_pmu();
	saved = rdmsr(MSR_IA32_PMC0); /* pmu/ keeps a shadow of it: put it back */
	rdmsr_safe(MSR_IA32_PERF_CAPABILITIES, &full_width);
	wrmsr(MSR_IA32_PMC0, 0x80000000ull);
	check_eq(0, rdmsr_safe(MSR_IA32_PMC0, &value));
	check_eq(0xffffffff80000000ull & mask, value);
	wrmsr(MSR_IA32_PMC0, 0x7fffffffull);
	check_eq(0x7fffffffull, rdmsr(MSR_IA32_PMC0));
	if (full_width & PERF_CAP_FULL_WIDTH_WRITE) {
		check_eq(EXINFO(X86_EXC_GP, 0), wrmsr_safe(MSR_IA32_A_PMC0, mask + 1));
		wrmsr(MSR_IA32_A_PMC0, saved);
	} else {
		check_eq(EXINFO(X86_EXC_GP, 0), wrmsr_safe(MSR_IA32_A_PMC0, 0));
		wrmsr(MSR_IA32_PMC0, saved); /* a count below 2^31, or sign-extended from one */
	}
	check_eq(saved, rdmsr(MSR_IA32_PMC0));
}

TEST(emulator, rule_5_changing_data_cfg_over_buffered_records_is_reported)
{
	char text[EMULATOR_VIOLATION_MAX];
	uint64_t capabilities = 0, *record = (uint64_t *)buffer;

	require_emulator();
	rdmsr_safe(MSR_IA32_PERF_CAPABILITIES, &capabilities);
	if (!(capabilities & PERF_CAP_PEBS_BASELINE))
		test_skip("no adaptive PEBS: PERF_CAPABILITIES.PEBS_BASELINE=0");
	memset(&area, 0, sizeof(area));
	area.pebs_base = (uint64_t)buffer;
	area.pebs_max = area.pebs_base + PAGE_SIZE / 2;
	area.pebs_threshold = area.pebs_base + 64;
	/* One record with the GPR group in the buffer, as the CPU would have left it. */
	record[0] = PEBS_DATACFG_GP | (32ull + 144ull) << 48;
	area.pebs_index = area.pebs_base + 32 + 144;
	wrmsr(MSR_IA32_DS_AREA, (uint64_t)&area);
	wrmsr(MSR_PEBS_DATA_CFG, PEBS_DATACFG_GP); /* the same groups: allowed */
	check_eq(0, emulator_take_violations(text, sizeof(text)));
	wrmsr(MSR_PEBS_DATA_CFG, PEBS_DATACFG_MEMINFO); /* another size over that record */
	wrmsr(MSR_PEBS_DATA_CFG, 0);
	wrmsr(MSR_IA32_DS_AREA, 0);
	expect_violation(5);
}

/* Format 0 only (Core 2): a buffer over one page hangs it (Linux ds.c); PEBS is then skipped. */
TEST(emulator, rule_12_a_format_0_pebs_buffer_over_one_page_is_reported)
{
	static uint8_t pages[2 * PAGE_SIZE] __attribute__((aligned(PAGE_SIZE)));
	uint64_t capabilities = 0;
	unsigned int counter = 0;

	require_emulated_intel_pmu();
	rdmsr_safe(MSR_IA32_PERF_CAPABILITIES, &capabilities);
	if ((capabilities & PERF_CAP_PEBS_FORMAT_MASK) >> PERF_CAP_PEBS_FORMAT_SHIFT != 0)
		test_skip("PEBS format %llu: the rule is format 0's",
			  (unsigned long long)((capabilities & PERF_CAP_PEBS_FORMAT_MASK) >>
					       PERF_CAP_PEBS_FORMAT_SHIFT));
	memset(&area, 0, sizeof(area));
	area.pebs_base = area.pebs_index = (uint64_t)pages;
	area.pebs_max = area.pebs_base + 28 * 144 + 144; /* 29 records: 4,176 bytes */
	area.pebs_threshold = area.pebs_base + 144;
	area.pebs_reset[counter] = (uint64_t)-100;
	wrmsr(MSR_IA32_DS_AREA, (uint64_t)&area);
	wrmsr(MSR_IA32_PMC0 + counter, (uint64_t)-100 & 0xffffffff);
	wrmsr(MSR_IA32_PERFEVTSEL0 + counter, 0xc0 | PERFEVTSEL_OS | PERFEVTSEL_EN);
	wrmsr(MSR_IA32_PEBS_ENABLE, 1ull << counter);
	wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 1ull << counter);
	probe_instruction_loop(200); /* 400 instructions: one overflow */
	wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 0);
	wrmsr(MSR_IA32_PEBS_ENABLE, 0);
	wrmsr(MSR_IA32_PERFEVTSEL0 + counter, 0);
	wrmsr(MSR_IA32_PMC0 + counter, 0);
	wrmsr(MSR_IA32_PERF_GLOBAL_OVF_CTRL, rdmsr(MSR_IA32_PERF_GLOBAL_STATUS));
	wrmsr(MSR_IA32_DS_AREA, 0);
	expect_violation(12);
	check_eq(area.pebs_base, area.pebs_index); /* no record: PEBS was skipped */
}

/* The PEBS rules need PEBS: Core 2's PMC0 is the one counter every PEBS part can sample. */
static void require_pebs_counter_0(void)
{
	require_emulator();
	if (ds_support()->pebs_reason[0])
		test_skip("%s", ds_support()->pebs_reason);
}

/* One record in this CPU's format, the basic group alone for an adaptive one. */
static uint64_t pebs_record_bytes(void)
{
	enum pebs_format format = (enum pebs_format)ds_support()->pebs_format;

	return pebs_format_is_adaptive(format) ? PEBS_BASIC_GROUP_SIZE : pebs_record_size(format);
}

#define PEBS_FIRST_PERIOD 100 /* instructions to the overflow that arms PEBS */
#define PEBS_RESET_PERIOD 1000 /* the reload: no second overflow in the loop */
#define PEBS_LOOP 100 /* iterations: 200 instructions */

/*
 * Rule 15. SDM "Requirements to Program PEBS": "Do NOT set local counter PMI/INT bit". With INT
 * set, the overflow that arms PEBS also raises an ordinary PMI ("Performance Counter
 * Prioritization"): exactly one here, where the counter overflows once (the reload from the
 * reset slot leaves it 1000 below the next), and exactly one record. LVTPC is masked, so the
 * PMI is a request the model counts and nothing is delivered.
 */
TEST(emulator, rule_15_a_pebs_counter_with_int_set_is_reported_and_raises_a_pmi)
{
	uint64_t mask = emulator_counter_width_mask(), record = pebs_record_bytes();
	uint32_t lvtpc = apic_read_lvtpc();
	struct emulator_stats before, after;
	unsigned long flags;

	require_pebs_counter_0();
	memset(&area, 0, sizeof(area));
	area.pebs_base = area.pebs_index = (uint64_t)buffer;
	area.pebs_max = area.pebs_base + 8 * record;
	area.pebs_threshold = area.pebs_base + 4 * record;
	area.pebs_reset[0] = (0 - PEBS_RESET_PERIOD) & mask;
	flags = local_irq_save();
	apic_write_lvtpc(VECTOR_TEST | APIC_LVT_MASKED);
	before = emulator_stats();
	wrmsr(MSR_IA32_DS_AREA, (uint64_t)&area);
	wrmsr(MSR_IA32_PMC0, (0 - PEBS_FIRST_PERIOD) & UINT32_MAX);
	wrmsr(MSR_IA32_PERFEVTSEL0, 0xc0 | PERFEVTSEL_OS | PERFEVTSEL_INT | PERFEVTSEL_EN);
	wrmsr(MSR_IA32_PEBS_ENABLE, 1);
	wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 1);
	probe_instruction_loop(PEBS_LOOP);
	wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 0);
	wrmsr(MSR_IA32_PEBS_ENABLE, 0);
	wrmsr(MSR_IA32_PERFEVTSEL0, 0);
	wrmsr(MSR_IA32_PMC0, 0);
	wrmsr(MSR_IA32_PERF_GLOBAL_OVF_CTRL, rdmsr(MSR_IA32_PERF_GLOBAL_STATUS));
	wrmsr(MSR_IA32_DS_AREA, 0);
	after = emulator_stats();
	apic_write_lvtpc(lvtpc);
	local_irq_restore(flags);
	expect_violation(15);
	check_eq(1, after.pmis_masked - before.pmis_masked);
	check_eq(area.pebs_base + record, area.pebs_index);
}

#define PEBS_FIXED_0 32 /* PEBS_ENABLE and GLOBAL_CTRL bit of fixed counter 0 */

/*
 * Rule 15 on a fixed counter (PEBS baseline): FIXED_CTR_CTRL's PMI bit for fixed counter 0
 * ("Do NOT set local counter PMI/INT bit"; Linux intel_pmu_enable_fixed() leaves it clear for
 * PEBS). The same overflow arms PEBS and requests one PMI; its reset value sits in slot 8 up to
 * format 4 and 32 from format 5 (SDM "PEBS Buffer" reset slots).
 */
TEST(emulator, rule_15_a_fixed_pebs_counter_with_its_pmi_bit_is_reported_and_raises_a_pmi)
{
	unsigned int width = CPUID_PERFMON_FIXED_WIDTH(cpuid(CPUID_LEAF_PERFMON, 0).edx);
	uint64_t mask = width >= 64 ? UINT64_MAX : (1ull << width) - 1;
	uint64_t record = pebs_record_bytes(), saved;
	uint32_t lvtpc = apic_read_lvtpc();
	struct emulator_stats before, after;
	unsigned long flags;

	require_pebs_counter_0();
	if (!(ds_support()->pebs_enable_valid & (1ull << PEBS_FIXED_0)))
		test_skip("PEBS format %u without baseline: no PEBS on fixed counters",
			  ds_support()->pebs_format);
	memset(&area, 0, sizeof(area));
	area.pebs_base = area.pebs_index = (uint64_t)buffer;
	area.pebs_max = area.pebs_base + 8 * record;
	area.pebs_threshold = area.pebs_base + 4 * record;
	area.pebs_reset[ds_support()->pebs_format >= 5 ? 32 : 8] = (0 - PEBS_RESET_PERIOD) & mask;
	flags = local_irq_save();
	saved = rdmsr(MSR_IA32_FIXED_CTR0); /* pmu/'s shadow may know it: put it back */
	apic_write_lvtpc(VECTOR_TEST | APIC_LVT_MASKED);
	before = emulator_stats();
	wrmsr(MSR_IA32_DS_AREA, (uint64_t)&area);
	wrmsr(MSR_IA32_FIXED_CTR0, (0 - PEBS_FIRST_PERIOD) & mask);
	wrmsr(MSR_IA32_FIXED_CTR_CTRL, FIXED_CTR_CTRL_OS | FIXED_CTR_CTRL_PMI);
	wrmsr(MSR_IA32_PEBS_ENABLE, 1ull << PEBS_FIXED_0);
	wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 1ull << PEBS_FIXED_0);
	probe_instruction_loop(PEBS_LOOP);
	wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 0);
	wrmsr(MSR_IA32_PEBS_ENABLE, 0);
	wrmsr(MSR_IA32_FIXED_CTR_CTRL, 0);
	wrmsr(MSR_IA32_FIXED_CTR0, saved);
	wrmsr(MSR_IA32_PERF_GLOBAL_OVF_CTRL, rdmsr(MSR_IA32_PERF_GLOBAL_STATUS));
	wrmsr(MSR_IA32_DS_AREA, 0);
	after = emulator_stats();
	apic_write_lvtpc(lvtpc);
	local_irq_restore(flags);
	expect_violation(15);
	check_eq(1, after.pmis_masked - before.pmis_masked);
	check_eq(area.pebs_base + record, area.pebs_index);
}

/*
 * Rule 19. SDM "Setting Up the DS Save Area": IA32_DS_AREA is written before BTS or PEBS is
 * enabled. Either turned on with IA32_DS_AREA = 0 is reported (silicon would read a management
 * area at linear address 0), and PEBS turned on over an area that is not mapped.
 */
TEST(emulator, rule_19_bts_or_pebs_on_with_ds_area_0_is_reported)
{
	bool bts = !ds_support()->bts_reason[0], pebs = !ds_support()->pebs_reason[0];

	require_emulator();
	if (!bts && !pebs)
		test_skip("%s; %s", ds_support()->bts_reason, ds_support()->pebs_reason);
	wrmsr(MSR_IA32_DS_AREA, 0);
	if (bts) {
		debugctl_update(DEBUGCTL_TR | DEBUGCTL_BTS, DEBUGCTL_TR | DEBUGCTL_BTS);
		probe_branches();
		debugctl_update(DEBUGCTL_TR | DEBUGCTL_BTS, 0);
		expect_violation(19);
	}
	if (pebs) {
		wrmsr(MSR_IA32_PEBS_ENABLE, 1);
		wrmsr(MSR_IA32_PEBS_ENABLE, 0);
		expect_violation(19);
		/* An area at an address that is not mapped: turned on, reported the same. */
		wrmsr(MSR_IA32_DS_AREA, UNMAPPED_BUFFER);
		wrmsr(MSR_IA32_PEBS_ENABLE, 1);
		wrmsr(MSR_IA32_PEBS_ENABLE, 0);
		wrmsr(MSR_IA32_DS_AREA, 0);
		expect_violation(19);
	}
}

#define EVENT_INSTRUCTIONS 0xc0
#define CMASK_1 (1ull << PERFEVTSEL_CMASK_SHIFT)

/* PMC0 counting kernel instructions from 0 (no overflow here), PEBS over an empty area. */
static void pebs_counter_0_setup(uint64_t evtsel)
{
	memset(&area, 0, sizeof(area));
	wrmsr(MSR_IA32_DS_AREA, (uint64_t)&area);
	wrmsr(MSR_IA32_PMC0, 0);
	wrmsr(MSR_IA32_PERFEVTSEL0, evtsel);
}

/* Back to what pmu/'s and ds/'s shadows say, in the order rules 17-19 ask. */
static void pebs_counter_0_off(void)
{
	wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 0);
	wrmsr(MSR_IA32_PEBS_ENABLE, 0);
	wrmsr(MSR_IA32_PERFEVTSEL0, 0);
	wrmsr(MSR_IA32_PMC0, 0);
	wrmsr(MSR_IA32_PERF_GLOBAL_OVF_CTRL, rdmsr(MSR_IA32_PERF_GLOBAL_STATUS));
	wrmsr(MSR_IA32_DS_AREA, 0);
}

/* Rule 16. SDM: "PEBS events are only valid when ... AnyThread, Edge, Invert, CMask" are 0. */
TEST(emulator, rule_16_a_pebs_event_with_a_cmask_is_reported)
{
	require_pebs_counter_0();
	pebs_counter_0_setup(EVENT_INSTRUCTIONS | PERFEVTSEL_OS | PERFEVTSEL_EN | CMASK_1);
	wrmsr(MSR_IA32_PEBS_ENABLE, 1);
	pebs_counter_0_off();
	expect_violation(16);
}

/* Rule 17. SDM: "Counters MUST be stopped before writing" a PEBS-enabled counter. */
TEST(emulator, rule_17_writing_a_counting_pebs_counter_is_reported)
{
	unsigned long flags;

	require_pebs_counter_0();
	flags = local_irq_save();
	pebs_counter_0_setup(EVENT_INSTRUCTIONS | PERFEVTSEL_OS | PERFEVTSEL_EN);
	wrmsr(MSR_IA32_PEBS_ENABLE, 1);
	wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 1);
	wrmsr(MSR_IA32_PMC0, 0); /* as pmu/ reloaded a sampling counter in place */
	pebs_counter_0_off();
	local_irq_restore(flags);
	expect_violation(17);
	if (!(ds_support()->pebs_enable_valid & (1ull << PEBS_FIXED_0)) ||
	    !ds_support()->pebs_baseline)
		return;
	/* A fixed PEBS counter's field, here its adaptive bit (32 + 4i), written while it counts.
	 */
	flags = local_irq_save();
	memset(&area, 0, sizeof(area));
	wrmsr(MSR_IA32_DS_AREA, (uint64_t)&area);
	wrmsr(MSR_IA32_FIXED_CTR_CTRL, FIXED_CTR_CTRL_OS);
	wrmsr(MSR_IA32_PEBS_ENABLE, 1ull << PEBS_FIXED_0);
	wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 1ull << PEBS_FIXED_0);
	wrmsr(MSR_IA32_FIXED_CTR_CTRL, FIXED_CTR_CTRL_OS | FIXED_CTR_CTRL_ADAPTIVE);
	wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 0);
	wrmsr(MSR_IA32_PEBS_ENABLE, 0);
	wrmsr(MSR_IA32_FIXED_CTR_CTRL, 0);
	wrmsr(MSR_IA32_PERF_GLOBAL_OVF_CTRL, rdmsr(MSR_IA32_PERF_GLOBAL_STATUS));
	wrmsr(MSR_IA32_DS_AREA, 0);
	local_irq_restore(flags);
	expect_violation(17);
}

/* Rule 18. Linux intel_pmu_enable_all(): PEBS_ENABLE before GLOBAL_CTRL, never after. */
TEST(emulator, rule_18_pebs_enabled_for_a_counting_counter_is_reported)
{
	unsigned long flags;

	require_pebs_counter_0();
	flags = local_irq_save();
	pebs_counter_0_setup(EVENT_INSTRUCTIONS | PERFEVTSEL_OS | PERFEVTSEL_EN);
	wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 1);
	wrmsr(MSR_IA32_PEBS_ENABLE, 1);
	pebs_counter_0_off();
	local_irq_restore(flags);
	expect_violation(18);
}

#define EVENT_CORE_CYCLES_FIXED 1 /* fixed counter 1: unhalted core cycles */
#define SPLIT_LOOP 100 /* iterations: 200 instructions */

/* GP 0 and 1 and fixed counter 1 (OS) over one loop, enabled and stopped by one write each. */
static void count_split(uint64_t evtsel0, uint64_t evtsel1, uint64_t counts[3])
{
	uint64_t saved[3] = { rdmsr(MSR_IA32_PMC0), rdmsr(MSR_IA32_PMC0 + 1),
			      rdmsr(MSR_IA32_FIXED_CTR0 + EVENT_CORE_CYCLES_FIXED) };
	uint64_t fixed_bit = PERF_GLOBAL_FIXED_CTR0 << EVENT_CORE_CYCLES_FIXED;
	unsigned long flags = local_irq_save();

	wrmsr(MSR_IA32_PMC0, 0);
	wrmsr(MSR_IA32_PMC0 + 1, 0);
	wrmsr(MSR_IA32_FIXED_CTR0 + EVENT_CORE_CYCLES_FIXED, 0);
	wrmsr(MSR_IA32_PERFEVTSEL0, evtsel0);
	wrmsr(MSR_IA32_PERFEVTSEL0 + 1, evtsel1);
	wrmsr(MSR_IA32_FIXED_CTR_CTRL,
	      FIXED_CTR_CTRL_OS << (FIXED_CTR_CTRL_FIELD_BITS * EVENT_CORE_CYCLES_FIXED));
	wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 3 | fixed_bit);
	probe_instruction_loop(SPLIT_LOOP);
	wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 0);
	counts[0] = rdmsr(MSR_IA32_PMC0);
	counts[1] = rdmsr(MSR_IA32_PMC0 + 1);
	counts[2] = rdmsr(MSR_IA32_FIXED_CTR0 + EVENT_CORE_CYCLES_FIXED);
	wrmsr(MSR_IA32_FIXED_CTR_CTRL, 0);
	wrmsr(MSR_IA32_PERFEVTSEL0, 0);
	wrmsr(MSR_IA32_PERFEVTSEL0 + 1, 0);
	/* pmu/'s shadow may know these counts: put them back. */
	wrmsr(MSR_IA32_PMC0, saved[0] & UINT32_MAX);
	wrmsr(MSR_IA32_PMC0 + 1, saved[1] & UINT32_MAX);
	wrmsr(MSR_IA32_FIXED_CTR0 + EVENT_CORE_CYCLES_FIXED, saved[2]);
	wrmsr(MSR_IA32_PERF_GLOBAL_OVF_CTRL, rdmsr(MSR_IA32_PERF_GLOBAL_STATUS));
	local_irq_restore(flags);
}

/*
 * CMask, Inv and Edge as the SDM defines them ("IA32_PERFEVTSELx"): with CMask 1 a counter adds
 * one for each cycle that retires at least one instruction, with Inv too one for each cycle that
 * retires none, so over one window the two add up to the unhalted core cycles (fixed counter 1),
 * whatever the cycles hold. Edge counts the cycles where "at least one" starts to hold: at least
 * one, and each after the first follows a cycle that retired none, so no more than those plus one.
 */
TEST(emulator, cmask_and_inv_split_the_cycles_and_edge_counts_transitions)
{
	uint64_t select = EVENT_INSTRUCTIONS | PERFEVTSEL_OS | PERFEVTSEL_EN | CMASK_1;
	uint64_t split[3], edges[3];

	require_emulator();
	if (CPUID_PERFMON_GP_COUNTERS(cpuid(CPUID_LEAF_PERFMON, 0).eax) < 2)
		test_skip("fewer than 2 GP counters");
	count_split(select, select | PERFEVTSEL_INV, split);
	count_split(select | PERFEVTSEL_EDGE, select | PERFEVTSEL_INV, edges);
	test_diag("at least one: %llu, none: %llu, cycles: %llu; %llu edges, %llu cycles with none",
		  (unsigned long long)split[0], (unsigned long long)split[1],
		  (unsigned long long)split[2], (unsigned long long)edges[0],
		  (unsigned long long)edges[1]);
	check_eq(split[2], split[0] + split[1]);
	check(split[0] >= 1, "no cycle retired an instruction of %u", 2 * SPLIT_LOOP);
	check(edges[0] >= 1 && edges[0] <= edges[1] + 1, "%llu edges, %llu cycles with none",
	      (unsigned long long)edges[0], (unsigned long long)edges[1]);
}

#define PEBS_BASIC_RECORDS 16 /* the buffer, in basic records (Linux alloc_pebs_buffer()) */
#define PEBS_GP_RECORD_BYTES (PEBS_BASIC_GROUP_SIZE + 144) /* basic and GPR groups */

/* One adaptive record with the GPR group from PMC0 over the area as set, then all off. */
static void adaptive_gp_record(void)
{
	unsigned long flags = local_irq_save();

	area.pebs_reset[0] = (0 - PEBS_RESET_PERIOD) & emulator_counter_width_mask();
	wrmsr(MSR_IA32_DS_AREA, (uint64_t)&area);
	wrmsr(MSR_PEBS_DATA_CFG, PEBS_DATACFG_GP);
	wrmsr(MSR_IA32_PMC0, (0 - PEBS_FIRST_PERIOD) & UINT32_MAX);
	wrmsr(MSR_IA32_PERFEVTSEL0, 0xc0 | PERFEVTSEL_OS | PERFEVTSEL_ADAPTIVE | PERFEVTSEL_EN);
	wrmsr(MSR_IA32_PEBS_ENABLE, 1);
	wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 1);
	probe_instruction_loop(PEBS_LOOP);
	pebs_counter_0_off();
	wrmsr(MSR_PEBS_DATA_CFG, 0);
	local_irq_restore(flags);
}

/*
 * Rule 20. Adaptive records vary in size, so Linux lays the buffer out in whole basic records
 * (alloc_pebs_buffer()) and puts the threshold where it wants the interrupt: one adaptive record
 * above the base for a single-record buffer (pebs_update_threshold()). That layout is kept: the
 * 176-byte record is stored, nothing reported. A maximum that is not whole basic records is
 * reported under rule 2, and nothing stored.
 */
TEST(emulator, rule_20_adaptive_pebs_takes_whole_basic_records_and_a_threshold_between_records)
{
	char text[EMULATOR_VIOLATION_MAX];
	uint64_t capabilities = 0;

	require_pebs_counter_0();
	rdmsr_safe(MSR_IA32_PERF_CAPABILITIES, &capabilities);
	if (!(capabilities & PERF_CAP_PEBS_BASELINE))
		test_skip("no adaptive PEBS: PERF_CAPABILITIES.PEBS_BASELINE=0");
	memset(&area, 0, sizeof(area));
	area.pebs_base = area.pebs_index = (uint64_t)buffer;
	area.pebs_max = area.pebs_base + PEBS_BASIC_RECORDS * PEBS_BASIC_GROUP_SIZE;
	area.pebs_threshold = area.pebs_base + PEBS_GP_RECORD_BYTES;
	adaptive_gp_record();
	check_eq(0, emulator_take_violations(text, sizeof(text)));
	check_eq(area.pebs_base + PEBS_GP_RECORD_BYTES, area.pebs_index);
	memset(&area, 0, sizeof(area));
	area.pebs_base = area.pebs_index = (uint64_t)buffer;
	area.pebs_max = area.pebs_base + PEBS_BASIC_RECORDS * PEBS_BASIC_GROUP_SIZE + 8;
	area.pebs_threshold = area.pebs_base + PEBS_GP_RECORD_BYTES;
	adaptive_gp_record();
	expect_violation(2);
	check_eq(area.pebs_base, area.pebs_index);
}
