"""Boot switchyard's benchmarks (tests=*.benchmark_*) once per accelerator, record the metrics.

  scripts/bench [--accel tcg --accel kvm] [--tests GLOB] [--timeout 300] [--out build/bench]
                [--budget soak|quick]

Writes OUT/results.json (every "# metric" line of every run, numbers parsed), OUT/switch-cost.png
and OUT/switch-cost.svg (median and p99 of every *switch_cycles* metric per accelerator, log
scale), and the raw serial logs OUT/ACCEL.log (OUT/tcg-PROFILE.log for PROFILE_BOOTS). The
default is tcg, plus kvm when /dev/kvm is usable (else skipped with the reason). The benchmarks
take their full sample counts (budget=soak): the default run's budget=quick takes fewer (1,000
switches, not 10,000), too few for a p99 that shows what a timer tick does to a switch;
--budget quick takes those, to check the tool itself quickly.

Exit status: 0 every run passed; 1 a benchmark's own check failed (results are still written,
with "verdict": "FAIL"); 2 bad arguments; 3 the kernel rejected its command line; 4 crash
(truncated or corrupted log, bail out, QEMU status not matching the log); 124 time limit.
With status 3, 4 or 124 no results are written and stale ones in OUT are removed: numbers never
come from a log that is not complete and verified.
"""

import argparse
import datetime
import json
import math
import re
import sys
import tempfile
from pathlib import Path

from switchyard import arguments
from switchyard import log as ktap
from switchyard import qemu
from switchyard import qmp

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = ROOT / "build" / "bench"
BENCHMARKS = "*.benchmark_*"
BUDGETS = ("soak", "quick")  # soak: the benchmarks' full sample counts (the default)
CPUS = 2  # smp.benchmark_* needs a second CPU; the others run on CPU 0 with CPU 1 idle
OUTPUTS = ("results.json", "switch-cost.png", "switch-cost.svg")
SWITCH_CYCLES = "switch_cycles"
COLOURS = {"tcg": "#4c72b0", "kvm": "#dd8452"}
BAD_ARGUMENTS, TIMED_OUT = 2, 124
# Benchmarks only a part the emulated CPU plays can run: architectural PEBS's MSR writes per
# switch (ds.benchmark_arch_pebs_writes_per_switch; docs/emulated-cpu.md, "Architectural
# PEBS"). With the default --tests, one more boot under TCG for each; its record is the tcg
# run's "profiles" entry, and its failure the tcg run's.
PROFILE_BOOTS = {"pantherlake": "ds.benchmark_arch_pebs_*"}
# Under KVM the kernel waits at each "# host-sync LABEL" (runner/host_sync.h) while the host's
# counters are read; a window SUITE.NAME runs from LABEL SUITE.NAME.begin to SUITE.NAME.end, and
# the kernel's metric SUITE.host_window.NAME says how many switches it held.
HOST_SYNC = re.compile(r"#\s*host-sync (\S+)$")
HOST_WINDOW = ".host_window."
EMPTY_WINDOW = "empty"


class BrokenRun(Exception):
    """A boot whose log cannot be trusted; status is the exit status it maps to."""

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


# Pure parts: a boot (or a recorded log) in, a JSON-ready record out.

