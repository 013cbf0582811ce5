"""Check switchyard's LAVA job templates offline, and their monitors against a serial log.

  scripts/lava-check deploy/lava/*.yaml [--log build/logs/tcg.log]

LAVA names a monitor's results DEFINITION/CASE: the definition is the monitor's name, the case
the pattern's test_case_id, lower-cased with each run of non-word characters made "_". The
templates have one monitor per KTAP suite, named switchyard.SUITE, so switchyard's test
SUITE.TEST reaches LAVA as switchyard.SUITE/TEST (and TEST__emulated stays TEST__emulated).

For each job: lava-common's schema (strict); every monitor regex compiles; monitor names are
unique; no start or end string occurs in a boot command LAVA types (they echo back on the serial
line); the kernel options hold ds=hardware; and the monitors are switchyard.SUITE for exactly the
suites the kernel's tests= selects (read from tests/kernel/*.c), in the kernel's order.
With --log: each start and end string occurs exactly once in the log, and reading the log as
LAVA does (each monitor in turn, its start after the previous monitor's end, then the earliest
of its end and its pattern, as pexpect searches) turns every KTAP test of the log into exactly
one case switchyard.SUITE/TEST, carrying __emulated when the test does, with the status
scripts/switchyard/log.py gives it, and nothing else into a case. Exit 0 when all hold, else 1.
Needs lava-common (Debian).
"""

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

import yaml

from switchyard import log as ktap

ROOT = Path(__file__).resolve().parents[2]
KERNEL_TESTS = ROOT / "tests" / "kernel"
# LAVA fills these in the commands it types; sample values for the checks.
PLACEHOLDERS = {"{SERVER_IP}": "192.168.0.2", "{KERNEL}": "1234/tftp-deploy-x/kernel/switchyard.elf"}
LAVA_RESULTS = {"pass", "fail", "skip", "unknown"}
# A known defect of the platform that occurred (XFAIL) is no verdict on the machine: skip.
KTAP_TO_LAVA = {"pass": "pass", "fail": "fail", "skip": "skip", "xfail": "skip", "xpass": "fail"}
MONITOR_PREFIX = "switchyard."
EMULATED = "__emulated"
# TEST(suite, name), TEST_FLAGS(suite, name, flags) and TEST_OBSERVING[_USER](suite, name, count) in
# runner/test.h (only TEST_FLAGS's third argument can hold TEST_MANUAL).
TEST_MACRO = re.compile(r"^TEST(?:_FLAGS|_OBSERVING(?:_USER)?)?\((\w+),\s*(\w+)(?:,\s*([^)]*))?\)",
                        re.MULTILINE)


def monitors(job):
    return [m for action in job["actions"] for m in action.get("test", {}).get("monitors", [])]


def definition(monitor):
    """The LAVA test definition (suite) a monitor's results land in."""
    return monitor["name"].replace(" ", "-").lower()


def lava_case(test_case_id):
    """The case name LAVA makes of a pattern's test_case_id."""
    return re.sub(r"\W+", "_", test_case_id.strip().lower())


def boot_commands(job):
    commands = []
    for action in job["actions"]:
        listed = action.get("boot", {}).get("commands", [])
        for command in [listed] if isinstance(listed, str) else listed:
            for name, value in PLACEHOLDERS.items():
                command = command.replace(name, value)
            commands.append(command)
    return commands


def kernel_options(job):
    """The options after the kernel image in each boot command that loads it."""
    kernel = PLACEHOLDERS["{KERNEL}"]
    options = []
    for command in boot_commands(job):
        words = command.split()
        at = next((i for i, word in enumerate(words) if kernel in word), None)
        if at is not None:
            options.append(words[at + 1:])
    return options


def glob_match(glob, name):
    """lib/glob.c: '*' and '?' only, every other character literal."""
    return re.fullmatch("".join(".*" if c == "*" else "." if c == "?" else re.escape(c)
                                for c in glob), name, re.DOTALL) is not None


def selected_suites(options):
    """The suites the kernel prints for these options, in its order (runner/runner.c: a manual
    test needs a glob that spells out its suite; the linker sorts suites by name)."""
    tests = []
    for source in sorted(KERNEL_TESTS.glob("*.c")):
        for suite, name, flags in TEST_MACRO.findall(source.read_text()):
            tests.append((suite, name, "TEST_MANUAL" in (flags or "")))
    globs = [o[len("tests="):] for o in options if o.startswith("tests=")]
    globs = globs[-1].split(",") if globs and globs[-1] else []
    suites = set()
    for suite, name, manual in tests:
        if not globs:
            chosen = not manual
        else:
            chosen = any(glob_match(g, f"{suite}.{name}")
                         and (not manual or g.startswith(suite + ".")) for g in globs)
        if chosen:
            suites.add(suite)
    return sorted(suites)


