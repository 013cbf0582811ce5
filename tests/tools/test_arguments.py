"""The tools' shared options (scripts/switchyard/arguments.py) and the thin executables.

run, bench, soak and compare take --kernel, --qemu, --timeout and (run, soak) --smp from one
parser module, so each refuses the same bad value with the same words and status 2. Every tool
in scripts/ is a thin executable over its module in scripts/switchyard/, which loads no other
file by path.
"""

import argparse
import re
import subprocess
import sys
from pathlib import Path

import pytest

from switchyard import arguments

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "scripts"
TOOLS = ["run", "bench", "soak", "compare", "capture", "fuzz", "lava-check", "lava-qemu",
         "mkiso", "mkpxe", "check", "check_layout"]
SHARED = {
    "--timeout 0": "--timeout must be a positive number of seconds, not 0",
    "--timeout nan": "--timeout must be a positive number of seconds, not nan",
    "--kernel /nonexistent": "kernel image not found: /nonexistent (run make)",
    "--qemu /nonexistent": "QEMU not found: '/nonexistent' is not an executable or on PATH",
}


def tool(name, *args, cwd=None):
    return subprocess.run([sys.executable, str(SCRIPTS / name), *args], capture_output=True,
                          text=True, timeout=60, cwd=cwd)


@pytest.mark.parametrize("name", ["run", "bench", "soak", "compare"])
@pytest.mark.parametrize("bad", list(SHARED))
def test_each_tool_refuses_a_bad_shared_option_in_the_same_words(tmp_path, name, bad):
    proc = tool(name, "--accel", "tcg", "--out" if name != "run" else "--log",
                str(tmp_path / "out"), *bad.split())
    assert proc.returncode == 2, proc.stderr
    assert f"scripts/{name}: error: {SHARED[bad]}" in proc.stderr, proc.stderr


@pytest.mark.parametrize("name", ["run", "soak"])
def test_no_cpus_is_refused(name):
    proc = tool(name, "--smp", "0")
    assert proc.returncode == 2 and f"scripts/{name}: error: --smp must be at least 1, not 0" \
        in proc.stderr, proc.stderr


def test_the_accelerators_come_in_order_once_each():
    parser = argparse.ArgumentParser()
    arguments.add_accels(parser)
    assert arguments.accels(parser.parse_args([])) == ["tcg", "kvm"]
    assert arguments.accels(parser.parse_args(["--accel", "kvm", "--accel", "tcg",
                                               "--accel", "kvm"])) == ["kvm", "tcg"]


@pytest.mark.parametrize("name", TOOLS)
def test_each_tool_is_a_thin_executable_over_its_module(name, tmp_path):
    """The file runs switchyard.NAME's main() and nothing else; --help works from any
    directory."""
    text = (SCRIPTS / name).read_text()
    module = name.replace("-", "_")
    code = [line for line in text.split('"""', 2)[2].splitlines() if line.strip()]
    assert code == ["import sys", "from pathlib import Path",
                    "sys.path.insert(0, str(Path(__file__).resolve().parent))",
                    f"from switchyard import {module}  # noqa: E402",
                    'if __name__ == "__main__":', f"    sys.exit({module}.main(sys.argv[1:]))"]
    assert (SCRIPTS / "switchyard" / f"{module}.py").is_file()
    proc = tool(name, "--help", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.startswith(f"usage: scripts/{name}"), \
        proc.stdout + proc.stderr


def test_no_module_loads_another_by_its_path():
    loaders = [path.relative_to(ROOT) for path in sorted(
        [*(SCRIPTS / "switchyard").glob("*.py"), *(ROOT / "tests").rglob("*.py")])
        if path.name != "test_arguments.py"
        and re.search(r"SourceFileLoader|spec_from_file_location", path.read_text())]
    assert loaders == [], loaders
    assert sorted(p.name for p in SCRIPTS.iterdir() if p.is_file()) == sorted(TOOLS)
