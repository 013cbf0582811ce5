"""Tests that run alone, and logs that stop in a test: judged from synthetic logs and fake boots.

A test the kernel skips as "runs alone: REASON" is booted again alone and that boot decides its
result (scripts/switchyard/alone.py). Here every branch of that judgement is exercised without
QEMU: by Boot objects built by hand, a fake boot function, conftest's boot with qemu.boot
replaced, and scripts/run on a fake QEMU. The tests marked "boot" run the real kernel under TCG.
"""

import os
import subprocess
import sys
import threading
import time
import types
from pathlib import Path

import pytest

from sealed_logs import seal

import conftest
from switchyard import alone
from switchyard import log as ktap
from switchyard import qemu
from switchyard.qemu import Boot

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "scripts" / "run"
KERNEL = ROOT / "build" / "switchyard32.elf"

REASON = "KVM-PVM: ICEBP (0xF1) in ring 0 kills the VM"  # its entry in the table
NAME = "icebp_is_a_trap_like_db_without_a_dr6_condition"
ID = f"dr.{NAME}"
HEADER = """\
KTAP version 1
# switchyard 0.1 (x86-64)
# cmdline: exit=isa-debug tests=dr.* seed=7
# platform: identity=kvm-pvm (hypervisor "KVMKVMKVM", platform.host=kvm-pvm)
1..1
    KTAP version 1
    # Subtest: dr
"""
MAIN_BODY = HEADER + f"""\
    1..3
    # running dr.breakpoint_fires
    ok 1 breakpoint_fires
    # running dr.single_step_traps
    # a diagnostic of the test
    ok 2 single_step_traps
    ok 3 icebp_is_a_trap_like_db_without_a_dr6_condition # SKIP runs alone: {REASON}
ok 1 dr
"""
SOLO_START = HEADER + f"    1..1\n    # running {ID}\n"
SOLO_XPASS = SOLO_START + f"""\
    # known defect did not occur: the boot went on ({REASON})
    not ok 1 icebp_is_a_trap_like_db_without_a_dr6_condition # XPASS {REASON}
not ok 1 dr
"""
SOLO_FAIL = SOLO_START + """\
    # tests/kernel/dr_icebp.c:30: check failed: DR6_BS == dr6
    not ok 1 icebp_is_a_trap_like_db_without_a_dr6_condition
not ok 1 dr
"""
SOLO_USAGE = """\
KTAP version 1
# switchyard 0.1 (x86-64)
# error: option 'alone': tests= must select exactly one test, it selects 2
# valid options: tests=GLOB[,GLOB...] list alone
Bail out! bad kernel command line
"""


def skipped():
    """The runs-alone SKIP of MAIN_BODY."""
    result = ktap.check_log(seal(MAIN_BODY).encode(), qemu_status=33)
    assert [t.id for t in alone.runs_alone(result)] == [ID]
    return alone.runs_alone(result)[0]


def judge(log, status, timeout=60):
    """The solo result of ID from a boot that printed `log` and ended with `status` (None:
    killed after `timeout` s)."""
    return alone.judge(skipped(), Boot(log.encode(), status, 1.0, ""), timeout, Path("solo.log"))


# The last test started, in the main log.

def test_running_lines_are_not_a_tests_diagnostics():
    result = ktap.check_log(seal(MAIN_BODY).encode(), qemu_status=33)
    assert (result.verdict, result.errors) == (ktap.PASS, [])
    assert result.tests[1].diagnostics == ["a diagnostic of the test"]
    assert result.tests[0].diagnostics == []
    assert (result.last_started, result.running) == ("dr.single_step_traps", None)


def test_a_log_cut_in_a_test_names_it():
    body = MAIN_BODY[:MAIN_BODY.index("    # a diagnostic")]
    result = ktap.check_log(body.encode())
    assert result.verdict == ktap.CRASH and result.truncated
    assert result.running == "dr.single_step_traps"
    assert result.integrity_error.startswith("no final line: the log is truncated")
    assert "crashed or hung while running dr.single_step_traps" in result.integrity_error
    assert result.damage == []  # the missing final line and the open suite are the cut's


def test_a_log_cut_between_tests_says_the_last_one_reported():
    body = MAIN_BODY[:MAIN_BODY.index("    # running dr.single")]
    result = ktap.check_log(body.encode())
    assert (result.running, result.last_started) == (None, "dr.breakpoint_fires")
    assert "the last test started, dr.breakpoint_fires, reported its result" in \
        result.integrity_error


