"""Logs as real consoles deliver them, and `make check LOG=` on them.

Firmware text can share the kernel's first line ("Booting from ROM..KTAP version 1", BIOS
console redirection): the checker takes the kernel's output from there, says so in a warning,
and judges it normally (docs/output.md, "Serial log"). `make check LOG=path` always reaches
pytest and gives one case per kernel test, failures included, under the name PLATFORM= gives.
"""

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from sealed_logs import flip_byte, seal
from test_log_checks import FAILING_BODY, PASSING_BODY

from switchyard import log as ktap
from switchyard import qemu

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "scripts" / "run"
KERNEL = ROOT / "build" / "switchyard32.elf"

PREFIXES = [
    "Booting from ROM..",  # SeaBIOS, when its last message has no newline
    "\x1b[2J\x1b[01;01HPress <F2> to enter setup ",  # console redirection, escapes and all
    "Loading switchyard... ",
]


@pytest.mark.parametrize("prefix", PREFIXES, ids=["seabios", "redirection", "loader"])
@pytest.mark.parametrize("body, verdict, status", [(PASSING_BODY, ktap.PASS, 33),
                                                   (FAILING_BODY, ktap.FAIL, 35)],
                         ids=["pass", "fail"])
def test_firmware_text_before_ktap_on_its_line_is_ignored_with_a_warning(prefix, body, verdict,
                                                                          status):
    log = "SeaBIOS (version 1.16.2)\r\n" + prefix + seal(body).replace("\n", "\r\n")
    result = ktap.check_log(log.encode(), qemu_status=status)
    assert (result.verdict, result.errors) == (verdict, [])
    assert result.lines[0] == "KTAP version 1"
    assert result.firmware_prefix == ktap.clean(prefix)
    assert len(result.warnings) == 1
    assert "line 2 of the capture: firmware text before 'KTAP version 1'" in result.warnings[0]
    assert repr(ktap.clean(prefix)) in result.warnings[0]
    assert len(result.tests) == 4


def test_a_clean_log_has_no_warning():
    result = ktap.check_log(seal(PASSING_BODY).encode(), qemu_status=33)
    assert (result.verdict, result.firmware_prefix, result.warnings) == (ktap.PASS, "", [])


def test_the_prefix_excuses_nothing_after_it():
    """The kernel's lines are still under the CRC: damage after the prefix is a crash."""
    log = "Booting from ROM.." + flip_byte(seal(PASSING_BODY), "long_mode")
    result = ktap.check_log(log.encode())
    assert result.verdict == ktap.CRASH
    assert any("CRC mismatch" in error for error in result.errors), result.errors


def test_the_prefix_is_not_counted_as_the_kernels():
    """A final line that counted the firmware's text too is wrong: the kernel never sent it."""
    body = "Booting from ROM.." + PASSING_BODY
    result = ktap.check_log(seal(body).encode())
    assert result.verdict == ktap.CRASH
    assert any("CRC mismatch" in error for error in result.errors), result.errors


@pytest.mark.parametrize("log", ["    " + seal(PASSING_BODY), "KTAP version 10\n",
                                 "no ktap here\n"], ids=["indent", "version-10", "none"])
def test_only_text_then_ktap_version_1_starts_the_kernels_output(log):
    result = ktap.check_log(log.encode())
    assert result.verdict == ktap.CRASH
    assert result.errors[0].startswith("no KTAP output"), result.errors


