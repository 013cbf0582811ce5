"""Delivery to real hardware, end to end in QEMU TCG: GRUB ISO, UEFI, serial capture, LAVA.

Each boot path (marked "delivery") must yield a complete, verified KTAP log (verdict PASS, QEMU
status 33) through the real firmware and loaders: SeaBIOS and OVMF from the ISO (the network
paths are in test_netboot.py). scripts/capture is tested against QEMU's pty and TCP serial and
against recorded logs replayed through a pty pair. The LAVA templates are validated offline.
Raw logs are kept in build/logs/delivery-*.log.
"""

import os
import re
import subprocess
import sys
import time
from xml.etree import ElementTree

import pytest
import yaml

import delivery
from switchyard import lava_check as lava_check_module
from delivery import kernels  # noqa: F401: a fixture
from switchyard import log as ktap

ROOT = delivery.ROOT
TEST_KERNEL = ROOT / "tests" / "verdicts" / "test_kernel.py"
LOG_DIR = delivery.BUILD / "logs"
KERNEL = delivery.BUILD / "switchyard.elf"
KERNEL32 = delivery.BUILD / "switchyard32.elf"
CAPTURE = ROOT / "scripts" / "capture"
LAVA_CHECK = ROOT / "scripts" / "lava-check"
LAVA_JOBS = sorted((ROOT / "deploy" / "lava").glob("*.yaml"))

def make_iso(tmp_path, *args):
    iso = tmp_path / "switchyard.iso"
    delivery.script("mkiso", "--cmdline", delivery.CMDLINE, *args, "--out", iso)
    return iso


@pytest.mark.parametrize("protocol, console, serial_unit", [
    ("multiboot2", "ttyS1", 1),
    ("multiboot", "ttyS0", 0),
])
@pytest.mark.usefixtures("kernels")
@pytest.mark.delivery
@pytest.mark.timeout(240)
def test_iso_boots_under_seabios(tmp_path, protocol, console, serial_unit):
    iso = make_iso(tmp_path, "--protocol", protocol, "--console", console)
    argv = delivery.machine(serial_unit=serial_unit) + ["-cdrom", str(iso)]
    log = LOG_DIR / f"delivery-iso-bios-{protocol}.log"
    run, result = delivery.boot(argv, log)
    loader = "multiboot2 loader=\"GRUB" if protocol == "multiboot2" else "multiboot1 loader=\"GRUB"
    delivery.assert_complete(f"ISO SeaBIOS {protocol} {console}", run, result, loader)
    assert f"console={console}" in result.lines[2] or console == "ttyS0"
    # LAVA's monitors read this log, GRUB's noise and all, as the harness does, once each
    # template is cut down to this run's suites.
    for job in LAVA_JOBS:
        edited = job_for_log(job, log, tmp_path, delivery.CMDLINE.split()[0][len("tests="):])
        proc = lava_check(edited, "--log", log)
        assert proc.returncode == 0, proc.stderr


@pytest.mark.usefixtures("kernels")
@pytest.mark.delivery
@pytest.mark.timeout(240)
def test_smp_under_grub_finds_the_madt_through_the_multiboot2_rsdp(tmp_path):
    """GRUB passes the RSDP in a multiboot2 tag; under SeaBIOS the kernel could also scan the BIOS
    area, and takes the tag all the same (test_iso_boots_under_ovmf: where there is none)."""
    iso = tmp_path / "switchyard.iso"
    delivery.script("mkiso", "--cmdline", "tests=smp.* smp.expect=2 exit=isa-debug", "--protocol",
           "multiboot2", "--out", iso)
    argv = delivery.machine(tmp_path=tmp_path) + ["-smp", "2", "-cdrom", str(iso)]
    run, result = delivery.boot(argv, LOG_DIR / "delivery-smp-seabios.log")
    delivery.assert_complete("SMP ISO seabios", run, result, "multiboot2 loader=\"GRUB")
    assert_madt_through_the_tag_and_2_cpus(result)
    assert result.count("skip") == 0 and result.count("pass") >= 15


