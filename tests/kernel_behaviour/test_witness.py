"""The outside witness: what switchyard reports, against QEMU's own instruction stream.

One TCG boot of its own (platform "tcg-witness", one CPU) runs the bts, ds, pebs, emulator and
pmu suites, the dr write-count tests and benchmark and the sched benchmarks with the witness
plugin loaded (build/witness/libwitness.so, docs/witness.md). The kernel opens a witness window
where it snapshots its own counters and closes it where it reads them again
(arch/x86/witness_marker.h); each check pairs the windows, in order, with the numbers the
kernel printed for them, and compares:
  - writes: the WRMSR (real or diverted) and MOV-to-DR instructions QEMU executed in a window
    equal the kernel's `writes` counters over it (dr, ds, pmu and sched);
  - counters: the ring-0 instructions retired between the two counter reads of
    pmu.instructions_retired_by_a_known_loop, as silicon would run them, equal its count;
  - PEBS: each record of pebs.records_point_at_the_event_after_each_overflow points at the
    instruction the witness numbers as the event after an overflow;
  - BTS with BTS_OFF_OS: the count and last record a traced user task saw equal its ring-3
    branches as the witness saw them;
  - BTS: the records of the kept-rule BTS window equal, one for one and in order, the taken
    branches silicon would have recorded, and every transfer the model is documented to leave
    out is listed with its SDM reason;
  - the decoder: every distinct 64-bit instruction QEMU executed in the run has the length QEMU
    gave it and the branch class of QEMU's disassembly, and none of those the decoder calls
    "none" ever transferred control in a window.
pmu.multiplexed_estimates_match_the_true_count is left out: it runs for a fixed 100 ms, and the
witness's per-instruction callback changes how much it steps, not what it checks.

Raw files: build/logs/tcg-witness.log and build/logs/tcg-witness.witness.
"""

import re
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass
from itertools import zip_longest
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
from switchyard import log as ktap  # noqa: E402
from switchyard import qemu  # noqa: E402
from switchyard import witness  # noqa: E402

KERNEL = ROOT / "build" / "switchyard32.elf"
ELF = ROOT / "build" / "switchyard.elf"
PLUGIN = ROOT / "build" / "witness" / "libwitness.so"
CHECKER = ROOT / "build" / "host" / "decode-check"
LOG_DIR = ROOT / "build" / "logs"
TESTS = ("tests=bts.*,ds.*,pebs.*,emulator.*,pmu.instructions_*,pmu.branches_*,pmu.a_tasks_*,"
         "pmu.identical_*,pmu.each_*,pmu.events_*,pmu.counters_*,dr.switch_*,dr.eager_*,"
         "dr.benchmark_*,sched.benchmark_*")
BOOT_TIMEOUT = 120

pytestmark = pytest.mark.boot

RUNNING = re.compile(r"^\s*# running ([A-Za-z0-9_]+\.[A-Za-z0-9_]+)$")
RESULT = re.compile(r"^\s*(?:not )?ok \d+ ")
DR_PAIR = re.compile(r"^(\d+) differing slots, (lazy|eager): (\d+) DR writes in (\d+) switches$")
DR_BENCH = re.compile(r"^([a-z_]+): (\d+) DR writes in (\d+) switches$")
DS_PAIR = re.compile(r"^(.+): (\d+) MSR writes in (\d+) switches \(\d+ rounds\)$")
SCHED_WRITES = re.compile(r"^metric sched\.switch_writes\.([a-z_]+) switches=\d+ "
                          r"msr_writes=(\d+) dr_writes=(\d+)$")
PMU_PAIR = re.compile(r"^(\d+) MSR writes in (\d+) switches$")
COUNTED = re.compile(r"^counted: (\d+) instructions at CPL 0$")
COUNTED_BRANCHES = re.compile(r"^counted: (\d+) branches at CPL 0$")
USER_COUNTED = re.compile(r"^small (\d+), big (\d+)$")
PEBS_BEFORE = re.compile(r"^pebs: (\d+) events before the counter read, period (\d+)$")
PEBS_RECORD = re.compile(r"^pebs record (\d+): eventing 0x([0-9a-f]+) ip 0x([0-9a-f]+)$")
PEBS_FORMAT = re.compile(r"emulated cpu: on .* pebs_format=(\d+) ")
POLLER = re.compile(r"^the poller saw (\d+) records, the last 0x([0-9a-f]+) -> 0x([0-9a-f]+)$")
BTS_RECORD = re.compile(r"^bts record (\d+): 0x([0-9a-f]+) -> 0x([0-9a-f]+)$")
TICK_WINDOW = re.compile(r"^tick window: (bts|counter), interrupts (on|off): (\d+) unstepped ticks$")
VECTOR_TIMER = 0x20  # arch/x86/exceptions.h

