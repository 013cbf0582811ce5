"""Helpers of the delivery tests: firmware QEMU command lines, QMP, a network namespace.

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

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
from switchyard import log as ktap  # noqa: E402
from switchyard import qemu  # noqa: E402

BUILD = ROOT / "build"
OVMF_CODE = Path("/usr/share/OVMF/OVMF_CODE_4M.fd")
OVMF_VARS = Path("/usr/share/OVMF/OVMF_VARS_4M.fd")
BOOT_TIMEOUT = 150  # seconds per firmware boot; they take 4-16 s, up to 2x on a busy machine
# Short runs: the delivery path is under test, not the suite. Status 33 means PASS.
CMDLINE = "tests=boot.* exit=isa-debug"
LOG_DIR = BUILD / "logs"
KERNEL = BUILD / "switchyard.elf"
KERNEL32 = BUILD / "switchyard32.elf"


def script(name, *args):
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / name), *map(str, args)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc


@pytest.fixture(scope="session")
def kernels():
    for image in (KERNEL, KERNEL32):
        assert image.is_file(), f"kernel image {image} not found: run make"
    LOG_DIR.mkdir(parents=True, exist_ok=True)


def assert_complete(name, run, result, loader):
    """The whole log arrived, verified, every test passed, and the expected loader booted."""
    assert result.verdict == ktap.PASS and not result.errors, \
        f"{name}: {result.verdict} {result.errors}\n{tail(run.raw)}"
    assert run.status == ktap.QEMU_STATUS[ktap.PASS]
    assert result.count("pass") > 0
    memory = [d for d in result.diagnostics if d.startswith("memory: multiboot")]
    assert memory and loader in memory[0], memory
    print(f"{name}: {run.seconds:.1f} s, {result.count('pass')} passed")


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


@contextlib.contextmanager
def veth_namespaces(name, address):
    """Two fresh namespaces, `name` and `name`-client, joined by a veth pair: "server" in the
    first, with `address` (CIDR), and "client" in the second, without an address; both up.
    Yields the two names; both are deleted on exit, whatever happened."""
    names = (name, f"{name}-client")
    for each in names:
        subprocess.run(["ip", "netns", "delete", each], capture_output=True)  # a stale one
        subprocess.run(["ip", "netns", "add", each], check=True, capture_output=True)
    try:
        subprocess.run(["ip", "-n", name, "link", "add", "server", "type", "veth", "peer",
                        "name", "client", "netns", names[1]], check=True, capture_output=True)
        for where, command in ((name, ["addr", "add", address, "dev", "server"]),
                               (name, ["link", "set", "server", "up"]),
                               (names[1], ["link", "set", "client", "up"])):
            subprocess.run(["ip", "-n", where, *command], check=True, capture_output=True)
        yield names
    finally:
        for each in names:
            subprocess.run(["ip", "netns", "delete", each], capture_output=True)


# A DHCPDISCOVER as a PXE ROM sends it (RFC 2131, RFC 4578): the broadcast flag, so that the
# offer comes back by broadcast to a client without an address.
DHCP_MAGIC = bytes([99, 130, 83, 99])
PXE_VENDOR_CLASS = b"PXEClient:Arch:00000:UNDI:002001"


def dhcp_discover_packet(xid, mac, pxe):
    options = bytes([53, 1, 1])  # DHCPDISCOVER
    if pxe:
        options += bytes([60, len(PXE_VENDOR_CLASS)]) + PXE_VENDOR_CLASS
        options += bytes([93, 2, 0, 0])  # client architecture: x86 BIOS
        options += bytes([94, 3, 1, 2, 1])  # UNDI 2.1
        options += bytes([97, 17, 0]) + bytes(range(16))  # the client's UUID
    options += bytes([55, 8, 1, 3, 6, 15, 43, 60, 66, 67, 255])
    header = bytes([1, 1, 6, 0]) + xid + bytes([0, 0, 0x80, 0]) + bytes(16)
    packet = header + mac + bytes(10) + bytes(64 + 128) + DHCP_MAGIC + options
    return packet + bytes(max(0, 300 - len(packet)))


def dhcp_parse(packet):
    """{"xid", "yiaddr", "siaddr", "file", "options": {code: hex}} of a BOOTREPLY."""
    if len(packet) < 240 or packet[0] != 2 or packet[236:240] != DHCP_MAGIC:
        return None
    options, at = {}, 240
    while at < len(packet) and packet[at] != 255:
        if packet[at] == 0:
            at += 1
            continue
        code, size = packet[at], packet[at + 1]
        options[code] = packet[at + 2:at + 2 + size].hex()
        at += 2 + size
    return {"xid": packet[4:8].hex(), "yiaddr": socket.inet_ntoa(packet[16:20]),
            "siaddr": socket.inet_ntoa(packet[20:24]),
            "file": packet[108:236].split(b"\0")[0].decode(errors="replace"),
            "options": options}


def dhcp_discover(interface, pxe, seconds):
    """Broadcast one DHCPDISCOVER on `interface` (which needs no address) and return every
    reply to it that arrives within `seconds`, parsed."""
    xid, mac = os.urandom(4), bytes([0x52, 0x54, 0, 0x12, 0x34, 0x56])
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, interface.encode())
        sock.bind(("", 68))
        sock.sendto(dhcp_discover_packet(xid, mac, pxe), ("255.255.255.255", 67))
        replies, deadline = [], time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            sock.settimeout(left)
            try:
                reply = dhcp_parse(sock.recv(4096))
            except socket.timeout:
                break
            if reply and reply["xid"] == xid.hex():
                replies.append(reply)
    return replies


if __name__ == "__main__":
    # python3 tests/delivery/delivery.py dhcp-discover INTERFACE pxe|plain SECONDS: the replies
    # as JSON,
    # for a test that runs this inside a network namespace (ip netns exec).
    assert sys.argv[1] == "dhcp-discover", sys.argv
    print(json.dumps(dhcp_discover(sys.argv[2], sys.argv[3] == "pxe", float(sys.argv[4]))))