def test_a_log_cut_before_any_test_says_only_that_it_is_truncated():
    result = ktap.check_log(HEADER.encode())
    assert result.integrity_error == "no final line: the log is truncated"


def test_a_running_line_outside_a_suite_is_a_plain_diagnostic():
    body = MAIN_BODY.replace("1..1\n", "1..1\n# running dr.nothing\n", 1)
    result = ktap.check_log(seal(body).encode())
    assert result.verdict == ktap.PASS and "running dr.nothing" in result.diagnostics
    assert result.last_started == "dr.single_step_traps"


# Judging the solo boot.

@pytest.mark.parametrize("status, timeout, ended", [
    (None, 60, "the guest hung: killed after 60 s"),
    (None, 2.5, "the guest hung: killed after 2.5 s"),
    (0, 60, "QEMU exited with status 0, no final line"),
    (1, 60, "QEMU exited with status 1, no final line")])
def test_a_boot_that_ends_in_the_test_is_its_known_defect(status, timeout, ended):
    test = judge(SOLO_START, status, timeout)
    assert (test.id, test.status, test.reason) == (ID, "xfail", f"{REASON} ({ended})")
    assert test.log_path == Path("solo.log") and test.line == SOLO_START.count("\n")
    assert f"{ended} while running {ID}" in test.diagnostics[0]


@pytest.mark.parametrize("log, status, outcome", [
    (seal(SOLO_XPASS), 35, "xpass"), (seal(SOLO_FAIL), 35, "fail")], ids=["xpass", "fail"])
def test_a_solo_boot_that_completes_gives_the_tests_own_result(log, status, outcome):
    test = judge(log, status)
    assert (test.id, test.status) == (ID, outcome)
    assert test.line == log.splitlines().index(f"    {log.splitlines()[-3].strip()}") + 1
    assert "the test returned" in test.diagnostics[0]
    if outcome == "xpass":
        assert test.reason == REASON
    else:
        assert "check failed: DR6_BS == dr6" in test.diagnostics[1]


@pytest.mark.parametrize("log, status, fragments", [
    (HEADER + "    1..1\n", None, ["killed after 60 s", f"before {ID} started"]),
    (HEADER + "    1..1\n    # running dr.other_test\n", 0,
     ["exited with status 0", f"while running dr.other_test, not {ID}"]),
    (SOLO_START + f"    ok 1 {NAME}\n", None, [f"after {ID} reported its result"]),
    (SOLO_START.replace("1..1", "1..x"), None, ["the log is damaged", "malformed line"]),
    ("", 1, ["no KTAP output"]),
    ("qemu: could not load kernel\n", 1, ["no KTAP output"]),
    (seal(SOLO_USAGE), 37, ["rejected its command line",
                              "option 'alone': tests= must select exactly one"]),
    (seal(SOLO_XPASS), 33, ["exit status disagrees with log"]),
    (seal(SOLO_XPASS), None, ["killed after 60 s, after the log's final line"]),
    (seal(SOLO_XPASS.replace("    1..1", "    1..2").replace(
        "not ok 1 dr", "    # running dr.another\n    ok 2 another\nnot ok 1 dr")), 35,
     ["the boot reported", "dr.another", f"not {ID} alone"]),
    (seal(SOLO_START.replace(f"    # running {ID}\n", "")
          + f"    ok 1 {NAME} # SKIP runs alone: {REASON}\nok 1 dr\n"), 33,
     [f"skipped {ID} again under {alone.ALONE}"]),
    (seal(SOLO_START[:SOLO_START.index("1..1")] + "Bail out! #PF in the kernel\n"), 39,
     ["Bail out! #PF in the kernel"]),
], ids=["died-before-start", "another-test", "cut-after-result", "garbage", "no-output",
        "qemu-error", "usage", "status-disagrees", "final-line-then-hang", "two-tests",
        "skipped-again", "bail-out"])
def test_anything_else_from_the_solo_boot_is_a_failure_that_says_what(log, status, fragments):
    test = judge(log, status)
    assert (test.id, test.status) == (ID, "fail")
    assert all(f in test.diagnostics[0] for f in fragments), test.diagnostics
    tail = [line for line in ktap.clean(log).splitlines()][-alone.TAIL_LINES:]
    assert test.diagnostics[2:] == tail
    assert test.diagnostics[1].startswith(f"last {len(tail)} lines of solo.log")