# The 64-bit code the decoder is for (test_decoder.py's ranges): the kernel half, the boot
# code's 64-bit tail and the user text; not the firmware, nor the 32-bit boot code.
USER_TEXT_BASE = 0x400000  # arch/x86/user-abi.h
USER_TEXT_SIZE = 0x10000
POLL_LOOP_JNZ = 10  # user_ds_poll's loop ends with its JNZ at +10 (tests/kernel/ds_user.c)


@dataclass
class Run:
    log: str
    result: object
    data: object  # the witness file, read
    image: object
    diags: dict  # "suite.test" -> its "# " lines, in order

    def windows(self, name):
        return self.data.windows_of(name)


def diagnostics_by_test(text):
    """Each test's diagnostic lines ("# " stripped), by suite.test."""
    diags, current = defaultdict(list), None
    for line in ktap.clean(text).splitlines():
        running = RUNNING.match(line)
        if running:
            current = running.group(1)
        elif RESULT.match(line):
            current = None
        elif current and line.strip().startswith("# "):
            diags[current].append(line.strip()[2:])
    return diags


def matches(run, test, pattern):
    return [m for m in (pattern.match(line) for line in run.diags.get(test, [])) if m]


@pytest.fixture(scope="module")
def run():
    for path in (KERNEL, PLUGIN):
        if not path.is_file():
            pytest.fail(f"{path} not found: run make")
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    out = LOG_DIR / "tcg-witness.witness"
    out.unlink(missing_ok=True)
    argv = qemu.qemu_command(KERNEL, "tcg", cmdline=TESTS, smp=1)
    argv += ["-plugin", f"{PLUGIN},out={out}"]
    boot = qemu.boot(argv, BOOT_TIMEOUT)
    (LOG_DIR / "tcg-witness.log").write_bytes(boot.raw)
    result = ktap.check_log(boot.raw, boot.status)
    assert not boot.timed_out, f"the witness boot took over {BOOT_TIMEOUT} s"
    assert result.verdict in (ktap.PASS, ktap.FAIL), \
        f"the witness boot ended {result.verdict}: see {LOG_DIR / 'tcg-witness.log'}"
    assert out.is_file(), f"the plugin wrote no {out}: {boot.stderr.strip()}"
    text = ktap.clean(boot.raw)
    return Run(text, result, witness.read(out), witness.Image(ELF), diagnostics_by_test(text))


def test_the_witness_file_is_complete_and_every_window_closed(run):
    assert run.data.complete, "the witness file has no end record: QEMU did not exit cleanly"
    open_windows = [(w.id, w.how) for w in run.data.windows if w.how != "closed"]
    assert not open_windows, f"windows not closed by their marker: {open_windows}"
    print(f"{len(run.data.insns)} distinct instructions, {len(run.data.windows)} windows, "
          f"{sum(len(w.stream) for w in run.data.windows)} instructions recorded in them")


def pair(run, window, lines, what):
    windows = run.windows(window)
    assert len(lines) > 0, f"the kernel printed no {what} line"
    assert len(windows) == len(lines), \
        f"{len(windows)} witness windows {window!r} for {len(lines)} {what} lines"
    return list(zip(windows, lines))


def compare_writes(run, pairs, kind):
    """pairs: (window, label, the kernel's count). kind: "dr" or "msr"."""
    wrong = []
    for window, label, reported in pairs:
        seen = witness.writes(window, run.data, run.image)
        counted = seen["mov_dr"] if kind == "dr" else seen["wrmsr"] + seen["diverted_wrmsr"]
        print(f"{label}: switchyard {reported} {kind} writes, witness {counted} ({seen})")
        if counted != reported:
            wrong.append(f"{label}: switchyard counted {reported}, the witness saw {counted}")
    assert not wrong, "\n".join(wrong)


