"""The LAVA jobs for real: scripts/lava-qemu runs them through Debian's lava-run, QEMU the board.

The jobs (marked "delivery" and "lava") run once per session: the `qemu` device type booting the
kernel, and the stock `x86` type with deploy/lava/switchyard-ipxe.yaml, iPXE and all. Each must
end with one LAVA case switchyard.SUITE/TEST per test of the board's raw serial log, with the
result our checker gives it (XFAIL is LAVA's skip, never a fail). This file checks that again
from the files the script leaves (LAVA's cases in results.yaml, the raw serial.log), so a
script that agreed with itself would not pass. Skipped, with the reason, where lava-dispatcher
is not installed (`make deps LAVA=1`). The comparison itself is tested here without LAVA.
"""

import os
import subprocess
import sys

import pytest
import yaml

import delivery
from switchyard import lava_check, lava_qemu
from switchyard import log as ktap

ROOT = delivery.ROOT
SCRIPT = ROOT / "scripts" / "lava-qemu"
OUT = delivery.BUILD / "lava"
JOBS = ("qemu", "ipxe")


UNUSABLE = lava_qemu.unusable_reason()


@pytest.fixture(scope="session")
def lava_run():
    """scripts/lava-qemu over both jobs, once: (exit status, its output)."""
    for image in (delivery.BUILD / "switchyard32.elf",):
        assert image.is_file(), f"kernel image {image} not found: run make"
    proc = subprocess.run([sys.executable, str(SCRIPT), "--out", str(OUT)],
                          capture_output=True, text=True, timeout=900)
    print(proc.stdout + proc.stderr)
    return proc


def our_cases(raw):
    """What LAVA must hold for a raw serial log, computed here from the checker's tests."""
    result, _ = lava_qemu.judge_serial(raw)
    assert not result.integrity_error, result.errors[:3]
    return result, {(f"switchyard.{t.suite.lower()}", lava_check.lava_case(t.name)):
                    {"pass": "pass", "fail": "fail", "skip": "skip", "xfail": "skip",
                     "xpass": "fail"}[t.status] for t in result.tests}


@pytest.mark.skipif(UNUSABLE is not None, reason=str(UNUSABLE))
@pytest.mark.parametrize("job", JOBS)
@pytest.mark.delivery
@pytest.mark.lava
@pytest.mark.timeout(900)
def test_lava_run_makes_each_test_one_case_with_our_result(lava_run, job):
    assert f"lava-qemu: {job}: " in lava_run.stdout, lava_run.stdout + lava_run.stderr
    line = next(x for x in lava_run.stdout.splitlines() if x.startswith(f"lava-qemu: {job}: "))
    assert line.endswith(": agree"), lava_run.stdout + lava_run.stderr
    log = (OUT / job / "job.log").read_text(errors="replace")
    assert "Job finished correctly" in log
    cases = yaml.safe_load((OUT / job / "results.yaml").read_text())
    result, wanted = our_cases((OUT / job / "serial.log").read_bytes())
    got = {(c["definition"], c["case"]): c["result"] for c in cases}
    assert len(got) == len(cases), "a case twice"
    assert got == wanted
    suites = {t.suite for t in result.tests}
    assert {d for d, _ in got} == {f"switchyard.{s}" for s in suites} and len(suites) >= 9
    assert len(result.tests) >= 150 and result.count("skip") > 0
    for test in result.tests:
        if test.status == "xfail":  # a known defect is never a LAVA failure
            assert got[(f"switchyard.{test.suite}", lava_check.lava_case(test.name))] == "skip"
    assert sum(1 for r in got.values() if r == "pass") == result.count("pass")


# The comparison, without LAVA.

XFAIL_TEST = "rdmsr_safe_reports_gp_for_an_msr_that_faults"  # a known defect of tcg: its entry
XFAIL_REASON = ("QEMU TCG's RDMSR never raises #GP: unknown MSRs and x2APIC MSRs in xAPIC mode "
                "read 0")