def test_a_failure_shows_the_last_lines_of_a_long_solo_log():
    noise = "".join(f"    # step {step}\n" for step in range(40))
    test = judge(HEADER + "    1..1\n" + noise, None)
    assert test.status == "fail"
    assert test.diagnostics[1:] == [f"last {alone.TAIL_LINES} lines of solo.log:",
                                    *noise.splitlines()[-alone.TAIL_LINES:]]


def test_an_emulated_result_runs_alone_under_its_registered_name():
    test = skipped()
    test.name += alone.EMULATED_SUFFIX
    assert alone.registered_name(test) == ID
    assert alone.solo_cmdline("emulate=cpu:core2 tests=dr.* seed=7", test) == \
        f"emulate=cpu:core2 seed=7 tests={ID} {alone.ALONE}"
    solo = alone.judge(test, Boot(SOLO_START.encode(), None, 1.0, ""), 60, Path("x.log"))
    assert (solo.id, solo.status) == (f"{ID}__emulated", "xfail")


# Booting and merging.

def fake_boot(*logs):
    """A boot function that returns Boots of `logs` ((text, status) pairs) in turn and records
    each call's (cmdline, timeout) in its .calls."""
    boots = iter(logs)

    def boot(cmdline, timeout):
        boot.calls.append((cmdline, timeout))
        text, status = next(boots)
        return Boot(text.encode(), status, 0.5, "")
    boot.calls = []
    return boot


def test_run_solos_boots_each_runs_alone_test_with_the_boots_options(tmp_path):
    result = ktap.check_log(seal(MAIN_BODY).encode(), qemu_status=33)
    boot = fake_boot((SOLO_START, None))
    solos = alone.run_solos(result, "tests=dr.* seed=7", boot,
                            lambda name: tmp_path / "logs" / f"tcg-alone-{name}.log", 7)
    assert boot.calls == [(f"seed=7 tests={ID} {alone.ALONE}", 7)]
    assert list(solos) == [ID] and solos[ID].status == "xfail"
    assert (tmp_path / "logs" / f"tcg-alone-{ID}.log").read_text() == SOLO_START
    merged = alone.merged_result(result, solos)
    assert [t.status for t in merged.tests] == ["pass", "pass", "xfail"]
    assert merged.verdict == ktap.PASS and result.tests[2].status == "skip"


def test_a_failed_solo_fails_the_merged_result(tmp_path):
    result = ktap.check_log(seal(MAIN_BODY).encode(), qemu_status=33)
    solos = alone.run_solos(result, "", fake_boot((seal(SOLO_XPASS), 35)),
                            lambda name: tmp_path / f"{name}.log", 60)
    merged = alone.merged_result(result, solos)
    assert (merged.verdict, [t.id for t in merged.failed]) == (ktap.FAIL, [ID])


def test_a_log_with_nothing_to_run_alone_boots_nothing():
    result = ktap.check_log(seal(MAIN_BODY.replace("runs alone: ", "")).encode())
    assert alone.run_solos(result, "", fake_boot(), lambda name: None, 60) == {}


@pytest.mark.parametrize("value, expected", [(None, 60.0), ("5", 5.0), ("0.5", 0.5)])
def test_the_solo_limit_comes_from_the_environment(value, expected):
    environ = {} if value is None else {"SWITCHYARD_ALONE_TIMEOUT": value}
    assert alone.timeout_from_environment(environ) == expected


@pytest.mark.parametrize("value", ["0", "-1", "nan", "soon"])
def test_a_bad_solo_limit_is_refused(value):
    with pytest.raises(ValueError):
        alone.timeout_from_environment({"SWITCHYARD_ALONE_TIMEOUT": value})


# conftest: the pytest harness's boots, with qemu.boot replaced.

@pytest.fixture
def harness_boots(tmp_path, monkeypatch):
    """conftest.boot_platform with qemu.boot answering from .answers, a list of (log, status)
    pairs; .calls lists the (argv, timeout) of each boot."""
    monkeypatch.setattr(conftest, "LOG_DIR", tmp_path)
    monkeypatch.delenv("SWITCHYARD_CMDLINE", raising=False)
    monkeypatch.setenv("SWITCHYARD_ALONE_TIMEOUT", "3")
    boots = types.SimpleNamespace(calls=[], answers=[])

    def boot(argv, timeout, on_text=None):
        boots.calls.append((argv, timeout))
        text, status = boots.answers.pop(0)
        return Boot(text.encode(), status, 0.5, "")
    monkeypatch.setattr(conftest.qemu, "boot", boot)
    return boots


