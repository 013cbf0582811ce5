"""make check's pytest processes: the platforms' boots beside the tests that need no boot.

The kernel's verdicts (tests/verdicts/) need the platforms booted at collection, which takes
as long as the longest lane (tests/conftest.py); every other test file needs no such boot. So
two pytest processes run at once: one over tests/verdicts/ (its boots in conftest's lanes),
one over the rest with pytest-xdist. SWITCHYARD_BOOT_RUN gives both one set of boots (a test
elsewhere that asks for a platform waits for the same boot, never boots it again). The second
process streams its output; the first's is printed when both are done. The JUnit XML files of
the two are merged into --junitxml's. The status is 0 when both passed, else the first nonzero
one of (verdicts, others).
"""

import argparse
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from xml.etree import ElementTree

ROOT = Path(__file__).resolve().parents[2]
VERDICTS = "tests/verdicts"
# The other tests run at a lower priority (nice(2)): the boots are the critical path, and the
# kernel's own time limits (a test's 10 s, a wait for a trap) run on the host's clock, so a
# KVM guest starved of its vCPU threads fails them. The others only fill the idle time.
OTHERS_NICE = 10


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="scripts/check", description=__doc__.split("\n")[0])
    parser.add_argument("--workers", type=int, default=2,
                        help="pytest-xdist workers for the tests that need no boot (default 2)")
    parser.add_argument("--junitxml", type=Path, help="merged JUnit XML of both processes")
    parser.add_argument("--python", default=sys.executable, help="the Python that runs pytest")
    args = parser.parse_args(argv)
    if args.workers < 1:
        parser.error(f"--workers {args.workers}: at least 1")
    return args


def commands(args, junit_dir):
    """The two pytest command lines: (verdicts, others)."""
    pytest = [args.python, "-m", "pytest"]
    verdicts = [*pytest, VERDICTS]
    others = [*pytest, "-n", str(args.workers), "--dist", "loadfile", "tests",
              f"--ignore={VERDICTS}"]
    if args.junitxml:
        verdicts.append(f"--junitxml={junit_dir / 'verdicts.xml'}")
        others.append(f"--junitxml={junit_dir / 'others.xml'}")
    return verdicts, others


def merge_junit(parts, target):
    """One <testsuites> document holding every <testsuite> of parts (missing files left out)."""
    merged = ElementTree.Element("testsuites")
    for part in parts:
        if not part.is_file():
            continue
        root = ElementTree.parse(part).getroot()
        merged.extend([root] if root.tag == "testsuite" else list(root))
    target.parent.mkdir(parents=True, exist_ok=True)
    ElementTree.ElementTree(merged).write(target, encoding="utf-8", xml_declaration=True)


def status_of(verdicts, others):
    """The check's exit status from the two processes' statuses."""
    return next((status for status in (verdicts, others) if status != 0), 0)


def start(argv, env, nice=0, **streams):
    return subprocess.Popen(argv, cwd=ROOT, env=env, start_new_session=True,
                            preexec_fn=(lambda: os.nice(nice)) if nice else None, **streams)


def stop(proc):
    """End proc's process group (pytest and what it started), if still running."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=30)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def wait_for_both(procs, began):
    """{name: seconds from began to its exit} once every process of procs has exited."""
    took = {}
    while len(took) < len(procs):
        for name, proc in procs.items():
            if name not in took and proc.poll() is not None:
                took[name] = time.monotonic() - began
        time.sleep(0.1)
    return took


def main(argv):
    args = parse_args(argv)
    run = f"check-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    work = ROOT / "build" / "logs" / "check" / run
    work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "SWITCHYARD_BOOT_RUN": run}
    verdicts_argv, others_argv = commands(args, work)
    began = time.monotonic()
    output = work / "verdicts.out"
    with open(output, "wb") as out:
        procs = {"verdicts": start(verdicts_argv, env, stdout=out, stderr=subprocess.STDOUT)}
        try:
            procs["others"] = start(others_argv, env, nice=OTHERS_NICE)
            took = wait_for_both(procs, began)
        finally:
            for proc in procs.values():
                stop(proc)
    verdicts_status, others_status = procs["verdicts"].returncode, procs["others"].returncode
    sys.stdout.flush()
    sys.stdout.buffer.write(output.read_bytes())
    print(f"check: tests/verdicts exited {verdicts_status} after {took['verdicts']:.1f} s; "
          f"the other tests exited {others_status} after {took['others']:.1f} s")
    if args.junitxml:
        merge_junit([work / "verdicts.xml", work / "others.xml"], args.junitxml)
    shutil.rmtree(ROOT / "build" / "logs" / "boots" / run, ignore_errors=True)
    shutil.rmtree(work, ignore_errors=True)
    return status_of(verdicts_status, others_status)