def assert_madt_through_the_tag_and_2_cpus(result):
    madt = [d for d in result.diagnostics if d.startswith("smp: MADT via")]
    assert madt and madt[0].startswith("smp: MADT via multiboot2 RSDP"), madt
    assert "smp: 2 CPUs online" in result.diagnostics


@pytest.mark.usefixtures("kernels")
@pytest.mark.delivery
@pytest.mark.timeout(240)
def test_iso_boots_under_ovmf(tmp_path):
    """GRUB's multiboot2 ISO under UEFI, on 2 CPUs: no BIOS area to scan, so the MADT comes
    through the RSDP tag. One OVMF boot for both (each costs about 15 s under TCG)."""
    iso = make_iso(tmp_path, "--cmdline", "tests=boot.*,smp.* smp.expect=2 exit=isa-debug")
    argv = delivery.machine(uefi=True, tmp_path=tmp_path) + ["-smp", "2", "-cdrom", str(iso)]
    run, result = delivery.boot(argv, LOG_DIR / "delivery-iso-uefi.log")
    delivery.assert_complete("ISO OVMF multiboot2", run, result, "multiboot2 loader=\"GRUB")
    assert_madt_through_the_tag_and_2_cpus(result)
    assert result.count("skip") == 0 and result.count("pass") >= 15


# scripts/capture: live serial lines.

def start_capture(*args):
    """scripts/capture in its own session; returns once it says it is reading the source."""
    proc = subprocess.Popen([sys.executable, str(CAPTURE), "--quiet", "--timeout", "60", *args],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    ready = proc.stderr.readline().decode()
    assert ready.startswith("capture: reading "), ready + proc.stderr.read().decode()
    return proc


def finish_capture(proc):
    try:
        out, err = proc.communicate(timeout=90)
    finally:
        delivery.kill_group(proc)
    return proc.returncode, err.decode()


def kernel_qemu(*serial):
    """The quick -kernel boot (microvm) with the given serial arguments, in its own session."""
    argv = [delivery.qemu.QEMU, "-M", "microvm", "-m", "128M", "-display", "none",
            "-nodefaults", "-no-reboot", "-accel", "tcg", "-cpu", "max",
            "-device", "isa-debug-exit,iobase=0xf4,iosize=4", *serial,
            "-kernel", str(KERNEL32), "-append", delivery.CMDLINE]
    return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)


def assert_captured(log_path, status, err):
    raw = log_path.read_bytes()
    result = ktap.check_log(raw)
    assert status == 0 and result.verdict == ktap.PASS and not result.errors, (status, err)
    return raw


@pytest.mark.usefixtures("kernels")
@pytest.mark.delivery
@pytest.mark.timeout(120)
def test_capture_reads_qemu_pty_serial_started_paused(tmp_path):
    """-serial pty loses everything unless QEMU starts paused, the pty is opened, then `cont`."""
    qmp_path = tmp_path / "qmp.sock"
    qemu = kernel_qemu("-S", "-chardev", "pty,id=s0", "-serial", "chardev:s0",
                       "-qmp", f"unix:{qmp_path},server=on,wait=off")
    capture = None
    try:
        qmp = delivery.Qmp(qmp_path, time.monotonic() + 30)
        pty = next(c["filename"][len("pty:"):] for c in qmp.execute("query-chardev")
                   if c["label"] == "s0")
        capture = start_capture("--device", pty, "--baud", "115200", "--log", tmp_path / "l")
        qmp.execute("cont")
        status, err = finish_capture(capture)
        qmp.close()
        assert qemu.wait(timeout=60) == ktap.QEMU_STATUS[ktap.PASS]
    finally:
        delivery.kill_group(qemu)
        if capture:
            delivery.kill_group(capture)
    assert_captured(tmp_path / "l", status, err)


@pytest.mark.usefixtures("kernels")
@pytest.mark.delivery
@pytest.mark.timeout(120)
def test_capture_reads_qemu_tcp_serial(tmp_path):
    port = delivery.free_port()
    qemu = kernel_qemu("-chardev", f"socket,id=s0,host=127.0.0.1,port={port},server=on,wait=on",
                       "-serial", "chardev:s0")
    try:
        status, err = finish_capture(start_capture("--tcp", f"127.0.0.1:{port}",
                                                   "--log", tmp_path / "l"))
        assert qemu.wait(timeout=60) == ktap.QEMU_STATUS[ktap.PASS]
    finally:
        delivery.kill_group(qemu)
    assert_captured(tmp_path / "l", status, err)