def test_dr_write_count_tests_write_what_the_witness_saw(run):
    lines = []
    for test in ("dr.switch_between_identical_configurations_writes_nothing",
                 "dr.switch_between_configurations_differing_in_k_slots_writes_at_most_k_plus_2",
                 "dr.eager_mode_writes_everything_on_every_switch"):
        lines += matches(run, test, DR_PAIR)
    pairs = pair(run, "dr_writes", lines, "DR write-count")
    compare_writes(run, [(w, f"{m[1]} differing, {m[2]}", int(m[3])) for w, m in pairs], "dr")


def test_dr_benchmark_configurations_write_what_the_witness_saw(run):
    lines = matches(run, "dr.benchmark_switch_cost_by_configuration", DR_BENCH)
    pairs = pair(run, "dr_benchmark", lines, "dr benchmark")
    compare_writes(run, [(w, m[1], int(m[2])) for w, m in pairs], "dr")


def test_ds_switch_writes_are_what_the_witness_saw(run):
    lines = matches(run, "ds.switches_between_tasks_with_the_same_configuration_write_no_msr",
                    DS_PAIR)
    pairs = pair(run, "ds_switch_writes", lines, "ds MSR-write")
    compare_writes(run, [(w, m[1], int(m[2])) for w, m in pairs], "msr")


def test_pmu_switch_writes_are_what_the_witness_saw(run):
    lines = matches(run, "pmu.identical_configurations_make_no_msr_writes_at_switch", PMU_PAIR)
    pairs = pair(run, "pmu_switch_writes", lines, "pmu MSR-write")
    compare_writes(run, [(w, "identical", int(m[1])) for w, m in pairs], "msr")


def test_sched_benchmark_switches_write_what_the_witness_saw(run):
    lines = []
    for test in ("sched.benchmark_kernel_to_kernel_yield", "sched.benchmark_user_to_user_yield",
                 "sched.benchmark_timer_preemption"):
        lines += matches(run, test, SCHED_WRITES)
    pairs = pair(run, "sched_switch_writes", lines, "sched switch-write")
    compare_writes(run, [(w, m[1], int(m[2])) for w, m in pairs], "msr")
    compare_writes(run, [(w, m[1], int(m[3])) for w, m in pairs], "dr")


def diverted_indices(silicon, name):
    return [i for i, step in enumerate(silicon.steps)
            if step.insn is not None and step.insn.diverted and step.insn.disas == name]


def retired_between_reads(run, test, pattern, window_name):
    """(the kernel's count, the instructions retired outside any handler from the window's
    first counter RDMSR, inclusive, to its second, exclusive): the model counts a diverted
    RDMSR after it has read the counter, as silicon counts an instruction once it retires.
    Interrupts are off, but an NMI (the watchdog) can come: silicon would count its handler's
    ring-0 instructions; the model steps no handler (docs/emulated-cpu.md). Those are listed.
    Counted as the model counts them (rule 21): the IRETQ that leaves an outermost handler, an
    NMI's too, back to the counted flow."""
    (line,) = matches(run, test, pattern)
    ((window, match),) = pair(run, window_name, [line], "counted")
    silicon = witness.silicon(window, run.data, run.image)
    reads = diverted_indices(silicon, "rdmsr")
    assert len(reads) == 2, f"expected the two counter reads in the window, saw {len(reads)}"
    between = silicon.steps[reads[0]:reads[1]]
    print(f"removed: {silicon.step_services} single-step services "
          f"({silicon.step_service_insns} instructions), diverted {silicon.diverted} "
          f"({silicon.divert_service_insns} instructions of #UD service)")
    list_handlers(between)
    return int(match[1]), [s.insn for s in between if s.insn is not None and (
        not s.depth or (s.depth == 1 and s.returns_from is not None))]


