"""pytest harness over switchyard's serial log (docs/output.md; STYLE.md P13).

At collection, the kernel is booted once per platform and every KTAP test becomes a pytest
case with id "PLATFORM-suite.test". Platforms are "tcg" (always) and "kvm" (skipped, with the
reason, when /dev/kvm cannot be opened or QEMU cannot start a KVM guest), each with one CPU and
every test; and "tcg-smp2", "tcg-smp4": the smp suite with 2 and 4 CPUs; "tcg-apic",
"kvm-xapic", "kvm-smp4": the arch suite's APIC tests with the local APIC in xAPIC mode (TCG
has no x2APIC; apic=xapic) and with firmware's x2APIC handover played
(selftest.firmware_x2apic), the KVM two with the smp suite on 2 and 4 CPUs; "tcg-smp16": the smp suite with 16 CPUs, per-CPU data sized at boot for more than the 8 it
once allowed (about 2 s under TCG on this 2-core host); "tcg-pebs-fmtN", "tcg-kvm-pebs" and
"tcg-skid": the bts, ds, pebs, pmu, emulator and lbr suites on the emulated CPU playing another
part, or with a PMI skid; "tcg-zen2", "tcg-zen4" and "tcg-arch-pebs*": the same on AMD parts and
on an architectural-PEBS part; "tcg-ds-hardware": the same suites with the model refused;
"tcg-lab": every suite as the LAVA jobs boot it (deploy/lava/*.yaml: tests=* ds=hardware), on
2 CPUs.
A missing kernel image is a failure, never a skip.

Known platform defects (tests/known-defects.toml) are compiled into the kernel, which reports
them in-band: "ok N name # XFAIL reason" becomes a pytest xfail, "not ok N name # XPASS reason"
(the defect did not occur) a strict xfail that passed, so a failure. The harness decides no
verdict from the table, so a recorded log is judged as the kernel that wrote it judged itself;
the log checker only rejects an XFAIL or XPASS reason the table does not give (docs/output.md).

A test that ends the boot on the platform (the kernel's "# SKIP runs alone: REASON") is booted
again alone (scripts/switchyard/alone.py), and that boot's judgement replaces the SKIP under the
same id: its own result, an xfail when the boot died in it as predicted, or a failure.

Environment:
  SWITCHYARD_LOG=PATH           judge this recorded log instead of booting (platform "log")
  SWITCHYARD_LOG_PLATFORM=NAME  the recorded log's platform name in the case ids, instead of "log"
  SWITCHYARD_CMDLINE="..."      extra kernel options for the boots
  SWITCHYARD_BOOT_TIMEOUT=S     seconds per boot (default 300)
  SWITCHYARD_ALONE_TIMEOUT=S    seconds per boot of a test run alone (default 60)
  SWITCHYARD_BOOT_RUN=NAME      share the boots with every pytest process given the same NAME
Raw logs of the boots are kept in build/logs/PLATFORM.log, and of the boots of tests run alone
in build/logs/PLATFORM-alone-SUITE.TEST.log.

The boots run in BOOT_LANES lanes at once, each booting one platform at a time (with its solos):
one lane takes the whole-suite platforms first (kvm first of them), the other the short ones, so
that the long KVM-PVM boot overlaps the short boots, and no more QEMUs run at once than the host
has cores (lane_order; the summary's "boots" section says which lane booted what, and when). The
kernel's own timing tests (sched fairness, the timer rate, PMU multiplexing) judge their pace:
two boots of the whole suite (tcg, kvm, tcg-lab) never run side by side. Every platform is
booted once, by the first lane that claims it in build/logs/boots/RUN/, and the others read its
result from there. Without pytest-xdist the lanes are threads; under it each worker is a lane.
`make check` (scripts/check) runs tests/verdicts/ alone in one process, beside every other test
in another, and gives both one RUN (SWITCHYARD_BOOT_RUN): a test of the second that asks for a
platform waits for the first's boot of it.
"""

