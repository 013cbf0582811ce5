"""Known defects in-band (docs/output.md): the one table, the platform identity, and the kernel's
XFAIL and XPASS verdicts as scripts/run, pytest and Linux's own KTAP parser read them.

The matcher itself is host-tested (tests/host/test_known_defects.c); here: the table against the
kernel's sources, its C rows, the runner's word on the host (platform.host=), recorded logs of
KVM-PVM (no KVM here), and, marked "boot", the real kernel under TCG, also playing kvm-pvm and
kvm-vmx (selftest.platform=) and built with a broken table. SWITCHYARD_KERNEL names another image
(default build/switchyard32.elf); its directory is the build the rebuild test starts from.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kunit_tool import kunit, kunit_parse, same_counts  # noqa: F401: kunit is a fixture
from sealed_logs import seal

from switchyard import defects
from switchyard import log as ktap
from switchyard import qemu

ROOT = Path(__file__).resolve().parents[2]
TEST_KERNEL = ROOT / "tests" / "verdicts" / "test_kernel.py"
RUN = ROOT / "scripts" / "run"
KERNEL = Path(os.environ.get("SWITCHYARD_KERNEL", ROOT / "build" / "switchyard32.elf"))
TABLE = defects.read()
TCG_DEFECT_TESTS = "arch.rdmsr_safe_reports_gp_for_an_msr_that_faults," \
    "dr.general_detect_raises_db_on_the_next_dr_access"
# The table's tests by kind: checks that fail on KVM-PVM (and pass on TCG), tests that end a
# KVM-PVM boot, and tests with a TCG defect.
TCG_TABLE_TESTS = sorted({d.test for d in TABLE if d.platform == "tcg"})
PVM_DEFECT_TESTS = sorted({d.test for d in TABLE if d.platform == "kvm-pvm" and d.check}
                          - set(TCG_TABLE_TESTS))
PVM_ENDING_TESTS = sorted({d.test for d in TABLE if d.platform == "kvm-pvm" and d.ends})
# Every test the table names, by suite (a list of names is over tests='s 255 characters).
DEFECT_SUITES = ",".join(sorted({d.test.split(".")[0] + ".*" for d in TABLE}))


# The table against the sources.

def c_arguments(text, start):
    """The top-level comma-separated arguments of the call whose '(' is at text[start]."""
    depth, args, current = 0, [], ""
    for char in text[start:]:
        if char in "([{":
            depth += 1
            if depth == 1:
                continue
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return args + [current]
        elif char == "," and depth == 1:
            args.append(current)
            current = ""
            continue
        current += char
    raise ValueError("unbalanced call")


def stringified(argument):
    """A macro argument as # makes it: whitespace runs become one space, none at the ends."""
    return re.sub(r"\s+", " ", argument).strip()


def checks_in(source):
    """What each check() and check_eq() of a C file prints after "check failed: "."""
    found = set()
    for match in re.finditer(r"(?<![\w.])(check|check_eq|check_text)\s*\(", source):
        args = c_arguments(source, match.end() - 1)
        if match.group(1) in ("check_eq", "check_text"):
            found.add(f"{stringified(args[0])} == {stringified(args[1])}")
        else:
            found.add(stringified(args[0]))
    return found


def kernel_tests():
    """{"suite.test": the checks of the file that registers it, and of the helpers it includes
    from tests/kernel/ (db_trace.c's trace check, for one)}."""
    tests = {}
    kernel = ROOT / "tests" / "kernel"
    for path in sorted(kernel.glob("*.c")):
        source = path.read_text()
        checks = checks_in(source)
        for header in re.findall(r'#include "tests/kernel/((?:lib/)?\w+)\.h"', source):
            helper = kernel / f"{header}.c"
            if helper.is_file() and helper != path:
                checks |= checks_in(helper.read_text())
        for suite, name in re.findall(r"\bTEST(?:_FLAGS|_OBSERVING(?:_USER)?)?\(\s*(\w+)\s*,\s*(\w+)", source):
            tests[f"{suite}.{name}"] = checks
    return tests