def test_harness_replaces_the_skip_by_the_solo_result_under_the_same_id(harness_boots,
                                                                         tmp_path):
    harness_boots.answers += [(seal(MAIN_BODY), 33), (SOLO_START, None)]
    platform = conftest.boot_platform("tcg-smp2")
    (argv, timeout) = harness_boots.calls[1]
    assert argv[argv.index("-append") + 1] == f"exit=isa-debug tests={ID} {alone.ALONE} smp.expect=2"
    assert argv[argv.index("-smp") + 1] == "2" and timeout == 3
    assert (tmp_path / f"tcg-smp2-alone-{ID}.log").read_text() == SOLO_START
    params = list(conftest.ktap_params(platform))
    assert [p.id for p in params][-1] == f"tcg-smp2-{ID}"
    assert [m.kwargs for m in params[-1].marks] == [
        {"strict": True, "reason": f"{REASON} (the guest hung: killed after 3 s)"}]
    assert platform.result.verdict == ktap.PASS  # the main log's own verdict, for its status


def test_harness_names_the_test_a_timed_out_boot_was_running(harness_boots):
    harness_boots.answers.append((MAIN_BODY[:MAIN_BODY.index("    # a diagnostic")], None))
    platform = conftest.boot_platform("tcg")
    assert "(time limit) while running dr.single_step_traps" in platform.failure
    assert len(harness_boots.calls) == 1 and platform.solos == {}


def test_harness_boots_nothing_alone_after_a_broken_log(harness_boots):
    harness_boots.answers.append((MAIN_BODY, 33))
    assert conftest.boot_platform("tcg").solos == {} and len(harness_boots.calls) == 1


# scripts/run on a fake QEMU that answers a boot alone from a second log.

@pytest.fixture
def fake_qemu(tmp_path):
    """run(main_log, main_status, solo_log, solo_status, solo_sleep, *args) -> the finished
    scripts/run; the fake prints the solo log when its -append has the option alone."""
    script = tmp_path / "fake-qemu"
    script.write_text(f"""#!{sys.executable}
import os, sys, time
solo = {alone.ALONE!r} in sys.argv[sys.argv.index("-append") + 1].split()
open({str(tmp_path)!r} + ("/solo-argv" if solo else "/argv"), "w").write("\\n".join(sys.argv))
kind = "SOLO" if solo else "MAIN"
sys.stdout.buffer.write(open(os.environ[f"FAKE_{{kind}}_LOG"], "rb").read())
sys.stdout.flush()
sys.stderr.write(os.environ.get(f"FAKE_{{kind}}_STDERR", ""))
sys.stderr.flush()
time.sleep(float(os.environ[f"FAKE_{{kind}}_SLEEP"]))
sys.exit(int(os.environ[f"FAKE_{{kind}}_STATUS"]))
""")
    script.chmod(0o755)

    def run(main, main_status, solo, solo_status, solo_sleep, *args, main_sleep=0,
            solo_stderr=""):
        (tmp_path / "main.log").write_text(main)
        (tmp_path / "solo.log").write_text(solo)
        env = dict(os.environ, FAKE_MAIN_LOG=str(tmp_path / "main.log"),
                   FAKE_SOLO_LOG=str(tmp_path / "solo.log"), FAKE_MAIN_STATUS=str(main_status),
                   FAKE_SOLO_STATUS=str(solo_status), FAKE_SOLO_SLEEP=str(solo_sleep),
                   FAKE_MAIN_SLEEP=str(main_sleep), FAKE_SOLO_STDERR=solo_stderr)
        env.pop("SWITCHYARD_ALONE_TIMEOUT", None)
        return subprocess.run([sys.executable, str(RUN), "--qemu", str(script), "--kernel",
                               str(script), "--accel", "tcg",
                               "--log", str(tmp_path / "serial.log"), *args],
                              capture_output=True, text=True, timeout=60, env=env)
    run.solo_argv = lambda: (tmp_path / "solo-argv").read_text().split("\n")
    return run