def list_handlers(steps):
    """Print, as a listed difference, the handlers' instructions among steps."""
    entries = [s for s in steps if s.kind in ("interrupt", "exception")]
    inside = [s for s in steps if s.insn is not None and s.depth]
    if entries:
        print(f"listed difference: {len(entries)} interrupt(s) (vectors "
              f"{sorted({s.vector for s in entries})}), {len(inside)} handler instructions "
              "that silicon would count in the enabled rings; the model steps neither an NMI's "
              "handler nor the timer's")


def test_instructions_counted_are_what_the_witness_saw_retire(run):
    """Fixed counter 0 over a loop with interrupts off (pmu.instructions_retired_*)."""
    counted, retired = retired_between_reads(
        run, "pmu.instructions_retired_by_a_known_loop", COUNTED, "pmu_counted")
    kernel = sum(1 for insn in retired if not insn.user)
    print(f"switchyard counted {counted}, the witness saw {kernel} retire at CPL 0")
    assert kernel == counted


def test_branches_counted_are_the_branch_instructions_the_witness_saw_retire(run):
    """Event 0xC4 over the same loop: every instruction QEMU disassembles as a branch (taken
    or not, near or far), as the SDM's "branch instructions retired" counts them."""
    counted, retired = retired_between_reads(
        run, "pmu.branches_retired_by_a_known_loop", COUNTED_BRANCHES, "pmu_branches")
    kernel = sum(1 for insn in retired if not insn.user and not insn.diverted
                 and witness.qemu_class(insn.disas) != "none")
    print(f"switchyard counted {counted} branches, the witness saw {kernel} retire at CPL 0")
    assert kernel == counted


def test_user_instructions_counted_are_what_the_witness_saw_retire_in_ring_3(run):
    """Two user tasks count their own ring-3 instructions (EVTSEL.USR only) from their start
    to their last system call, switching and taking interrupts: together, every ring-3
    instruction the window retired, and none of the handlers' (ring 0, not counted)."""
    test = "pmu.a_tasks_count_is_not_polluted_by_other_tasks"
    (line,) = matches(run, test, USER_COUNTED)
    ((window, match),) = pair(run, "pmu_user_counted", [line], "user counted")
    silicon = witness.silicon(window, run.data, run.image)
    user = sum(1 for insn in silicon.retired() if insn.user)
    interrupts = sum(1 for s in silicon.transfers() if s.kind == "interrupt")
    counted = int(match[1]) + int(match[2])
    print(f"switchyard counted {match[1]} + {match[2]} = {counted}, the witness saw {user} "
          f"retire at CPL 3 ({interrupts} interrupts in the window, "
          f"{silicon.step_services} single-step services removed)")
    assert user == counted


def test_pebs_records_point_at_the_instruction_after_each_overflow(run):
    """Counter 0 counts ring-0 instructions from -period, interrupts off. After `before` events
    the test read it (that RDMSR is event before + 1: the model counts it once it has read), so
    the witness numbers every instruction after; period events overflow the counter, the next
    takes the assist and is not counted (the counter reloads), so record k's eventing
    instruction is event k * (period + 1) (formats 2 and up have the field). Its IP field: the
    same instruction in an adaptive record's basic group (format 4 and up), the next one
    retired (trap-like) in formats 0-3.
    Counting stops at the release's first WRMSR (GLOBAL_CTRL): no record may be missing
    before it, nor any extra."""
    test = "pebs.records_point_at_the_event_after_each_overflow"
    (head,) = matches(run, test, PEBS_BEFORE)
    before, period = int(head[1]), int(head[2])
    records = [(int(m[2], 16), int(m[3], 16)) for m in matches(run, test, PEBS_RECORD)]
    pebs_format = int(PEBS_FORMAT.search(run.log)[1])
    (window,) = run.windows("pebs_eventing")
    silicon = witness.silicon(window, run.data, run.image)
    list_handlers(silicon.steps)
    # The IRETQ that leaves an NMI's handler retires in the counted flow (rule 21).
    kernel = [s.insn for s in silicon.steps
              if s.insn is not None and not s.insn.user
              and (not s.depth or (s.depth == 1 and s.returns_from is not None))]
    reads = [i for i, insn in enumerate(kernel) if insn.diverted and insn.disas == "rdmsr"]
    stops = [i for i, insn in enumerate(kernel) if insn.diverted and insn.disas == "wrmsr"
             and reads and i > reads[0]]
    assert reads and stops, "no counter read, or no release, in the PEBS window"
    first = reads[0] - before  # event 1, perhaps before the window opened
    expected = []
    k = 1
    while first + k * (period + 1) - 1 < stops[0]:
        at = first + k * (period + 1) - 1
        ip = kernel[at].vaddr if pebs_format >= 4 else kernel[at + 1].vaddr
        # Formats 0 and 1 have no eventing IP field (the test prints 0).
        expected.append((kernel[at].vaddr if pebs_format >= 2 else 0, ip))
        k += 1
    show = lambda pair: f"{pair[0]:#x}/{pair[1]:#x}" if pair else "none"  # noqa: E731
    wrong = [f"record {i}: switchyard {show(mine)}, witness {show(theirs)}"
             for i, (mine, theirs) in enumerate(zip_longest(records, expected))
             if mine != theirs]
    print(f"format {pebs_format}, period {period}, {before} events before the read: "
          f"{len(records)} records, the witness expects {len(expected)}")
    assert not wrong, f"{len(wrong)} differences:\n" + "\n".join(wrong)


