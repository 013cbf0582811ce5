"""The kernel's own verdicts, one pytest case per KTAP test, and the log's integrity.

conftest.py parametrizes these per platform at collection; see its docstring.
"""

import warnings

import pytest

from switchyard import alone
from switchyard import log as ktap


def test_ktap(platform, ktap_test):
    """PLATFORM-suite.test: passes, skips with the kernel's reason, or fails with its
    diagnostics. A known defect of the platform (XFAIL) fails, under a strict xfail mark
    (conftest.py); one that did not occur (XPASS) passes under that mark, which fails it.
    A test run alone is judged from its own boot's log, which the message names."""
    if ktap_test is None:
        pytest.fail(platform.failure, pytrace=False)
    if ktap_test.status == "skip":
        pytest.skip(ktap_test.skip_reason)
    if ktap_test.status in ("fail", "xfail"):
        log_path = (ktap_test.log_path if isinstance(ktap_test, alone.SoloTest)
                    else platform.log_path)
        pytest.fail(f"not ok {ktap_test.id} ({log_path} line {ktap_test.line}):\n"
                    + "\n".join(ktap_test.diagnostics), pytrace=False)


def test_log_is_complete_and_verified(platform):
    """Well-formed KTAP, plans matching, final line present and CRC and line count correct.
    What the checker found odd but harmless (firmware text before the kernel's first line) is
    a pytest warning."""
    if platform.failure:
        pytest.fail(platform.failure, pytrace=False)
    result = platform.result
    for warning in result.warnings:
        warnings.warn(f"{platform.log_path}: {warning}", UserWarning)
    problems = list(result.errors)
    if not problems and result.bail_out is not None:
        problems.append(f"Bail out! {result.bail_out}")
    if problems:
        pytest.fail("\n".join(problems) + "\n" + platform.tail(), pytrace=False)


def test_exit_status_agrees_with_log(platform):
    """QEMU's isa-debug-exit status is the one the log's verdict implies."""
    if platform.failure:
        pytest.fail(platform.failure, pytrace=False)
    if platform.status is None:
        pytest.skip("a recorded log has no QEMU exit status")
    disagreement = ktap.status_disagreement(platform.result, platform.status)
    if disagreement:
        pytest.fail(disagreement + "\n" + platform.tail(), pytrace=False)