import contextlib
import fcntl
import functools
import os
import pickle
import re
import shutil
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from switchyard import alone  # noqa: E402
from switchyard import log as ktap  # noqa: E402
from switchyard import qemu  # noqa: E402
from switchyard.qemu import merge_cmdline  # noqa: E402

KERNEL = ROOT / "build" / "switchyard32.elf"
LOG_DIR = ROOT / "build" / "logs"
# name: (accelerator, CPUs, kernel options)
BOOTS = {
    "tcg": ("tcg", 1, ""),
    "kvm": ("kvm", 1, ""),
    "tcg-smp2": ("tcg", 2, "tests=smp.*"),
    "tcg-smp4": ("tcg", 4, "tests=smp.*"),
    "tcg-smp16": ("tcg", 16, "tests=smp.*"),
}
# The local APIC in each mode (docs/platforms.md): KVM's "-cpu host" has x2APIC, which the
# kernel uses by default there; kvm-xapic forces xAPIC mode; kvm-smp4 plays firmware that hands
# over in x2APIC mode (selftest.firmware_x2apic turns the boot CPU's x2APIC on before the APIC
# set-up looks). TCG has no x2APIC: tcg-apic runs the same tests in xAPIC mode, where the
# x2APIC-only ones skip with the reason. On 2 CPUs (kvm-smp4: 4), for the IPIs and the AP
# start-up. Only the tests that go through the local APIC: the rest of arch runs in the main
# boots. tcg-apic also plays a host that stops the guest inside the timer's calibration
# (selftest.timer_calibration_stop), which arch.timer_ticks_at_its_calibrated_rate judges.
# The KVM ones also run the smp suite, in xAPIC mode on 2 CPUs and in x2APIC mode on 4: KVM
# boots run one at a time, so each one's start-up is paid on make check's longest path (a
# kvm-smp2 and a kvm-x2apic-firmware of their own added about 8 s to it).
APIC_SUITES = ("tests=arch.apic_*,arch.timer_*,arch.halt_*,arch.per_test_timeout_fires,"
               "smp.every_cpu_comes_up_and_reports_its_apic_id")
BOOTS["tcg-apic"] = ("tcg", 2, f"selftest.timer_calibration_stop {APIC_SUITES}")
BOOTS["kvm-xapic"] = ("kvm", 2, f"apic=xapic {APIC_SUITES},smp.*")
BOOTS["kvm-smp4"] = ("kvm", 4, f"selftest.firmware_x2apic {APIC_SUITES},smp.*")
# The emulated CPU as each PEBS record format's part (docs/emulated-cpu.md); format 4 is the
# default profile of the tcg and kvm boots. kvm_pebs is a guest with PEBS but no BTS.
EMULATED_SUITES = "tests=bts.*,ds.*,pebs.*,pmu.*,emulator.*,lbr.*"
EMULATED_PROFILES = {
    "pebs-fmt0": "core2",
    "pebs-fmt1": "nehalem",
    "pebs-fmt2": "haswell",
    "pebs-fmt3": "skylake",
    "pebs-fmt6": "arrowlake",
    "kvm-pebs": "kvm_pebs",
    "leftovers": "icelake,leftovers:1",  # counters left running by firmware, on 2 CPUs
    "bts-no-status": "icelake,bts_status:0",  # no GLOBAL_STATUS bit 62 at the BTS threshold
    "skid": "icelake,skid:16",  # 16 instructions between an overflow and its PMI (rule 22)
}
for _name, _profile in EMULATED_PROFILES.items():
    BOOTS[f"tcg-{_name}"] = ("tcg", 2 if _name == "leftovers" else 1,
                             f"emulate=cpu:{_profile} {EMULATED_SUITES}")
