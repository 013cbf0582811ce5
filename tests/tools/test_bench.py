"""scripts/bench: results.json and the switch-cost chart from benchmark logs; a broken log is
an error and writes no numbers.

Logs are built here and sealed with an independent CRC (tests/sealed_logs.py). The command line is
exercised through a fake QEMU (--qemu) and, in the test marked "boot", the real kernel under TCG.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sealed_logs import flip_byte, seal, with_running

from switchyard import bench
from switchyard import log as ktap

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "scripts" / "bench"
KERNEL = ROOT / "build" / "switchyard32.elf"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"



BODY = with_running("""\
KTAP version 1
# switchyard 0.1 (x86-64)
# cmdline: exit=isa-debug tests=*.benchmark_*
# platform: vendor=AuthenticAMD family=15 model=107 stepping=1
# platform: tsc_hz=2606330752 source=pit
# features: ds=0 dtes64=0 ds_cpl=0 pdcm=0 de=1
# seed=7
1..2
    KTAP version 1
    # Subtest: dr
    1..1
    # metric dr.switch_cycles.no_state median=2000 p99=2500 samples=10000
    # metric dr.switch_cycles.lazy_identical median=2060 p99=2700 samples=10000
    # metric dr.switch_cycles.eager_different median=11596 p99=27469 samples=9999
    # metric dr.switch_ratio lazy_identical_over_no_state=1.03 eager_over_lazy_identical=3.2
    ok 1 benchmark_dr_switch
ok 1 dr
    KTAP version 1
    # Subtest: sched
    1..1
    # metric sched.switch_cycles.kernel_yield median=3029 p99=3848 samples=10000
    # metric sched.switch_writes.kernel_yield switches=20000 msr_writes=0 dr_writes=0 mode=lazy
    ok 1 benchmark_kernel_to_kernel_yield
