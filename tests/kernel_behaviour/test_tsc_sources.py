"""The TSC's frequency from each source the kernel knows, forced with tsc.source=, under TCG.

q35 has a PIT, an ACPI PM timer and an HPET; the harness's microvm has a PIT only (its ACPI is
hardware-reduced: no PM timer, no HPET table), and `pit=off` removes the PIT. TCG's `-cpu max`
has neither CPUID leaf 0x15 nor 0x40000010. Each measured source must agree with the PIT's
measurement within TOLERANCE; a forced source that is missing is a usage error naming why; a
machine with no source at all bails out listing each source and why it failed.
"""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
from switchyard import log as ktap  # noqa: E402

KERNEL = ROOT / "build" / "switchyard32.elf"
# Each source counts 20 ms; under TCG the TSC is the host's and QEMU's clocks are host time, so
# the sources agreed within 0.01% when measured (docs/platforms.md). 1% leaves room for a
# loaded host while still catching a wrong frequency constant or counter width.
TOLERANCE = 0.01
PLATFORM_TSC = re.compile(r"platform: tsc_hz=(\d+) source=(\S+)")


def boot(tmp_path, machine, cmdline):
    assert KERNEL.is_file(), f"kernel image {KERNEL} not found: run make"
    log = tmp_path / f"{machine}-{cmdline}.log".replace(" ", "_").replace("=", "-")
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "run"), "--accel", "tcg",
                           "--machine", machine, "--quiet", "--timeout", "60",
                           "--cmdline", f"tests=boot.long_mode_is_active {cmdline}".strip(),
                           "--log", str(log)],
                          capture_output=True, text=True, timeout=120)
    return proc, ktap.check_log(log.read_bytes())


def tsc(result):
    """(hz, source) from the platform report."""
    found = [PLATFORM_TSC.fullmatch(line) for line in result.diagnostics]
    found = [match for match in found if match]
    assert len(found) == 1, result.diagnostics
    return int(found[0][1]), found[0][2]


@pytest.fixture(scope="module")
def pit_hz(tmp_path_factory):
    proc, result = boot(tmp_path_factory.mktemp("tsc"), "q35", "tsc.source=pit")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    hz, source = tsc(result)
    assert source == "pit"
    return hz


@pytest.mark.boot
@pytest.mark.parametrize("option, source", [("pmtimer", "pmtimer"), ("hpet", "hpet")])
def test_a_forced_source_agrees_with_the_pit(tmp_path, pit_hz, option, source):
    proc, result = boot(tmp_path, "q35", f"tsc.source={option}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    hz, used = tsc(result)
    assert used == source
    assert abs(hz - pit_hz) <= TOLERANCE * pit_hz, (hz, pit_hz)


@pytest.mark.boot
def test_without_a_pit_the_pm_timer_is_next_and_the_pit_says_why_not(tmp_path, pit_hz):
    proc, result = boot(tmp_path, "q35,pit=off", "")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    hz, used = tsc(result)
    assert used == "pmtimer"
    assert abs(hz - pit_hz) <= TOLERANCE * pit_hz, (hz, pit_hz)
    assert "tsc: pit: channel 0 does not count (reads 0xffff)" in result.diagnostics


@pytest.mark.boot
@pytest.mark.parametrize("machine, option, why", [
    ("microvm", "pmtimer", "FADT: the FADT says HW_REDUCED_ACPI"),
    ("microvm", "hpet", "no HPET table: table not found"),
    ("microvm", "cpuid", "max basic leaf 0x"),
    ("microvm", "hypervisor", "max hypervisor leaf 0x"),
    ("microvm,pit=off", "pit", "channel 0 does not count"),
])
def test_a_forced_source_that_is_missing_is_refused_with_its_reason(tmp_path, machine, option,
                                                                    why):
    proc, result = boot(tmp_path, machine, f"tsc.source={option}")
    assert proc.returncode == ktap.RUN_STATUS[ktap.USAGE], proc.stdout + proc.stderr
    assert result.verdict == ktap.USAGE
    errors = [line for line in result.diagnostics if line.startswith("error: ")]
    assert len(errors) == 1 and errors[0].startswith(
        f"error: option 'tsc.source': {option}: {why}"), result.diagnostics


@pytest.mark.boot
def test_no_source_at_all_bails_out_saying_what_was_tried(tmp_path):
    proc, result = boot(tmp_path, "microvm,pit=off", "")
    assert proc.returncode == ktap.RUN_STATUS[ktap.CRASH], proc.stdout + proc.stderr
    assert result.bail_out == \
        "no TSC frequency source: tried cpuid, hypervisor, pit, pmtimer, hpet"
    tried = [line.split(":")[1].strip() for line in result.diagnostics
             if line.startswith("tsc: ")]
    assert tried == ["cpuid", "hypervisor", "pit", "pmtimer", "hpet"], result.diagnostics