# A hybrid part on two CPUs: CPU 1 is a small core with fewer counters.
BOOTS["tcg-hybrid"] = ("tcg", 2, f"emulate=cpu:icelake,hybrid:1 {EMULATED_SUITES},smp.*")
# The model as AMD parts (docs/emulated-cpu.md, rule 26): zen2 without PerfMonV2, zen4 with it;
# with the MSR-existence matrix of the arch suite.
AMD_PROFILES = ("zen2", "zen4")
for _profile in AMD_PROFILES:
    BOOTS[f"tcg-{_profile}"] = ("tcg", 2, f"emulate=cpu:{_profile} {EMULATED_SUITES},"
                                "arch.every_pmu_ds_lbr_and_debug_msr_exists_as_cpuid_promises")
# Architectural PEBS (docs/emulated-cpu.md, rule 25): PEBS beside the DS area, its records in
# fragments on request, and a leaf 0x23.5 that names a counter 0x23.1 lacks (refused as Linux).
ARCH_PEBS_PROFILES = {
    "arch-pebs": "pantherlake",
    "arch-pebs-fragments": "pantherlake,fragments:2",
    "arch-pebs-stray": "pantherlake,arch_pebs_stray:1",
}
for _name, _profile in ARCH_PEBS_PROFILES.items():
    BOOTS[f"tcg-{_name}"] = ("tcg", 2, f"emulate=cpu:{_profile} {EMULATED_SUITES},"
                                 "arch.every_pmu_ds_lbr_and_debug_msr_exists_as_cpuid_promises")
# The same suites where the model is refused: each skips with the silicon's exact reason.
BOOTS["tcg-ds-hardware"] = ("tcg", 1, f"ds=hardware {EMULATED_SUITES}")


def lab_options(template=ROOT / "deploy" / "lava" / "switchyard-ipxe.yaml"):
    """The kernel options every LAVA job boots with: those after {KERNEL} in the template's
    kernel command (tests=* ds=hardware), console= left to the lab."""
    actions = yaml.safe_load(template.read_text())["actions"]
    commands = next(action["boot"]["commands"] for action in actions if "boot" in action)
    options = next(c for c in commands if "{KERNEL}" in c).split("{KERNEL}", 1)[1].split()
    return " ".join(o for o in options if not o.startswith("console="))


# The whole suite as a lab runs it (deploy/lava/*.yaml, and scripts/lava-qemu's 2 CPUs).
BOOTS["tcg-lab"] = ("tcg", 2, lab_options())
PLATFORMS = tuple(BOOTS)


@dataclass
class Platform:
    """One run's log. skip or failure is set when there is nothing (trustworthy) to judge."""

    name: str
    raw: bytes = b""
    status: int = None  # QEMU's exit status; None for a recorded log or a timeout
    log_path: Path = None
    skip: str = None
    failure: str = None
    solos: dict = field(default_factory=dict)  # test id -> its alone.SoloTest
    booted: tuple = None  # (lane, start, end): which lane booted it, in time.time() seconds

    @functools.cached_property
    def result(self):
        return ktap.check_log(self.raw)

    @property
    def tests(self):
        """The log's tests, each one run alone replaced by its solo boot's result."""
        return alone.merge(self.result.tests, self.solos)

    def tail(self, count=20):
        lines = ktap.clean(self.raw).splitlines()[-count:]
        return f"last {len(lines)} lines of {self.log_path}:\n" + "\n".join(lines)


def log_platform_name():
    """The name a recorded log's cases carry: SWITCHYARD_LOG_PLATFORM, else "log"."""
    name = os.environ.get("SWITCHYARD_LOG_PLATFORM") or "log"
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        raise pytest.UsageError(f"SWITCHYARD_LOG_PLATFORM={name!r}: use [A-Za-z0-9_.-] only")
    return name


def platform_names():
    return (log_platform_name(),) if os.environ.get("SWITCHYARD_LOG") else PLATFORMS


_loaded = {}  # name -> Platform, each judged run of this session
_config = None  # the session's pytest config (pytest_configure): its xdist worker input, if any


def pytest_configure(config):
    global _config
    _config = config


