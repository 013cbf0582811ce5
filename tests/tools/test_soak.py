"""scripts/soak: one boot per seed with budget=soak, each seed reported with its verdict.

Its arguments and verdicts are checked through a fake QEMU (--qemu) printing sealed logs
(tests/sealed_logs.py). The test marked "boot" runs two short boots of the real kernel under TCG
with budget=quick; the real soak (budget=soak, five seeds, minutes) is marked "soak" and runs
only when selected: `pytest -m soak` (or `make soak`).
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sealed_logs import seal

from switchyard import log as ktap

ROOT = Path(__file__).resolve().parents[2]
SOAK = ROOT / "scripts" / "soak"
KERNEL = ROOT / "build" / "switchyard32.elf"
VERDICT = re.compile(r"^soak: (\w+) seed=(\d+) (PASS|FAIL|CRASH|USAGE|TIMEOUT)\b", re.M)

BODY = """\
KTAP version 1
# switchyard 0.1 (x86-64)
# cmdline: exit=isa-debug budget=soak seed={seed}
# seed={seed}
1..1
    KTAP version 1
    # Subtest: dr
    1..1
    # running dr.stress
    # metric dr.stress operations=1000000 planned=1000000 runs=300000 seed={seed} budget=soak
    {result} 1 stress
{result} 1 dr
# totals: pass={passed} fail={failed} skip=0 xfail=0 xpass=0
"""


def body(seed, result):
    """BODY with the seed and the result ("ok" or "not ok"), the totals counting it."""
    return BODY.format(seed=seed, result=result, passed=int(result == "ok"),
                       failed=int(result != "ok"))


def soak(*args, env=None, timeout=120):
    return subprocess.run([sys.executable, str(SOAK), *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, env=env)


@pytest.mark.parametrize("args", [
    ["--seeds", "0"], ["--seed", "-1"], ["--seed", "x"], ["--seed", str(2**64)],
    ["--smp", "0"], ["--timeout", "0"], ["--test-timeout", "0"], ["--test-timeout", "601"],
    ["--budget", "long"], ["--accel", "xen"], ["--kernel", "/nonexistent"],
    ["--cmdline", "tests=dr.* seed=3"], ["--cmdline", "budget=quick"],
    ["--cmdline", "timeout=5"], ["--qemu", "/nonexistent/qemu"]],
    ids=lambda args: " ".join(args))
def test_soak_rejects_bad_arguments(tmp_path, args):
    proc = soak("--out", tmp_path, *args)
    assert proc.returncode == 2, proc.stderr
    assert "error:" in proc.stderr


@pytest.fixture
def fake_soak(tmp_path):
    """Run scripts/soak --accel tcg against a fake QEMU that prints BODY sealed, with the seed
    it was given (or FAKE_SEED), the result FAKE_RESULT and exit status FAKE_STATUS."""
    script = tmp_path / "fake-qemu"
    script.write_text(f"""#!{sys.executable}
import os, re, sys, zlib
append = sys.argv[sys.argv.index("-append") + 1]
with open({str(tmp_path / "argv")!r}, "a") as argv:
    argv.write(append + "\\n")
seed = os.environ.get("FAKE_SEED") or re.search(r"seed=(\\d+)", append).group(1)
result = os.environ["FAKE_RESULT"]
body = {BODY!r}.format(seed=seed, result=result, passed=int(result == "ok"),
                       failed=int(result != "ok"))
