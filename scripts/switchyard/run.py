"""Boot switchyard in QEMU, stream its serial log, verify it, and exit as docs/output.md says.

  scripts/run [--accel kvm|tcg|auto] [--cmdline "tests=arch.*"] [--timeout 60] [--log FILE]
  scripts/run --check-log FILE        judge a recorded log without booting

A test the kernel skips as "runs alone: REASON" is booted again alone (tests=SUITE.TEST alone,
--alone-timeout) and judged from that boot (scripts/switchyard/alone.py); its log is kept beside
--log's as NAME-alone-SUITE.TEST.log, else as build/logs/run-ACCEL-alone-SUITE.TEST.log.

Exit status: 0 pass, 1 a test failed, 2 bad arguments, 3 the kernel rejected its command line,
4 crash (bail out, truncated or corrupted log, QEMU status not matching the log), 124 timeout.
"""

import argparse
import re
import sys
from pathlib import Path

from switchyard import alone, arguments
from switchyard import log as ktap
from switchyard import qemu

ROOT = Path(__file__).resolve().parents[2]
BAD_ARGUMENTS, TIMED_OUT = 2, 124


# Seconds a boot may take: the whole suite under TCG takes seconds, under KVM-PVM about four
# minutes (its ring-0 code runs at ~1,000 cycles an instruction; docs/platforms.md).
DEFAULT_TIMEOUT = {"tcg": 60.0, "kvm": 900.0}


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="scripts/run", description=__doc__.split("\n")[0])
    arguments.add_kernel(parser)
    parser.add_argument("--accel", choices=["kvm", "tcg", "auto"], default="auto",
                        help="auto: kvm if /dev/kvm opens read-write and is not KVM-PVM, "
                        "else tcg")
    parser.add_argument("--cpu", help=f"QEMU -cpu (default: {qemu.CPU['kvm']} with kvm, "
                        f"{qemu.CPU['tcg']} with tcg)")
    arguments.add_cmdline(parser, "kernel options after exit=isa-debug")
    arguments.add_smp(parser, 1, "number of CPUs (default: 1)")
    arguments.add_timeout(parser, None, "seconds before QEMU is killed and run exits 124 (default: "
                          f"{DEFAULT_TIMEOUT['tcg']:g} with tcg, {DEFAULT_TIMEOUT['kvm']:g} with "
                          "kvm: KVM-PVM takes minutes over the suite)")
    parser.add_argument("--alone-timeout", type=float, default=None,
                        help="seconds for the boot of a test run alone (default: "
                        "$SWITCHYARD_ALONE_TIMEOUT, else 60)")
    parser.add_argument("--log", type=Path, help="write the raw serial bytes to this file")
    parser.add_argument("--durations", type=int, default=0, metavar="N",
                        help="boot with the kernel's durations option and list the N slowest "
                        "tests after the summary")
    parser.add_argument("--quiet", action="store_true",
                        help="do not stream the log (a timeout still prints it)")
    arguments.add_qemu(parser)
    parser.add_argument("--check-log", type=Path, metavar="FILE",
                        help="judge a recorded log instead of booting")
    args = parser.parse_args(argv)
    if args.check_log is not None:
        if not args.check_log.is_file():
            parser.error(f"--check-log: no such file: {args.check_log}")
        return args
    if args.alone_timeout is None:
        try:
            args.alone_timeout = alone.timeout_from_environment()
        except ValueError as error:
            parser.error(str(error))
    arguments.positive_seconds(parser, "--alone-timeout", args.alone_timeout)
    if args.durations < 0:
        parser.error(f"--durations must be 0 or more, not {args.durations}")
    arguments.check(parser, args)
    if args.durations:
        args.cmdline = f"{args.cmdline} durations".strip()
    return args


def counts(result):
    """"125 passed, 1 failed, 30 skipped", with xfailed and xpassed when there are any."""
    words = [("pass", "passed"), ("fail", "failed"), ("skip", "skipped"),
             ("xfail", "xfailed (known platform defects)"), ("xpass", "xpassed")]
    return ", ".join(f"{result.count(status)} {word}" for status, word in words
                     if result.count(status) or status in ("pass", "fail", "skip"))


def summary(result):
    """The verdict and its reason, in one line."""
    if result.verdict in (ktap.PASS, ktap.FAIL):
        return f"{result.verdict} {counts(result)}"
    if result.verdict == ktap.USAGE:
        return f"USAGE: the kernel rejected its command line: {result.usage_error}"
    if not result.errors:  # a bail out: in a test when its "# running" line has no result
        running = f", while running {result.running}" if result.running else ""
        return f"CRASH: Bail out! {result.bail_out}{running}"
    more = len(result.errors) - 1
    return f"CRASH: {result.errors[0]}" + (f" (and {more} more above)" if more else "")