def test_checks_in_reads_check_texts_as_the_preprocessor_stringifies_them():
    source = """check_eq(EXINFO(X86_EXC_GP, 0),\n\t\t rdmsr_safe(MSR_X, &value));
        check(count == 1, "%s, slot %u", what, slot); report_check(x, y); a.check(z);
        check_text(expected,  trace_text);"""
    assert checks_in(source) == {"EXINFO(X86_EXC_GP, 0) == rdmsr_safe(MSR_X, &value)",
                                 "count == 1", "expected == trace_text"}


@pytest.mark.parametrize("defect", TABLE,
                         ids=lambda d: f"{d.platform}-{d.test}-{d.check or d.ends}-{d.got}")
def test_every_entry_names_a_test_and_one_of_its_checks(defect):
    tests = kernel_tests()
    assert defect.test in tests, f"{defect.test}: no TEST() registers it in tests/kernel/"
    # "timed out" is the runner's own failure kind (report_fail_kind), for any test.
    assert defect.ends or defect.runs or defect.check == "timed out" or \
        defect.check in tests[defect.test], (
        f"{defect.test}: no check in its file prints {defect.check!r}")


def test_the_table_covers_the_known_tcg_and_kvm_pvm_defects():
    platforms = {d.platform for d in TABLE}
    assert platforms == {"tcg", "kvm-pvm"}
    gd = [d.check for d in TABLE
          if d.test == "dr.general_detect_raises_db_on_the_next_dr_access"]
    assert gd == ["1 == count", "0 == read_dr7() & DR7_GD"]


@pytest.mark.parametrize("text, message", [
    ('[[tcg]]\ntest = "a.b"\nreason = "r"\n', "only [[defect]] entries"),
    ('[[defect]]\nplatform = "tcg"\ntest = "a.b"\nreason = "r"\n', "either check"),
    ('[[defect]]\nplatform = "tcg"\ntest = "a.b"\ncheck = "x"\nreason = "r"\nextra = 1\n',
     "needs platform, test and reason"),
    ('[[defect]]\nplatform = "tcg"\ntest = "a.b"\ncheck = "x"\nends = "hang"\nreason = "r"\n',
     "either check"),
    ('[[defect]]\nplatform = "tcg"\ntest = "a.b"\ngot = "1"\nends = "hang"\nreason = "r"\n',
     "either check"),
    ('[[defect]]\nplatform = "tcg"\ntest = "a.b"\nends = "crash"\nreason = "r"\n',
     "not one of hang, exit"),
    ('[[defect]]\nplatform = "tcg"\ntest = "a.b"\ncheck = "x"\ngot = "1 "\nreason = "r"\n',
     "got"),
    ('[[defect]]\nplatform = "kvm pvm"\ntest = "a.b"\ncheck = "x"\nreason = "r"\n', "platform"),
    ('[[defect]]\nplatform = "kvm[0]"\ntest = "a.b"\ncheck = "x"\nreason = "r"\n', "platform"),
    ('[[defect]]\nplatform = "tcg"\ntest = "ab"\ncheck = "x"\nreason = "r"\n', "suite.test"),
    ('[[defect]]\nplatform = "tcg"\ntest = "a.b"\ncheck = " x"\nreason = "r"\n', "check"),
    ('[[defect]]\nplatform = "tcg"\ntest = "a.b"\ncheck = "x"\nreason = "r\\u00e9"\n', "reason"),
    ('[[defect]]\nplatform = "tcg"\ntest = "a.b"\ncheck = "x"\nreason = "' + "r" * 151 + '"\n',
     "longer than 150"),
    ('[[defect]]\nplatform = "tcg"\ntest = "a.b"\ncheck = "x"\nreason = "r"\n' * 2, "twice"),
    ("".join(f'[[defect]]\nplatform = "tcg"\ntest = "a.b"\ncheck = "x{i}"\nreason = "r"\n'
             for i in range(9)), "more than 8"),
    ('[[defect]]\nplatform = 1\ntest = "a.b"\ncheck = "x"\nreason = "r"\n', "string"),
    ("[[defect]\n", "defect"),
], ids=["old-format", "missing-check", "extra-key", "check-and-ends", "got-and-ends",
        "bad-ends", "got-spaces", "space", "bracket", "not-suite-test",
        "leading-space", "not-ascii", "long-reason", "duplicate", "too-many", "not-string",
        "bad-toml"])