# Why BTS would have stored a transfer that the model leaves out (docs/emulated-cpu.md, "Where
# the model differs from silicon"); SDM Vol. 3B "Branch Trace Store": a record for every
# "taken branch, interrupt, or exception".
MODEL_OMITS = {
    "handler": "a branch or delivery inside a handler the model does not step (the timer's, "
               "an NMI's: rule 21), or in a stepped one's entry before the model's hook or "
               "return after its resume hook",
}


def bts_expected(silicon, start, end, image):
    """(what the model must record, [(reason, transfer)] it is documented to leave out).
    Rule 21: deliveries to the stepped flow and its far transfers (SYSCALL, INT n) are
    recorded, from the raising instruction or the interrupted one to the gate. A handler the
    model steps is recorded from the point WITNESS_HANDLER_STEPPED (arch/x86/divert.c) up to
    and including the transfer into its resume hook, with the deliveries and IRETQs of what
    comes inside it; its entry before the point and its return after the hook are not."""
    resume_hook = image.symbols["emulator_resume_hook"]
    recorded, omitted = [], []
    stepped = None  # the depth of the handler the model steps, from its point to its hook
    for step in silicon.steps[start:end]:
        if step.insn is not None:
            if step.insn.marker == (witness.OP_POINT, witness.HANDLER_STEPPED) and step.depth:
                stepped = step.depth
            elif step.insn.vaddr == resume_hook and step.depth == stepped:
                stepped = None
            continue
        # The IRETQ that leaves an outermost handler (an NMI's too) returns to the stepped flow.
        leaves = step.returns_from is not None and step.depth == 1
        inside = stepped is not None and (step.depth == stepped or (
            step.returns_from is not None and step.depth == stepped + 1))
        if inside:
            recorded.append((step.source, step.target))
        elif step.depth and not leaves:
            omitted.append(("handler", step))
        else:
            recorded.append((step.source, step.target))
    return recorded, omitted


def test_bts_records_are_the_branches_the_witness_saw(run):
    """Between the WRMSR that sets DEBUGCTL.TR|BTS and the one that clears them (the second
    and third of the window's four: DS_AREA, on, off, DS_AREA), with no CPL filter."""
    compare_bts(run, "emulator.a_kept_rule_reports_nothing_and_every_branch_is_recorded",
                "bts_traced")


def test_bts_records_of_an_nmi_are_its_delivery_and_iretq_where_the_witness_saw_it(run):
    """emulator.rule_21_an_nmi_*: an NMI sent to the CPU in a traced window (and any of the
    watchdog's) is taken, on silicon, between two instructions of the flow; the model takes it
    inside its own single-step service and records it there. The witness keeps an NMI nested in
    a removed service where the service was, and compares as above."""
    compare_bts(run, "emulator.rule_21_an_nmi_is_recorded_to_its_gate_and_its_iretq_back",
                "bts_nmi")