def report(result, detail, show_diagnostics, known=None):
    """Print further errors, the known defects, the failed tests (with their diagnostics if
    show_diagnostics) and the summary to stderr; return the exit status. The verdicts are the
    kernel's own: a known defect is "ok ... # XFAIL", one that did not occur "not ok ... #
    XPASS" (a failure), as pytest's strict xfail judges them. known is ignored: the kernel
    carries tests/known-defects.toml."""
    del known
    for warning in result.warnings:
        print(f"switchyard: warning: {warning}", file=sys.stderr)
    for error in result.errors[1:]:
        print(f"switchyard: error: {error}", file=sys.stderr)
    for test in result.tests:
        if test.status == "xfail":
            print(f"switchyard: known defect: {test.id}: {test.reason}", file=sys.stderr)
    for test in result.failed:
        solo = isinstance(test, alone.SoloTest)  # its log was not streamed: always show it
        where = f"{test.log_path} line {test.line}" if solo else f"log line {test.line}"
        if test.status == "xpass":
            print(f"switchyard: XPASS {test.id} ({where}): the known defect did not occur "
                  f"({test.reason}); update tests/known-defects.toml", file=sys.stderr)
        else:
            print(f"switchyard: not ok {test.id} ({where})", file=sys.stderr)
        for line in test.diagnostics if show_diagnostics or solo else []:
            print(f"switchyard:     {line}", file=sys.stderr)
    print(f"switchyard: {summary(result)} ({detail})", file=sys.stderr)
    return ktap.RUN_STATUS[result.verdict]


def check_log_file(path):
    return report(ktap.check_log(path.read_bytes()), str(path), show_diagnostics=True)


def write(text):
    sys.stdout.buffer.write(text.encode("utf-8", "surrogateescape"))
    sys.stdout.buffer.flush()


def run(args):
    accel, why = qemu.resolve_accel(args.accel)
    if why:
        print(f"switchyard: auto: {why}", file=sys.stderr)
    if args.timeout is None:
        args.timeout = DEFAULT_TIMEOUT[accel]
    argv = qemu.qemu_command(args.kernel, accel, cpu=args.cpu, machine=args.machine,
                             cmdline=args.cmdline, smp=args.smp, qemu=args.qemu)
    boot = qemu.boot(argv, args.timeout, on_text=(lambda text: None) if args.quiet else write)
    if args.log is not None:
        args.log.write_bytes(boot.raw)
    sys.stderr.write(boot.stderr)
    if boot.timed_out:
        text = ktap.clean(boot.raw)
        if args.quiet:
            write(text)
        if text and not text.endswith("\n"):
            write("\n")  # end the partial last line
        running = ktap.check_log(boot.raw).running
        print(f"switchyard: TIMEOUT: QEMU killed after {args.timeout:g} s"
              + (f" while running {running}" if running else "")
              + f"; the partial log above has {len(text.splitlines())} lines ({accel})",
              file=sys.stderr)
        return TIMED_OUT
    result = ktap.check_log(boot.raw, qemu_status=boot.status)
    seconds = [boot.seconds]
    if result.verdict in (ktap.PASS, ktap.FAIL) and alone.runs_alone(result):
        result = alone.merged_result(result, run_solos(args, accel, result, seconds))
    status = report(result, f"{accel}, {sum(seconds):.2f} s", show_diagnostics=args.quiet)
    if args.durations:
        print_slowest(ktap.clean(boot.raw), args.durations)
    return status


DURATION = re.compile(r"^\s*# duration (\S+) (\d+) us$")


def print_slowest(text, count):
    """The count slowest tests of the log's "# duration" lines, and their share of all."""
    durations = sorted(((int(match[2]), match[1]) for match in map(DURATION.match,
                        text.splitlines()) if match), reverse=True)
    total = sum(us for us, _ in durations)
    print(f"switchyard: {len(durations)} tests took {total / 1000:.1f} ms; the slowest:",
          file=sys.stderr)
    for us, name in durations[:count]:
        print(f"switchyard:   {us / 1000:9.1f} ms  {name}", file=sys.stderr)


def solo_log_path(args, accel, name):
    """Where the log of test `name` run alone is kept: beside --log's, else in build/logs."""
    if args.log is not None:
        return args.log.with_name(f"{args.log.stem}-alone-{name}{args.log.suffix}")
    return ROOT / "build" / "logs" / f"run-{accel}-alone-{name}.log"


def run_solos(args, accel, result, seconds):
    """Boot each runs-alone test of `result` alone, as the first boot; print each result line
    and return {test id: result}. Each boot's duration is appended to seconds."""

    def boot(cmdline, timeout):
        print(f"switchyard: running alone: {cmdline} (limit {timeout:g} s)", file=sys.stderr)
        argv = qemu.qemu_command(args.kernel, accel, cpu=args.cpu, machine=args.machine,
                                 cmdline=cmdline, smp=args.smp, qemu=args.qemu)
        solo = qemu.boot(argv, timeout)
        sys.stderr.write(solo.stderr)
        seconds.append(solo.seconds)
        return solo
    solos = alone.run_solos(result, args.cmdline, boot,
                            lambda name: solo_log_path(args, accel, name), args.alone_timeout)
    for test in solos.values():
        print(f"switchyard: ran alone: {result_line(test)} ({test.log_path})", file=sys.stderr)
    return solos


def result_line(test):
    """A result as KTAP writes it, with the test's full name: "ok dr.x # XFAIL reason"."""
    word = "not ok" if test.status in ktap.FAILED else "ok"
    directive = {"skip": "SKIP", "xfail": "XFAIL", "xpass": "XPASS"}.get(test.status)
    return f"{word} {test.id}" + (f" # {directive} {test.reason}" if directive else "")


def main(argv):
    args = parse_args(argv)
    return check_log_file(args.check_log) if args.check_log else run(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
