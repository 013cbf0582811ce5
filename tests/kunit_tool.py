"""Linux's own KTAP parser (tools/testing/kunit/kunit.py of Debian's linux-source-6.1), which
knows nothing of the known-defects table: a fixture that extracts it once, and its verdict."""

import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# make deps installs it.
LINUX_SOURCE = Path("/usr/src/linux-source-6.1.tar.xz")
KUNIT_MEMBERS = ["kunit.py", "kunit_config.py", "kunit_json.py", "kunit_kernel.py",
                 "kunit_parser.py", "kunit_printer.py", "qemu_config.py"]


def extracted(script):
    """Whether kunit.py is there, extracted from the installed linux-source (not an older)."""
    return script.is_file() and script.stat().st_mtime >= LINUX_SOURCE.stat().st_mtime


@pytest.fixture(scope="session")
def kunit():
    """tools/testing/kunit of linux-source-6.1, extracted once into build/kunit-6.1 (kunit.py
    finds the kernel tree by the path tools/testing/kunit, so the path is kept)."""
    assert LINUX_SOURCE.is_file(), f"{LINUX_SOURCE} not found: apt-get install linux-source-6.1"
    target = ROOT / "build" / "kunit-6.1"
    script = target / "tools" / "testing" / "kunit" / "kunit.py"
    if not extracted(script):
        # Extracted beside the target and renamed into place: two pytest processes of one
        # make check may both get here, and neither sees the other's half-written tree, nor
        # removes a tree the other has put in place.
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = Path(tempfile.mkdtemp(prefix="kunit-6.1.", dir=target.parent))
        members = [f"linux-source-6.1/tools/testing/kunit/{m}" for m in KUNIT_MEMBERS]
        subprocess.run(["tar", "-xJf", str(LINUX_SOURCE), "-C", str(partial),
                        "--strip-components=1", *members], check=True, timeout=300)
        (partial / script.relative_to(target)).touch()
        if target.exists() and not extracted(script):  # a stale tree: out of the way first
            stale = Path(tempfile.mkdtemp(prefix="kunit-6.1.stale.", dir=target.parent))
            with contextlib.suppress(OSError):
                os.rename(target, stale / "tree")
            shutil.rmtree(stale, ignore_errors=True)
        try:
            os.rename(partial, target)
        except OSError:  # another process put its tree in place first
            shutil.rmtree(partial, ignore_errors=True)
    assert extracted(script), f"{script} not extracted from {LINUX_SOURCE}"
    return script


def kunit_parse(kunit, log_path):
    """kunit.py parse's exit status and its summary {"passed": N, "failed": N, ...}."""
    proc = subprocess.run([sys.executable, str(kunit), "parse", str(log_path)],
                          capture_output=True, text=True, timeout=120)
    summary = re.search(r"Ran (\d+) tests: (.*)", proc.stdout)
    assert summary, proc.stdout + proc.stderr
    counts = {key: int(value) for key, value in re.findall(r"(\w+): (\d+)", summary.group(2))}
    counts["total"] = int(summary.group(1))
    return proc.returncode, counts, proc.stdout


def same_counts(result):
    """What kunit.py should count in a log of ours: XFAIL is "ok", XPASS "not ok"."""
    counts = {"total": len(result.tests),
              "passed": result.count("pass") + result.count("xfail"),
              "failed": len(result.failed), "skipped": result.count("skip")}
    return {key: value for key, value in counts.items() if value or key == "total"}


