"""The runner survives tests that fail on purpose, and the kernel bails out cleanly.

These boot the real kernel under TCG with the manual selftest suite (tests/kernel/
selftest_failures.c) and with selftest.kernel_fault, and check what the log says.
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


def boot(tmp_path, cmdline, smp=1):
    assert KERNEL.is_file(), f"kernel image {KERNEL} not found: run make"
    log = tmp_path / "serial.log"
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "run"), "--accel", "tcg",
                           "--smp", str(smp), "--quiet", "--timeout", "60", "--cmdline", cmdline,
                           "--log", str(log)],
                          capture_output=True, text=True, timeout=120)
    return proc, ktap.check_log(log.read_bytes())


@pytest.mark.boot
def test_failing_tests_fail_alone_and_the_run_goes_on(tmp_path):
    proc, result = boot(tmp_path, "tests=selftest.* timeout=500ms")
    assert proc.returncode == 1, proc.stderr
    assert result.verdict == ktap.FAIL and not result.errors, result.errors
    tests = {test.name: test for test in result.tests}
    expected = {
        "unexpected_exception_fails_the_test": ("fail", "unexpected exception #UD (vector 6)"),
        "overrun_fails_the_test_as_timed_out": ("fail", "timed out after 500 ms"),
        "failed_check_prints_both_values": ("fail", "expected 41 (0x29), got 42 (0x2a)"),
        "test_without_checks_fails": ("fail", "the test made no checks"),
        "skip_carries_its_reason": ("skip", None),
        "runner_continues_after_failures": ("pass", None),
    }
    assert list(tests) == list(expected)
    for name, (status, diagnostic) in expected.items():
        assert tests[name].status == status, (name, tests[name])
        if diagnostic:
            assert any(diagnostic in line for line in tests[name].diagnostics), tests[name]
    assert tests["skip_carries_its_reason"].skip_reason == \
        "skipped on purpose by the selftest suite"
    assert any("rip=0xffffffff8" in line
               for line in tests["unexpected_exception_fails_the_test"].diagnostics)


@pytest.mark.boot
def test_selftests_are_not_run_by_a_wildcard(tmp_path):
    proc, result = boot(tmp_path, "tests=* list")
    assert proc.returncode == 0, proc.stderr
    listed = [line for line in result.diagnostics if line.startswith("test ")]
    assert listed and not any("selftest." in line for line in listed), listed


@pytest.mark.boot
def test_a_fault_in_the_kernel_bails_out_with_a_register_dump(tmp_path):
    proc, result = boot(tmp_path, "selftest.kernel_fault")
    assert proc.returncode == 4, proc.stderr
    assert result.verdict == ktap.CRASH and not result.errors, result.errors
    assert result.bail_out.startswith("unexpected exception #UD in the kernel at rip=0x"), \
        result.bail_out
    assert any(line.startswith("rax=0x") for line in result.diagnostics), result.diagnostics
    assert result.integrity_error is None


@pytest.mark.boot
def test_a_test_that_leaks_fails_itself_and_the_next_starts_clean(tmp_path):
    proc, result = boot(tmp_path, "tests=leaks.*", smp=2)  # the *_on_cpu_1 pair needs CPU 1
    assert proc.returncode == 1, proc.stderr
    assert result.verdict == ktap.FAIL and not result.errors, result.errors
    tests = {test.name.replace("__emulated", ""): test for test in result.tests}
    expected = {
        "leaks_a_debug_store_user": "the test left 1 Debug Store users attached",
        "finds_no_debug_store_user": None,
        "leaks_a_counter": "the test left counters in use",
        "finds_no_counter": None,
        "leaks_a_counter_enabled_behind_pmus_back":
            "IA32_PERF_GLOBAL_CTRL expected 0x0 (pmu/ holds no counter), got 0x80",
        "finds_no_counter_enabled": None,
        "leaks_a_task": "the test left 1 tasks running or unjoined",
        "finds_no_task": None,
        "leaks_exception_handlers": "the test left 3 exception handlers replaced",
        "finds_the_exception_handlers_given_back": None,
        "leaks_an_interrupt_depth":
            "interrupt depth 1 after the function returned, 0 before",
        "finds_the_interrupt_depth_zero": None,
        "leaks_a_faster_tick": "the test left the timer at 1000 Hz; it was set back to 250 Hz",
        "finds_the_tick_it_started_with": None,
        "leaks_a_fault_in_a_breakpoint_handler":
            "a #DB handling never ended (an exception in a breakpoint handler); dr/ ended it",
        "finds_breakpoints_firing_and_no_earlier_hit": None,
        "leaks_a_fault_in_a_breakpoint_handler_on_cpu_1":
            "debug state after the test (CPU 1): a #DB handling never ended",
        "finds_breakpoints_firing_on_cpu_1": None,
        "leaks_a_fault_in_a_pmi":
            "LVTPC expected 0x21, got 0x10030 (masked: a PMI that never ended)",
        "finds_lvtpc_unmasked_and_a_pmi_delivered": None,
        "leaks_hooks": "the test left 3 hooks changed (timer 1, PMI 1, task switch 1, "
                       "interrupt 0); they were restored",
        "finds_no_hook_of_the_last_test": None,
    }
    assert list(tests) == list(expected)
    for name, message in expected.items():
        if message:
            assert tests[name].status == "fail", (name, tests[name])
            assert any(message in line for line in tests[name].diagnostics), tests[name]
        else:
            assert tests[name].status == "pass", (name, tests[name])


@pytest.mark.boot
def test_running_off_a_kernel_stack_fails_the_test_and_the_run_goes_on(tmp_path):
    # tests/kernel/overflow_selftest.c: a kernel task's stack, then the runner's own; each guard
    # page turns the overflow into a #DF on its IST stack, reported as that test's failure.
    proc, result = boot(tmp_path, "tests=overflow.*")
    assert proc.returncode == 1, proc.stderr
    assert result.verdict == ktap.FAIL and not result.errors, result.errors
    tests = {test.name: test for test in result.tests}
    assert list(tests) == ["a_kernel_task_running_off_its_stack_fails_the_test",
                           "the_runner_s_stack_running_off_fails_the_test", "the_next_test_runs"]
    overflow = re.compile(r"kernel stack overflow: task \d+ ran off the bottom of its stack "
                          r"\(slot \d+, 0x[0-9a-f]+-0x[0-9a-f]+\) into the guard page at "
                          r"0x[0-9a-f]+, rsp=0x[0-9a-f]+ rip=0xffffffff8[0-9a-f]+")
    for name in list(tests)[:2]:
        assert tests[name].status == "fail", tests[name]
        assert any(overflow.fullmatch(line) for line in tests[name].diagnostics), tests[name]
        assert any(line.startswith("unexpected exception #DF (vector 8)")
                   for line in tests[name].diagnostics), tests[name]
        assert not any("no guard stopped it" in line for line in tests[name].diagnostics)
    assert tests["the_next_test_runs"].status == "pass"


@pytest.mark.boot
def test_a_test_returning_late_with_interrupts_off_times_out(tmp_path):
    proc, result = boot(tmp_path, "tests=overrun.* timeout=200ms")
    assert proc.returncode == 1, proc.stderr
    tests = {test.name: test for test in result.tests}
    late = tests["returning_late_with_interrupts_off_fails_as_timed_out"]
    assert late.status == "fail", late
    assert any("timed out after 200 ms" in line for line in late.diagnostics), late
    assert not any("watchdog" in line for line in late.diagnostics), late
    # No tick can end it: the NMI watchdog does, and the run goes on.
    spinning = tests["never_returning_with_interrupts_off_is_ended_by_the_watchdog"]
    assert spinning.status == "fail", spinning
    assert any("timed out after 200 ms, spinning with interrupts off: ended by the NMI watchdog"
               in line for line in spinning.diagnostics), spinning
    # A private lock the test faulted under goes with it: the watchdog finds no lock held.
    faulted = tests["faulting_under_a_private_lock_fails_alone"]
    assert faulted.status == "fail", faulted
    assert any("unexpected exception #UD (vector 6)" in line for line in faulted.diagnostics), \
        faulted
    private = tests["spinning_under_a_private_lock_is_ended_by_the_watchdog"]
    assert private.status == "fail", private
    assert not any("check failed" in line for line in private.diagnostics), private
    assert any("ended by the NMI watchdog" in line for line in private.diagnostics), private
    assert tests["the_next_test_runs"].status == "pass"
    assert any(line.startswith("watchdog: NMI from the PIT at 20 Hz") for line in
               result.diagnostics), result.diagnostics


@pytest.mark.boot
def test_a_test_spinning_under_a_spinlock_ends_the_run_naming_it(tmp_path):
    proc, result = boot(tmp_path, "tests=overrun_locked.* timeout=200ms")
    assert proc.returncode != 0, proc.stderr
    assert result.verdict == ktap.CRASH, result
    assert result.last_started == "overrun_locked.spinning_under_a_spinlock_ends_the_run", result
    assert re.fullmatch(r"NMI watchdog: the running test spins with interrupts off past its "
                        r"time limit, holding 1 spinlocks, at rip=0x[0-9a-f]+: it cannot be ended",
                        result.bail_out), result


@pytest.mark.boot
def test_a_fault_under_a_kernel_lock_ends_the_run_naming_the_test_and_the_lock(tmp_path):
    proc, result = boot(tmp_path, "tests=fault_locked.*")
    name = "fault_locked.faulting_in_a_switch_hook_ends_the_run_naming_the_lock"
    assert proc.returncode == 4, proc.stderr
    assert result.verdict == ktap.CRASH, result
    assert result.last_started == name, result
    assert re.fullmatch(r"unexpected exception #UD at rip=0x[0-9a-f]+ in test " + re.escape(name)
                        + r" under spinlock sched \(CPU 0\): the kernel's state cannot be "
                        r"unwound", result.bail_out), result


@pytest.mark.boot
def test_a_test_too_long_for_the_emulated_cpus_pace_is_skipped_with_the_numbers(tmp_path):
    # bts.* makes the model step over 1,000 instructions first; at 300 ms the multiplexing test's
    # ~40,000 (TEST_OBSERVING) need far more than a sixth of the limit, the others fit.
    proc, result = boot(tmp_path, "tests=bts.*,pmu.multiplexed*,pmu.instructions* timeout=300ms")
    assert proc.returncode == 0, proc.stderr
    tests = {test.name: test for test in result.tests}
    skipped = tests["multiplexed_estimates_match_the_true_count__emulated"]
    assert skipped.status == "skip", skipped
    assert re.fullmatch(r"the emulated CPU takes \d+ cycles a step here \(\d+ "
                        r"ring-(?:0|3|0\*4) steps of one test\): "
                        r"~40000 instructions need ~\d+ ms, over 1/6 of the 300 ms limit",
                        skipped.skip_reason), skipped
    assert tests["instructions_retired_by_a_known_loop__emulated"].status == "pass"
    assert tests["known_branch_sequence_is_recorded_in_order__emulated"].status == "pass"


@pytest.mark.boot
def test_the_first_paced_test_of_a_boot_is_paced_by_the_runners_probe(tmp_path):
    # No test stepped before the multiplexing test: the runner's probe gives ring 0's pace, and
    # its ~40,000 steps need far more than a sixth of 300 ms (without the probe it ran, and
    # overran the limit).
    proc, result = boot(tmp_path, "tests=pmu.multiplexed* timeout=300ms")
    assert proc.returncode == 0, proc.stderr
    [test] = result.tests
    assert test.status == "skip", test
    assert re.fullmatch(r"the emulated CPU takes \d+ cycles a step here \(\d+ "
                        r"ring-0\*4 steps of a probe\): "
                        r"~40000 instructions need ~\d+ ms, over 1/6 of the 300 ms limit",
                        test.skip_reason), test


@pytest.mark.boot
def test_durations_precede_each_result_with_the_tests_full_name(tmp_path):
    proc, result = boot(tmp_path, "tests=boot.*,arch.timer* durations")
    assert proc.returncode == 0, proc.stderr
    assert result.tests, result
    for test in result.tests:
        lines = [line for line in test.diagnostics if line.startswith("duration ")]
        assert len(lines) == 1, (test.id, test.diagnostics)
        name, microseconds, unit = lines[0].split()[1:]
        assert (name, unit) == (test.id, "us"), lines[0]
        if test.name.startswith("timer_ticks"):  # it times 5 tick intervals at 250 Hz: 20 ms
            assert int(microseconds) >= 20000 * 80 // 100, lines[0]