def test_bts_records_of_a_stepped_handler_are_the_branches_the_witness_saw(run):
    """emulator.rule_21_an_exception_handlers_branches_*: a UD2 in a traced window whose #UD
    handler runs a known loop. The handler is stepped from the model's hook on (rule 21): its
    branches from there to the transfer into the resume hook are compared one for one, in
    order with the fault's delivery and the IRETQ; its entry before the hook and its return
    after the resume hook are listed."""
    compare_bts(run, "emulator.rule_21_an_exception_handlers_branches_lie_between_its_"
                "delivery_and_its_iretq", "bts_handler")


def compare_bts(run, test, window_name):
    records = [(int(m[2], 16), int(m[3], 16)) for m in matches(run, test, BTS_RECORD)]
    assert records, f"{test} printed no records"
    (window,) = run.windows(window_name)
    silicon = witness.silicon(window, run.data, run.image)
    writes = diverted_indices(silicon, "wrmsr")
    assert len(writes) == 4, (f"expected 4 WRMSRs in the BTS window, saw {len(writes)}; "
                              "diverted sites not taken for one (stream index, site, service "
                              f"end, resumed at): {silicon.unmatched_diverts}")
    recorded, omitted = bts_expected(silicon, writes[1], writes[2], run.image)
    for reason, text in MODEL_OMITS.items():
        steps = [step for why, step in omitted if why == reason]
        if steps:
            print(f"listed difference: {len(steps)} x {text}; the first "
                  f"{steps[0].source:#x} -> {steps[0].target:#x}")
    print(f"{len(records)} records; the witness: {len(recorded)} branches, "
          f"{len(omitted)} listed differences")
    show = lambda pair: f"{pair[0]:#x} -> {pair[1]:#x}" if pair else "none"  # noqa: E731
    wrong = [f"record {i}: switchyard {show(mine)}, witness {show(theirs)}"
             for i, (mine, theirs) in enumerate(zip_longest(records, recorded))
             if mine != theirs]
    assert records == recorded, f"{len(wrong)} differences:\n" + "\n".join(wrong[:20])


def test_bts_off_os_records_are_the_ring_3_branches_the_witness_saw(run):
    """ds.owner_user_task_polls_its_index_and_finds_the_last_record: a user task traced with
    BTS_OFF_OS (DS-CPL) runs a loop, then reads its own BTS index and last record. With ring 0
    filtered out, what BTS stores before that read is the task's ring-3 branches: the witness
    counts them up to the task's first instruction past its loop (the read), and compares the
    count and the last one with what the task saw. The kernel's branches in the window (the
    test task sleeping, the switches) are not stored; the deliveries out of ring 3 are."""
    test = "ds.owner_user_task_polls_its_index_and_finds_the_last_record"
    (match,) = matches(run, test, POLLER)
    ((window, _),) = pair(run, "bts_user", [match], "poller")
    poll = (USER_TEXT_BASE + run.image.symbols["user_ds_poll"]
            - run.image.symbols["__user_text_start"])
    silicon = witness.silicon(window, run.data, run.image)
    branches = []
    for step in silicon.steps:
        if step.insn is not None and step.insn.user and step.insn.vaddr > poll + POLL_LOOP_JNZ:
            break  # the read of the index
        # Ring 3's branches, and (rule 21) the transfers out of it and into it: under
        # BTS_OFF_OS a transfer across the ring boundary is still stored, an NMI's too.
        ring_3 = step.insn is None and (step.source < witness.KERNEL_HALF
                                        or step.target < witness.KERNEL_HALF)
        if ring_3 and step.depth == 0:
            branches.append((step.source, step.target))
        elif step.insn is None and step.depth == 1 and step.returns_from is not None \
                and step.target < witness.KERNEL_HALF:
            branches.append((step.source, step.target))  # an IRETQ back to ring 3
    seen = (int(match[1]), int(match[2], 16), int(match[3], 16))
    last = branches[-1] if branches else (0, 0)
    print(f"the poller saw {seen[0]} records, the last {seen[1]:#x} -> {seen[2]:#x}; the "
          f"witness: {len(branches)} ring-3 branches, the last {last[0]:#x} -> {last[1]:#x}")
    user = [step.insn.vaddr for step in silicon.steps
            if step.insn is not None and step.insn.user]
    assert seen == (len(branches), *last), (
        f"window {window.how}, {len(window.stream)} executions, {len(silicon.steps)} steps, "
        f"{len(user)} in ring 3 (the first at {user[0] if user else 0:#x}; the loop ends at "
        f"{poll + POLL_LOOP_JNZ:#x})")


