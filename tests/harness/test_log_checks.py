"""Negative checks: every broken, truncated or contradictory log is a clear failure, never a pass.

Logs are built here with an independent CRC (tests/sealed_logs.py), then mutated. scripts/run is
exercised through a fake QEMU (--qemu) and, for the tests marked "boot", the real kernel.
"""

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sealed_logs import flip_byte, seal, with_running

from switchyard import log as ktap

ROOT = Path(__file__).resolve().parents[2]
TEST_KERNEL = ROOT / "tests" / "verdicts" / "test_kernel.py"
TEST_ID = "tests/verdicts/test_kernel.py"
RUN = ROOT / "scripts" / "run"
KERNEL = ROOT / "build" / "switchyard32.elf"

FAILING_BODY = with_running("""\
KTAP version 1
# switchyard 0.1 (x86-64)
# cmdline: tests=arch.*,boot.* seed=7
# seed=7
1..2
    KTAP version 1
    # Subtest: arch
    1..3
    ok 1 rdmsr_safe_reports_gp_for_missing_msr
    # fault_is_not_a_hang: arch/x86/traps.c:42: check failed: vector == 13
    #   expected 13 (0xd), got 0 (0x0)
    not ok 2 fault_is_not_a_hang
    ok 3 io_breakpoint_needs_de # SKIP CR4.DE cannot be set
not ok 1 arch
    KTAP version 1
    # Subtest: boot
    1..1
    ok 1 long_mode_is_active
ok 2 boot
# metric sched.switch_cycles median=1234 p99=2345
""")
PASSING_BODY = (FAILING_BODY.replace("not ok 2 fault", "ok 2 fault")
                .replace("not ok 1 arch", "ok 1 arch")
                .replace("    # fault_is_not_a_hang: arch/x86/traps.c:42: check failed: "
                         "vector == 13\n    #   expected 13 (0xd), got 0 (0x0)\n", ""))
USAGE_BODY = """\
KTAP version 1
# switchyard 0.1 (x86-64)
# error: bogus=1: unknown option
# valid options: tests=GLOB[,GLOB...] list seed=N timeout=D console=PORT[,BAUD] exit=isa-debug
Bail out! bad kernel command line
"""




def assert_crash(result, *fragments):
    """The verdict is CRASH and some error mentions every fragment."""
    assert result.verdict == ktap.CRASH
    assert any(all(f in error for f in fragments) for error in result.errors), result.errors


# The shared module on good logs: the baseline the negative checks mutate.

def test_a_failing_log_is_fail_with_diagnostics_attached():
    result = ktap.check_log(seal(FAILING_BODY).encode(), qemu_status=35)
    assert (result.verdict, result.errors) == (ktap.FAIL, [])
    assert [(t.id, t.status) for t in result.tests] == [
        ("arch.rdmsr_safe_reports_gp_for_missing_msr", "pass"),
        ("arch.fault_is_not_a_hang", "fail"),
        ("arch.io_breakpoint_needs_de", "skip"),
        ("boot.long_mode_is_active", "pass")]
    assert result.tests[1].diagnostics == [
        "fault_is_not_a_hang: arch/x86/traps.c:42: check failed: vector == 13",
        "  expected 13 (0xd), got 0 (0x0)"]
    assert result.tests[2].skip_reason == "CR4.DE cannot be set"
    assert result.metrics == {"sched.switch_cycles": {"median": "1234", "p99": "2345"}}


def test_noise_escapes_and_carriage_returns_are_ignored():
    noise = "\x1b[H\x1b[J\x1b[=3hSeaBIOS\r\nBooting from ROM...\r\n"
    log = noise + seal(PASSING_BODY).replace("\n", "\r\n").replace("# seed", "\x1b[0m# seed")
    result = ktap.check_log(log.encode(), qemu_status=33)
    assert (result.verdict, result.errors) == (ktap.PASS, [])


def test_usage_error_is_usage_with_the_kernel_reason():
    result = ktap.check_log(seal(USAGE_BODY).encode(), qemu_status=37)
    assert result.verdict == ktap.USAGE
    assert result.usage_error == "bogus=1: unknown option"


