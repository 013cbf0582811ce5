"""Results from the emulated CPU say so, and where it is refused the suites skip with the
silicon's reason (docs/emulated-cpu.md)."""

import re

import pytest

from switchyard import defects as switchyard_defects
from conftest import AMD_PROFILES, BOOTS, EMULATED_PROFILES, load_platform
from switchyard.qemu import kvm_unusable_reason

EMULATED = "__emulated"
# The reasons of the table's runs = "never" entries, by test: the kernel's SKIP reason there.
NEVER = {}
for _defect in switchyard_defects.read():
    if _defect.runs == "never":
        NEVER.setdefault(_defect.test, set()).add(_defect.reason)
HARDWARE_SUITES = ("bts", "pebs", "pmu")
# Why each suite skips on these machines without the model: no Debug Store, and (pmu) the
# vendor of TCG's -cpu max and of the KVM host here.
SILICON_REASONS = ("CPUID.1:EDX.DS=0",
                   "CPUID 0x80000001 ECX[23]=0",
                   "only Intel architectural perfmon is supported",
                   "CPUID.0AH:EAX[7:0]=0",
                   "1 CPU online, 2 needed")


def booted(name):
    if BOOTS[name][0] == "kvm" and kvm_unusable_reason():
        pytest.skip(f"KVM unusable: {kvm_unusable_reason()}")
    platform = load_platform(name)
    if platform.skip:
        pytest.skip(platform.skip)
    if platform.failure:
        pytest.fail(platform.failure, pytrace=False)
    return platform.result


def diagnostic(result, prefix):
    return next((line for line in result.diagnostics if line.startswith(prefix)), "")


@pytest.mark.parametrize("name", ["tcg", "kvm", "tcg-hybrid"] +
                         [f"tcg-{n}" for n in EMULATED_PROFILES])
def test_every_hardware_suite_runs_on_the_emulated_cpu_and_says_so(name):
    result = booted(name)
    assert diagnostic(result, "emulated cpu: on"), "the log does not say the model is on"
    assert diagnostic(result, "platform: emulated cpu: vendor=GenuineIntel")
    tests = [t for t in result.tests if t.suite in HARDWARE_SUITES]
    assert tests, "no bts, pebs or pmu test in the log"
    for test in tests:
        if test.status == "skip":
            # Only what the emulated part itself lacks: BTS on a PEBS-only guest, adaptive
            # records before PEBS format 4 with baseline, a second CPU or a second core type,
            # PEBS on a second counter (Core 2: PMC0 only); a host that stopped the guest
            # through the multiplexing window, measured by its lost ticks;
            # and, where the model is slow (KVM-PVM), its pace (TEST_OBSERVING), labelled.
            paced = test.name.endswith(EMULATED) and not name.startswith("tcg") and re.match(
                r"the emulated CPU takes \d+ cycles a step here", test.skip_reason)
            # A known defect of the platform that makes the test's outcome chance there.
            never = not name.startswith("tcg") and test.skip_reason in NEVER.get(test.id, ())
            lacks = paced or never or (name == "tcg-kvm-pebs" and
                     test.skip_reason == "IA32_MISC_ENABLE.BTS_UNAVAILABLE=1") or (
                re.fullmatch(r"PEBS format [0-3] without baseline: no adaptive records",
                             test.skip_reason)) or (
                test.name.startswith(("events_for_a_big_core", "a_counter_only_the_big_core"))
                and re.match(r"1 CPU online|CPU 1 has as many GP counters", test.skip_reason)) or (
                test.name.startswith("multiplexed_estimates") and
                re.match(r"the tick came \d+ times of \d+ in \d+ ms: the host stopped",
                         test.skip_reason)) or (
                test.name.startswith("counters_overflowing_together") and
                re.fullmatch(r"PEBS on one GP counter only here \(PEBS_ENABLE bits 0x1\)",
                             test.skip_reason)) or (
                # The self-read benchmark's time limit where the model is slow (KVM-PVM).
                not name.startswith("tcg") and test.name.startswith("benchmark_self_read") and
                re.match(r"\d+ reads and calls took over \d+ ms here", test.skip_reason))
            assert lacks, f"{test.id} skipped: {test.skip_reason}"
        else:
            assert test.name.endswith(EMULATED), f"{test.id} ran on the model, unlabelled"


@pytest.mark.parametrize("name", [f"tcg-{n}" for n in EMULATED_PROFILES])
def test_each_profile_is_the_part_it_claims(name):
    result = booted(name)
    line = diagnostic(result, "emulated cpu: on")
    profile = EMULATED_PROFILES[name[len("tcg-"):]].split(",")[0]
    assert f"profile={profile} " in line, line
    fmt = re.search(r"pebs-fmt(\d)", name)
    if fmt:
        assert f"pebs_format={fmt.group(1)} " in line, line
        assert diagnostic(result, f"ds: bts=yes pebs=yes pebs_format={fmt.group(1)}")


def test_a_hybrid_part_runs_events_across_its_core_types():
    result = booted("tcg-hybrid")
    assert diagnostic(result, "pmu: CPU 0: core type Core (0x40), 8 GP")
    assert diagnostic(result, "pmu: CPU 1: core type Atom (0x20), 6 GP")
    test = next(t for t in result.tests if t.name.startswith("events_for_a_big_core"))
    assert test.status == "pass", test.diagnostics


def test_refused_model_leaves_the_silicon_reasons():
    result = booted("tcg-ds-hardware")
    assert diagnostic(result, "emulated cpu: off (ds=hardware)")
    assert not diagnostic(result, "platform: emulated cpu")
    tests = [t for t in result.tests if t.suite in HARDWARE_SUITES + ("emulator",)]
    assert tests
    for test in tests:
        assert EMULATED not in test.name, f"{test.id} is labelled emulated with the model off"
        assert test.status == "skip", f"{test.id} ran with the model off: {test.status}"
        if test.suite == "emulator":
            assert test.skip_reason.startswith("the emulated CPU is off"), test.skip_reason
        else:
            assert any(r in test.skip_reason for r in SILICON_REASONS), test.skip_reason


@pytest.mark.parametrize("profile", AMD_PROFILES)
def test_the_pmu_suite_runs_on_the_amd_profiles_and_the_msr_matrix_holds(profile):
    """pmu/ detects the AMD part the model plays and its counters count (rule 26); the Debug
    Store suites skip for the reason an AMD part gives; the MSR matrix runs and passes."""
    result = booted(f"tcg-{profile}")
    assert diagnostic(result, "platform: emulated cpu: vendor=AuthenticAMD")
    pmu = [t for t in result.tests if t.suite == "pmu"]
    assert any(t.status == "pass" for t in pmu), [(t.name, t.skip_reason) for t in pmu]
    for test in pmu:
        if test.status == "pass":
            assert test.name.endswith(EMULATED), f"{test.id} ran on the model, unlabelled"
    for test in result.tests:
        if test.suite in ("bts", "pebs") and test.status == "skip":
            assert "CPUID.1:EDX.DS=0" in test.skip_reason, (test.id, test.skip_reason)
    matrix = [t for t in result.tests if t.name.startswith("every_pmu_ds_lbr_and_debug_msr")]
    assert [t.status for t in matrix] == ["pass"], matrix