def test_a_malformed_table_is_refused_at_build_time(tmp_path, text, message):
    path = tmp_path / "known-defects.toml"
    path.write_text(text)
    with pytest.raises(ValueError, match=re.escape(message)):
        defects.read(path)
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "switchyard" / "defects.py"),
                           "--c-table", str(path)], capture_output=True, text=True)
    assert proc.returncode == 1 and proc.stdout == "" and "error:" in proc.stderr


def test_the_c_rows_escape_and_compile(tmp_path):
    table = [defects.Defect("tcg", "a.b", "a \"quoted\" reason", check='strcmp(s, "x\\\\y") == 0'),
             *TABLE]
    (tmp_path / "known_defects_table.h").write_text(defects.c_table(table))
    (tmp_path / "t.c").write_text(
        '#include <string.h>\n#include <assert.h>\n'
        'struct known_defect { const char *platform, *test, *check, *got, *ends, *runs, *reason; };\n'
        'static const struct known_defect t[] = {\n#include "known_defects_table.h"\n};\n'
        'int main(void) { assert(strcmp(t[0].check, "strcmp(s, \\"x\\\\\\\\y\\") == 0") == 0);'
        ' return sizeof(t) / sizeof(t[0]) == %d ? 0 : 1; }\n' % len(table))
    subprocess.run(["gcc", "-Wall", "-Werror", "-o", str(tmp_path / "t"), str(tmp_path / "t.c")],
                   check=True)
    assert subprocess.run([str(tmp_path / "t")]).returncode == 0


@pytest.mark.parametrize("identity, applies", [
    ("kvm-pvm", True), ("kvm-vmx", False), ("kvm-svm", False), ("kvm", False), ("tcg", False),
    ("metal-GenuineIntel-6-85", False), ("kvm-pvm-2", False)])
def test_a_kvm_pvm_entry_applies_on_kvm_pvm_only(identity, applies):
    pvm = [d for d in TABLE if d.platform == "kvm-pvm"]
    assert pvm and all(defects.applies(d, identity) == applies for d in pvm)
    glob = defects.Defect("metal-GenuineIntel-6-*", "a.b", "r", check="x")
    assert defects.applies(glob, "metal-GenuineIntel-6-85")
    assert not defects.applies(glob, "metal-AuthenticAMD-25-1")


# The runner's word on the host.

def fake_host(tmp_path, modules=(), sys_modules=(), flags=""):
    (tmp_path / "proc").mkdir(exist_ok=True)
    (tmp_path / "proc" / "modules").write_text(
        "".join(f"{m} 1234 0 - Live 0x0\n" for m in modules))
    (tmp_path / "proc" / "cpuinfo").write_text(f"processor\t: 0\nflags\t\t: fpu {flags} sse\n")
    for module in sys_modules:
        (tmp_path / "sys" / "module" / module).mkdir(parents=True)
    return tmp_path


