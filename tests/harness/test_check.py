"""make check's two pytest processes (scripts/check): the kernel's verdicts with their boots,
beside every other test; one JUnit file, and the status of whichever failed.

The processes are played by a fake Python that writes a JUnit file, records when it ran, and
exits with the status it is told.
"""

import re
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest

from switchyard import check

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"

FAKE_PYTHON = """#!/bin/sh
# A fake "python -m pytest": one testcase named after its first path, then the status asked.
junit=; name=others
for arg in "$@"; do
    case "$arg" in
    --junitxml=*) junit="${arg#--junitxml=}" ;;
    tests/verdicts) name=verdicts ;;
    esac
done
date +%s.%N > "$FAKE_DIR/$name.start"
echo "$name: $SWITCHYARD_BOOT_RUN"
eval "sleep \\$FAKE_${name}_sleep"
printf '<testsuites><testsuite name="pytest" tests="1"><testcase classname="%s" name="t"/>' \\
    "$name" > "$junit"
printf '</testsuite></testsuites>' >> "$junit"
date +%s.%N > "$FAKE_DIR/$name.end"
eval "exit \\$FAKE_${name}_status"
"""


def run_check(tmp_path, verdicts_status, others_status):
    fake = tmp_path / "python"
    fake.write_text(FAKE_PYTHON)
    fake.chmod(0o755)
    junit = tmp_path / "junit.xml"
    env = {"PATH": "/usr/bin:/bin", "FAKE_DIR": str(tmp_path),
           "FAKE_verdicts_status": str(verdicts_status), "FAKE_others_status": str(others_status),
           "FAKE_verdicts_sleep": "1", "FAKE_others_sleep": "2"}
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "check"), "--python", str(fake),
                           f"--junitxml={junit}"], env=env, capture_output=True, text=True,
                          timeout=60)
    return proc, junit


@pytest.mark.parametrize("verdicts, others, status", [(0, 0, 0), (1, 0, 1), (0, 1, 1), (2, 1, 2),
                                                       (0, 5, 5)])
def test_both_run_at_once_and_the_status_is_the_first_failure(tmp_path, verdicts, others,
                                                              status):
    proc, junit = run_check(tmp_path, verdicts, others)
    assert proc.returncode == status, proc.stdout + proc.stderr
    times = {name: (float((tmp_path / f"{name}.start").read_text()),
                    float((tmp_path / f"{name}.end").read_text()))
             for name in ("verdicts", "others")}
    # Side by side: each started before the other ended.
    assert times["verdicts"][0] < times["others"][1] and times["others"][0] < times["verdicts"][1]
    cases = [c.get("classname") for c in ElementTree.parse(junit).getroot().iter("testcase")]
    assert sorted(cases) == ["others", "verdicts"]
    # One boot run for both, named in the environment; the verdicts' output is printed.
    runs = set(re.findall(r"^(?:verdicts|others): (\S+)$", proc.stdout, re.MULTILINE))
    assert len(runs) == 1 and runs.pop().startswith("check-"), proc.stdout
    # Each one's own time: the verdicts' (1 s) ended before the others' (2 s).
    took = re.search(rf"tests/verdicts exited {verdicts} after ([\d.]+) s; "
                     rf"the other tests exited {others} after ([\d.]+) s", proc.stdout)
    assert took and float(took.group(1)) + 0.5 < float(took.group(2)), proc.stdout


def test_a_missing_junit_part_is_left_out(tmp_path):
    part = tmp_path / "one.xml"
    part.write_text('<testsuite name="pytest"><testcase classname="a" name="b"/></testsuite>')
    check.merge_junit([part, tmp_path / "missing.xml"], tmp_path / "out.xml")
    root = ElementTree.parse(tmp_path / "out.xml").getroot()
    assert root.tag == "testsuites" and [c.get("name") for c in root.iter("testcase")] == ["b"]


@pytest.mark.parametrize("args", [["--workers", "0"], ["--workers", "two"], ["--bogus"]])
def test_bad_arguments_exit_2(args):
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "check"), *args],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "usage: scripts/check" in proc.stderr, proc.stderr


def test_only_tests_verdicts_asks_for_the_collection_boots():
    """A test file elsewhere that judged a platform's boot would, in the second process, wait
    for the first's boot (or boot it again without SWITCHYARD_BOOT_RUN): keep them together."""
    users = re.compile(r"\b(load_platforms?|ktap_test)\b|def test_\w+\([^)]*\bplatform\b")
    outside = [path.relative_to(ROOT) for path in sorted(TESTS.rglob("test_*.py"))
               if path.parent.name != "verdicts" and path.name != "test_check.py"
               and users.search(path.read_text())]
    assert outside == [], outside
    inside = [path.name for path in sorted((TESTS / "verdicts").glob("test_*.py"))
              if users.search(path.read_text())]
    assert inside == ["test_emulated.py", "test_kernel.py", "test_kunit.py"], inside
    assert check.commands(check.parse_args([]), Path("x"))[1][-1] == f"--ignore={check.VERDICTS}"