def sample_log(xfail=True):
    body = ["KTAP version 1", "# switchyard 0.1 (x86-64)",
            '# platform: identity=tcg (hypervisor "TCGTCGTCGTCG")', "1..2",
            "    KTAP version 1", "    # Subtest: arch", "    1..3",
            "    # running arch.reads_efer", "    ok 1 reads_efer",
            "    # running arch.breakpoint_fires", "    not ok 2 breakpoint_fires",
            f"    # running arch.{XFAIL_TEST}",
            f"    ok 3 {XFAIL_TEST} # " + (f"XFAIL {XFAIL_REASON}" if xfail else "SKIP no #GP"),
            "not ok 1 arch",
            "    KTAP version 1", "    # Subtest: bts", "    1..1",
            "    # running bts.known_sequence", "    ok 1 known_sequence__emulated", "ok 2 bts"]
    return ("\x1b[2JSeaBIOS\r\nBooting from ROM.." + "".join(
        line + "\r\n" for line in body + [ktap.final_line(body)])).encode()


def passing_sample_log():
    """sample_log() with its one failure passing."""
    text = ktap.clean(sample_log()).split("KTAP version 1", 1)[1]
    body = ("KTAP version 1" + text).splitlines()[:-1]
    body = [line.replace("not ok 2 breakpoint_fires", "ok 2 breakpoint_fires")
            .replace("not ok 1 arch", "ok 1 arch") for line in body]
    return "".join(line + "\r\n" for line in body + [ktap.final_line(body)]).encode()


LAVA_CASES = [("switchyard.arch", "reads_efer", "pass"),
              ("switchyard.arch", "breakpoint_fires", "fail"),
              ("switchyard.arch", XFAIL_TEST, "skip"),
              ("switchyard.bts", "known_sequence__emulated", "pass")]


def test_compare_agrees_with_the_cases_lava_should_have():
    ours, problems, note, result = lava_qemu.compare(lava_check, LAVA_CASES, sample_log())
    assert problems == [] and ours == LAVA_CASES
    assert "firmware text" in note and result.count("xfail") == 1


@pytest.mark.parametrize("change, problem", [
    (lambda cs: cs[:-1], "no LAVA case switchyard.bts/known_sequence__emulated (ours: pass)"),
    (lambda cs: [cs[0], ("switchyard.arch", "breakpoint_fires", "pass")] + cs[2:],
     "switchyard.arch/breakpoint_fires: LAVA pass, ours fail"),
    (lambda cs: cs[:2] + [("switchyard.arch", XFAIL_TEST, "fail")] + cs[3:],
     f"switchyard.arch/{XFAIL_TEST}: LAVA fail, ours skip"),
    (lambda cs: cs + [cs[0]], "LAVA has switchyard.arch/reads_efer twice"),
    (lambda cs: cs[:3] + [("switchyard.bts", "known_sequence", "pass")],
     "LAVA case switchyard.bts/known_sequence is no test of the log"),
    (lambda cs: [("switchyard", c, r) for _, c, r in cs],
     "no LAVA case switchyard.arch/reads_efer (ours: pass)"),
], ids=["missing", "result", "xfail-as-fail", "twice", "emulated-dropped", "suite-lost"])
def test_compare_finds_every_difference(change, problem):
    _, problems, _, _ = lava_qemu.compare(lava_check, change(list(LAVA_CASES)), sample_log())
    assert problem in problems, problems


def test_compare_rejects_a_log_that_does_not_verify():
    raw = sample_log().replace(b"reads_efer", b"reads_eferX")
    _, problems, _, _ = lava_qemu.compare(lava_check, LAVA_CASES, raw)
    assert problems and problems[0].startswith("serial log: CRASH"), problems


def test_lava_cases_reads_lava_runs_job_log():
    """lava-run's log is a YAML mapping a line (not JSON: LAVA writes tags such as ! "1")."""
    log = "\n".join([
        '{"dt": "x", "lvl": "results", "msg": {"case": "file-download", "definition": "lava", '
        '"extra": {"size": ! "1657948"}, "result": "pass"}}',
        '{"dt": "x", "lvl": "target", "msg": "    ok 1 reads_efer"}',
        '{"dt": "x", "lvl": "results", "msg": {"case": "reads_efer", "definition": '
        '"switchyard.arch", "extra": {"test_case_id": "reads_efer"}, "result": "pass"}}',
        '{"dt": "x", "lvl": "info", "msg": "Job finished correctly"}'])
    assert lava_qemu.lava_cases(log) == ([("switchyard.arch", "reads_efer", "pass")], True)
    assert lava_qemu.lava_cases(log.rsplit("\n", 1)[0])[1] is False