@pytest.mark.parametrize("modules, sys_modules, flags, host", [
    (["kvm_pvm", "kvm"], [], "", "kvm-pvm"),
    ([], ["kvm_pvm"], "", "kvm-pvm"),
    (["kvm_pvm", "kvm_intel", "kvm"], [], "vmx", "kvm-pvm"),
    (["kvm_intel", "kvm"], [], "vmx", "kvm-vmx"),
    (["kvm_amd", "kvm"], [], "svm", "kvm-svm"),
    (["kvm_intel", "kvm"], [], "", None),
    (["kvm"], [], "vmx", None),
    ([], [], "", None)], ids=["pvm", "pvm-sysfs", "pvm-beside-vmx", "vmx", "svm",
                             "kvm-intel-without-vmx", "no-vendor-module", "nothing"])
def test_kvm_host_names_the_kvm_from_modules_and_cpu_flags(tmp_path, modules, sys_modules,
                                                           flags, host):
    assert qemu.kvm_host(fake_host(tmp_path, modules, sys_modules, flags)) == host


@pytest.mark.parametrize("unusable, host, chosen", [
    ("", "kvm-vmx", "kvm"), ("", None, "kvm"), ("", "kvm-pvm", "tcg"),
    ("Permission denied", "kvm-vmx", "tcg")], ids=["vmx", "unknown", "pvm", "no-kvm"])
def test_auto_takes_kvm_unless_it_is_missing_or_kvm_pvm(monkeypatch, unusable, host, chosen):
    monkeypatch.setattr(qemu, "kvm_unusable_reason", lambda: unusable or None)
    monkeypatch.setattr(qemu, "kvm_host", lambda root="/": host)
    accel, why = qemu.resolve_accel("auto")
    assert accel == chosen
    assert ("KVM-PVM" in why) == (host == "kvm-pvm" and not unusable)
    assert qemu.resolve_accel("kvm") == ("kvm", "")


def test_only_a_kvm_boot_tells_the_kernel_its_host():
    def append(*args, **kwargs):
        argv = qemu.qemu_command("k.elf", *args, **kwargs)
        return argv[argv.index("-append") + 1]
    assert append("kvm", host="kvm-vmx") == "exit=isa-debug platform.host=kvm-vmx"
    assert append("kvm", host="kvm-pvm", cmdline="tests=dr.*", smp=2) == \
        "exit=isa-debug tests=dr.* smp.expect=2 platform.host=kvm-pvm"
    assert append("kvm", host="kvm-vmx", cmdline="platform.host=kvm-svm") == \
        "exit=isa-debug platform.host=kvm-svm"
    assert append("tcg", host="kvm-pvm") == "exit=isa-debug"


# Recorded logs: KVM-PVM as the kernel prints it, from the table's own checks and reasons.

def recorded_log(identity, how, results):
    """A sealed log of the tests of `results` {"suite.test": KTAP result line, after the test's
    diagnostics, numbered 1}, as the runner prints them: suites in name order, each test after
    its "# running" line."""
    suites = {}
    for test_id, line in results.items():
        suite, name = test_id.split(".")
        suites.setdefault(suite, []).append((name, line))
    body = ("KTAP version 1\n# switchyard 0.1 (x86-64)\n# cmdline: exit=isa-debug\n"
            f"# seed=7\n# platform: identity={identity} ({how})\n1..{len(suites)}\n")
    for number, suite in enumerate(sorted(suites), 1):
        body += f"    KTAP version 1\n    # Subtest: {suite}\n    1..{len(suites[suite])}\n"
        failed = False
        for index, (name, line) in enumerate(suites[suite], 1):
            last = line.splitlines()[-1].lstrip()
            failed |= last.startswith("not ok")
            line = line.replace(last, last.replace(" 1 ", f" {index} ", 1))
            body += f"    # running {suite}.{name}\n    {line}\n"
        body += f"{'not ok' if failed else 'ok'} {number} {suite}\n"
    return seal(body)