def parse_value(text):
    """int or finite float where `text` parses as one, else the text itself."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        number = float(text)
    except ValueError:
        return text
    return number if math.isfinite(number) else text


def parse_metrics(metrics):
    """{name: {key: "text"}} from check_log -> {name: {key: int | float | str}}."""
    return {name: {key: parse_value(value) for key, value in pairs.items()}
            for name, pairs in metrics.items()}


def platform_lines(result):
    """The top-level "# platform:" and "# features:" diagnostics, without the "# "."""
    return [line for line in result.diagnostics if line.startswith(("platform:", "features:"))]


def judge(raw, status, timed_out=False, timeout=None):
    """check_log the boot; return the LogResult, or raise BrokenRun when the log is not
    complete and verified (timeout, CRASH or USAGE)."""
    if timed_out:
        raise BrokenRun(f"TIMEOUT: QEMU killed after {timeout:g} s; the log has "
                        f"{len(ktap.clean(raw).splitlines())} lines", TIMED_OUT)
    result = ktap.check_log(raw, qemu_status=status)
    if result.verdict == ktap.USAGE:
        raise BrokenRun(f"USAGE: the kernel rejected its command line: {result.usage_error}",
                        ktap.RUN_STATUS[ktap.USAGE])
    if result.verdict == ktap.CRASH:
        reasons = result.errors or [f"Bail out! {result.bail_out}"]
        raise BrokenRun("CRASH: " + "; ".join(reasons[:5])
                        + (f" (and {len(reasons) - 5} more)" if len(reasons) > 5 else ""),
                        ktap.RUN_STATUS[ktap.CRASH])
    return result


def run_record(accel, cpu, machine, seconds, result):
    """One entry of results.json "runs" from a judged (PASS or FAIL) LogResult."""
    assert result.verdict in (ktap.PASS, ktap.FAIL), result.verdict
    return {
        "accel": accel,
        "cpu": cpu,
        "machine": machine,
        "verdict": result.verdict,
        "seconds": round(seconds, 3),
        "tests": {"pass": result.count("pass"), "fail": result.count("fail"),
                  "skip": result.count("skip")},
        "failed": [test.id for test in result.tests if test.status == "fail"],
        "platform": platform_lines(result),
        "metrics": parse_metrics(result.metrics),
    }


class HostCounters:
    """Answers the kernel's host-sync points: reads vCPU 0's KVM counters, then lets it go on."""

    def __init__(self, socket_path):
        self.socket_path, self.session, self.samples, self.errors = socket_path, None, {}, []

    def answer(self, text):
        reply = b""
        for line in text.splitlines():
            found = HOST_SYNC.search(line.strip())
            if not found:
                continue
            try:
                if self.session is None:
                    self.session = qmp.Qmp(self.socket_path)
                stats = self.session.vcpu_stats()
                self.samples[found.group(1)] = stats[0] if stats else {}
            except (OSError, ValueError, qmp.QmpError) as error:
                self.errors.append(f"{found.group(1)}: {error}")
            reply += b"s"  # whatever happened: the kernel never waits in vain
        return reply

    def close(self):
        if self.session is not None:
            self.session.close()


def host_windows(metrics, samples):
    """{"SUITE.NAME": {counter: delta, counter_per_switch: ..., "switches": N}} for every
    metric SUITE.host_window.NAME whose begin and end were sampled, less the SUITE's empty
    window (the waits' own cost) where it was sampled too."""
    windows = {}
    for name, pairs in metrics.items():
        if HOST_WINDOW not in name:
            continue
        suite, window = name.split(HOST_WINDOW, 1)
        begin, end = samples.get(f"{suite}.{window}.begin"), samples.get(f"{suite}.{window}.end")
        if not begin or not end:
            continue
        empty_begin = samples.get(f"{suite}.{EMPTY_WINDOW}.begin")
        empty_end = samples.get(f"{suite}.{EMPTY_WINDOW}.end")
        empty = ({key: empty_end[key] - empty_begin[key] for key in empty_end if key in empty_begin}
                 if empty_begin and empty_end else None)
        switches = pairs.get("switches")
        switches = int(switches) if str(switches).isdigit() else 0
        windows[f"{suite}.{window}"] = dict(qmp.window_deltas(begin, end, switches, empty),
                                            switches=switches)
    return windows


def results_document(runs, generated=None):
    generated = generated or datetime.datetime.now(datetime.timezone.utc)
    return {"generated": generated.isoformat(timespec="seconds"), "runs": runs}


def switch_series(runs):
    """(configurations, {accel: [(median, p99) or None per configuration]}) for every metric
    whose name contains "switch_cycles", in first-seen order."""
    names = []
    for run in runs:
        names += [name for name in run["metrics"] if SWITCH_CYCLES in name and name not in names]
    series = {}
    for run in runs:
        values = []
        for name in names:
            pairs = run["metrics"].get(name, {})
            median, p99 = pairs.get("median"), pairs.get("p99")
            number = (int, float)
            ok = isinstance(median, number) and median > 0
            values.append((median, p99 if isinstance(p99, number) else None) if ok else None)
        series[run["accel"]] = values
    return names, series


def label(name):
    """"sched.switch_cycles.kernel_yield" -> "sched.kernel_yield" for the x axis."""
    return name.replace(f".{SWITCH_CYCLES}.", ".").replace(f".{SWITCH_CYCLES}", "")


def plot(runs, paths, generated=""):
    """A grouped bar chart of median switch cycles (whisker to p99), log y, one colour per
    accelerator, written to every path in `paths` (the format follows the suffix)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    names, series = switch_series(runs)
    width = 0.8 / max(1, len(series))
    fig, ax = plt.subplots(figsize=(max(7.0, 1.0 + 0.55 * len(names) * max(1, len(series))),
                                    5.5), layout="constrained")
    handles = []
    for index, (accel, values) in enumerate(series.items()):
        colour = COLOURS.get(accel, f"C{index + 2}")
        offset = (index - (len(series) - 1) / 2) * width
        xs = [i + offset for i, value in enumerate(values) if value]
        medians = [value[0] for value in values if value]
        ax.bar(xs, medians, width * 0.92, color=colour, zorder=2)
        whiskers = [(x, m, p99) for x, m, (_, p99) in zip(xs, medians, filter(None, values))
                    if p99 is not None and p99 >= m]
        if whiskers:
            ax.errorbar([w[0] for w in whiskers], [w[1] for w in whiskers],
                        yerr=[[0] * len(whiskers), [w[2] - w[1] for w in whiskers]],
                        fmt="none", ecolor="black", elinewidth=1, capsize=3, zorder=3)
        for x, median in zip(xs, medians):
            ax.annotate(f"{median:,.0f}", (x, median), xytext=(0, -3),
                        textcoords="offset points", ha="center", va="top", rotation=90,
                        fontsize=7, color="white", zorder=4)
        run = next(r for r in runs if r["accel"] == accel)
        verdict = "" if run["verdict"] == ktap.PASS else f", {run['verdict']}"
        handles.append(Patch(color=colour, label=f"{accel} (-cpu {run['cpu']}{verdict})"))
    handles.append(Line2D([], [], color="black", marker="_", markersize=8, linewidth=1,
                          label="whisker top: p99"))
    ax.set_yscale("log")
    lows = [v[0] for values in series.values() for v in values if v]
    highs = [max(v[0], v[1] or 0) for values in series.values() for v in values if v]
    if lows:  # a decade below the smallest bar for its label, room above for the legend
        ax.set_ylim(10 ** (math.floor(math.log10(min(lows))) - 1), max(highs) * 30)
    ax.set_xticks(range(len(names)), [label(name) for name in names],
                  rotation=30 if len(names) > 3 else 0, ha="right" if len(names) > 3 else "center",
                  rotation_mode="anchor")
    ax.set_xlim(-0.6, max(len(names), 1) - 0.4)
    ax.set_xlabel("configuration (metric SUITE.switch_cycles.NAME shown as SUITE.NAME)")
    ax.set_ylabel("cycles per switch (TSC, median; log scale)")
    ax.set_title("switchyard context-switch cost per configuration and accelerator"
                 + (f"\n{generated}" if generated else ""), fontsize=11)
    ax.grid(axis="y", which="major", alpha=0.4, zorder=0)
    ax.grid(axis="y", which="minor", alpha=0.12, zorder=0)
    ax.legend(handles=handles, loc="upper left", fontsize=8, framealpha=0.9, ncols=len(handles))
    if not names:
        ax.text(0.5, 0.5, "no *switch_cycles* metrics in the logs", transform=ax.transAxes,
                ha="center", va="center")
    for path in paths:
        fig.savefig(path, dpi=120)
    plt.close(fig)


def write_outputs(out, runs):
    """results.json and the two charts in `out`; returns the results document."""
    out.mkdir(parents=True, exist_ok=True)
    document = results_document(runs)
    (out / "results.json").write_text(json.dumps(document, indent=2) + "\n")
    plot(runs, [out / "switch-cost.png", out / "switch-cost.svg"],
         generated=f"generated {document['generated']}")
    return document


def remove_stale(out):
    for name in OUTPUTS:
        (out / name).unlink(missing_ok=True)


def table(runs):
    """A plain-text summary of the switch_cycles medians and p99s."""
    names, series = switch_series(runs)
    lines = []
    for name in names:
        cells = []
        for accel, values in series.items():
            value = values[names.index(name)]
            if value:
                p99 = "?" if value[1] is None else f"{value[1]:,.0f}"
                cells.append(f"{accel} median={value[0]:,.0f} p99={p99}")
        lines.append(f"  {name:<40} " + "   ".join(cells))
    # The emulated CPU's own cost: what a stepped instruction takes on each platform. It says
    # nothing about silicon (docs/emulated-cpu.md).
    for run in runs:
        cost = run["metrics"].get("emulator.step_cost")
        if cost:
            lines.append(f"  {'emulator.step_cost':<40} {run['accel']} " + " ".join(
                f"{key}={value:,}" if isinstance(value, int) else f"{key}={value}"
                for key, value in cost.items()))
    # pmu/'s MSR writes per switch between two tasks with identical event sets, by register
    # (pmu.benchmark_msr_writes_per_switch), and ds/'s arch-PEBS ones on the profile that has it.
    for run in runs:
        sources = [("", run["metrics"])] + [
            (f" {profile}", profiled["metrics"])
            for profile, profiled in run.get("profiles", {}).items()]
        for where, metrics in sources:
            for name, writes in sorted(metrics.items()):
                if name.startswith(("pmu.switch_writes.", "ds.arch_pebs_switch_writes.")):
                    lines.append(f"  {name:<40} {run['accel']}{where} " + " ".join(
                        f"{key.removesuffix('_per_switch')}={value}"
                        for key, value in writes.items()))
    for run in runs:
        for window, deltas in run.get("host", {}).items():
            lines.append(f"  {window:<40} {run['accel']} host: "
                         f"exits/switch={deltas.get('exits_per_switch')} "
                         f"insn_emulation/switch={deltas.get('insn_emulation_per_switch')} "
                         f"({deltas.get('switches')} switches)")
    return "\n".join(lines)


# Booting.

def say(message):
    print(f"bench: {message}", file=sys.stderr, flush=True)


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="scripts/bench", description=__doc__.split("\n")[0])
    arguments.add_accels(parser)
    parser.add_argument("--tests", default=BENCHMARKS,
                        help="the kernel's tests= glob (default: %(default)s)")
    arguments.add_timeout(parser, 300.0,
                          "seconds per boot before QEMU is killed (default: %(default)g)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help="output directory (default: build/bench)")
    parser.add_argument("--budget", choices=BUDGETS, default=BUDGETS[0],
                        help="the kernel's budget=: soak, the full sample counts, or quick, "
                        "make check's (default: %(default)s)")
    arguments.add_kernel(parser)
    arguments.add_qemu(parser)
    args = parser.parse_args(argv)
    arguments.check(parser, args)
    args.explicit = bool(args.accel)
    args.accel = arguments.accels(args)
    return args


def bench_one(args, accel, profile=None):
    """Boot once (on the emulated CPU's `profile` with its PROFILE_BOOTS tests, if given);
    return the run record, None when KVM is skipped, or raise BrokenRun."""
    if accel == "kvm" and qemu.kvm_unusable_reason():
        say(f"kvm: skipped: KVM unusable: {qemu.kvm_unusable_reason()}")
        return None
    cpu = qemu.CPU[accel]
    if profile:
        cmdline = f"budget={args.budget} emulate=cpu:{profile} tests={PROFILE_BOOTS[profile]}"
    else:
        cmdline = f"budget={args.budget} tests={args.tests}" + (" host.sync" if accel == "kvm" else "")
    name = f"{accel}-{profile}" if profile else accel
    argv = qemu.qemu_command(args.kernel, accel, machine=args.machine, cmdline=cmdline,
                             smp=CPUS, qemu=args.qemu)
    host = None
    with tempfile.TemporaryDirectory(prefix="switchyard-qmp-") as folder:
        if accel == "kvm" and not profile:
            socket_path = Path(folder) / "qmp.sock"
            argv += ["-qmp", f"unix:{socket_path},server=on,wait=off"]
            host = HostCounters(socket_path)
        say(f"{name}: booting {CPUS} CPUs with '{cmdline}' (time limit {args.timeout:g} s)")
        try:
            boot = qemu.boot(argv, args.timeout, answer=host.answer if host else None)
        finally:
            if host:
                host.close()
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{name}.log").write_bytes(boot.raw)
    if boot.stderr.strip():
        sys.stderr.write(boot.stderr)
    qemu_failed = boot.status is not None and (boot.status == 1 or boot.status < 0)
    if accel == "kvm" and not args.explicit and qemu_failed and not boot.raw:
        say(f"kvm: skipped: KVM unusable: QEMU exited {boot.status}: {boot.stderr.strip()}")
        return None
    try:
        result = judge(boot.raw, boot.status, boot.timed_out, args.timeout)
    except BrokenRun as error:
        tail = ktap.clean(boot.raw).splitlines()[-10:]
        for line in tail:
            say(f"{name}:   | {line}")
        raise BrokenRun(f"{name}: {error} (raw log: {args.out / f'{name}.log'})",
                        error.status) from None
    record = run_record(accel, cpu, args.machine, boot.seconds, result)
    record["cpus"] = CPUS
    record["budget"] = args.budget
    if host:
        for error in host.errors:
            say(f"{accel}: host counters: {error}")
        record["host"] = host_windows(record["metrics"], host.samples)
        if not record["host"]:
            say(f"{accel}: host counters: none read (QMP query-stats gave no KVM provider)")
    tests = record["tests"]
    say(f"{name}: {record['verdict']} {tests['pass']} passed, {tests['fail']} failed, "
        f"{tests['skip']} skipped, {len(record['metrics'])} metrics ({boot.seconds:.2f} s)")
    for test in [t for t in result.tests if t.status == "fail"]:
        say(f"{name}: not ok {test.id} (log line {test.line})")
        for line in test.diagnostics:
            say(f"{name}:     {line}")
    return record


def main(argv):
    args = parse_args(argv)
    runs, broken = [], []
    for accel in args.accel:
        try:
            record = bench_one(args, accel)
        except BrokenRun as error:
            say(f"error: {error}")
            broken.append(error)
            continue
        if record is None:
            continue
        runs.append(record)
        if accel != "tcg" or args.tests != BENCHMARKS:
            continue
        for profile in PROFILE_BOOTS:
            try:
                profiled = bench_one(args, accel, profile)
            except BrokenRun as error:
                say(f"error: {error}")
                broken.append(error)
                continue
            record.setdefault("profiles", {})[profile] = profiled
            if profiled["verdict"] == ktap.FAIL:
                record["verdict"] = ktap.FAIL
                record["failed"] += [f"{profile}: {test}" for test in profiled["failed"]]
    if broken:
        remove_stale(args.out)
        say(f"error: {len(broken)} boot(s) without a complete, verified log; "
            f"no results written to {args.out}")
        return broken[0].status
    if not runs:
        say("error: no accelerator could run")
        return BAD_ARGUMENTS
    write_outputs(args.out, runs)
    print(table(runs))
    for name in OUTPUTS:
        print(f"bench: wrote {args.out / name}")
    failed = [run["accel"] for run in runs if run["verdict"] == ktap.FAIL]
    if failed:
        say(f"error: a benchmark's own check failed on {', '.join(failed)} "
            "(results written with \"verdict\": \"FAIL\")")
        return ktap.RUN_STATUS[ktap.FAIL]
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
