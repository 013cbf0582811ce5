"""Boot switchyard with long budgets (budget=soak) once per seed and accelerator; report each.

  scripts/soak [--seeds 5 | --seed N ...] [--accel tcg --accel kvm] [--budget soak|quick]
               [--smp 2] [--cmdline "tests=dr.*"] [--timeout 900] [--out build/soak]

Each boot gets `budget=soak seed=N timeout=TEST_TIMEOUT` and the extra --cmdline options: the
stress tests run long (dr.stress a million operations, the smp stress 30 s) and the
benchmarks take their full sample counts, each within half the per-test time limit. Without
--seed, the seeds are drawn at random; each is printed with its verdict and the command that
replays it, and every raw log is kept as OUT/ACCEL-seed-N.log. The default is tcg, plus kvm
when /dev/kvm is usable (else skipped with the reason).

Exit status: 0 every boot passed; otherwise that of the first boot that did not, as scripts/run
has them (1 a test failed, 3 the kernel rejected its command line, 4 crash, 124 time limit);
2 bad arguments.
"""

import argparse
import secrets
import shlex
import sys
from pathlib import Path

from switchyard import arguments
from switchyard import log as ktap
from switchyard import qemu

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = ROOT / "build" / "soak"
BUDGETS = ("soak", "quick")
SEEDS = 5
SEED_MAX = 2**64 - 1  # the kernel's seed= takes any 64-bit number
# The per-test limit (kernel option timeout=) for a soak: the budgets take at most half of it.
TEST_TIMEOUT = 120
FAILED = ("fail", "xpass")  # switchyard.log: the statuses that fail a run
BAD_ARGUMENTS, TIMED_OUT = 2, 124
OWN_OPTIONS = ("budget=", "seed=", "timeout=")


def say(message):
    print(f"soak: {message}", file=sys.stderr, flush=True)