def test_run_ends_a_solo_boot_at_once_when_qemu_stops_the_guest(fake_qemu, tmp_path):
    # QEMU under KVM-PVM, after ICEBP in ring 0: it reports the error and stays paused.
    start = time.monotonic()
    proc = fake_qemu(seal(MAIN_BODY), 33, SOLO_START, 33, 60, "--alone-timeout", "50",
                     solo_stderr="KVM internal error. Suberror: 1\nemulation failure\n")
    assert time.monotonic() - start < 20
    assert proc.returncode == 0, proc.stderr
    solo_log = tmp_path / f"serial-alone-{ID}.log"
    assert (f"switchyard: ran alone: ok {ID} # XFAIL {REASON} (QEMU stopped the guest (KVM "
            f"internal error. Suberror: 1): killed) ({solo_log})") in proc.stderr


def test_boot_kills_a_qemu_that_stopped_its_guest_and_says_what_it_said():
    script = ("import sys, time; print('KTAP version 1', flush=True); "
              "sys.stderr.write('error: kvm run failed\\nKVM internal error. Suberror: 1\\n'); "
              "sys.stderr.flush(); time.sleep(60)")
    start = time.monotonic()
    boot = qemu.boot([sys.executable, "-c", script], 50)
    assert time.monotonic() - start < 10
    assert (boot.status, boot.timed_out) == (None, False)
    assert boot.stopped == "KVM internal error. Suberror: 1"
    assert boot.raw == b"KTAP version 1\n"
    # The same QEMU killed at the limit without that message timed out.
    boot = qemu.boot([sys.executable, "-c", "import time; time.sleep(60)"], 1)
    assert (boot.status, boot.timed_out, boot.stopped) == (None, True, "")


def test_run_xfails_a_test_whose_solo_boot_hangs_in_it(fake_qemu, tmp_path):
    start = time.monotonic()
    proc = fake_qemu(seal(MAIN_BODY), 33, SOLO_START, 33, 60, "--alone-timeout", "1",
                     "--cmdline", "tests=dr.* seed=7")
    assert time.monotonic() - start < 20
    assert proc.returncode == 0, proc.stderr
    argv = fake_qemu.solo_argv()
    assert argv[argv.index("-append") + 1] == f"exit=isa-debug seed=7 tests={ID} {alone.ALONE}"
    solo_log = tmp_path / f"serial-alone-{ID}.log"
    assert solo_log.read_text() == SOLO_START
    assert (f"switchyard: ran alone: ok {ID} # XFAIL {REASON} (the guest hung: killed after "
            f"1 s) ({solo_log})") in proc.stderr
    assert "PASS 2 passed, 0 failed, 0 skipped, 1 xfailed" in proc.stderr.splitlines()[-1]


@pytest.mark.parametrize("solo, status, code, fragments", [
    (SOLO_START, 0, 0, [f"ok {ID} # XFAIL {REASON} (QEMU exited with status 0, no final"]),
    (seal(SOLO_XPASS), 35, 1, [f"not ok {ID} # XPASS {REASON}", f"XPASS {ID}", "1 xpassed"]),
    (seal(SOLO_FAIL), 35, 1, [f"not ok {ID} (", "check failed: DR6_BS == dr6", "1 failed"]),
    (HEADER, 0, 1, [f"ran alone: not ok {ID} (", f"before {ID} started", "last 7 lines of"]),
], ids=["exit", "xpass", "fail", "died-early"])
def test_run_reports_the_solo_result_and_exits_by_it(fake_qemu, solo, status, code, fragments):
    proc = fake_qemu(seal(MAIN_BODY), 33, solo, status, 0)
    assert proc.returncode == code, proc.stderr
    assert all(f in proc.stderr for f in fragments), proc.stderr


def test_run_names_the_test_a_truncated_log_stopped_in(fake_qemu):
    proc = fake_qemu(MAIN_BODY[:MAIN_BODY.index("    # a diagnostic")], 0, "", 0, 0)
    assert proc.returncode == 4
    assert "crashed or hung while running dr.single_step_traps" in proc.stderr.splitlines()[-1]
    assert "running alone" not in proc.stderr


def test_run_names_the_test_a_timeout_stopped_in(fake_qemu):
    proc = fake_qemu(MAIN_BODY[:MAIN_BODY.index("    # a diagnostic")], 0, "", 0, 0,
                     "--timeout", "1", main_sleep=60)
    assert proc.returncode == 124
    assert "TIMEOUT: QEMU killed after 1 s while running dr.single_step_traps" in proc.stderr