def replay(tmp_path, raw, *args):
    """Write raw into a pty pair once scripts/capture reads the slave; (status, stderr)."""
    master, slave = os.openpty()
    try:
        proc = start_capture("--device", os.ttyname(slave), "--log", tmp_path / "l", *args)
        for offset in range(0, len(raw), 256):  # in pieces, as a UART delivers them
            os.write(master, raw[offset:offset + 256])
        return finish_capture(proc)
    finally:
        os.close(slave)
        os.close(master)


@pytest.mark.delivery
@pytest.mark.timeout(120)
def test_capture_replays_recorded_logs_through_a_pty_byte_exact(tmp_path):
    """The GRUB/OVMF logs recorded above and by test_netboot.py (else build/logs/tcg.log) and two synthetic logs, each
    followed by noise: the log file is the bytes up to the final line, and the status is the
    one its verdict gives (0 PASS, 1 FAIL, 4 CRASH). A recorded log without a final line is
    left out (scripts/capture would wait for one until its time limit)."""
    recorded = sorted(LOG_DIR.glob("delivery-*.log")) or sorted(LOG_DIR.glob("tcg.log"))
    logs = [(log.name, log.read_bytes()) for log in recorded]
    logs += [("synthetic pass", synthetic_log().encode()),
             ("synthetic fail", synthetic_log(fail=True).encode())]
    replayed = []
    for name, raw in logs:
        result = ktap.check_log(raw)
        if not any(ktap.FINAL.fullmatch(line) for line in ktap.clean(raw).split("\n")):
            print(f"{name}: no final line, not replayed")
            continue
        status, err = replay(tmp_path, raw + b"\x1b[2Jreboot noise\r\n")
        assert status == ktap.RUN_STATUS[result.verdict], (name, result.verdict, err)
        assert (tmp_path / "l").read_bytes() == raw, name
        replayed.append(name)
    assert "synthetic pass" in replayed and "synthetic fail" in replayed, replayed
    print(f"replayed {len(replayed)}: {', '.join(replayed)}")