def pvm_results(identity):
    """Each KVM-PVM defect's test as the kernel reports it on `identity`: its named checks
    failed on kvm-pvm (XFAIL, with their diagnostics), passed elsewhere."""
    results = {}
    for test in PVM_DEFECT_TESTS:
        entries = [d for d in TABLE if d.test == test and defects.applies(d, identity)]
        name = test.split(".")[1]
        if not entries:
            results[test] = f"ok 1 {name}"
            continue
        diagnostics = "".join(f"    # tests/kernel/x.c:1: check failed: {d.check}\n"
                              f"    #   known defect of this platform: {d.reason}\n"
                              for d in entries)
        results[test] = f"{diagnostics.strip()}\n    ok 1 {name} # XFAIL {entries[0].reason}"
    return results


PVM_LOG = recorded_log("kvm-pvm", 'hypervisor "KVMKVMKVM", platform.host=kvm-pvm',
                       pvm_results("kvm-pvm"))
VMX_LOG = recorded_log("kvm-vmx", 'hypervisor "KVMKVMKVM", platform.host=kvm-vmx',
                       pvm_results("kvm-vmx"))


def harness(tmp_path, log):
    (tmp_path / "serial.log").write_text(log)
    env = dict(os.environ, SWITCHYARD_LOG=str(tmp_path / "serial.log"))
    return subprocess.run([sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider",
                           str(TEST_KERNEL)],
                          capture_output=True, text=True, timeout=120, env=env, cwd=ROOT)


def run_check_log(path):
    return subprocess.run([sys.executable, str(RUN), "--check-log", str(path)],
                          capture_output=True, text=True, timeout=60)


def test_a_kvm_pvm_log_of_known_defects_only_passes_in_run_and_pytest(tmp_path):
    result = ktap.check_log(PVM_LOG.encode(), qemu_status=33)
    assert (result.verdict, result.errors) == (ktap.PASS, [])
    assert [t.status for t in result.tests] == ["xfail"] * len(PVM_DEFECT_TESTS)
    assert "not ok" not in PVM_LOG
    proc = harness(tmp_path, PVM_LOG)
    assert proc.returncode == 0, proc.stdout
    assert f"{len(PVM_DEFECT_TESTS)} xfailed" in proc.stdout.splitlines()[-1], proc.stdout
    run = run_check_log(tmp_path / "serial.log")
    assert run.returncode == 0, run.stderr
    assert f"{len(PVM_DEFECT_TESTS)} xfailed (known platform defects)" in run.stderr


def test_a_kvm_vmx_log_applies_no_kvm_pvm_defect(tmp_path):
    assert "XFAIL" not in VMX_LOG and "not ok" not in VMX_LOG
    proc = harness(tmp_path, VMX_LOG)
    assert proc.returncode == 0, proc.stdout
    last = proc.stdout.splitlines()[-1]  # the tests, and test_log_is_complete_and_verified
    assert f"{len(PVM_DEFECT_TESTS) + 1} passed" in last, proc.stdout


def pvm_log_with_an_xpass():
    """The KVM-PVM log with its first test's defect gone: (log, test, reason)."""
    results = pvm_results("kvm-pvm")
    test = PVM_DEFECT_TESTS[0]
    reason = next(d.reason for d in TABLE if d.test == test)
    results[test] = (f"# known defect did not occur: check 'x' never failed ({reason})\n"
                     f"    not ok 1 {test.split('.')[1]} # XPASS {reason}")
    return recorded_log("kvm-pvm", "platform.host=kvm-pvm", results), test, reason


def test_an_xpass_fails_run_and_pytest_alike(tmp_path):
    log, test, reason = pvm_log_with_an_xpass()
    result = ktap.check_log(log.encode(), qemu_status=35)
    assert (result.verdict, result.errors) == (ktap.FAIL, [])
    assert [t.id for t in result.failed] == [test] and result.failed[0].reason == reason
    proc = harness(tmp_path, log)
    assert proc.returncode == 1, proc.stdout
    assert f"[XPASS(strict)] {reason}" in proc.stdout, proc.stdout
    run = run_check_log(tmp_path / "serial.log")
    assert run.returncode == 1, run.stderr
    assert f"XPASS {test}" in run.stderr and "1 xpassed" in run.stderr


