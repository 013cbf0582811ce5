"""Boot switchyard under QEMU and capture its serial output within a time limit. Stdlib only.

`qemu_command()` builds the command line of docs/output.md and `boot()` runs it, handing each
cleaned serial line to a callback as it arrives. The QEMU exit status is returned untouched;
judging it against the log is switchyard.log's job.
"""

import os
import selectors
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from switchyard.log import clean

QEMU = "qemu-system-x86_64"
MACHINE = "microvm"
# -arch-capabilities: on this KVM-PVM host, QEMU 7.2 aborts at start-up with "failed to set
# MSR 0x10a" (IA32_ARCH_CAPABILITIES) for every -cpu model unless the feature is removed.
CPU = {"kvm": "host,pmu=on,migratable=no,-arch-capabilities", "tcg": "max"}


# What QEMU prints on stderr when it stops a KVM guest for good but keeps running, paused
# (accel/kvm/kvm-all.c: an emulation failure, for one): boot() kills it then.
STOPPED_GUEST = b"KVM internal error"
# How long a silent serial line waits before stderr is looked at again for STOPPED_GUEST: each
# test run alone that stops the guest waits about half of it (7 such boots in make check).
STOPPED_POLL_S = 0.1


@dataclass
class Boot:
    """One QEMU run. status is None when QEMU was killed: at the time limit, or earlier when
    it said it stopped the guest for good (stopped holds what it said)."""

    raw: bytes
    status: int
    seconds: float
    stderr: str
    stopped: str = ""

    @property
    def timed_out(self):
        return self.status is None and not self.stopped


def kvm_unusable_reason():
    """None if /dev/kvm opens read-write, else why not (the OS error text)."""
    try:
        os.close(os.open("/dev/kvm", os.O_RDWR))
    except OSError as error:
        return f"/dev/kvm: {error.strerror}"
    return None


def resolve_accel(accel):
    """Map "auto" to "kvm" when /dev/kvm is usable and not KVM-PVM, else "tcg"; pass others
    through. Returns (accel, why "auto" chose TCG, or "")."""
    if accel != "auto":
        return accel, ""
    if kvm_unusable_reason():
        return "tcg", ""
    if kvm_host() == "kvm-pvm":
        return "tcg", ("/dev/kvm is KVM-PVM (kvm_pvm), which takes minutes over the suite: TCG; "
                       "--accel kvm runs it there")
    return "kvm", ""