def test_run_refuses_a_bad_solo_limit(fake_qemu):
    proc = fake_qemu(seal(MAIN_BODY), 33, "", 0, 0, "--alone-timeout", "0")
    assert proc.returncode == 2 and "--alone-timeout" in proc.stderr


# The real kernel under TCG.

@pytest.mark.boot
def test_the_kernel_skips_a_test_that_ends_the_boot_and_run_boots_it_alone(tmp_path):
    """The real kernel under TCG playing kvm-pvm, where ICEBP in ring 0 kills the VM: the main
    boot skips the ICEBP tests to run alone, and scripts/run boots each alone and reports the
    judgement of its solo log, whatever TCG does with ICEBP (a hang: XFAIL; #UD: not ok)."""
    assert KERNEL.is_file(), f"kernel image {KERNEL} not found: run make"
    log = tmp_path / "serial.log"
    proc = subprocess.run([sys.executable, str(RUN), "--accel", "tcg", "--quiet", "--cmdline",
                           "tests=dr.icebp* selftest.platform=kvm-pvm", "--alone-timeout", "10",
                           "--log", str(log)], capture_output=True, text=True, timeout=120)
    skipped = alone.runs_alone(ktap.check_log(log.read_bytes()))
    assert skipped, ktap.clean(log.read_bytes())
    expected = {"pass": "ok {}", "fail": "not ok {}", "xpass": "not ok {} # XPASS",
                "xfail": "ok {} # XFAIL"}
    for test in skipped:
        solo_log = tmp_path / f"serial-alone-{alone.registered_name(test)}.log"
        solo = ktap.check_log(solo_log.read_bytes())
        assert solo.last_started == alone.registered_name(test), solo.lines
        if solo.truncated:  # the boot ended in the test, as on KVM-PVM: the known defect
            status = "xfail"
        else:  # it returned: its own result there
            assert [t.id for t in solo.tests] == [test.id]
            status = solo.tests[0].status
        line = f"switchyard: ran alone: {expected[status].format(test.id)}"
        assert line in proc.stderr, proc.stderr
    assert proc.returncode == (1 if "ran alone: not ok" in proc.stderr else 0), proc.stderr


# conftest: the boots in lanes, each platform once however many lanes or workers ask.

@pytest.fixture
def lane_boots(tmp_path, monkeypatch):
    """conftest.boot_platform replaced by a 0.2 s fake; .calls lists (name, start, end). As a
    pytest run without xdist, whatever runs this test: the lanes are threads."""
    monkeypatch.setattr(conftest, "LOG_DIR", tmp_path)
    monkeypatch.setattr(conftest, "_config", None)
    calls = []

    def boot_platform(name):
        start = time.monotonic()
        time.sleep(0.2)
        calls.append((name, start, time.monotonic()))
        if name == "tcg-smp4":
            raise OSError("no QEMU")
        return conftest.Platform(name, raw=b"log of " + name.encode())
    monkeypatch.setattr(conftest, "boot_platform", boot_platform)
    return calls


def test_lanes_boot_each_platform_once_at_most_two_at_a_time(lane_boots):
    names = ["tcg", "kvm", "tcg-smp2", "kvm-smp4", "tcg-smp4"]
    platforms = conftest.boot_in_lanes(names)
    assert sorted(name for name, _, _ in lane_boots) == sorted(names)
    assert [platforms[name].raw for name in names[:4]] == [
        b"log of " + name.encode() for name in names[:4]]
    assert platforms["tcg-smp4"].failure == "booting tcg-smp4 raised OSError('no QEMU')"
    at_once = [sum(s <= start < e for _, s, e in lane_boots) for _, start, _ in lane_boots]
    assert max(at_once) == conftest.BOOT_LANES, lane_boots  # side by side, never more
    # The lanes start at once: one with a whole-suite platform (kvm or tcg, whichever lane
    # takes WHOLE.lock first), the other with a short one it may boot beside it.
    first = sorted(lane_boots, key=lambda call: call[1])[:2]
    assert sorted(conftest.whole_suite(name) for name, _, _ in first) == [False, True], first