def sixty_four_bit(image, insn):
    if insn.vaddr >= witness.KERNEL_HALF:
        return True
    if USER_TEXT_BASE <= insn.vaddr < USER_TEXT_BASE + USER_TEXT_SIZE:
        return True
    return image.symbols["long_mode_entry"] <= insn.vaddr < image.symbols["boot_gdt"]


def test_decoder_gives_every_executed_instruction_its_length_and_class(run):
    build = subprocess.run(["make", "--no-print-directory", "-C", str(ROOT),
                            "build/host/decode-check"], capture_output=True, text=True)
    assert build.returncode == 0, build.stdout + build.stderr
    insns = [run.data.insns[i] for i in sorted(run.data.executions)]
    insns = [insn for insn in insns if sixty_four_bit(run.image, insn)]
    lines = "".join(f"{insn.vaddr:x} {insn.data.hex()}\n" for insn in insns)
    result = subprocess.run([str(CHECKER)], input=lines, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    # Whether a window ever saw each instruction hand control elsewhere (not to an entry stub).
    transferred = set()
    for window in run.data.windows:
        silicon = witness.silicon(window, run.data, run.image, with_retired=False)
        for step in silicon.transfers():
            if step.kind == "branch" and not step.source_insn.diverted:
                transferred.add(step.source_insn.id)
    wrong = []
    for insn, output in zip(insns, result.stdout.splitlines()):
        fields = output.split()
        qemu_says = f"{insn.vaddr:x} {insn.length} {witness.qemu_class(insn.disas)}"
        if output != qemu_says:
            wrong.append(f"decoder {output!r}, QEMU {qemu_says!r}: {insn.data.hex()} "
                         f"{insn.disas}")
        elif fields[2] == "none" and insn.id in transferred:
            wrong.append(f"decoder says no branch, the witness saw one: {output!r} "
                         f"{insn.data.hex()} {insn.disas}")
    print(f"{len(insns)} distinct 64-bit instructions executed, {len(transferred)} seen "
          "transferring control in a window")
    assert len(insns) == len(result.stdout.splitlines())
    assert not wrong, f"{len(wrong)} disagreements:\n" + "\n".join(wrong[:40])


def test_unstepped_ticks_are_the_timer_interrupts_the_witness_saw(run):
    """emulator.rule_21_each_unstepped_tick_*: the model steps no timer handler and counts
    each tick that comes while ring 0 is observed (emulator_stats().ticks_unstepped). In each
    window (a known loop, BTS-traced or counted, interrupts off or on) that count equals the
    vector-32 deliveries the witness saw while the loop was observed: between the WRMSR that
    sets DEBUGCTL.TR|BTS and the one that clears it (the 2nd and 3rd of DS_AREA, on, off,
    DS_AREA), or between the GLOBAL_CTRL writes that start and stop the counter (the 3rd and
    4th of PMC, EVTSEL, on, off, EVTSEL)."""
    test = "emulator.rule_21_each_unstepped_tick_is_its_iretq_and_two_records"
    lines = matches(run, test, TICK_WINDOW)
    assert lines, f"{test} printed no tick windows"
    seen_ticks = 0
    for window, match in pair(run, "ticks", lines, "tick windows"):
        silicon = witness.silicon(window, run.data, run.image)
        writes = diverted_indices(silicon, "wrmsr")
        start, end = (1, 2) if match[1] == "bts" else (2, 3)
        assert len(writes) == (4 if match[1] == "bts" else 5), \
            f"{match[1]} window: {len(writes)} WRMSRs"
        ticks = sum(1 for step in silicon.steps[writes[start]:writes[end]]
                    if step.kind == "interrupt" and step.vector == VECTOR_TIMER)
        print(f"{match[1]} window, interrupts {match[2]}: the model counted {match[3]} "
              f"unstepped ticks, the witness saw {ticks}")
        seen_ticks += ticks
        assert ticks == int(match[3])
    assert seen_ticks, "no tick came in any window: nothing was compared"