@pytest.mark.timeout(120)
def test_capture_reports_a_truncated_log_as_a_crash_and_a_silent_line_as_timeout(tmp_path):
    raw = synthetic_log().encode()
    cut = tmp_path / "cut.log"
    cut.write_bytes(raw[:len(raw) // 2])
    status, err = finish_capture(start_capture("--command", f"cat {cut}"))
    assert status == 4, err
    status, err = finish_capture(start_capture("--command", f"cat {cut}; sleep 60",
                                               "--timeout", "1"))
    assert status == 124, err
    failing = tmp_path / "fail.log"
    failing.write_bytes(synthetic_log(fail=True).encode())
    status, err = finish_capture(start_capture("--command", f"cat {failing}"))
    assert status == 1, err


# LAVA job templates.

def synthetic_log(fail=False):
    body = ["KTAP version 1", "# switchyard 0.1 (x86-64)", "# cmdline: tests=*", "1..1",
            "    KTAP version 1", "    # Subtest: arch", "    1..3",
            "    # running arch.rdmsr_reads_efer", "    ok 1 rdmsr_reads_efer",
            "    # running arch.breakpoint_fires", "    # reason it failed",
            f"    {'not ok' if fail else 'ok'} 2 breakpoint_fires",
            "    ok 3 bts_records_branches # SKIP CPUID.1:EDX.DS=0",
            f"{'not ok' if fail else 'ok'} 1 arch"]
    return "".join(line + "\r\n" for line in body + [ktap.final_line(body)])


def lava_check(*args):
    return subprocess.run([sys.executable, str(LAVA_CHECK), *map(str, args)],
                          capture_output=True, text=True, timeout=60)


def template_suites(job):
    """The KTAP suites a template's monitors read, from their names switchyard.SUITE."""
    names = [m["name"] for a in yaml.safe_load(job.read_text())["actions"]
             for m in a.get("test", {}).get("monitors", [])]
    assert all(n.startswith("switchyard.") for n in names), names
    return [n[len("switchyard."):] for n in names]


def lava_log(suites, line_end="\r\n", fail=False, noise="", extra=None, xfail=True):
    """A complete log with every suite in `suites`, each with a passing, a failing (fail=True),
    a skipped and an emulated test, and a known defect that occurred (xfail=True), after loader
    noise; line_end "\r\r\n" as LAVA's pty has it. extra: {suite: [lines]} put before that
    suite's first result."""
    body = ["KTAP version 1", "# switchyard 0.1 (x86-64)", "# cmdline: tests=* ds=hardware",
            f"1..{len(suites)}"]
    for number, suite in enumerate(suites, 1):
        body += ["    KTAP version 1", f"    # Subtest: {suite}", f"    1..{5 if xfail else 4}",
                 *(extra or {}).get(suite, []),
                 f"    ok 1 {suite}_reads_a_register", "    # a check failed: expected 1, got 0",
                 f"    {'not ok' if fail else 'ok'} 2 breakpoint_fires",
                 "    ok 3 bts_records_branches # SKIP CPUID.1:EDX.DS=0",
                 "    ok 4 known_branch_sequence__emulated",
                 *(["    ok 5 general_detect # XFAIL the platform lacks DR7.GD"] if xfail else []),
                 f"{'not ok' if fail else 'ok'} {number} {suite}"]
    n = len(suites)
    body += [f"# totals: pass={(2 if fail else 3) * n} fail={n if fail else 0} skip={n} "
             f"xfail={n if xfail else 0} xpass=0"]
    return noise + "".join(line + line_end for line in body + [ktap.final_line(body)])


def edited_job(job, tmp_path, monitors=None, tests=None, commands=None):
    """A copy of a template with its monitors (a function of the list), the kernel's tests=
    option, or its boot commands (a function of the list) changed."""
    data = yaml.safe_load(job.read_text())
    test = next(a["test"] for a in data["actions"] if "test" in a)
    boot = next(a["boot"] for a in data["actions"] if "boot" in a)
    if monitors:
        test["monitors"] = monitors(test["monitors"])
    if tests:
        boot["commands"] = [c.replace("tests=*", f"tests={tests}") for c in boot["commands"]]
    if commands:
        boot["commands"] = commands(boot["commands"])
    edited = tmp_path / job.name
    edited.write_text(yaml.safe_dump(data))
    return edited


def job_for_log(job, log, tmp_path, tests):
    """A template edited as a user would for a run of `tests`: tests= and the monitors of the
    suites that run (for the delivery boots, which run tests=boot.*)."""
    suites = {t.suite for t in ktap.check_log(log.read_bytes()).tests}
    return edited_job(job, tmp_path, tests=tests,
                      monitors=lambda ms: [m for m in ms if m["name"][11:] in suites])


@pytest.mark.parametrize("job", LAVA_JOBS, ids=[job.stem for job in LAVA_JOBS])
@pytest.mark.parametrize("line_end", ["\r\n", "\r\r\n"], ids=["serial", "lava-pty"])
@pytest.mark.timeout(60)
def test_lava_template_is_valid_and_its_monitors_read_every_test(tmp_path, job, line_end):
    """Every test of every suite the template runs reaches LAVA once, as switchyard.SUITE/TEST
    with its result, through GRUB's noise and both line endings (raw serial, LAVA's pty)."""
    suites = template_suites(job)
    log = tmp_path / "serial.log"
    log.write_bytes(lava_log(suites, line_end, fail=True,
                             noise="GRUB loading.\r\nWelcome to GRUB!\r\n\x1b[0m").encode())
    proc = lava_check(job, "--log", log)
    assert proc.returncode == 0, proc.stderr
    results, problems = lava_check_module.lava_results(yaml.safe_load(job.read_text()),
                                                       log.read_bytes().decode())
    assert not problems
    assert results == [r for s in suites for r in [
        (f"switchyard.{s}", f"{s}_reads_a_register", "pass"),
        (f"switchyard.{s}", "breakpoint_fires", "fail"),
        (f"switchyard.{s}", "bts_records_branches", "skip"),
        (f"switchyard.{s}", "known_branch_sequence__emulated", "pass"),
        (f"switchyard.{s}", "general_detect", "skip")]]


def test_lava_templates_run_every_suite_that_tests_star_selects():
    """The monitors are the kernel's automatic suites, in its order; the manual ones are out."""
    module = lava_check_module
    automatic = module.selected_suites(["tests=*"])
    assert "arch" in automatic and "selftest" not in automatic and "leaks" not in automatic
    assert automatic == sorted(automatic)
    for job in LAVA_JOBS:
        assert template_suites(job) == automatic, job
    assert module.selected_suites(["tests=selftest.*,dr.?ds_*"]) == ["selftest"]
    assert module.selected_suites(["tests=boot.*"]) == ["boot"]


@pytest.mark.parametrize("job", LAVA_JOBS, ids=[job.stem for job in LAVA_JOBS])
@pytest.mark.timeout(60)
def test_lava_check_rejects_a_start_string_in_the_commands(tmp_path, job):
    broken = edited_job(job, tmp_path,
                        commands=lambda cs: cs[:-2] + [cs[-2] + " # Subtest: arch", cs[-1]])
    proc = lava_check(broken)
    assert proc.returncode == 1 and re.search(r"start .* occurs in the boot command",
                                              proc.stderr), proc.stderr


@pytest.mark.parametrize("job", LAVA_JOBS, ids=[job.stem for job in LAVA_JOBS])
@pytest.mark.timeout(60)
def test_lava_check_rejects_a_kernel_that_may_run_the_emulated_cpu(tmp_path, job):
    broken = edited_job(job, tmp_path,
                        commands=lambda cs: [c.replace(" ds=hardware", "") for c in cs])
    proc = lava_check(broken)
    assert proc.returncode == 1 and "lacks ds=hardware" in proc.stderr, proc.stderr


@pytest.mark.parametrize("job", LAVA_JOBS, ids=[job.stem for job in LAVA_JOBS])
@pytest.mark.timeout(60)
def test_lava_check_rejects_monitors_that_miss_a_suite_or_wait_for_one(tmp_path, job):
    suites = template_suites(job)
    log = tmp_path / "serial.log"
    log.write_text(lava_log(suites))
    missing = edited_job(job, tmp_path, monitors=lambda ms: ms[:-1])
    proc = lava_check(missing, "--log", log)
    assert proc.returncode == 1, proc.stderr
    assert "the monitors are" in proc.stderr, proc.stderr
    assert f"no LAVA case switchyard.{suites[-1]}/breakpoint_fires" in proc.stderr, proc.stderr
    # A run of fewer suites than the monitors expect: LAVA would wait for the rest.
    log.write_text(lava_log(suites[:-1]))
    proc = lava_check(job, "--log", log)
    assert proc.returncode == 1, proc.stderr
    assert f"switchyard.{suites[-1]}: its suite is not in the log" in proc.stderr, proc.stderr


@pytest.mark.parametrize("job", LAVA_JOBS, ids=[job.stem for job in LAVA_JOBS])
@pytest.mark.timeout(60)
def test_lava_check_rejects_one_monitor_for_the_whole_run(tmp_path, job):
    """The old template's monitor, banner to final line: each case loses its suite."""
    def one(ms):
        return [{**ms[0], "name": "switchyard", "start": r"switchyard \d+\.\d+ \(x86-64\)",
                 "end": "# switchyard-end crc32="}]
    log = tmp_path / "serial.log"
    log.write_text(lava_log(template_suites(job)))
    proc = lava_check(edited_job(job, tmp_path, monitors=one), "--log", log)
    assert proc.returncode == 1, proc.stderr
    assert "LAVA names it switchyard/breakpoint_fires" in proc.stderr, proc.stderr
    assert "cases read more than once" in proc.stderr, proc.stderr


@pytest.mark.parametrize("job", LAVA_JOBS, ids=[job.stem for job in LAVA_JOBS])
@pytest.mark.timeout(60)
def test_lava_check_rejects_a_pattern_that_drops_the_emulated_label(tmp_path, job):
    """A model's result must never reach LAVA under the hardware test's name."""
    def strip(ms):
        return [{**m, "pattern": m["pattern"].replace(
            r"(?P<test_case_id>\w+)", r"(?P<test_case_id>\w+?)(?:__emulated)?(?=[ \r\n])")}
            for m in ms]
    log = tmp_path / "serial.log"
    log.write_text(lava_log(template_suites(job)))
    proc = lava_check(edited_job(job, tmp_path, monitors=strip), "--log", log)
    assert proc.returncode == 1, proc.stderr
    assert "arch.known_branch_sequence__emulated: LAVA names it switchyard.arch/" \
           "known_branch_sequence, not switchyard.arch/known_branch_sequence__emulated" \
        in proc.stderr, proc.stderr


@pytest.mark.parametrize("job", LAVA_JOBS, ids=[job.stem for job in LAVA_JOBS])
@pytest.mark.timeout(60)
def test_lava_check_rejects_a_start_string_that_occurs_twice(tmp_path, job):
    suites = template_suites(job)
    log = tmp_path / "serial.log"
    log.write_text(lava_log(suites, extra={suites[1]: [f"    # Subtest: {suites[0]}"]}))
    proc = lava_check(job, "--log", log)
    assert proc.returncode == 1, proc.stderr
    assert f"switchyard.{suites[0]}: start occurs 2 times" in proc.stderr, proc.stderr


@pytest.mark.parametrize("job", LAVA_JOBS, ids=[job.stem for job in LAVA_JOBS])
@pytest.mark.timeout(60)
def test_lava_template_edited_for_some_suites_reads_a_real_boot_log(tmp_path, job):
    """A recorded boot (tests=boot.*, with its loader's output) through a template cut down to
    that run, as a user edits it; skipped when the delivery tests have not run."""
    log = LOG_DIR / "delivery-iso-bios-multiboot.log"
    if not log.is_file():
        pytest.skip(f"{log} not recorded: run make delivery")
    edited = job_for_log(job, log, tmp_path, "boot.*")
    proc = lava_check(edited, "--log", log)
    assert proc.returncode == 0, proc.stderr


# JUnit XML for CI systems.

def test_make_check_writes_junit_xml(tmp_path):
    """make check (booting or judging LOG=) hands pytest, or scripts/check, which merges its
    two pytest processes' files (tests/harness/test_check.py), --junitxml=$(BUILD)/junit.xml."""
    for extra in ([], [f"LOG={tmp_path / 'run.log'}"]):
        proc = subprocess.run(["make", "-n", "--no-print-directory", "check",
                               f"BUILD={tmp_path}", *extra], cwd=ROOT, capture_output=True,
                              text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        pytest_lines = [line for line in proc.stdout.splitlines()
                        if "-m pytest" in line or "scripts/check " in line]
        assert pytest_lines and all(f"--junitxml={tmp_path}/junit.xml" in line
                                    for line in pytest_lines), pytest_lines


@pytest.mark.timeout(120)
def test_junit_xml_names_each_kernel_test_and_keeps_the_emulated_label(tmp_path):
    """One JUnit testcase per kernel test, named after PLATFORM-suite.test with __emulated kept,
    failed or skipped as the kernel said."""
    log = tmp_path / "run.log"
    log.write_text(lava_log(["bts", "dr"], fail=True, xfail=False))
    xml = tmp_path / "junit.xml"
    env = {**os.environ, "SWITCHYARD_LOG": str(log)}
    env.pop("SWITCHYARD_LOG_PLATFORM", None)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           f"--junitxml={xml}", str(TEST_KERNEL)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=100)
    assert proc.returncode == 1, proc.stdout  # the log has failures
    cases = {c.get("name"): c for c in ElementTree.parse(xml).getroot().iter("testcase")}
    emulated = cases["test_ktap[log-bts.known_branch_sequence__emulated]"]
    assert not list(emulated), "an emulated pass is a plain pass"
    assert cases["test_ktap[log-dr.breakpoint_fires]"].find("failure") is not None
    assert cases["test_ktap[log-dr.bts_records_branches]"].find("skipped") is not None
    assert "test_ktap[log-bts.known_branch_sequence]" not in cases