def kvm_host(root="/"):
    """Which KVM runs the guests here, as the kernel's platform.host= names it: "kvm-pvm" when
    the kvm_pvm module is loaded (a paravirtual nested KVM, no VMX), else "kvm-vmx" or
    "kvm-svm" when kvm_intel or kvm_amd is loaded and the CPU has the vmx or svm flag; None
    when none of these holds (the kernel then says identity=kvm). root: for tests."""
    root = Path(root)
    try:
        modules = {line.split()[0] for line in
                   (root / "proc/modules").read_text().splitlines() if line.strip()}
    except OSError:
        modules = set()
    modules |= {name for name in ("kvm_pvm", "kvm_intel", "kvm_amd")
                if (root / "sys/module" / name).is_dir()}
    try:
        flags = set()
        for line in (root / "proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                flags.update(line.partition(":")[2].split())
    except OSError:
        flags = set()
    if "kvm_pvm" in modules:
        return "kvm-pvm"
    if "kvm_intel" in modules and "vmx" in flags:
        return "kvm-vmx"
    if "kvm_amd" in modules and "svm" in flags:
        return "kvm-svm"
    return None


def merge_cmdline(base, extra):
    """base's kernel options, each one that extra names again replaced by extra's: the kernel
    refuses an option given twice, so SWITCHYARD_CMDLINE="tests=boot.*" narrows every boot."""
    name = lambda word: word.split("=", 1)[0]  # noqa: E731
    given = {name(word) for word in extra.split()}
    return " ".join([w for w in base.split() if name(w) not in given] + extra.split())


def qemu_command(kernel, accel, *, cpu=None, machine=MACHINE, cmdline="", smp=1, qemu=QEMU,
                 host=None):
    """The QEMU argv for one run; accel is "kvm" or "tcg"; cmdline follows exit=isa-debug.
    With more than one CPU the kernel is told how many QEMU gives it (smp.expect=N), so that
    a CPU that does not come up fails smp.every_cpu_comes_up_and_reports_its_apic_id.
    Under KVM it is told which KVM (platform.host=, from host or else kvm_host()), which the
    guest cannot see, so that a defect of KVM-PVM is never taken for one of VMX KVM."""
    expect = "" if smp == 1 or "smp.expect=" in cmdline else f"smp.expect={smp}"
    if accel == "kvm" and "platform.host=" not in cmdline:
        host = host or kvm_host()
    else:
        host = None
    append = " ".join(part for part in ["exit=isa-debug", cmdline, expect,
                                        f"platform.host={host}" if host else ""] if part)
    return [qemu, "-M", machine, "-m", "128M", "-display", "none", "-nodefaults",
            "-no-reboot", "-serial", "stdio",
            "-device", "isa-debug-exit,iobase=0xf4,iosize=4",
            "-accel", accel, "-cpu", cpu or CPU[accel], "-smp", str(smp),
            "-kernel", str(kernel), "-append", append]


def boot(argv, timeout, on_text=lambda text: None, answer=None):
    """Run argv, passing cleaned complete lines to on_text as they arrive and any partial
    last line at the end. After `timeout` seconds, kill QEMU's whole process group.
    With answer, QEMU's standard input (the serial port's receive side with -serial stdio) is a
    pipe, and the bytes answer(text) returns for a batch of lines are written to it at once."""
    start = time.monotonic()
    proc = None

    def on_lines(text):
        on_text(text)
        reply = answer(text) if answer else None
        if reply:
            proc.stdin.write(reply)
            proc.stdin.flush()

    lines = _LineSplitter(on_lines)
    with tempfile.TemporaryFile() as stderr:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE if answer else subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=stderr, start_new_session=True)
        status = None
        stopped = lambda: STOPPED_GUEST in _read_all(stderr)  # noqa: E731
        try:
            if _read_until_eof(proc.stdout.fileno(), start + timeout, lines, stopped):
                status = proc.wait(max(0.0, start + timeout - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
        finally:
            if status is None:
                _kill_group(proc)
            proc.stdout.close()
            lines.flush()
            if proc.stdin:
                proc.stdin.close()
        text = _read_all(stderr).decode("utf-8", "replace")
    said = next((line for line in text.splitlines() if STOPPED_GUEST.decode() in line), "")
    return Boot(bytes(lines.raw), status, time.monotonic() - start, text,
                said.strip() if status is None else "")


def _read_all(file):
    file.seek(0)
    return file.read()


def _kill_group(proc):
    """SIGKILL the process group that proc leads, and reap proc."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass  # the group is already gone
    proc.wait()


class _LineSplitter:
    """Keeps the raw bytes and hands cleaned complete lines to a callback."""

    def __init__(self, on_text):
        self.on_text, self.raw, self.pending = on_text, bytearray(), b""

    def feed(self, chunk):
        self.raw += chunk
        complete, newline, self.pending = (self.pending + chunk).rpartition(b"\n")
        if newline:
            self.on_text(clean(complete + newline))

    def flush(self):
        if self.pending:
            self.on_text(clean(self.pending))
            self.pending = b""


def _read_until_eof(fd, deadline, lines, stopped=lambda: False):
    """Feed lines from fd; return True at end of file, False when the deadline passes or, looked
    at after each STOPPED_POLL_S without output, stopped() says QEMU will send nothing more."""
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while time.monotonic() < deadline:
            if not selector.select(min(STOPPED_POLL_S, deadline - time.monotonic())):
                if stopped():
                    return False
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                return True
            lines.feed(chunk)
    return False
