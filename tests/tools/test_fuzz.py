"""make fuzz, briefly, in every make check: damaged logs are never passed, random kernel
command lines end with the right status, never a hang or a crash, and the kernel-API fuzz boot
(tests/kernel/fuzz_api.c) finds every call keeping its contract."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
KERNEL = ROOT / "build" / "switchyard32.elf"


@pytest.mark.timeout(300)
@pytest.mark.parametrize("seed", [1, 2])
def test_a_short_fuzz_finds_nothing_wrongly_accepted(seed):
    assert KERNEL.is_file(), f"kernel image {KERNEL} not found: run make"
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "fuzz"), "--seed", str(seed),
                           "--seconds", "15", "--logs", "2000", "--cmdlines", "12",
                           "--kernel", str(KERNEL)], capture_output=True, text=True, timeout=280)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"fuzz: seed={seed}" in proc.stdout
    assert "logs: 2000 tried, 0 wrongly accepted" in proc.stdout, proc.stdout
    assert "command lines: 12 tried, 0 wrongly judged" in proc.stdout, proc.stdout
    api = re.search(r"^fuzz: kernel API: 6000 calls, (\d+) accepted, 0 failed$", proc.stdout,
                    re.MULTILINE)
    assert api and int(api.group(1)) > 0, proc.stdout


def test_fuzz_refuses_a_bad_budget():
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "fuzz"), "--seconds", "0"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "--seconds must be positive" in proc.stderr


def test_a_valid_random_command_line_names_each_option_once():
    """The kernel refuses an option given twice (a usage error): the fuzz's valid lines must
    not give one twice, as 'list dr.lazy=1 dr.lazy=0' (seed 25) did."""
    import random

    from switchyard import fuzz
    rng = random.Random(25)
    for _ in range(5000):
        cmdline, invalid = fuzz.random_cmdline(rng)
        if not invalid:
            names = [word.split("=", 1)[0] for word in cmdline.split()]
            assert len(names) == len(set(names)), cmdline
