"""Tests that end the boot on a platform: each runs alone, in a boot of its own, and is judged.

The kernel skips such a test in a normal boot ("ok N name # SKIP runs alone: REASON") and runs
it only under `tests=SUITE.TEST alone` (docs/output.md, "Tests that run alone"). scripts/run
and tests/conftest.py both call `run_solos()` after a boot whose log is complete, with a boot
function of their own, and report `merge()`'s results in place of those SKIPs. Judging is pure:
`judge()` takes the SKIP, the solo boot and its limit, and returns the test's result.
"""

import dataclasses
import os
from pathlib import Path

from switchyard import log as ktap
from switchyard.qemu import merge_cmdline

PREFIX = "runs alone: "  # the SKIP reason's prefix: the contract with the kernel
ALONE = "alone"  # the kernel option that runs such a test (a flag: runner/options.c)
EMULATED_SUFFIX = "__emulated"  # a result name's suffix; "# running" and tests= never carry it
DEFAULT_TIMEOUT = 60.0
TAIL_LINES = 20


@dataclasses.dataclass
class SoloTest(ktap.KtapTest):
    """A runs-alone test's result, judged from its solo boot. suite and name are the main log's,
    so the test keeps its id; line is a line of log_path, the solo boot's log."""

    log_path: Path = None


def timeout_from_environment(environ=os.environ):
    """The solo boot's limit in seconds: SWITCHYARD_ALONE_TIMEOUT, else 60. Raises ValueError
    for a value that is not a positive number."""
    timeout = float(environ.get("SWITCHYARD_ALONE_TIMEOUT", DEFAULT_TIMEOUT))
    if not timeout > 0:  # also rejects nan
        raise ValueError(f"SWITCHYARD_ALONE_TIMEOUT must be a positive number, not {timeout:g}")
    return timeout


def runs_alone(result):
    """The tests of a judged log that the kernel skipped to be run alone."""
    return [t for t in result.tests if t.status == "skip" and t.skip_reason.startswith(PREFIX)]


def registered_name(test):
    """"suite.test" as registered and as tests= and "# running" name it: no "__emulated"."""
    name = test.name[:-len(EMULATED_SUFFIX)] if test.name.endswith(EMULATED_SUFFIX) else test.name
    return f"{test.suite}.{name}"


def solo_cmdline(cmdline, test):
    """The boot's own kernel options, with tests= replaced by the one test, and ALONE."""
    return merge_cmdline(cmdline, f"tests={registered_name(test)} {ALONE}")


def run_solos(result, cmdline, boot, log_path, timeout):
    """Boot each runs-alone test of `result` alone and judge it; return {test id: SoloTest}.
    boot(cmdline, timeout) runs the kernel as the first boot ran it and returns a
    switchyard.qemu.Boot; log_path(name) is where the solo log of "suite.test" is written."""
    solos = {}
    for skipped in runs_alone(result):
        name = registered_name(skipped)
        solo = boot(solo_cmdline(cmdline, skipped), timeout)
        path = Path(log_path(name))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(solo.raw)
        solos[skipped.id] = judge(skipped, solo, timeout, path)
    return solos


def merge(tests, solos):
    """tests, each runs-alone SKIP replaced by its solo result."""
    return [solos.get(test.id, test) for test in tests]


def merged_result(result, solos):
    """A copy of `result` whose tests are merged with solos; a solo failure fails a PASS."""
    merged = dataclasses.replace(result, tests=merge(result.tests, solos))
    if merged.verdict == ktap.PASS and merged.failed:
        merged.verdict = ktap.FAIL
    return merged


def judge(skipped, boot, timeout, log_path):
    """The result of `skipped` (the main log's SKIP) from its solo boot `boot`, killed after
    `timeout` s when boot.timed_out, logged in log_path:
    - a complete, verified log with exactly this test: the test's own result there (an XPASS
      means the expected end did not come; strict, so a failure);
    - no final line, nothing else wrong, and the log stops in this very test: XFAIL, with the
      SKIP's reason and how the boot ended;
    - anything else: a failure saying what happened, with the tail of the log."""
    name = registered_name(skipped)
    result = ktap.check_log(boot.raw)  # the status is judged below, for a complete log only
    ended = (f"the guest hung: killed after {timeout:g} s" if boot.timed_out
             else f"QEMU stopped the guest ({boot.stopped}): killed" if boot.stopped
             else f"QEMU exited with status {boot.status}, no final line")

    def solo(status, line, reason, diagnostics):
        return SoloTest(skipped.suite, skipped.name, status, line,
                        reason if status == "skip" else "", diagnostics, reason, log_path)

    def failure(what):
        lines = result.lines or ktap.clean(boot.raw).splitlines()
        tail = lines[-TAIL_LINES:]
        return solo("fail", len(lines), "", [f"ran alone ({log_path}): {what}",
                                             f"last {len(tail)} lines of {log_path}:", *tail])

    if result.truncated:
        if result.damage:
            return failure(f"{ended}, and the log is damaged: {'; '.join(result.damage)}")
        if result.running != name:
            return failure(f"{ended} {_where_it_stopped(result, name)}")
        reason = skipped.skip_reason[len(PREFIX):]
        return solo("xfail", len(result.lines), f"{reason} ({ended})",
                    [f"ran alone ({log_path}): {ended} while running {name}, as the known "
                     "defect predicts"])
    if boot.timed_out:
        return failure(f"QEMU was killed after {timeout:g} s, after the log's final line")
    if result.errors:
        return failure("; ".join(result.errors))
    if ktap.status_disagreement(result, boot.status):
        return failure(ktap.status_disagreement(result, boot.status))
    if result.usage_error is not None:
        return failure(f"the kernel rejected its command line: {result.usage_error}")
    if result.bail_out is not None:
        return failure(f"Bail out! {result.bail_out}")
    ran = [t.id for t in result.tests]
    mine = [t for t in result.tests if registered_name(t) == name]
    if len(ran) != 1 or not mine:
        return failure(f"the boot reported {ran or 'no test'}, not {name} alone")
    test = mine[0]
    if test.status == "skip" and test.skip_reason.startswith(PREFIX):
        return failure(f"the kernel skipped {name} again under {ALONE}: {test.skip_reason}")
    return solo(test.status, test.line, test.reason,
                [f"ran alone ({log_path}): the test returned", *test.diagnostics])


def _where_it_stopped(result, name):
    """Why a cut log is not the death of test `name`: where it stopped instead."""
    if result.last_started is None:
        return f"before {name} started (no '# running' line)"
    if result.running is None:
        return f"after {result.last_started} reported its result"
    return f"while running {result.running}, not {name}"