crc = zlib.crc32(body.encode())
body += f"# switchyard-end crc32=0x{{crc:08x}} lines={{body.count(chr(10))}}\\n"
sys.stdout.write(body)
sys.exit(int(os.environ["FAKE_STATUS"]))
""")
    script.chmod(0o755)

    def run(*args, result="ok", status=33, seed=""):
        env = dict(os.environ, FAKE_RESULT=result, FAKE_STATUS=str(status), FAKE_SEED=seed)
        return soak("--qemu", script, "--kernel", script, "--accel", "tcg", "--out",
                    tmp_path / "out", "--timeout", "30", *args, env=env)
    run.appends = lambda: (tmp_path / "argv").read_text().splitlines()
    run.out = tmp_path / "out"
    return run


def test_the_body_is_a_verified_log():
    result = ktap.check_log(seal(body(7, "ok")).encode(), qemu_status=33)
    assert result.verdict == ktap.PASS and result.metrics["dr.stress"]["seed"] == "7"


def test_each_seed_boots_once_with_soak_budgets_and_is_reported(fake_soak):
    proc = fake_soak("--seed", "11", "--seed", "0x10", "--seed", "11", "--smp", "4",
                     "--cmdline", "tests=dr.*")
    assert proc.returncode == 0, proc.stderr
    assert fake_soak.appends() == [
        f"exit=isa-debug budget=soak seed={seed} timeout=120 tests=dr.* smp.expect=4"
        for seed in (11, 16)]
    assert VERDICT.findall(proc.stderr) == [("tcg", "11", "PASS"), ("tcg", "16", "PASS")]
    assert "2 of 2 boots passed" in proc.stderr
    assert ktap.check_log((fake_soak.out / "tcg-seed-16.log").read_bytes()).verdict == ktap.PASS


def test_without_seeds_each_boot_draws_its_own(fake_soak):
    proc = fake_soak("--seeds", "3", "--budget", "quick", "--test-timeout", "30")
    assert proc.returncode == 0, proc.stderr
    seeds = [int(re.search(r"seed=(\d+)", line).group(1)) for line in fake_soak.appends()]
    assert len(set(seeds)) == 3, seeds
    assert all(f"budget=quick seed={seed} timeout=30" in line
               for seed, line in zip(seeds, fake_soak.appends()))
    assert [int(seed) for _, seed, _ in VERDICT.findall(proc.stderr)] == seeds


def test_a_failing_seed_fails_the_soak_and_says_how_to_replay_it(fake_soak):
    proc = fake_soak("--seed", "5", "--seed", "6", result="not ok", status=35)
    assert proc.returncode == 1, proc.stderr
    assert VERDICT.findall(proc.stderr) == [("tcg", "5", "FAIL"), ("tcg", "6", "FAIL")]
    assert "not ok dr.stress" in proc.stderr
    assert "replay: scripts/run --accel tcg --smp 2" in proc.stderr
    assert "--cmdline 'budget=soak seed=5 timeout=120'" in proc.stderr
    assert "0 of 2 boots passed: failed tcg seed=5, tcg seed=6" in proc.stderr


@pytest.mark.parametrize("kwargs, fragment", [
    ({"seed": "99"}, "the log says seed=99, not 5"),
    ({"status": 0}, "CRASH"),
    ({"status": 37}, "CRASH")], ids=["wrong-seed", "triple-fault", "status-disagrees"])
def test_a_log_that_cannot_be_trusted_is_a_crash(fake_soak, kwargs, fragment):
    proc = fake_soak("--seed", "5", **kwargs)
    assert proc.returncode == 4, proc.stderr
    assert fragment in proc.stderr


# The real kernel under TCG.

@pytest.mark.boot
def test_two_quick_boots_of_the_real_kernel_pass_with_their_seeds(tmp_path):
    assert KERNEL.is_file(), f"kernel image {KERNEL} not found: run make"
    proc = soak("--accel", "tcg", "--budget", "quick", "--seeds", "2", "--out", tmp_path,
                "--cmdline", "tests=dr.stress,smp.seeded_*", "--timeout", "120", timeout=300)
    assert proc.returncode == 0, proc.stderr
    verdicts = VERDICT.findall(proc.stderr)
    assert [(accel, verdict) for accel, _, verdict in verdicts] == [("tcg", "PASS")] * 2
    for _, seed, _ in verdicts:
        result = ktap.check_log((tmp_path / f"tcg-seed-{seed}.log").read_bytes())
        assert [t.id for t in result.tests if t.status == "pass"] == [
            "dr.stress",
            "smp.seeded_stress_moves_tasks_between_cpus_and_no_breakpoint_is_lost_or_stray"]
        assert result.metrics["dr.stress"]["seed"] == seed
        assert result.metrics["dr.stress"]["budget"] == "quick"


@pytest.mark.soak
@pytest.mark.timeout(3600)
def test_the_soak_passes_under_tcg(request, tmp_path):
    if "soak" not in request.config.option.markexpr.replace("not soak", ""):
        pytest.skip("a soak takes minutes: select it with pytest -m soak, or run make soak")
    assert KERNEL.is_file(), f"kernel image {KERNEL} not found: run make"
    proc = soak("--accel", "tcg", "--out", tmp_path, timeout=3600)
    assert proc.returncode == 0, proc.stderr
    assert [verdict for _, _, verdict in VERDICT.findall(proc.stderr)] == ["PASS"] * 5