ok 2 sched
# totals: pass=2 fail=0 skip=0 xfail=0 xpass=0
""")
FAILING_BODY = (BODY.replace("    ok 1 benchmark_kernel", "    # check failed\n"
                             "    not ok 1 benchmark_kernel")
                .replace("ok 2 sched", "not ok 2 sched")
                .replace("totals: pass=2 fail=0", "totals: pass=1 fail=1"))
USAGE_BODY = """\
KTAP version 1
# switchyard 0.1 (x86-64)
# error: tests=*.benchmark_*: selects no test
# valid options: tests=GLOB[,GLOB...] list seed=N timeout=D console=PORT[,BAUD] exit=isa-debug
Bail out! bad kernel command line
"""




def record(body, status=33, accel="tcg"):
    result = bench.judge(body.encode(), status)
    return bench.run_record(accel, bench.qemu.CPU[accel], "microvm", 1.2345, result)


# The pure parts.

@pytest.mark.parametrize("text, value", [
    ("1234", 1234), ("-7", -7), ("1.03", 1.03), ("3.2e3", 3200.0), ("0x1a", "0x1a"),
    ("lazy", "lazy"), ("nan", "nan"), ("inf", "inf")])
def test_values_parse_as_numbers_where_they_parse(text, value):
    assert bench.parse_value(text) == value
    assert type(bench.parse_value(text)) is type(value)


def test_a_verified_log_gives_a_run_with_every_metric(tmp_path):
    runs = [record(seal(BODY)), record(seal(BODY.replace("median=2000", "median=2000000")),
                                       accel="kvm")]
    document = bench.write_outputs(tmp_path, runs)
    assert json.loads((tmp_path / "results.json").read_text()) == document
    assert document["generated"].endswith("+00:00")
    tcg = document["runs"][0]
    assert {key: tcg[key] for key in ("accel", "cpu", "machine", "verdict", "seconds")} == {
        "accel": "tcg", "cpu": "max", "machine": "microvm", "verdict": "PASS", "seconds": 1.234}
    assert tcg["platform"] == [
        "platform: vendor=AuthenticAMD family=15 model=107 stepping=1",
        "platform: tsc_hz=2606330752 source=pit",
        "features: ds=0 dtes64=0 ds_cpl=0 pdcm=0 de=1"]
    assert tcg["metrics"] == {
        "dr.switch_cycles.no_state": {"median": 2000, "p99": 2500, "samples": 10000},
        "dr.switch_cycles.lazy_identical": {"median": 2060, "p99": 2700, "samples": 10000},
        "dr.switch_cycles.eager_different": {"median": 11596, "p99": 27469, "samples": 9999},
        "dr.switch_ratio": {"lazy_identical_over_no_state": 1.03, "eager_over_lazy_identical": 3.2},
        "sched.switch_cycles.kernel_yield": {"median": 3029, "p99": 3848, "samples": 10000},
        "sched.switch_writes.kernel_yield": {"switches": 20000, "msr_writes": 0, "dr_writes": 0,
                                             "mode": "lazy"}}
    assert document["runs"][1]["accel"] == "kvm"
    assert document["runs"][1]["cpu"] == bench.qemu.CPU["kvm"]
    assert (tmp_path / "switch-cost.png").read_bytes().startswith(PNG_MAGIC)
    assert b"<svg" in (tmp_path / "switch-cost.svg").read_bytes()[:2000]


def test_the_chart_takes_every_switch_cycles_metric():
    runs = [record(seal(BODY)), record(seal(BODY.replace(
        "    # metric dr.switch_cycles.no_state median=2000 p99=2500 samples=10000\n", "")),
        accel="kvm")]
    names, series = bench.switch_series(runs)
    assert names == ["dr.switch_cycles.no_state", "dr.switch_cycles.lazy_identical",
                     "dr.switch_cycles.eager_different", "sched.switch_cycles.kernel_yield"]
    assert series["tcg"][0] == (2000, 2500)
    assert series["kvm"][0] is None  # a configuration one accelerator lacks has no bar there
    assert [bench.label(name) for name in names] == [
        "dr.no_state", "dr.lazy_identical", "dr.eager_different", "sched.kernel_yield"]


def test_a_failing_benchmark_is_recorded_as_fail():
    run = record(seal(FAILING_BODY), status=35)
    assert run["verdict"] == "FAIL"
    assert run["failed"] == ["sched.benchmark_kernel_to_kernel_yield"]
    assert run["metrics"]["sched.switch_cycles.kernel_yield"]["median"] == 3029


@pytest.mark.parametrize("log, status, code, fragment", [
    (BODY, 33, 4, "no final line"),
    (seal(BODY)[:-40], 33, 4, "no final line"),
    (flip_byte(seal(BODY), "median=3029"), 33, 4, "CRC mismatch"),
    (seal(BODY), 35, 4, "exit status disagrees"),
    (seal(BODY), 0, 4, "triple fault"),
    (seal(USAGE_BODY), 37, 3, "rejected its command line"),
    (seal("KTAP version 1\n1..1\nBail out! #PF in the kernel\n"), 39, 4, "Bail out!"),
    ("", 1, 4, "no KTAP output")],
    ids=["unsealed", "truncated", "flipped-byte", "status-disagrees", "triple-fault", "usage",
         "bail-out", "empty"])
def test_a_broken_log_is_an_error(log, status, code, fragment):
    with pytest.raises(bench.BrokenRun) as error:
        bench.judge(log.encode(), status)
    assert error.value.status == code
    assert fragment in str(error.value)


def test_a_timeout_is_an_error():
    with pytest.raises(bench.BrokenRun) as error:
        bench.judge(seal(BODY).encode(), None, timed_out=True, timeout=5)
    assert error.value.status == 124
    assert "TIMEOUT" in str(error.value)


# scripts/bench as a command, through a fake QEMU.

@pytest.fixture
def fake_bench(tmp_path):
    """Run scripts/bench --accel tcg against a fake QEMU printing `log` and exiting `status`."""
    script = tmp_path / "fake-qemu"
    script.write_text(f"""#!{sys.executable}