def check_job(job):
    """Problems of one job without a log, as strings."""
    from lava_common.schemas import validate  # lava-common

    problems = []
    try:
        validate(job, strict=True)
    except Exception as error:  # voluptuous.Invalid and its kin
        problems.append(f"schema: {error}")
    if not monitors(job):
        problems.append("no monitors test action")
    for monitor in monitors(job):
        for key in ("start", "end", "pattern"):
            try:
                re.compile(monitor[key])
            except re.error as error:
                problems.append(f"monitor {monitor['name']}: {key} is not a regex: {error}")
                return problems
        for command in boot_commands(job):
            # Echoed as a line of its own, ended by the terminal's line ending.
            echoed = f"\r\n{command}\r\n"
            for key in ("start", "end"):
                if re.search(monitor[key], echoed):
                    problems.append(f"monitor {monitor['name']}: {key} {monitor[key]!r} occurs "
                                    f"in the boot command {command!r}, which LAVA echoes")
    names = Counter(definition(m) for m in monitors(job))
    for name, count in names.items():
        if count > 1:
            problems.append(f"monitor {name}: {count} monitors share the name, so their "
                            "results would land in one LAVA definition")
    options = kernel_options(job)
    if not options:
        problems.append("no boot command loads {KERNEL}")
    # A lab's dashboard must not show a model's results as its machine's (docs/emulated-cpu.md).
    for words in options:
        if "ds=hardware" not in words:
            problems.append("the kernel command line lacks ds=hardware: on a machine without a "
                            "Debug Store the emulated CPU would run")
    if options and KERNEL_TESTS.is_dir():
        wanted = [MONITOR_PREFIX + s for s in selected_suites(options[0])]
        have = [definition(m) for m in monitors(job)]
        if have != wanted:
            problems.append(f"the monitors are {have}, but the kernel's "
                            f"{' '.join(options[0]) or 'default'} prints the suites {wanted}, "
                            "one monitor switchyard.SUITE each, in this order (a monitor whose "
                            "suite never starts waits for the action's timeout)")
    return problems


def lava_results(job, text):
    """([(definition, case, result)], problems) that LAVA's monitors read from serial text: each
    monitor waits for its start string after the previous monitor stopped, then takes the
    earliest match of its end string or its pattern (end first on a tie), as pexpect searches,
    until its end string."""
    results, problems, position = [], [], 0
    for monitor in monitors(job):
        start = re.compile(monitor["start"], re.DOTALL).search(text, position)
        if start is None:
            problems.append(f"monitor {monitor['name']}: its start string does not follow the "
                            "previous monitor's end: LAVA would wait for it until the timeout")
            continue
        end_re = re.compile(monitor["end"], re.DOTALL)
        pattern = re.compile(monitor["pattern"], re.DOTALL)
        fixup = monitor.get("fixupdict", {})
        position = start.end()
        while True:
            end = end_re.search(text, position)
            match = pattern.search(text, position)
            if end is not None and (match is None or end.start() <= match.start()):
                position = end.end()
                break
            if match is None:
                problems.append(f"monitor {monitor['name']}: no end string after its start: "
                                "LAVA would wait for it until the timeout")
                return results, problems
            found = match.groupdict()
            result = fixup.get(found["result"], found["result"])
            results.append((definition(monitor), lava_case(found["test_case_id"]), result))
            position = match.end()
    return results, problems


def check_log(job, raw):
    """Problems of a job's monitors against one serial log, as strings."""
    problems = []
    text = raw.decode("utf-8", "surrogateescape")
    for monitor in monitors(job):
        counts = {key: len(re.findall(monitor[key], text, re.DOTALL)) for key in ("start", "end")}
        if not any(counts.values()):
            problems.append(f"monitor {monitor['name']}: its suite is not in the log, so LAVA "
                            "would wait for its start until the timeout")
            continue
        for key, count in counts.items():
            if count != 1:
                problems.append(f"monitor {monitor['name']}: {key} occurs {count} times in the "
                                "log, LAVA needs exactly one")
    if problems:
        return problems
    results, problems = lava_results(job, text)
    unknown = [r for r in results if r[2] not in LAVA_RESULTS]
    if unknown:
        problems.append(f"results outside {sorted(LAVA_RESULTS)}: {unknown[:3]}")
    cases = Counter((d, c) for d, c, _ in results)
    twice = [f"{d}/{c}" for (d, c), n in cases.items() if n > 1]
    if twice:
        problems.append(f"cases read more than once (LAVA keeps one): {twice[:3]}")
    tests = ktap.check_log(raw).tests
    read = {(d, c): r for d, c, r in results}
    expected = {(MONITOR_PREFIX + t.suite.lower(), lava_case(t.name)) for t in tests}
    stray = [case for case in read if case not in expected]
    for test in tests:
        case = (MONITOR_PREFIX + test.suite.lower(), lava_case(test.name))
        name = "/".join(case)
        if case in read:
            if read[case] != KTAP_TO_LAVA[test.status]:
                problems.append(f"{test.id}: LAVA case {name} is {read[case]}, the log says "
                                f"{test.status}")
            continue
        # Read, but under a name without its suite, or with __emulated lost or gained.
        bare = case[1].removesuffix(EMULATED)
        near = sorted((d != case[0], f"{d}/{c}") for d, c in stray if c in (bare, bare + EMULATED))
        if near:
            problems.append(f"{test.id}: LAVA names it {near[0][1]}, not {name}")
        else:
            problems.append(f"{test.id}: no LAVA case {name}")
    if stray:
        problems.append("cases that are no test of the log: "
                        + ", ".join(f"{d}/{c}" for d, c in stray[:3]))
    return problems


def main(argv):
    parser = argparse.ArgumentParser(prog="scripts/lava-check", description=__doc__.split("\n")[0])
    parser.add_argument("jobs", nargs="+", type=Path, help="LAVA job YAML files")
    parser.add_argument("--log", type=Path, help="a raw switchyard serial log to read")
    args = parser.parse_args(argv)
    raw = args.log.read_bytes() if args.log else None
    failed = False
    for path in args.jobs:
        job = yaml.safe_load(path.read_text())
        problems = check_job(job) + (check_log(job, raw) if raw is not None else [])
        for problem in problems:
            print(f"{path}: {problem}", file=sys.stderr)
        if not problems:
            print(f"{path}: ok" + (f" ({len(ktap.check_log(raw).tests)} tests read from "
                                   f"{args.log} as LAVA cases switchyard.SUITE/TEST)"
                                   if raw is not None else ""))
        failed |= bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
