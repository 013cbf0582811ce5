"""Fuzz what reads untrusted input: the log checker, the kernel's command line, and its API.

Logs: a passing log is damaged at random (bytes flipped, lines dropped, duplicated, swapped,
inserted, cut, a second final line); the checker must never pass a log whose text changed.
Command lines: `list` plus valid options, and sometimes one invalid word; the kernel must end
with status 0 for a valid line and 3 (usage) for an invalid one, with a complete log, and never
hang or crash. Kernel API: the kernel's own fuzz suite (tests/kernel/fuzz_api.c) calls the entry
points of dr/, ds/ and pmu/ with arguments drawn from the seed and checks each result against a
model; the boot must pass. Prints the seed, how many inputs it tried and how many were wrongly
accepted (or wrongly judged, or failed); exits 1 if any were, with a command that replays it.
"""

import argparse
import random
import re
import subprocess
import sys
import time
from pathlib import Path

from switchyard import log as ktap

ROOT = Path(__file__).resolve().parents[2]

BODY = """\
KTAP version 1
# switchyard 0.1 (x86-64)
1..1
    KTAP version 1
    # Subtest: arch
    1..2
    # running arch.rdmsr_reads_efer
    ok 1 rdmsr_reads_efer
    # running arch.fault_is_isolated
    # diagnostics before the next result
    ok 2 fault_is_isolated
ok 1 arch
# totals: pass=2 fail=0 skip=0 xfail=0 xpass=0
"""

VALID_WORDS = ["seed=1", "seed=0x10", "timeout=5", "timeout=500ms", "tests=arch.*",
               "tests=boot.*,dr.*", "dr.lazy=0", "dr.lazy=1", "sched.slice=20ms", "ds=hardware",
               "ds=emulate", "emulate=cpu:core2", "emulate=cpu:icelake,bts:0", "budget=soak",
               "smp.cpus=1"]
INVALID_WORDS = ["bogus", "seed=", "seed=-1", "timeout=0", "timeout=1h", "tests=", "tests=a b",
                 "tests=nosuch.*", "dr.lazy=2", "ds=maybe", "emulate=cpu:nosuch",
                 "emulate=gp:99", "console=0xf4", "console=ttyS0,1", "console=ttyS9",
                 "\x1b[31mred", "x" * 300, "seed=1 seed=2", "list=1", "=", "exit=reboot"]


def seal(body):
    lines = body.split("\n")[:-1]
    return body + ktap.final_line(lines) + "\n"


def damage(rng, log):
    """One random damage of a sealed log, as text."""
    lines = log.split("\n")
    kind = rng.randrange(7)
    if kind == 0 and log:
        at = rng.randrange(len(log))
        return log[:at] + chr((ord(log[at]) ^ (1 << rng.randrange(7))) or 1) + log[at + 1:]
    if kind == 1 and len(lines) > 2:
        del lines[rng.randrange(len(lines) - 1)]
    elif kind == 2:
        at = rng.randrange(len(lines))
        lines.insert(at, lines[at])
    elif kind == 3 and len(lines) > 2:
        a, b = rng.randrange(len(lines) - 1), rng.randrange(len(lines) - 1)
        lines[a], lines[b] = lines[b], lines[a]
    elif kind == 4:
        lines.insert(rng.randrange(len(lines)), rng.choice(["ok 9 x", "not ok 3 y", "# z",
                                                           "Bail out!", "1..7", "    ok 3 w"]))
    elif kind == 5:
        return log[:rng.randrange(len(log))]
    else:
        return seal(log)  # a second final line over the first
    return "\n".join(lines)


def from_ktap(raw):
    """What a reader judges: the cleaned text from the first 'KTAP version 1' on (firmware and
    loader output before it is ignored by design)."""
    text = ktap.clean(raw).rstrip("\n")  # the last line's newline carries nothing
    at = text.find(ktap.VERSION)
    return text if at < 0 else text[at:]


def fuzz_logs(rng, deadline, limit):
    log = seal(BODY)
    original = from_ktap(log.encode())
    undamaged = ktap.check_log(log.encode())
    if undamaged.verdict != ktap.PASS:  # else every damaged log is rejected for nothing
        raise SystemExit(f"fuzz: the undamaged log is {undamaged.verdict}: {undamaged.errors}")
    tried = wrong = 0
    while time.monotonic() < deadline and tried < limit:
        damaged = damage(rng, log)
        tried += 1
        if from_ktap(damaged.encode()) == original:
            continue  # no change a reader could see
        if ktap.check_log(damaged.encode()).verdict == ktap.PASS:
            wrong += 1
            print(f"fuzz: log wrongly accepted:\n{damaged}", file=sys.stderr)
    return tried, wrong