def seed_value(text):
    """argparse type: a seed as the kernel takes it, decimal or 0x hex."""
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 <= value <= SEED_MAX:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 2^64-1")
    return value


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="scripts/soak", description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=SEEDS,
                        help="boots per accelerator, each with a random seed (default: "
                        "%(default)s)")
    parser.add_argument("--seed", type=seed_value, action="append",
                        help="boot with this seed (repeatable; replaces --seeds)")
    arguments.add_accels(parser)
    parser.add_argument("--budget", choices=BUDGETS, default="soak",
                        help="the kernel's budget= (default: %(default)s; quick for a short "
                        "check of this script)")
    arguments.add_smp(parser, 2, "CPUs per boot (default: %(default)s)")
    arguments.add_cmdline(parser, "more kernel options, e.g. \"tests=dr.*,smp.*\" (not budget=, "
                          "seed= or timeout=: soak sets those)")
    parser.add_argument("--test-timeout", type=int, default=TEST_TIMEOUT,
                        help="the kernel's per-test time limit in seconds (default: "
                        "%(default)s)")
    arguments.add_timeout(parser, 900.0,
                          "seconds per boot before QEMU is killed (default: %(default)g)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help="directory for the raw logs (default: build/soak)")
    arguments.add_kernel(parser)
    arguments.add_qemu(parser)
    args = parser.parse_args(argv)
    if args.seed is None and args.seeds < 1:
        parser.error(f"--seeds must be at least 1, not {args.seeds}")
    if not 1 <= args.test_timeout <= 600:
        parser.error(f"--test-timeout must be 1 to 600 seconds, not {args.test_timeout}")
    for word in args.cmdline.split():
        if word.startswith(OWN_OPTIONS):
            parser.error(f"--cmdline: {word!r}: soak sets budget=, seed= and timeout= itself "
                         "(--budget, --seed, --test-timeout)")
    arguments.check(parser, args)
    args.explicit = bool(args.accel)
    args.accel = arguments.accels(args)
    args.seed = list(dict.fromkeys(args.seed)) if args.seed else [
        secrets.randbelow(2**32) for _ in range(args.seeds)]
    return args


def kernel_cmdline(args, seed):
    return " ".join(part for part in [f"budget={args.budget}", f"seed={seed}",
                                      f"timeout={args.test_timeout}", args.cmdline] if part)


def log_seed(result):
    """The seed the kernel says it used ("# seed=N"), or None."""
    for line in result.diagnostics:
        if line.startswith("seed="):
            return int(line[len("seed="):].split()[0])
    return None


def judge(boot, seed, timeout):
    """(status, verdict, details) of one boot: the status scripts/run would exit with, a
    one-line verdict, and the lines that say which tests failed and why."""
    if boot.timed_out:
        lines = len(ktap.clean(boot.raw).splitlines())
        return TIMED_OUT, f"TIMEOUT after {timeout:g} s ({lines} lines of log)", []
    result = ktap.check_log(boot.raw, qemu_status=boot.status)
    if result.verdict == ktap.USAGE:
        return (ktap.RUN_STATUS[ktap.USAGE],
                f"USAGE: the kernel rejected its command line: {result.usage_error}", [])
    if result.verdict == ktap.CRASH:
        reasons = result.errors or [f"Bail out! {result.bail_out}"]
        return ktap.RUN_STATUS[ktap.CRASH], "CRASH: " + "; ".join(reasons[:3]), []
    if log_seed(result) != seed:
        return (ktap.RUN_STATUS[ktap.CRASH],
                f"CRASH: the log says seed={log_seed(result)}, not {seed}", [])
    failed = [test for test in result.tests if test.status in FAILED]
    verdict = (f"{result.verdict} {result.count('pass')} passed, {len(failed)} failed, "
               f"{result.count('skip')} skipped")
    if result.count("xfail"):
        verdict += f", {result.count('xfail')} known defects"
    details = []
    for test in failed:
        details.append(f"  not ok {test.id} (log line {test.line})")
        details += [f"      {line}" for line in test.diagnostics]
    return ktap.RUN_STATUS[result.verdict], verdict, details


def soak_one(args, accel, seed):
    """Boot once; return the exit status, or None when KVM is skipped."""
    cmdline = kernel_cmdline(args, seed)
    argv = qemu.qemu_command(args.kernel, accel, machine=args.machine, cmdline=cmdline,
                             smp=args.smp, qemu=args.qemu)
    boot = qemu.boot(argv, args.timeout)
    log = args.out / f"{accel}-seed-{seed}.log"
    log.write_bytes(boot.raw)
    qemu_failed = boot.status is not None and (boot.status == 1 or boot.status < 0)
    if accel == "kvm" and not args.explicit and qemu_failed and not boot.raw:
        say(f"kvm: skipped: KVM unusable: QEMU exited {boot.status}: {boot.stderr.strip()}")
        return None
    if boot.stderr.strip():
        sys.stderr.write(boot.stderr)
    status, verdict, details = judge(boot, seed, args.timeout)
    say(f"{accel} seed={seed} {verdict} ({boot.seconds:.1f} s)")
    for line in details:
        say(line)
    if status:
        extra = f" --cmdline {shlex.quote(cmdline)}"
        say(f"{accel} seed={seed}: log {log}; replay: scripts/run --accel {accel} "
            f"--smp {args.smp} --timeout {args.timeout:g}{extra}")
    return status


def main(argv):
    args = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    results = []  # (accel, seed, status)
    for accel in args.accel:
        if accel == "kvm" and not args.explicit and qemu.kvm_unusable_reason():
            say(f"kvm: skipped: KVM unusable: {qemu.kvm_unusable_reason()}")
            continue
        say(f"{accel}: {len(args.seed)} boots of {args.smp} CPUs with "
            f"'{kernel_cmdline(args, 'N')}', seeds {', '.join(map(str, args.seed))}")
        for seed in args.seed:
            status = soak_one(args, accel, seed)
            if status is None:
                break
            results.append((accel, seed, status))
    if not results:
        say("error: no accelerator could run")
        return BAD_ARGUMENTS
    bad = [(accel, seed, status) for accel, seed, status in results if status]
    say(f"{len(results) - len(bad)} of {len(results)} boots passed"
        + (": failed " + ", ".join(f"{accel} seed={seed}" for accel, seed, _ in bad)
           if bad else ""))
    return bad[0][2] if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