def test_lava_qemu_says_why_it_cannot_run_without_lava_dispatcher(tmp_path):
    """Without lava-run on PATH: status 2 and the reason the pytest case skips with."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    env = {**os.environ, "PATH": str(bin_dir)}
    proc = subprocess.run([sys.executable, str(SCRIPT), "--out", str(tmp_path / "out")],
                          env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "lava-dispatcher is not installed (no lava-run): make deps LAVA=1" in proc.stderr


def test_make_deps_installs_lava_only_when_asked():
    def deps(*args):
        proc = subprocess.run(["make", "-n", "--no-print-directory", *args], cwd=ROOT,
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout
    assert "lava-dispatcher" not in deps("deps")
    assert "lava-dispatcher lavacli socat" in deps("deps", "LAVA=1")
    assert "lava-dispatcher lavacli socat" in deps("lava")
    assert "scripts/lava-qemu --out build/lava" in deps("lava")


# make lava's exit status: the jobs' verdict, from a fake lava-run.

FAKE_LAVA_RUN = """#!{python}
import os, shutil, sys
work = os.path.dirname(sys.argv[sys.argv.index("--output-dir") + 1])
shutil.copyfile(os.environ["FAKE_SERIAL"], os.path.join(work, "serial.log"))
sys.stdout.write(open(os.environ["FAKE_JOB_LOG"]).read())
"""


def job_log(cases):
    """lava-run's job log holding cases, then LAVA's last word on a job that ran to its end."""
    return "".join(
        f'{{"dt": "x", "lvl": "results", "msg": {{"case": "{c}", "definition": "{d}", '
        f'"result": "{r}"}}}}\n' for d, c, r in cases) + \
        '{"dt": "x", "lvl": "info", "msg": "Job finished correctly"}\n'


@pytest.mark.parametrize("failing, status", [(True, 1), (False, 0)], ids=["fail", "pass"])
def test_lava_qemu_exits_with_the_jobs_verdict(tmp_path, monkeypatch, capsys, failing, status):
    """LAVA agreeing with us on a log where a test failed is a FAIL: exit 1, never 0."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "lava-run").write_text(FAKE_LAVA_RUN.format(python=sys.executable))
    (bin_dir / "lavacli").write_text("#!/bin/sh\necho 'device_type: qemu'\n")
    for tool in ("lava-run", "lavacli"):
        (bin_dir / tool).chmod(0o755)
    raw, cases = sample_log(), list(LAVA_CASES)
    if not failing:
        raw = passing_sample_log()
        cases[1] = ("switchyard.arch", "breakpoint_fires", "pass")
    (tmp_path / "serial.log").write_bytes(raw)
    (tmp_path / "job.log").write_text(job_log(cases))
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_SERIAL", str(tmp_path / "serial.log"))
    monkeypatch.setenv("FAKE_JOB_LOG", str(tmp_path / "job.log"))
    monkeypatch.setattr(lava_qemu, "unusable_reason", lambda: None)
    (tmp_path / "types").mkdir()
    assert lava_qemu.main(["--job", "qemu", "--out", str(tmp_path / "out"), "--kernel32",
                           str(SCRIPT), "--device-types", str(tmp_path / "types")]) == status
    out = capsys.readouterr()
    assert "lava-qemu: qemu: " in out.out and out.out.splitlines()[-2].endswith(": agree"), out
    verdict = "FAIL: qemu FAIL" if failing else "PASS: qemu PASS"
    assert out.out.splitlines()[-1] == f"lava-qemu: {verdict}", out
    assert ("lava-qemu: qemu: not ok arch.breakpoint_fires" in out.err) == failing, out.err


def test_make_check_boots_the_lab_configuration_of_every_template():
    """conftest's tcg-lab platform boots with the kernel options of every LAVA template, on
    the 2 CPUs scripts/lava-qemu gives its board."""
    import conftest

    assert conftest.BOOTS["tcg-lab"] == ("tcg", lava_qemu.SMP, "tests=* ds=hardware")
    templates = sorted((ROOT / "deploy" / "lava").glob("*.yaml"))
    assert len(templates) >= 2
    for template in templates:
        assert conftest.lab_options(template) == conftest.BOOTS["tcg-lab"][2], template