def random_cmdline(rng):
    """(a command line, whether it is invalid): `list`, up to two valid words naming different
    options (one option twice is a usage error), and sometimes one invalid word."""
    words = ["list"]
    for word in rng.sample(VALID_WORDS, rng.randrange(3)):
        if word.split("=", 1)[0] not in {w.split("=", 1)[0] for w in words}:
            words.append(word)
    invalid = rng.random() < 0.6
    if invalid:
        words.insert(rng.randrange(len(words) + 1), rng.choice(INVALID_WORDS))
    return " ".join(words), invalid


def fuzz_cmdlines(rng, deadline, limit, kernel):
    tried = wrong = 0
    while time.monotonic() < deadline and tried < limit:
        cmdline, invalid = random_cmdline(rng)
        proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "run"), "--kernel",
                               str(kernel), "--accel", "tcg", "--quiet", "--timeout", "30",
                               "--cmdline", cmdline], capture_output=True, timeout=90)
        tried += 1
        expected = 3 if invalid else 0
        if proc.returncode != expected:
            wrong += 1
            print(f"fuzz: {cmdline!r}: status {proc.returncode}, expected {expected}",
                  file=sys.stderr)
    return tried, wrong


def fuzz_kernel_api(seed, kernel, soak):
    """One boot of the fuzz suite under TCG on 2 CPUs (its calls from CPU 0, then from CPU 1):
    (operations, accepted, failures, replay), summed over both."""
    cmdline = f"tests=fuzz.* seed={seed}" + (" budget=soak timeout=120" if soak else "")
    replay = f"scripts/run --accel tcg --smp 2 --cmdline '{cmdline}'"
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "run"), "--kernel", str(kernel),
                           "--accel", "tcg", "--smp", "2", "--timeout", "600" if soak else "120",
                           "--cmdline", cmdline], capture_output=True, text=True,
                          timeout=700 if soak else 200)
    runs = re.findall(r"fuzz: seed=\d+, CPU \d+, (\d+) operations .*?, (\d+) accepted, "
                      r"(\d+) failed", proc.stdout)
    ops, accepted, failed = (sum(int(run[i]) for run in runs) for i in range(3))
    if proc.returncode != 0 or not runs:
        sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-2000:])
        failed = max(failed, 1)
    return ops, accepted, failed, replay


def main(argv):
    parser = argparse.ArgumentParser(prog="scripts/fuzz", description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: time)")
    parser.add_argument("--seconds", type=float, default=20, help="time budget per kind")
    parser.add_argument("--logs", type=int, default=5000, help="at most this many logs")
    parser.add_argument("--cmdlines", type=int, default=30, help="at most this many boots")
    parser.add_argument("--kernel", type=Path, default=ROOT / "build" / "switchyard32.elf")
    parser.add_argument("--kernel-api", choices=["quick", "soak", "off"], default="quick",
                        help="the kernel-API fuzz boot: quick (2 x 3,000 calls), soak (2 x 200,000), "
                        "off")
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.logs < 0 or args.cmdlines < 0:
        parser.error("--seconds must be positive, --logs and --cmdlines not negative")
    seed = args.seed if args.seed is not None else time.time_ns() % 2**32
    rng = random.Random(seed)
    print(f"fuzz: seed={seed}")
    tried, wrong = fuzz_logs(rng, time.monotonic() + args.seconds, args.logs)
    print(f"fuzz: logs: {tried} tried, {wrong} wrongly accepted")
    failed = wrong
    if args.cmdlines:
        if not args.kernel.is_file():
            parser.error(f"kernel image {args.kernel} not found: run make")
        tried, wrong = fuzz_cmdlines(rng, time.monotonic() + args.seconds, args.cmdlines,
                                     args.kernel)
        print(f"fuzz: command lines: {tried} tried, {wrong} wrongly judged")
        failed += wrong
    if args.kernel_api != "off":
        if not args.kernel.is_file():
            parser.error(f"kernel image {args.kernel} not found: run make")
        ops, accepted, wrong, replay = fuzz_kernel_api(seed % 2**63, args.kernel,
                                                       args.kernel_api == "soak")
        print(f"fuzz: kernel API: {ops} calls, {accepted} accepted, {wrong} failed"
              + (f"; replay: {replay}" if wrong else ""))
        failed += wrong
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