# Corruption and truncation.

@pytest.mark.parametrize("target", ["long_mode_is_active", "ok 3", "not ok 2"])
def test_a_flipped_byte_is_a_crc_mismatch(target):
    log = flip_byte(seal(PASSING_BODY if target != "not ok 2" else FAILING_BODY), target)
    assert_crash(ktap.check_log(log.encode()), "CRC mismatch")


def test_a_truncated_log_is_a_crash():
    log = seal(PASSING_BODY)
    assert_crash(ktap.check_log(log[:len(log) // 2].encode()), "no final line")


def test_a_log_without_its_final_line_is_a_crash():
    assert_crash(ktap.check_log(PASSING_BODY.encode(), qemu_status=33), "no final line")


def test_a_wrong_line_count_is_a_crash():
    log = seal(PASSING_BODY).replace(f"lines={PASSING_BODY.count(chr(10))}", "lines=3")
    assert_crash(ktap.check_log(log.encode()), "final line counts 3 lines")


def test_text_after_the_final_line_is_a_crash():
    log = seal(PASSING_BODY) + "ok 3 extra\n"
    assert_crash(ktap.check_log(log.encode()), "not the last line")


def test_a_second_final_line_is_a_crash():
    """Sealing the log again, first final line included, must not pass it off as a diagnostic."""
    log = seal(seal(PASSING_BODY))
    assert_crash(ktap.check_log(log.encode()), "more than one final line")


def test_no_ktap_output_is_a_crash():
    assert_crash(ktap.check_log(b"hello from long mode\n", qemu_status=33), "no KTAP output")


# Well-formed and consistent KTAP, with a valid CRC over the broken content.

@pytest.mark.parametrize("old, new, fragments", [
    ("    ok 1 long_mode", "    okay 1 long_mode", ("line 20", "malformed line")),
    ("    ok 1 long_mode", "      ok 1 long_mode", ("line 20", "bad indentation")),
    ("# seed=7", "seed=7", ("line 4", "malformed line")),
    ("# metric sched.switch_cycles median=1234", "# metric sched.switch_cycles median",
     ("line 22", "malformed line")),
    ("# SKIP CR4.DE cannot be set", "# SKIP", ("line 14", "bad directive")),
    ("# SKIP CR4.DE cannot be set", "# TODO CR4.DE", ("line 14", "bad directive")),
    ("# SKIP CR4.DE cannot be set", "# XFAIL", ("line 14", "bad directive")),
    ("# SKIP CR4.DE cannot be set", "# XPASS CR4.DE", ("line 14", "bad directive")),
    ("    ok 1 long_mode_is_active", "    not ok 1 long_mode_is_active # XFAIL x",
     ("line 20", "bad directive")),
    ("    1..3", "    1..4", ("suite arch plans 4, has 3",)),
    ("1..2\n", "1..3\n", ("the top level plans 3, has 2",)),
    ("    ok 3 io_", "    ok 4 io_", ("line 14", "numbered 4, expected 3")),
    ("ok 2 boot", "ok 2 arch", ("suite result names 'arch'",)),
    ("ok 1 arch", "not ok 1 arch", ("suite arch is 'not ok' but no test failed",)),
    ("ok 2 boot\n", "", ("log ends inside suite boot",)),
    ("ok 2 boot\n", "ok 2 boot\nKTAP version 1\n", ("line 22", "malformed line")),
])
def test_a_sealed_but_broken_log_is_a_crash(old, new, fragments):
    assert old in PASSING_BODY
    result = ktap.check_log(seal(PASSING_BODY.replace(old, new, 1)).encode(), qemu_status=33)
    assert_crash(result, *fragments)


def test_a_failed_test_in_an_ok_suite_is_a_crash():
    body = FAILING_BODY.replace("not ok 1 arch", "ok 1 arch")
    assert_crash(ktap.check_log(seal(body).encode()), "suite arch is 'ok' but a test failed")


def test_a_bail_out_is_a_crash_with_its_reason():
    body = PASSING_BODY[:PASSING_BODY.index("    ok 3")] + "Bail out! #PF at 0xdead in ring 0\n"
    result = ktap.check_log(seal(body).encode(), qemu_status=39)
    assert (result.verdict, result.errors) == (ktap.CRASH, [])
    assert result.bail_out == "#PF at 0xdead in ring 0"


def test_text_after_a_bail_out_is_a_crash():
    body = USAGE_BODY + "1..1\n"
    assert_crash(ktap.check_log(seal(body).encode()), "text after 'Bail out!'")


# The QEMU exit status against the log.

@pytest.mark.parametrize("body, status", [
    (PASSING_BODY, 35), (PASSING_BODY, 0), (PASSING_BODY, 1), (FAILING_BODY, 33),
    (USAGE_BODY, 39), (PASSING_BODY, 39)], ids=["pass-35", "pass-0", "pass-1", "fail-33",
                                                "usage-39", "pass-39"])
def test_an_exit_status_disagreeing_with_the_log_is_a_crash(body, status):
    result = ktap.check_log(seal(body).encode(), qemu_status=status)
    assert_crash(result, "exit status disagrees with log", f"QEMU exited {status}")


def test_any_exit_status_with_a_broken_log_is_a_crash():
    assert_crash(ktap.check_log(PASSING_BODY.encode(), qemu_status=33), "QEMU exited 33")


# scripts/run.

def run(*args, timeout=30, env=None):
    return subprocess.run([sys.executable, str(RUN), *args], capture_output=True, text=True,
                          timeout=timeout, env=env)


@pytest.fixture
def fake_qemu(tmp_path):
    """A fake QEMU that records its argv, prints FAKE_LOG (\\r\\n line ends), then sleeps
    FAKE_SLEEP seconds and exits FAKE_STATUS. Returns a function(log, status, sleep) -> run."""
    script = tmp_path / "fake-qemu"
    script.write_text(f"""#!{sys.executable}
import os, sys, time
open({str(tmp_path / "argv")!r}, "w").write("\\n".join(sys.argv[1:]))
data = open(os.environ["FAKE_LOG"], "rb").read().replace(b"\\n", b"\\r\\n")
sys.stdout.buffer.write(data)
sys.stdout.flush()
time.sleep(float(os.environ["FAKE_SLEEP"]))
sys.exit(int(os.environ["FAKE_STATUS"]))
""")
    script.chmod(0o755)

    def boot(log, status=33, sleep=0, *args):
        (tmp_path / "log").write_text(log)
        env = dict(os.environ, FAKE_LOG=str(tmp_path / "log"), FAKE_STATUS=str(status),
                   FAKE_SLEEP=str(sleep))
        return run("--qemu", str(script), "--kernel", str(script), "--accel", "tcg", *args,
                   env=env)
    boot.argv = lambda: (tmp_path / "argv").read_text().split("\n")
    return boot


@pytest.mark.parametrize("body, status, code", [
    (PASSING_BODY, 33, 0), (FAILING_BODY, 35, 1), (USAGE_BODY, 37, 3), (PASSING_BODY, 35, 4)],
    ids=["pass", "fail", "usage", "status-disagrees"])
def test_run_exit_status_follows_the_log(fake_qemu, body, status, code):
    proc = fake_qemu(seal(body), status, 0, "--cmdline", "tests=arch.*")
    assert proc.returncode == code, proc.stderr
    assert "\r" not in proc.stdout and proc.stdout.startswith("KTAP version 1\n")
    assert proc.stderr.strip().splitlines()[-1].startswith("switchyard: ")
    argv = fake_qemu.argv()
    assert argv[argv.index("-append") + 1] == "exit=isa-debug tests=arch.*"
    assert argv[argv.index("-cpu") + 1] == "max"


def test_run_tells_the_kernel_how_many_cpus_qemu_gives_it(fake_qemu):
    proc = fake_qemu(seal(PASSING_BODY), 33, 0, "--smp", "4", "--cmdline", "tests=smp.*")
    assert proc.returncode == 0, proc.stderr
    argv = fake_qemu.argv()
    assert argv[argv.index("-smp") + 1] == "4"
    assert argv[argv.index("-append") + 1] == "exit=isa-debug tests=smp.* smp.expect=4"
    fake_qemu(seal(PASSING_BODY), 33, 0, "--smp", "2", "--cmdline", "smp.expect=3")
    argv = fake_qemu.argv()
    assert argv[argv.index("-append") + 1] == "exit=isa-debug smp.expect=3"


def test_run_kills_a_qemu_that_never_exits(fake_qemu):
    start = time.monotonic()
    proc = fake_qemu(PASSING_BODY[:200], 33, 60, "--timeout", "1", "--quiet")
    assert proc.returncode == 124
    assert time.monotonic() - start < 15
    assert PASSING_BODY[:200].rstrip("\n").splitlines()[-1] in proc.stdout
    assert "TIMEOUT" in proc.stderr


def test_run_durations_asks_the_kernel_and_lists_the_slowest(fake_qemu):
    body = (PASSING_BODY
            .replace("    ok 1 rdmsr", "    # duration arch.rdmsr_safe_reports_gp_for_missing_msr"
                     " 1500 us\n    ok 1 rdmsr")
            .replace("    ok 2 fault", "    # duration arch.fault_is_not_a_hang 250000 us\n"
                     "    ok 2 fault")
            .replace("    ok 1 long", "    # duration boot.long_mode_is_active 40 us\n    ok 1 long"))
    proc = fake_qemu(seal(body), 33, 0, "--durations", "2", "--cmdline", "tests=arch.*")
    assert proc.returncode == 0, proc.stderr
    argv = fake_qemu.argv()
    assert argv[argv.index("-append") + 1] == "exit=isa-debug tests=arch.* durations"
    lines = proc.stderr.strip().splitlines()
    assert lines[-3:] == [
        "switchyard: 3 tests took 251.5 ms; the slowest:",
        "switchyard:       250.0 ms  arch.fault_is_not_a_hang",
        "switchyard:         1.5 ms  arch.rdmsr_safe_reports_gp_for_missing_msr"]


@pytest.mark.parametrize("args", [
    ["--accel", "xen"], ["--timeout", "-1"], ["--smp", "0"], ["--kernel", "/nonexistent"],
    ["--durations", "-1"],
    ["--qemu", "/nonexistent/qemu"], ["--check-log", "/nonexistent.log"], ["--bogus"]])
def test_run_rejects_bad_arguments(args):
    proc = run(*args)
    assert proc.returncode == 2
    assert "error:" in proc.stderr


@pytest.mark.parametrize("body, code", [
    (seal(PASSING_BODY), 0), (seal(FAILING_BODY), 1), (seal(USAGE_BODY), 3),
    (PASSING_BODY, 4), (flip_byte(seal(PASSING_BODY), "long_mode"), 4)],
    ids=["pass", "fail", "usage", "no-final-line", "flipped-byte"])
def test_run_check_log(tmp_path, body, code):
    (tmp_path / "serial.log").write_text(body)
    proc = run("--check-log", str(tmp_path / "serial.log"))
    assert proc.returncode == code, proc.stderr


def test_run_summary_of_a_bail_out_names_the_test_it_stopped_in(tmp_path):
    """docs/output.md, Time limits: a bail out in a test is named from its "# running" line."""
    head = PASSING_BODY[:PASSING_BODY.index("    # running arch.io_breakpoint_needs_de")]
    body = (head + "    # running arch.io_breakpoint_needs_de\n"
            + "Bail out! NMI watchdog: holding 1 spinlocks, at rip=0x1234: it cannot be ended\n")
    (tmp_path / "serial.log").write_text(seal(body))
    proc = run("--check-log", str(tmp_path / "serial.log"))
    assert proc.returncode == 4, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == (
        "switchyard: CRASH: Bail out! NMI watchdog: holding 1 spinlocks, at rip=0x1234: it "
        f"cannot be ended, while running arch.io_breakpoint_needs_de ({tmp_path / 'serial.log'})")
    # Between tests (after the last test's result) there is no test to name.
    (tmp_path / "serial.log").write_text(seal(head + "Bail out! #UD in the kernel\n"))
    proc = run("--check-log", str(tmp_path / "serial.log"))
    assert proc.stderr.strip().splitlines()[-1] == (
        f"switchyard: CRASH: Bail out! #UD in the kernel ({tmp_path / 'serial.log'})")


def harness(tmp_path, log, **env):
    """Run the pytest harness (tests/verdicts/test_kernel.py) on a recorded log, as `make check`
    does."""
    (tmp_path / "serial.log").write_text(log)
    env = dict(os.environ, SWITCHYARD_LOG=str(tmp_path / "serial.log"), **env)
    return subprocess.run([sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider",
                           str(TEST_KERNEL)],
                          capture_output=True, text=True, timeout=120, env=env, cwd=ROOT)


def test_harness_judges_a_recorded_log(tmp_path):
    """SWITCHYARD_LOG gives one pytest case per KTAP test, plus the integrity checks."""
    proc = harness(tmp_path, seal(FAILING_BODY))
    assert proc.returncode == 1, proc.stdout
    assert f"FAILED {TEST_ID}::test_ktap[log-arch.fault_is_not_a_hang]" in proc.stdout
    assert "expected 13 (0xd), got 0 (0x0)" in proc.stdout
    assert any(line.startswith("SKIPPED") and line.endswith(": CR4.DE cannot be set")
               for line in proc.stdout.splitlines())
    assert f"PASSED {TEST_ID}::test_log_is_complete_and_verified[log]" in proc.stdout
    assert "1 failed, 3 passed, 2 skipped" in proc.stdout


GD = "QEMU TCG does not implement DR7.GD: no #DB on the next DR access"  # its table entry
TCG_IDENTITY = '# platform: identity=tcg (hypervisor "TCGTCGTCGTCG")\n'
KNOWN_DEFECT_SUITE = """\
    KTAP version 1
    # Subtest: dr
    1..1
    # running dr.general_detect_raises_db_on_the_next_dr_access
    # tests/kernel/dr_semantics.c:80: check failed: 1 == count
    #   expected 1 (0x1), got 0 (0x0)
    #   known defect of this platform: {reason}
    {result}
{word} 3 dr
"""


def known_defect_log(result, word, identity=TCG_IDENTITY, reason=GD):
    """PASSING_BODY and a dr suite whose one test is `result`, on the platform `identity`."""
    return (PASSING_BODY.replace("1..2\n", "1..3\n", 1)
            .replace("# seed=7\n", "# seed=7\n" + identity)
            + KNOWN_DEFECT_SUITE.format(result=result, word=word, reason=reason))


@pytest.mark.parametrize("result, word, outcome, code", [
    (f"ok 1 general_detect_raises_db_on_the_next_dr_access # XFAIL {GD}", "ok", "1 xfailed", 0),
    (f"not ok 1 general_detect_raises_db_on_the_next_dr_access # XPASS {GD}", "not ok",
     "1 failed", 1),
    ("not ok 1 general_detect_raises_db_on_the_next_dr_access", "not ok", "1 failed", 1)],
    ids=["xfail", "xpass", "other-failure"])
def test_a_known_defect_is_a_strict_xfail_in_run_and_pytest_alike(tmp_path, result, word,
                                                                   outcome, code):
    """The kernel's in-band verdicts: XFAIL is an xfail and exit 0, XPASS a strict xfail that
    passed and exit 1, a failure beside the known one a failure; no table is read."""
    proc = harness(tmp_path, seal(known_defect_log(result, word)))
    assert outcome in proc.stdout.splitlines()[-1], proc.stdout
    assert "log-dr.general_detect_raises_db_on_the_next_dr_access" in proc.stdout
    if "XPASS" in result:
        assert f"[XPASS(strict)] {GD}" in proc.stdout, proc.stdout
    run_proc = run("--check-log", str(tmp_path / "serial.log"))
    assert run_proc.returncode == code, run_proc.stderr
    assert (proc.returncode == 0) == (code == 0)


# Resealed forgeries: a log edited and sealed again (its CRC is anyone's to compute) that no
# kernel writes.

XFAIL_GD = f"ok 1 general_detect_raises_db_on_the_next_dr_access # XFAIL {GD}"
TOTALS = "# totals: pass=3 fail=0 skip=1 xfail=0 xpass=0\n"


def test_a_known_defect_log_as_the_kernel_writes_it_passes():
    result = ktap.check_log(seal(known_defect_log(XFAIL_GD, "ok")).encode(), qemu_status=33)
    assert (result.verdict, result.errors, result.count("xfail")) == (ktap.PASS, [], 1)


@pytest.mark.parametrize("result, word, identity, reason, fragment", [
    ("ok 1 general_detect_raises_db_on_the_next_dr_access # XFAIL it flakes", "ok",
     TCG_IDENTITY, "it flakes", "reason 'it flakes'"),
    (f"ok 1 general_detect_raises_db_on_the_next_dr_access # XFAIL {GD}", "ok",
     '# platform: identity=kvm-vmx (hypervisor "KVMKVMKVM", platform.host=kvm-vmx)\n', GD,
     "platform kvm-vmx"),
    (f"ok 1 general_detect_raises_db_on_the_next_dr_access # XFAIL {GD}", "ok", "", GD,
     "no '# platform: identity=' line"),
    (f"ok 1 long_mode_is_active # XFAIL {GD}", "ok", TCG_IDENTITY, GD,
     "XFAIL dr.long_mode_is_active"),
    ("not ok 1 general_detect_raises_db_on_the_next_dr_access # XPASS the platform was fixed",
     "not ok", TCG_IDENTITY, "the platform was fixed", "XPASS dr.general_detect"),
], ids=["unlisted-reason", "other-platform", "no-identity", "other-test", "unlisted-xpass"])
def test_an_xfail_or_xpass_the_table_does_not_list_is_a_crash(result, word, identity, reason,
                                                               fragment):
    body = known_defect_log(result, word, identity, reason)
    if "long_mode" in result:
        body = body.replace("# running dr.general_detect_raises_db_on_the_next_dr_access",
                            "# running dr.long_mode_is_active")
    assert_crash(ktap.check_log(seal(body).encode()), "the known-defects table has no entry",
                 fragment)


@pytest.mark.parametrize("body, totals, fragment", [
    (PASSING_BODY, TOTALS.replace("pass=3 fail=0", "pass=2 fail=1"), "pass=3 fail=0 skip=1"),
    (PASSING_BODY, TOTALS.replace("skip=1", "skip=0"), "contradicts the results"),
    (PASSING_BODY, TOTALS + TOTALS, "2 '# totals:' lines"),
    (PASSING_BODY, "# totals: pass=3\n", "malformed totals line"),
], ids=["failure-hidden", "skip", "twice", "malformed"])
def test_a_totals_line_that_contradicts_the_results_is_a_crash(body, totals, fragment):
    assert ktap.check_log(seal(PASSING_BODY + TOTALS).encode(), qemu_status=33).verdict == \
        ktap.PASS
    assert_crash(ktap.check_log(seal(body + totals).encode()), fragment)


@pytest.mark.parametrize("result", ["ok 2 fault_is_not_a_hang",
                                    "ok 2 fault_is_not_a_hang # SKIP no fault here"],
                         ids=["ok", "skip"])
def test_ok_after_a_failed_check_is_a_crash(result):
    """The kernel's "not ok" made "ok", suite and all: the failed check still says otherwise."""
    body = FAILING_BODY.replace("not ok 2 fault_is_not_a_hang", result).replace(
        "not ok 1 arch", "ok 1 arch")
    assert_crash(ktap.check_log(seal(body).encode()),
                 "arch.fault_is_not_a_hang is 'ok' after a failed check")


def test_a_skip_after_a_known_defects_failed_check_is_the_kernels():
    """lib/report.c: a known defect's failed check does not fail a test that then skips."""
    body = known_defect_log("ok 1 general_detect_raises_db_on_the_next_dr_access # SKIP no GD",
                            "ok")
    assert ktap.check_log(seal(body).encode(), qemu_status=33).verdict == ktap.PASS


@pytest.mark.parametrize("old, new, fragment", [
    ("    # running arch.fault_is_not_a_hang\n", "",
     "line 11: result of arch.fault_is_not_a_hang without its "
     "'# running arch.fault_is_not_a_hang'"),
    ("    # running arch.fault_is_not_a_hang\n", "    # running arch.rdmsr_safe_reports_gp\n",
     "result of arch.fault_is_not_a_hang after '# running arch.rdmsr_safe_reports_gp'"),
    ("    # running boot.long_mode_is_active\n", "",
     "result of boot.long_mode_is_active without its"),
], ids=["missing", "another-test", "missing-in-second-suite"])
def test_a_result_without_its_running_line_is_a_crash(old, new, fragment):
    assert old in PASSING_BODY
    assert_crash(ktap.check_log(seal(PASSING_BODY.replace(old, new)).encode()), fragment)


def test_a_skip_decided_before_the_test_runs_needs_no_running_line():
    """runner.c: runs = "never", runs alone and the pace check skip before "# running"."""
    body = PASSING_BODY.replace("    # running arch.io_breakpoint_needs_de\n", "")
    assert ktap.check_log(seal(body).encode(), qemu_status=33).verdict == ktap.PASS


def test_a_test_twice_is_a_crash():
    twice = ("    # running arch.io_breakpoint_needs_de\n"
             "    ok 3 io_breakpoint_needs_de # SKIP CR4.DE cannot be set\n")
    body = PASSING_BODY.replace("    1..3", "    1..4").replace(
        twice, twice + twice.replace("ok 3", "ok 4"))
    assert_crash(ktap.check_log(seal(body).encode()), "test arch.io_breakpoint_needs_de twice")


def suites(body):
    """The top-level plan line and the suites of body, as text, and what follows them."""
    start = body.index("    KTAP version 1")
    end = body.index("# metric")
    parts, rest = [], body[start:end]
    while rest:
        cut = rest.index("\n", rest.index("\nok ") + 1 if "\nok " in rest else 0) + 1
        parts.append(rest[:cut])
        rest = rest[cut:]
    return body[:start], parts, body[end:]


@pytest.mark.parametrize("order, fragment", [
    ((1, 0), "suite arch after boot: the runner runs the suites in name order"),
    ((0, 1, 1), "suite boot twice"),
], ids=["swapped", "twice"])
def test_suites_out_of_order_or_twice_are_a_crash(order, fragment):
    head, parts, tail = suites(PASSING_BODY)
    assert [p.splitlines()[1].strip() for p in parts] == ["# Subtest: arch", "# Subtest: boot"]
    def renumber(text, number):
        return re.sub(r"^(ok|not ok) \d+ ", rf"\g<1> {number} ", text, flags=re.M)
    body = (head.replace("1..2", f"1..{len(order)}")
            + "".join(renumber(parts[i], n) for n, i in enumerate(order, 1)) + tail)
    assert_crash(ktap.check_log(seal(body).encode()), fragment)


# The real kernel under TCG: its command-line errors.

@pytest.mark.boot
@pytest.mark.parametrize("cmdline, option", [("bogus=1", "bogus"), ("tests=nosuch.*", "tests")])
def test_kernel_rejects_a_bad_command_line(tmp_path, cmdline, option):
    assert KERNEL.is_file(), f"kernel image {KERNEL} not found: run make"
    proc = run("--accel", "tcg", "--cmdline", cmdline, "--log", str(tmp_path / "serial.log"),
               timeout=120)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    lines = ktap.clean((tmp_path / "serial.log").read_bytes()).splitlines()
    assert any(line.startswith("# error:") and option in line for line in lines), lines
    assert any(line.startswith("# valid options:") for line in lines), lines
    assert "rejected its command line" in proc.stderr


def test_switchyard_cmdline_replaces_a_boots_own_option_instead_of_repeating_it():
    from conftest import merge_cmdline
    assert merge_cmdline("tests=smp.*", "tests=boot.*") == "tests=boot.*"
    assert merge_cmdline("emulate=cpu:core2 tests=pebs.*", "seed=7") == \
        "emulate=cpu:core2 tests=pebs.* seed=7"
    assert merge_cmdline("", "list") == "list"
    assert merge_cmdline("ds=hardware tests=bts.*", "") == "ds=hardware tests=bts.*"