def load_platform(name):
    """The judged run of one platform, booting at most once per session."""
    if name not in _loaded:
        load_platforms((name,))
    return _loaded[name]


def load_platforms(names):
    """Judge every platform of names not judged yet, booting those that need a boot in
    BOOT_LANES lanes (the module docstring); return {name: Platform} for all of names."""
    todo = []
    for name in names:
        if name in _loaded:
            continue
        platform = unbooted_platform(name)
        if platform is None:
            todo.append(name)
        else:
            _loaded[name] = platform
    if todo:
        _loaded.update(boot_in_lanes(todo))
    return {name: _loaded[name] for name in names}


def unbooted_platform(name):
    """The platform's run when it needs no boot (a recorded log, a skip, a failure), else None."""
    if os.environ.get("SWITCHYARD_LOG"):
        path = Path(os.environ["SWITCHYARD_LOG"])
        if not path.is_file():
            return Platform(name, failure=f"SWITCHYARD_LOG: no such file: {path}")
        return Platform(name, raw=path.read_bytes(), log_path=path)
    if not KERNEL.is_file():
        return Platform(name, failure=f"kernel image {KERNEL} not found: run make")
    if BOOTS[name][0] == "kvm" and qemu.kvm_unusable_reason():
        return Platform(name, skip=f"KVM unusable: {qemu.kvm_unusable_reason()}")
    return None


BOOT_LANES = 2  # QEMUs at once: this host's 2 cores; a TCG vCPU or a KVM-PVM one fills one
STALE_RUN_SECONDS = 3600


def lane_order(names, lane):
    """The order in which lane `lane` claims names. Lane 0 takes the whole-suite platforms
    first, the KVM one first of them (the longest boot), then the short ones; lane 1 the short
    ones, TCG first and KVM from the end, and the whole suites last. So the longest boot starts
    at once, the short ones fill the other lane beside it, and neither lane starts by waiting
    for WHOLE.lock."""
    def kvm_first(group):
        return ([name for name in group if BOOTS[name][0] == "kvm"]
                + [name for name in group if BOOTS[name][0] != "kvm"])
    whole = kvm_first([name for name in names if whole_suite(name)])
    short = kvm_first([name for name in names if not whole_suite(name)])
    if lane % 2 == 0:
        return whole + short
    kvm = [name for name in short if BOOTS[name][0] == "kvm"]
    return [name for name in short if name not in kvm] + kvm[::-1] + whole