def test_workers_share_their_boots_through_claims(lane_boots, tmp_path):
    """Two pytest-xdist workers (threads here), each a lane over every platform, boot each
    platform once between them and both get every platform's run."""
    names = ["tcg", "kvm", "tcg-smp2", "kvm-smp4"]
    directory = tmp_path / "run"
    directory.mkdir()
    results = {}

    def worker(lane):
        conftest.claim_and_boot(directory, conftest.lane_order(names, lane))
        results[lane] = {name: conftest.wait_for_boot(directory, name, len(names))
                         for name in names}
    threads = [threading.Thread(target=worker, args=(lane,)) for lane in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(name for name, _, _ in lane_boots) == sorted(names)
    for lane in (0, 1):
        assert [results[lane][name].raw for name in names] == [
            b"log of " + name.encode() for name in names]


def test_processes_given_one_boot_run_share_their_boots(lane_boots, monkeypatch, tmp_path):
    """make check's two pytest processes (scripts/check): with SWITCHYARD_BOOT_RUN set, a later
    call reads the boots an earlier one made, which stay for it."""
    monkeypatch.setenv("SWITCHYARD_BOOT_RUN", "check-test")
    first = conftest.boot_in_lanes(["tcg", "tcg-smp2"])
    second = conftest.boot_in_lanes(["tcg"])
    assert sorted(name for name, _, _ in lane_boots) == ["tcg", "tcg-smp2"]
    assert second["tcg"].raw == first["tcg"].raw == b"log of tcg"
    assert (tmp_path / "boots" / "check-test" / "tcg.pickle").is_file()
    monkeypatch.setenv("SWITCHYARD_BOOT_RUN", "../elsewhere")
    with pytest.raises(pytest.UsageError, match="SWITCHYARD_BOOT_RUN"):
        conftest.boot_in_lanes(["tcg"])


def test_one_lane_starts_the_longest_boot_and_the_other_the_short_ones():
    names = list(conftest.PLATFORMS)
    zero, one = conftest.lane_order(names, 0), conftest.lane_order(names, 1)
    assert sorted(zero) == sorted(one) == sorted(names)
    whole = ["kvm", "tcg", "tcg-lab"]
    assert [name for name in names if conftest.whole_suite(name)] == ["tcg", "kvm", "tcg-lab"]
    assert zero[:3] == whole and one[-3:] == whole
    assert one[0] == "tcg-smp2" and one[-4] == "kvm-xapic"  # the KVM short ones from the end


def test_the_timeline_gives_each_lane_its_boots_from_the_first_start():
    platforms = [conftest.Platform("kvm", booted=(0, 100.0, 160.5)),
                 conftest.Platform("tcg-smp2", booted=(1, 100.5, 102.0)),
                 conftest.Platform("tcg", booted=(0, 160.5, 163.0)),
                 conftest.Platform("log")]
    assert conftest.lane_timeline(platforms) == (
        "boots: 3 in 63.0 s\n  lane 0: kvm 0.0-60.5, tcg 60.5-63.0\n"
        "  lane 1: tcg-smp2 0.5-2.0")
    assert conftest.lane_timeline([conftest.Platform("log")]) == ""


def test_a_claimed_boot_that_never_finishes_is_a_failure_not_a_hang(tmp_path, monkeypatch):
    monkeypatch.setenv("SWITCHYARD_BOOT_TIMEOUT", "0.3")
    monkeypatch.setenv("SWITCHYARD_ALONE_TIMEOUT", "0.2")
    (tmp_path / "tcg.claim").touch()
    start = time.monotonic()
    platform = conftest.wait_for_boot(tmp_path, "tcg", 1)
    assert time.monotonic() - start < 5
    assert platform.failure.startswith("no run of tcg within 0.5 s"), platform.failure


def test_two_boots_of_the_whole_suite_never_run_side_by_side(lane_boots):
    """tcg, kvm and tcg-lab boot every suite, timing tests and all: one at a time, while the
    other lane boots the short platforms."""
    names = ["tcg", "kvm", "tcg-lab", "tcg-smp2", "kvm-smp4", "tcg-apic"]
    platforms = conftest.boot_in_lanes(names)
    assert sorted(platforms) == sorted(names)
    assert sorted(name for name, _, _ in lane_boots) == sorted(names)
    whole = [call for call in lane_boots if conftest.whole_suite(call[0])]
    assert len(whole) == 3
    for name, start, end in whole:
        beside = [other for other, s, e in whole if other != name and s < end and start < e]
        assert not beside, (name, beside, lane_boots)
    short = [call for call in lane_boots if not conftest.whole_suite(call[0])]
    assert any(s < e0 and s0 < e for _, s, e in short for _, s0, e0 in whole), lane_boots