import os, sys
open({str(tmp_path / "argv")!r}, "a").write("\\n".join(sys.argv[1:]) + "\\n\\n")
sys.stdout.buffer.write(open(os.environ["FAKE_LOG"], "rb").read().replace(b"\\n", b"\\r\\n"))
sys.exit(int(os.environ["FAKE_STATUS"]))
""")
    script.chmod(0o755)
    out = tmp_path / "out"

    def run(log, status=33):
        (tmp_path / "log").write_text(log)
        env = dict(os.environ, FAKE_LOG=str(tmp_path / "log"), FAKE_STATUS=str(status))
        return subprocess.run([sys.executable, str(BENCH), "--qemu", str(script), "--kernel",
                               str(script), "--accel", "tcg", "--out", str(out),
                               "--timeout", "30"],
                              capture_output=True, text=True, timeout=120, env=env)
    run.out = out
    # Each boot's argv, in boot order.
    run.argv = lambda: [boot.split("\n")
                        for boot in (tmp_path / "argv").read_text().split("\n\n") if boot]
    return run


def test_bench_writes_results_for_a_passing_run(fake_bench):
    proc = fake_bench(seal(BODY))
    assert proc.returncode == 0, proc.stderr
    argv, profiled = fake_bench.argv()
    assert argv[argv.index("-append") + 1] == (
        "exit=isa-debug budget=soak tests=*.benchmark_* smp.expect=2")
    assert argv[argv.index("-smp") + 1] == "2"
    assert argv[argv.index("-accel") + 1] == "tcg"
    # The arch-PEBS writes per switch need a part that has it: the model's pantherlake.
    assert profiled[profiled.index("-append") + 1] == (
        "exit=isa-debug budget=soak emulate=cpu:pantherlake tests=ds.benchmark_arch_pebs_* "
        "smp.expect=2")
    assert profiled[profiled.index("-accel") + 1] == "tcg"
    document = json.loads((fake_bench.out / "results.json").read_text())
    assert [(run["accel"], run["verdict"]) for run in document["runs"]] == [("tcg", "PASS")]
    assert document["runs"][0]["profiles"]["pantherlake"]["verdict"] == "PASS"
    assert (fake_bench.out / "tcg-pantherlake.log").is_file()
    assert (fake_bench.out / "switch-cost.png").read_bytes().startswith(PNG_MAGIC)
    assert (fake_bench.out / "switch-cost.svg").is_file()
    assert (fake_bench.out / "tcg.log").read_bytes().replace(b"\r", b"") == seal(BODY).encode()
    assert "sched.switch_cycles.kernel_yield" in proc.stdout


def test_bench_writes_fail_results_and_exits_1(fake_bench):
    proc = fake_bench(seal(FAILING_BODY), 35)
    assert proc.returncode == 1, proc.stderr
    document = json.loads((fake_bench.out / "results.json").read_text())
    assert document["runs"][0]["verdict"] == "FAIL"
    assert "not ok sched.benchmark_kernel_to_kernel_yield" in proc.stderr


@pytest.mark.parametrize("log, status, code", [
    (flip_byte(seal(BODY), "median=3029"), 33, 4), (BODY, 33, 4), (seal(USAGE_BODY), 37, 3)],
    ids=["flipped-byte", "unsealed", "usage"])
def test_bench_writes_no_numbers_from_a_broken_log(fake_bench, log, status, code):
    assert fake_bench(seal(BODY)).returncode == 0
    assert (fake_bench.out / "results.json").is_file()
    proc = fake_bench(log, status)
    assert proc.returncode == code, proc.stderr
    assert "error: tcg:" in proc.stderr
    for name in ("results.json", "switch-cost.png", "switch-cost.svg"):
        assert not (fake_bench.out / name).exists()  # the stale results are gone too
    assert (fake_bench.out / "tcg.log").is_file()  # the raw log stays, to look at


def test_bench_rejects_bad_arguments(tmp_path):
    for args in (["--accel", "xen"], ["--timeout", "0"], ["--kernel", "/nonexistent"]):
        proc = subprocess.run([sys.executable, str(BENCH), "--out", str(tmp_path), *args],
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2 and "error:" in proc.stderr, args


# The real kernel under TCG.

@pytest.mark.boot
def test_bench_boots_the_real_benchmarks_under_tcg(tmp_path):
    assert KERNEL.is_file(), f"kernel image {KERNEL} not found: run make"
    # make check's budget: the tool end to end; make bench's soak takes 10 times the samples.
    proc = subprocess.run([sys.executable, str(BENCH), "--accel", "tcg", "--out", str(tmp_path),
                           "--timeout", "120", "--budget", "quick"],
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    document = json.loads((tmp_path / "results.json").read_text())
    [run] = document["runs"]
    assert (run["accel"], run["cpu"], run["verdict"]) == ("tcg", "max", "PASS")
    assert run["budget"] == "quick"
    assert any(line.startswith("platform: vendor=") for line in run["platform"])
    cycles = {name: pairs for name, pairs in run["metrics"].items()
              if name.startswith("sched.switch_cycles.")}
    assert cycles, run["metrics"]
    for name, pairs in cycles.items():
        assert isinstance(pairs["median"], int) and 0 < pairs["median"] <= pairs["p99"], name
        assert pairs["samples"] >= 100, name
    assert (tmp_path / "switch-cost.png").read_bytes().startswith(PNG_MAGIC)
    assert (tmp_path / "switch-cost.svg").is_file()
    assert ktap.check_log((tmp_path / "tcg.log").read_bytes()).verdict == ktap.PASS
    # Architectural PEBS on the model: identical switches write no CFG_C, one PEBS_BASE and no
    # INDEX; a partner whose period differs, one CFG_C a switch (ds/'s cache elides only equals).
    writes = run["profiles"]["pantherlake"]["metrics"]
    identical = writes["ds.arch_pebs_switch_writes.identical"]
    assert (identical["cfg_c_per_switch"], identical["base_per_switch"],
            identical["index_per_switch"]) == (0, 1, 0), writes
    assert identical["switches"] >= 40, writes  # budget=quick's pairs; soak's are 2,000
    assert writes["ds.arch_pebs_switch_writes.other_period"]["cfg_c_per_switch"] == 1, writes
    assert "ds.arch_pebs_switch_writes.identical" in proc.stdout


# The host's counters (runner/host_sync.h, scripts/switchyard/qmp.py).

def test_host_windows_divide_each_delta_less_the_empty_window_by_its_switches():
    samples = {
        "dr.empty.begin": {"exits": 100, "insn_emulation": 1000},
        "dr.empty.end": {"exits": 104, "insn_emulation": 1040},
        "dr.lazy_identical.begin": {"exits": 200, "insn_emulation": 5000},
        "dr.lazy_identical.end": {"exits": 404, "insn_emulation": 25040},
        "dr.unpaired.begin": {"exits": 1},
    }
    metrics = {"dr.host_window.lazy_identical": {"switches": 200},
               "dr.host_window.unpaired": {"switches": 10},
               "dr.switch_cycles.no_state": {"median": 5}}
    windows = bench.host_windows(metrics, samples)
    assert list(windows) == ["dr.lazy_identical"]
    window = windows["dr.lazy_identical"]
    assert (window["exits"], window["exits_per_switch"]) == (200, 1.0)
    assert (window["insn_emulation"], window["insn_emulation_per_switch"]) == (20000, 100.0)
    assert window["switches"] == 200


def test_host_counters_answer_every_sync_even_when_qmp_fails(tmp_path):
    counters = bench.HostCounters(tmp_path / "no-such.sock")
    counters.session = type("Broken", (), {"vcpu_stats": lambda self: (_ for _ in ()).throw(
        OSError("gone"))})()
    assert counters.answer("    # host-sync dr.a.begin\n# other\n    # host-sync dr.a.end\n") \
        == b"ss"
    assert counters.errors == ["dr.a.begin: gone", "dr.a.end: gone"]
    assert counters.answer("# host-syncing nothing\n") == b""


@pytest.mark.boot
def test_the_kernel_waits_at_each_host_sync_until_answered_under_tcg():
    """host.sync under TCG: each window's two labels are printed and each waits for its answer.
    One label is left unanswered on purpose: the kernel gives up on it after its limit and
    fails exactly that check; every answered window passes the benchmark's own checks."""
    from switchyard import qemu
    assert KERNEL.is_file(), f"kernel image {KERNEL} not found: run make"
    argv = qemu.qemu_command(KERNEL, "tcg", cmdline="host.sync tests=dr.benchmark_switch*",
                             smp=2)
    unanswered = "dr.empty.end"
    seen = []

    def answer(text):
        labels = [line.split("host-sync ", 1)[1].strip() for line in text.splitlines()
                  if "# host-sync " in line and ":" not in line]
        seen.extend(labels)
        return b"s" * len([label for label in labels if label != unanswered])

    boot = qemu.boot(argv, 120, answer=answer)
    result = ktap.check_log(boot.raw, qemu_status=boot.status)
    windows = ["empty", "no_state", "lazy_identical", "lazy_different", "eager_identical",
               "eager_different"]
    assert seen == [f"dr.{w}.{edge}" for w in windows for edge in ("begin", "end")]
    [test] = result.tests
    failed = [line for line in test.diagnostics if "check failed" in line]
    assert test.status == "fail", ktap.clean(boot.raw)[-2000:]
    assert len(failed) == 1 and "the harness did not answer at host.sync" in failed[0], failed
    assert f"host-sync {unanswered}: no answer from the harness in 5000 ms" in "\n".join(
        test.diagnostics)
