"""dr.stress with three seeds under TCG: each passes, and each completes its planned operations.

The kernel prints `# metric dr.stress operations=N planned=N runs=N milliseconds=N seed=N
budget=quick|soak`; the default budget (quick) plans 2,500 operations, and under TCG its time
budget must never be what ended the test. `make soak` runs it with budget=soak.
"""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
from switchyard import log as ktap  # noqa: E402

KERNEL = ROOT / "build" / "switchyard32.elf"
SEEDS = (1, 0x5eed, 987654321)
OPERATIONS_QUICK = 1_000  # tests/kernel/dr_stress.c


@pytest.mark.boot
@pytest.mark.parametrize("seed", SEEDS)
def test_stress_passes_and_completes_its_operations(tmp_path, seed):
    assert KERNEL.is_file(), f"kernel image {KERNEL} not found: run make"
    log = tmp_path / "serial.log"
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "run"), "--accel", "tcg",
                           "--quiet", "--timeout", "60", "--log", str(log),
                           "--cmdline", f"tests=dr.stress seed={seed}"],
                          capture_output=True, text=True, timeout=120)
    result = ktap.check_log(log.read_bytes())
    assert proc.returncode == 0, proc.stderr
    assert [t.status for t in result.tests] == ["pass"], result.tests
    metric = result.metrics["dr.stress"]
    assert int(metric["seed"]) == seed
    assert metric["budget"] == "quick", metric
    assert int(metric["planned"]) == OPERATIONS_QUICK, metric
    assert int(metric["operations"]) == OPERATIONS_QUICK, metric
    assert int(metric["milliseconds"]) < 5_000, metric