# Linux's kunit.py, which knows nothing of the table.

@pytest.mark.parametrize("log", [PVM_LOG, VMX_LOG], ids=["kvm-pvm", "kvm-vmx"])
def test_kunit_parse_passes_a_log_whose_only_failures_are_known(tmp_path, kunit, log):
    (tmp_path / "serial.log").write_text(log)
    status, counts, stdout = kunit_parse(kunit, tmp_path / "serial.log")
    assert status == 0, stdout
    assert counts == same_counts(ktap.check_log(log.encode())), stdout


def test_kunit_parse_fails_an_xpass(tmp_path, kunit):
    log, test, _ = pvm_log_with_an_xpass()
    (tmp_path / "serial.log").write_text(log)
    status, counts, stdout = kunit_parse(kunit, tmp_path / "serial.log")
    assert status != 0, stdout
    assert counts == same_counts(ktap.check_log(log.encode())), stdout
    assert f"[FAILED] {test.split('.')[1]}" in stdout, stdout


# The real kernel under TCG.

def boot(tmp_path, cmdline, kernel=KERNEL, name="serial.log"):
    assert kernel.is_file(), f"kernel image {kernel} not found: run make"
    log = tmp_path / name
    proc = subprocess.run([sys.executable, str(RUN), "--kernel", str(kernel), "--accel", "tcg",
                           "--quiet", "--timeout", "120", "--cmdline", cmdline, "--log", str(log)],
                          capture_output=True, text=True, timeout=180)
    return proc, ktap.check_log(log.read_bytes()), log


def identity_line(result):
    return next(d for d in result.diagnostics if d.startswith("platform: identity="))


@pytest.mark.boot
@pytest.mark.parametrize("extra", ["", "platform.host=kvm-pvm"], ids=["plain", "host-ignored"])
def test_tcg_reports_its_two_defects_as_xfail_and_no_not_ok(tmp_path, kunit, extra):
    proc, result, log = boot(tmp_path, f"tests={TCG_DEFECT_TESTS},boot.* {extra}")
    assert proc.returncode == 0, proc.stderr
    assert identity_line(result).startswith("platform: identity=tcg (hypervisor \"TCGTCGTCGTCG\"")
    if extra:
        assert "platform.host=kvm-pvm ignored: not a KVM guest" in identity_line(result)
    assert {t.id: t.status for t in result.tests if t.status != "pass"} == {
        "arch.rdmsr_safe_reports_gp_for_an_msr_that_faults": "xfail",
        "dr.general_detect_raises_db_on_the_next_dr_access": "xfail"}
    gd = next(t for t in result.tests if t.name.startswith("general_detect"))
    assert gd.reason == "QEMU TCG does not implement DR7.GD: no #DB on the next DR access"
    assert sum("known defect of this platform" in line for line in gd.diagnostics) == 2
    assert not any(line.lstrip().startswith("not ok")
                   for line in ktap.clean(log.read_bytes()).splitlines())
    assert "2 xfailed (known platform defects)" in proc.stderr
    status, counts, stdout = kunit_parse(kunit, log)
    assert status == 0, stdout
    assert counts == same_counts(result), stdout
    pytest_run = harness(tmp_path, log.read_text())
    assert pytest_run.returncode == 0, pytest_run.stdout
    assert "2 xfailed" in pytest_run.stdout.splitlines()[-1]


