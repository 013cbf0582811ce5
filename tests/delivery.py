"""Helpers of tests/test_delivery.py: firmware QEMU command lines, QMP, a network namespace.

Every process started here runs in its own session and is killed by process group; every boot
has a time limit. QEMU runs under TCG: the firmware boot paths fail under KVM-PVM here.
"""

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import switchyard_log as ktap  # noqa: E402
import switchyard_qemu as qemu  # noqa: E402

BUILD = ROOT / "build"
OVMF_CODE = Path("/usr/share/OVMF/OVMF_CODE_4M.fd")
OVMF_VARS = Path("/usr/share/OVMF/OVMF_VARS_4M.fd")
BOOT_TIMEOUT = 150  # seconds per firmware boot; they take 4-16 s, up to 2x on a busy machine
# Short runs: the delivery path is under test, not the suite. Status 33 means PASS.
CMDLINE = "tests=boot.* exit=isa-debug"


def machine(*, uefi=False, tmp_path=None, serial_unit=0):
    """QEMU argv up to the boot device: SeaBIOS (pc) or OVMF (q35, with a private copy of the
    variable store), isa-debug-exit, and the serial port `serial_unit` on stdout."""
    argv = [qemu.QEMU, "-M", "q35" if uefi else "pc", "-m", "256M", "-display", "none",
            "-nodefaults", "-no-reboot", "-accel", "tcg", "-cpu", "max",
            "-device", "isa-debug-exit,iobase=0xf4,iosize=4"]
    argv += ["-serial", "null"] * serial_unit + ["-serial", "stdio"]
    if uefi:
        variables = tmp_path / "OVMF_VARS.fd"
        shutil.copyfile(OVMF_VARS, variables)
        argv += ["-drive", f"if=pflash,format=raw,readonly=on,file={OVMF_CODE}",
                 "-drive", f"if=pflash,format=raw,file={variables}"]
    return argv


def boot(argv, log_path):
    """Run QEMU to its end (or the time limit); keep the raw log; return (Boot, LogResult)."""
    run = qemu.boot(argv, BOOT_TIMEOUT)
    log_path.write_bytes(run.raw)
    assert not run.timed_out, f"QEMU killed after {BOOT_TIMEOUT} s\n{tail(run.raw)}"
    return run, ktap.check_log(run.raw, qemu_status=run.status)


def tail(raw, count=25):
    return "\n".join(ktap.clean(raw).splitlines()[-count:])


def kill_group(proc):
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Qmp:
    """A minimal QMP client over a unix socket."""

    def __init__(self, path, deadline):
        while True:
            try:
                self.sock = socket.socket(socket.AF_UNIX)
                self.sock.connect(str(path))
                break
            except (FileNotFoundError, ConnectionRefusedError):
                self.sock.close()
                assert time.monotonic() < deadline, f"no QMP socket at {path}"
                time.sleep(0.05)
        self.sock.settimeout(max(1.0, deadline - time.monotonic()))
        self.file = self.sock.makefile("rwb")
        self.read()  # the greeting
        self.execute("qmp_capabilities")

    def read(self):
        while True:
            message = json.loads(self.file.readline())
            if "event" not in message:
                return message

    def execute(self, command):
        self.file.write(json.dumps({"execute": command}).encode() + b"\n")
        self.file.flush()
        reply = self.read()
        assert "return" in reply, reply
        return reply["return"]

    def close(self):
        self.file.close()
        self.sock.close()


def netns_unusable_reason():
    """None if this process can create network namespaces and tap devices, else why not."""
    if os.geteuid() != 0:
        return "creating a network namespace needs root"
    if not Path("/dev/net/tun").exists():
        return "no /dev/net/tun"
    for tool in ("ip", "dnsmasq"):
        if shutil.which(tool) is None:
            return f"{tool} not found (iproute2, dnsmasq-base)"
    return None


@contextlib.contextmanager
def network_namespace(name, address):
    """A fresh namespace holding tap0 with `address` (CIDR), up; deleted on exit, whatever
    happened (deleting it also removes tap0)."""
    subprocess.run(["ip", "netns", "delete", name], capture_output=True)  # a stale one
    subprocess.run(["ip", "netns", "add", name], check=True, capture_output=True)
    try:
        for command in (["link", "set", "lo", "up"],
                        ["tuntap", "add", "dev", "tap0", "mode", "tap"],
                        ["addr", "add", address, "dev", "tap0"],
                        ["link", "set", "tap0", "up"]):
            subprocess.run(["ip", "-n", name, *command], check=True, capture_output=True)
        yield name
    finally:
        subprocess.run(["ip", "netns", "delete", name], capture_output=True)