def boot_in_lanes(names):
    """{name: Platform} for names, each booted once by the lane that claims it first. Under
    pytest-xdist this process is one lane and the other workers are the others; alone it runs
    BOOT_LANES threads. With SWITCHYARD_BOOT_RUN set (scripts/check), every pytest process
    given the same value shares one set of boots, and the one that set it removes them."""
    worker = getattr(_config, "workerinput", None)
    shared = os.environ.get("SWITCHYARD_BOOT_RUN")
    if shared and not re.fullmatch(r"[A-Za-z0-9_.-]+", shared):
        raise pytest.UsageError(f"SWITCHYARD_BOOT_RUN={shared!r}: use [A-Za-z0-9_.-] only")
    run = shared or (worker["testrunuid"] if worker else f"{os.getpid()}-{uuid.uuid4().hex}")
    directory = LOG_DIR / "boots" / run  # NAME.claim, NAME.pickle: the lanes' shared boots
    directory.mkdir(parents=True, exist_ok=True)
    remove_stale_runs(directory)
    if worker:
        lane = int(worker["workerid"].lstrip("gw") or 0)
        claim_and_boot(directory, lane_order(names, lane), lane)
    else:
        threads = [threading.Thread(target=claim_and_boot,
                                    args=(directory, lane_order(names, lane), lane))
                   for lane in range(BOOT_LANES)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    platforms = {name: wait_for_boot(directory, name, len(names)) for name in names}
    if not worker and not shared:
        shutil.rmtree(directory, ignore_errors=True)
    return platforms


def lane_timeline(platforms):
    """The lanes' boots as lines "lane L: NAME START-END ..." in seconds from the first start,
    and the span of them all; "" when this process booted nothing."""
    booted = sorted((p.booted for p in platforms if p.booted and p.booted[0] is not None),
                    key=lambda b: b[1])
    if not booted:
        return ""
    origin = booted[0][1]
    lanes = {}
    for platform in sorted(platforms, key=lambda p: p.booted[1] if p.booted else 0):
        if platform.booted and platform.booted[0] is not None:
            lane, start, end = platform.booted
            lanes.setdefault(lane, []).append(
                f"{platform.name} {start - origin:.1f}-{end - origin:.1f}")
    span = max(b[2] for b in booted) - origin
    return "\n".join([f"boots: {len(booted)} in {span:.1f} s"]
                     + [f"  lane {lane}: " + ", ".join(lanes[lane]) for lane in sorted(lanes)])


def pytest_terminal_summary(terminalreporter):
    """Which lane booted what, and when: the boots' critical path, whatever the host's load."""
    timeline = lane_timeline(_loaded.values())
    if timeline:
        terminalreporter.write_sep("-", "boots")
        terminalreporter.write_line(timeline)


def whole_suite(name):
    """Whether platform name boots every suite: its timing tests (sched fairness, the timer
    rate, PMU multiplexing) among them, in a boot of a minute under KVM-PVM."""
    options = BOOTS[name][2].split()
    return not any(o.startswith("tests=") for o in options) or "tests=*" in options


def claim_and_boot(directory, names, lane=None):
    """Boot each of names that no other lane has claimed (NAME.claim, created exclusively) and
    leave its judged run in NAME.pickle. A boot that raises leaves a failure, never nothing.
    Two boots of the whole suite never run side by side, where their timing tests would judge
    each other's load, nor two KVM guests: the lane booting one holds WHOLE.lock or KVM.lock
    (flock), and a lane that finds it held boots the other platforms first, then waits."""
    pending = list(names)
    while pending:
        for name in pending:
            with whole_suite_turn(directory, name) as turn:
                if not turn:
                    continue
                pending.remove(name)
                if claim(directory, name):
                    boot_and_leave(directory, name, lane)
                break
        else:
            time.sleep(0.2)  # every platform left waits for the other lane's whole suite


@contextlib.contextmanager
def whole_suite_turn(directory, name):
    """True while this lane may boot name: at once for a TCG platform of a few suites; a whole
    suite while it holds WHOLE.lock; a KVM platform while it holds KVM.lock, because two KVM-PVM
    guests on two host cores starve each other's vCPUs past the kernel's host-clock limits
    (docs/platforms.md). False when another lane holds a lock it needs."""
    locks = (["WHOLE.lock"] if whole_suite(name) else []) + \
        (["KVM.lock"] if BOOTS[name][0] == "kvm" else [])
    with contextlib.ExitStack() as held:
        for lock_name in locks:
            lock = held.enter_context(open(directory / lock_name, "w"))
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                yield False
                return
        yield True  # closing the files releases the locks


def claim(directory, name):
    """Whether this lane is the first to claim name."""
    try:
        os.close(os.open(directory / f"{name}.claim", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True


def boot_and_leave(directory, name, lane=None):
    start = time.time()
    try:
        platform = boot_platform(name)
    except Exception as error:  # noqa: BLE001: the waiting lanes must get a result
        platform = Platform(name, failure=f"booting {name} raised {error!r}")
    platform.booted = (lane, start, time.time())
    partial = directory / f"{name}.pickle.{os.getpid()}.{threading.get_ident()}"
    partial.write_bytes(pickle.dumps(platform))
    partial.rename(directory / f"{name}.pickle")


def wait_for_boot(directory, name, count):
    """The run another lane (or this one) left for name; a failure, never a hang, when none
    comes within the time `count` boots with their solos may take."""
    limit = count * (float(os.environ.get("SWITCHYARD_BOOT_TIMEOUT", "300"))
                     + alone.timeout_from_environment())
    deadline = time.monotonic() + limit
    path = directory / f"{name}.pickle"
    while not path.exists():
        if time.monotonic() > deadline:
            return Platform(name, failure=f"no run of {name} within {limit:g} s: the lane that "
                            f"claimed it ({directory / name}.claim) never finished")
        time.sleep(0.2)
    return pickle.loads(path.read_bytes())


def remove_stale_runs(keep):
    """Remove the shared-boot directories of runs older than an hour, all but keep."""
    for run in keep.parent.iterdir():
        try:
            if run != keep and time.time() - run.stat().st_mtime > STALE_RUN_SECONDS:
                shutil.rmtree(run, ignore_errors=True)
        except OSError:
            pass  # another worker removed it first


def boot_platform(name):
    timeout = float(os.environ.get("SWITCHYARD_BOOT_TIMEOUT", "300"))
    accel, cpus, options = BOOTS[name]
    cmdline = merge_cmdline(options, os.environ.get("SWITCHYARD_CMDLINE", ""))
    argv = qemu.qemu_command(KERNEL, accel, cmdline=cmdline, smp=cpus)
    boot = qemu.boot(argv, timeout)
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    platform = Platform(name, raw=boot.raw, status=boot.status, log_path=LOG_DIR / f"{name}.log")
    platform.log_path.write_bytes(boot.raw)
    qemu_failed = boot.status is not None and (boot.status == 1 or boot.status < 0)
    if accel == "kvm" and qemu_failed and not boot.raw:
        platform.skip = f"KVM unusable: QEMU exited {boot.status}: {boot.stderr.strip()}"
    elif boot.timed_out:
        running = platform.result.running
        platform.failure = (f"QEMU killed after {timeout:g} s (time limit)"
                            + (f" while running {running}" if running else "")
                            + f"\n{platform.tail()}")
    elif platform.result.verdict in (ktap.PASS, ktap.FAIL):
        platform.solos = run_solos(name, cmdline, platform.result)
    return platform


def run_solos(name, cmdline, result):
    """Boot each test that `result`, platform name's log, says runs alone, with name's
    accelerator, CPUs and options (cmdline); judge each solo boot."""
    accel, cpus, _ = BOOTS[name]

    def boot(solo_cmdline, timeout):
        argv = qemu.qemu_command(KERNEL, accel, cmdline=solo_cmdline, smp=cpus)
        return qemu.boot(argv, timeout)
    return alone.run_solos(result, cmdline, boot,
                           lambda test: LOG_DIR / f"{name}-alone-{test}.log",
                           alone.timeout_from_environment())


def ktap_params(platform):
    """One pytest.param per KTAP test of the platform. The kernel's XFAIL and XPASS results
    are strict xfails: the first fails as expected, the second passes and so fails."""
    for test in platform.tests:
        marks = []
        if test.status in ("xfail", "xpass"):
            marks.append(pytest.mark.xfail(strict=True, reason=test.reason))
        yield pytest.param(platform, test, id=f"{platform.name}-{test.id}", marks=marks)


def platform_param(platform):
    marks = [pytest.mark.skip(reason=platform.skip)] if platform.skip else []
    return pytest.param(platform, id=platform.name, marks=marks)


def pytest_generate_tests(metafunc):
    """Boot only for the tests that judge a run: other test files never pay for a boot."""
    if "ktap_test" in metafunc.fixturenames:
        params = []
        for platform in load_platforms(platform_names()).values():
            if platform.skip or platform.failure:
                params.append(pytest.param(platform, None, id=platform.name,
                                           marks=platform_param(platform).marks))
            else:
                params.extend(ktap_params(platform))
        metafunc.parametrize("platform, ktap_test", params)
    elif "platform" in metafunc.fixturenames:
        platforms = load_platforms(platform_names()).values()
        metafunc.parametrize("platform", [platform_param(platform) for platform in platforms])