@pytest.mark.boot
def test_playing_kvm_pvm_on_tcg_every_pvm_defect_xpasses_and_tcgs_fail(tmp_path):
    proc, result, log = boot(tmp_path, f"selftest.platform=kvm-pvm tests={DEFECT_SUITES}")
    assert proc.returncode == 1, proc.stderr
    assert identity_line(result) == \
        "platform: identity=kvm-pvm (selftest.platform: the machine is tcg)"
    statuses = {t.id.removesuffix("__emulated"): t.status for t in result.tests}
    assert {test: statuses[test] for test in [*PVM_DEFECT_TESTS, *TCG_DEFECT_TESTS.split(",")]} \
        == {**{test: "xpass" for test in PVM_DEFECT_TESTS},
            **{test: "fail" for test in TCG_DEFECT_TESTS.split(",")}}
    # A test that ends a KVM-PVM boot does not run in this one; it says why.
    for test in (t for t in result.tests if t.id in PVM_ENDING_TESTS):
        assert test.status == "skip" and test.skip_reason.startswith("runs alone: KVM-PVM: "), test
    # TCG's own failures stay failures, or known ones where a KVM-PVM entry names the check.
    assert {t.id for t in result.tests if t.status == "xfail"} <= set(TCG_TABLE_TESTS)
    for test in result.failed:
        if test.status == "xpass":
            assert any(line.startswith("known defect did not occur: check '")
                       for line in test.diagnostics), test
    pytest_run = harness(tmp_path, log.read_text())
    last = pytest_run.stdout.splitlines()[-1]
    assert pytest_run.returncode == 1 and f"{len(result.failed)} failed" in last, pytest_run.stdout
    assert pytest_run.stdout.count("[XPASS(strict)]") == len(PVM_DEFECT_TESTS)


@pytest.mark.boot
def test_playing_kvm_vmx_on_tcg_no_kvm_pvm_defect_applies(tmp_path):
    proc, result, _ = boot(tmp_path, f"selftest.platform=kvm-vmx tests={DEFECT_SUITES}")
    assert "known defects: 0 of" in "\n".join(result.diagnostics)
    statuses = {t.id.removesuffix("__emulated"): t.status for t in result.tests}
    assert {test: statuses[test] for test in PVM_DEFECT_TESTS} == \
        {test: "pass" for test in PVM_DEFECT_TESTS}
    assert not {"xfail", "xpass"} & set(statuses.values())


@pytest.mark.boot
@pytest.mark.parametrize("cmdline, option", [
    ("platform.host=kvm", "platform.host"), ("platform.host=xen", "platform.host"),
    ("selftest.platform=a.b", "selftest.platform")])
def test_a_bad_platform_option_is_a_usage_error(tmp_path, cmdline, option):
    proc, result, _ = boot(tmp_path, cmdline)
    assert proc.returncode == 3, proc.stderr
    assert result.usage_error.startswith(f"option '{option}'"), result.usage_error


@pytest.mark.boot
def test_a_kernel_whose_table_names_one_of_two_failing_checks_fails_the_test(tmp_path):
    """The matcher is per check: with only GD's first check in the table, its second failure
    is a plain failure (built with KNOWN_DEFECTS=, from a copy of the kernel's build)."""
    table = tmp_path / "known-defects.toml"
    gd = next(d for d in TABLE if d.check == "1 == count" and d.platform == "tcg")
    table.write_text(f'[[defect]]\nplatform = "tcg"\ntest = "{gd.test}"\n'
                     f'check = "{gd.check}"\nreason = "{gd.reason}"\n')
    build = tmp_path / "build"
    shutil.copytree(KERNEL.parent, build, symlinks=True,
                    ignore=shutil.ignore_patterns("logs", "bench", "host", "kunit-*", "*.iso",
                                                  "pxe", "generated"))
    subprocess.run(["make", "-s", "-C", str(ROOT), "all", f"BUILD={build}",
                    f"KNOWN_DEFECTS={table}"], check=True, capture_output=True, timeout=600)
    proc, result, _ = boot(tmp_path, f"tests={gd.test}", kernel=build / "switchyard32.elf")
    assert proc.returncode == 1, proc.stderr
    [test] = result.tests
    assert test.status == "fail" and test.reason == ""
    assert f"  known defect of this platform: {gd.reason}" in test.diagnostics
    assert any("check failed: 0 == read_dr7() & DR7_GD" in line for line in test.diagnostics)