@pytest.mark.boot
def test_the_kernel_starts_on_a_fresh_line_after_seabios_console_redirection(tmp_path):
    """SeaBIOS's serial console (fw_cfg etc/sercon-port, a u16) ends with "Booting from ROM.."
    and no line break; the kernel's own line break ends it, outside the CRC, so that the log
    is judged without a warning."""
    assert KERNEL.is_file(), f"kernel image {KERNEL} not found: run make"
    (tmp_path / "sercon-port").write_bytes((0x3f8).to_bytes(2, "little"))
    argv = qemu.qemu_command(KERNEL, "tcg", machine="pc", cmdline="tests=boot.long_mode_*")
    boot = qemu.boot(argv + ["-fw_cfg", f"name=etc/sercon-port,file={tmp_path / 'sercon-port'}"],
                     60)
    assert not boot.timed_out, boot.stderr
    # SeaBIOS's serial mirror of the screen sometimes ends the line itself, a third dot before
    # it (seen once in a make check): then the kernel's break leaves one empty line.
    assert re.search(rb"Booting from ROM\.\.\.?(\r\n){1,2}KTAP version 1\r\n", boot.raw), \
        boot.raw[:400]
    result = ktap.check_log(boot.raw, boot.status)
    assert (result.verdict, result.errors, result.warnings) == (ktap.PASS, [], [])


def test_run_check_log_warns_and_passes(tmp_path):
    (tmp_path / "serial.log").write_text("Booting from ROM.." + seal(PASSING_BODY))
    proc = subprocess.run([sys.executable, str(RUN), "--check-log", str(tmp_path / "serial.log")],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert "switchyard: warning: line 1 of the capture: firmware text before 'KTAP version 1'" \
        in proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith("switchyard: PASS")


def make_check(tmp_path, log, *variables):
    """`make check LOG=...` on a recorded log, its JUnit XML in tmp_path."""
    (tmp_path / "serial.log").write_text(log)
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("SWITCHYARD_", "MAKE", "MFLAGS"))}
    return subprocess.run(["make", "--no-print-directory", "check",
                           f"LOG={tmp_path / 'serial.log'}",
                           f"JUNIT=--junitxml={tmp_path / 'junit.xml'}", *variables],
                          capture_output=True, text=True, timeout=240, cwd=ROOT, env=env)


def junit_cases(tmp_path):
    root = ElementTree.parse(tmp_path / "junit.xml").getroot()
    cases = {}
    for case in root.iter("testcase"):
        outcome = next((child.tag for child in case
                        if child.tag in ("failure", "skipped", "error")), "passed")
        cases[case.get("name")] = outcome
    return cases


def test_make_check_log_reaches_pytest_when_a_test_failed(tmp_path):
    proc = make_check(tmp_path, "Booting from ROM.." + seal(FAILING_BODY), "PLATFORM=lab-1")
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, output
    assert "switchyard: FAIL" in output  # scripts/run's summary first
    assert "scripts/run exited 1; pytest judges each test" in output
    # pytest's own warning names the log, unlike scripts/run's "switchyard: warning: ...".
    assert (f"UserWarning: {tmp_path / 'serial.log'}: line 1 of the capture: firmware text "
            "before 'KTAP version 1'") in output, output
    assert junit_cases(tmp_path) == {
        "test_ktap[lab-1-arch.rdmsr_safe_reports_gp_for_missing_msr]": "passed",
        "test_ktap[lab-1-arch.fault_is_not_a_hang]": "failure",
        "test_ktap[lab-1-arch.io_breakpoint_needs_de]": "skipped",
        "test_ktap[lab-1-boot.long_mode_is_active]": "passed",
        "test_log_is_complete_and_verified[lab-1]": "passed",
        "test_exit_status_agrees_with_log[lab-1]": "skipped",
    }


def test_make_check_log_passes_a_passing_log_under_the_default_name(tmp_path):
    proc = make_check(tmp_path, seal(PASSING_BODY))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "test_ktap[log-boot.long_mode_is_active]" in junit_cases(tmp_path)


def test_make_check_log_fails_a_crashed_log_in_pytest_too(tmp_path):
    proc = make_check(tmp_path, PASSING_BODY)  # no final line
    assert proc.returncode != 0, proc.stdout + proc.stderr
    assert junit_cases(tmp_path)["test_log_is_complete_and_verified[log]"] == "failure"
