"""Delivery to real hardware, end to end in QEMU TCG: GRUB ISO, PXE, UEFI, serial capture, LAVA.

Each boot path (marked "delivery") must yield a complete, verified KTAP log (verdict PASS, QEMU
status 33) through the real firmware and loaders: SeaBIOS and OVMF from the ISO, the iPXE ROM
and GRUB netboot over QEMU's user-net TFTP, OVMF's PXE, and a real dnsmasq on a tap device in
a network namespace made here. scripts/capture is tested against QEMU's pty and TCP serial and
against recorded logs replayed through a pty pair. The LAVA templates are validated offline.
Raw logs are kept in build/logs/delivery-*.log.
"""

import os
import re
import subprocess
import sys
import time

import pytest
import yaml

import delivery
import switchyard_log as ktap

ROOT = delivery.ROOT
LOG_DIR = delivery.BUILD / "logs"
KERNEL = delivery.BUILD / "switchyard.elf"
KERNEL32 = delivery.BUILD / "switchyard32.elf"
CAPTURE = ROOT / "scripts" / "capture"
LAVA_CHECK = ROOT / "scripts" / "lava-check"
LAVA_JOBS = sorted((ROOT / "deploy" / "lava").glob("*.yaml"))
NETNS_ADDRESS, NETNS_RANGE = "10.77.0.1/24", "10.77.0.100,10.77.0.150,1h"

delivery_test = [pytest.mark.delivery, pytest.mark.timeout(240)]


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


@pytest.fixture(scope="session")
def pxe_tree(kernels, tmp_path_factory):
    """One TFTP tree (scripts/mkpxe) for every network path; its dnsmasq.conf is for tap0."""
    out = tmp_path_factory.mktemp("pxe") / "pxe"
    script("mkpxe", "--cmdline", delivery.CMDLINE, "--interface", "tap0",
           "--dhcp-range", NETNS_RANGE, "--out", out)
    return out


def make_iso(tmp_path, *args):
    iso = tmp_path / "switchyard.iso"
    script("mkiso", "--cmdline", delivery.CMDLINE, *args, "--out", iso)
    return iso


def assert_complete(name, run, result, loader):
    """The whole log arrived, verified, every test passed, and the expected loader booted."""
    assert result.verdict == ktap.PASS and not result.errors, \
        f"{name}: {result.verdict} {result.errors}\n{delivery.tail(run.raw)}"
    assert run.status == ktap.QEMU_STATUS[ktap.PASS]
    assert result.count("pass") > 0
    memory = [d for d in result.diagnostics if d.startswith("memory: multiboot")]
    assert memory and loader in memory[0], memory
    print(f"{name}: {run.seconds:.1f} s, {result.count('pass')} passed")


@pytest.mark.parametrize("protocol, console, serial_unit", [
    ("multiboot2", "ttyS1", 1),
    ("multiboot", "ttyS0", 0),
])
@pytest.mark.usefixtures("kernels")
@pytest.mark.delivery
@pytest.mark.timeout(240)
def test_iso_boots_under_seabios(tmp_path, protocol, console, serial_unit):
    iso = make_iso(tmp_path, "--protocol", protocol, "--console", console)
    argv = delivery.machine(serial_unit=serial_unit) + ["-cdrom", str(iso)]
    log = LOG_DIR / f"delivery-iso-bios-{protocol}.log"
    run, result = delivery.boot(argv, log)
    loader = "multiboot2 loader=\"GRUB" if protocol == "multiboot2" else "multiboot1 loader=\"GRUB"
    assert_complete(f"ISO SeaBIOS {protocol} {console}", run, result, loader)
    assert f"console={console}" in result.lines[2] or console == "ttyS0"
    # LAVA's monitor reads this log, GRUB's noise and all, as the harness does.
    subprocess.run([sys.executable, str(LAVA_CHECK), *LAVA_JOBS, "--log", str(log)],
                   check=True, capture_output=True, timeout=60)


@pytest.mark.parametrize("uefi", [False, True], ids=["seabios", "ovmf"])
@pytest.mark.usefixtures("kernels")
@pytest.mark.delivery
@pytest.mark.timeout(240)
def test_smp_under_grub_finds_the_madt_through_the_multiboot2_rsdp(tmp_path, uefi):
    """GRUB passes the RSDP in a multiboot2 tag: under OVMF there is no BIOS area to scan."""
    iso = tmp_path / "switchyard.iso"
    script("mkiso", "--cmdline", "tests=smp.* smp.expect=2 exit=isa-debug", "--protocol",
           "multiboot2", "--out", iso)
    argv = delivery.machine(uefi=uefi, tmp_path=tmp_path) + ["-smp", "2", "-cdrom", str(iso)]
    name = "ovmf" if uefi else "seabios"
    run, result = delivery.boot(argv, LOG_DIR / f"delivery-smp-{name}.log")
    assert_complete(f"SMP ISO {name}", run, result, "multiboot2 loader=\"GRUB")
    madt = [d for d in result.diagnostics if d.startswith("smp: MADT via")]
    assert madt and madt[0].startswith("smp: MADT via multiboot2 RSDP"), madt
    assert "smp: 2 CPUs online" in result.diagnostics
    assert result.count("skip") == 0 and result.count("pass") >= 15


@pytest.mark.usefixtures("kernels")
@pytest.mark.delivery
@pytest.mark.timeout(240)
def test_iso_boots_under_ovmf(tmp_path):
    argv = delivery.machine(uefi=True, tmp_path=tmp_path) + ["-cdrom", str(make_iso(tmp_path))]
    run, result = delivery.boot(argv, LOG_DIR / "delivery-iso-uefi.log")
    assert_complete("ISO OVMF multiboot2", run, result, "multiboot2 loader=\"GRUB")


@pytest.mark.parametrize("path, bootfile, uefi, loader", [
    ("ipxe-rom", "boot.ipxe", False, "multiboot1 loader=\"iPXE"),
    ("grub-bios", "boot/grub/i386-pc/core.0", False, "multiboot2 loader=\"GRUB"),
    ("grub-uefi", "boot/grub/x86_64-efi/core.efi", True, "multiboot2 loader=\"GRUB"),
])
@pytest.mark.delivery
@pytest.mark.timeout(240)
def test_pxe_over_user_net_tftp(tmp_path, pxe_tree, path, bootfile, uefi, loader):
    """BIOS: the NIC's iPXE ROM runs boot.ipxe or chains GRUB's core.0; UEFI: OVMF's PXE
    (the iPXE EFI driver) loads GRUB's core.efi. QEMU's user network serves DHCP and TFTP."""
    argv = delivery.machine(uefi=uefi, tmp_path=tmp_path) + [
        "-boot", "n", "-device", "e1000,netdev=n0",
        "-netdev", f"user,id=n0,tftp={pxe_tree / 'tftp'},bootfile={bootfile}"]
    run, result = delivery.boot(argv, LOG_DIR / f"delivery-pxe-{path}.log")
    assert_complete(f"PXE {path}", run, result, loader)


@pytest.mark.skipif(delivery.netns_unusable_reason() is not None,
                    reason=str(delivery.netns_unusable_reason()))
@pytest.mark.delivery
@pytest.mark.timeout(240)
def test_pxe_from_dnsmasq_on_a_tap_in_a_network_namespace(tmp_path, pxe_tree):
    """The lab set-up for real: deploy's dnsmasq.conf, as mkpxe renders it, serves DHCP and
    TFTP on tap0; QEMU's NIC (iPXE) asks for it and gets boot.ipxe."""
    name = f"switchyard-{os.getpid()}"
    dnsmasq_log = tmp_path / "dnsmasq.log"
    with delivery.network_namespace(name, NETNS_ADDRESS):
        dnsmasq = subprocess.Popen(
            ["ip", "netns", "exec", name, "dnsmasq", f"--conf-file={pxe_tree / 'dnsmasq.conf'}",
             "--keep-in-foreground", "--user=root", "--group=root",
             f"--pid-file={tmp_path / 'dnsmasq.pid'}",
             f"--dhcp-leasefile={tmp_path / 'dnsmasq.leases'}",
             f"--log-facility={dnsmasq_log}"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            start_new_session=True)
        try:
            time.sleep(0.3)
            assert dnsmasq.poll() is None, f"dnsmasq exited: {dnsmasq.stderr.read().decode()}"
            argv = ["ip", "netns", "exec", name] + delivery.machine() + [
                "-boot", "n", "-device", "e1000,netdev=n0",
                "-netdev", "tap,id=n0,ifname=tap0,script=no,downscript=no"]
            run, result = delivery.boot(argv, LOG_DIR / "delivery-pxe-dnsmasq.log")
        finally:
            delivery.kill_group(dnsmasq)
    served = dnsmasq_log.read_text() if dnsmasq_log.exists() else ""
    assert "sent" in served and "switchyard32.elf" in served, served
    assert_complete("PXE dnsmasq netns", run, result, "multiboot1 loader=\"iPXE")


# scripts/capture: live serial lines.

def start_capture(*args):
    """scripts/capture in its own session; returns once it says it is reading the source."""
    proc = subprocess.Popen([sys.executable, str(CAPTURE), "--quiet", "--timeout", "60", *args],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    ready = proc.stderr.readline().decode()
    assert ready.startswith("capture: reading "), ready + proc.stderr.read().decode()
    return proc


def finish_capture(proc):
    try:
        out, err = proc.communicate(timeout=90)
    finally:
        delivery.kill_group(proc)
    return proc.returncode, err.decode()


def kernel_qemu(*serial):
    """The quick -kernel boot (microvm) with the given serial arguments, in its own session."""
    argv = [delivery.qemu.QEMU, "-M", "microvm", "-m", "128M", "-display", "none",
            "-nodefaults", "-no-reboot", "-accel", "tcg", "-cpu", "max",
            "-device", "isa-debug-exit,iobase=0xf4,iosize=4", *serial,
            "-kernel", str(KERNEL32), "-append", delivery.CMDLINE]
    return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)


def assert_captured(log_path, status, err):
    raw = log_path.read_bytes()
    result = ktap.check_log(raw)
    assert status == 0 and result.verdict == ktap.PASS and not result.errors, (status, err)
    return raw


@pytest.mark.usefixtures("kernels")
@pytest.mark.delivery
@pytest.mark.timeout(120)
def test_capture_reads_qemu_pty_serial_started_paused(tmp_path):
    """-serial pty loses everything unless QEMU starts paused, the pty is opened, then `cont`."""
    qmp_path = tmp_path / "qmp.sock"
    qemu = kernel_qemu("-S", "-chardev", "pty,id=s0", "-serial", "chardev:s0",
                       "-qmp", f"unix:{qmp_path},server=on,wait=off")
    capture = None
    try:
        qmp = delivery.Qmp(qmp_path, time.monotonic() + 30)
        pty = next(c["filename"][len("pty:"):] for c in qmp.execute("query-chardev")
                   if c["label"] == "s0")
        capture = start_capture("--device", pty, "--baud", "115200", "--log", tmp_path / "l")
        qmp.execute("cont")
        status, err = finish_capture(capture)
        qmp.close()
        assert qemu.wait(timeout=60) == ktap.QEMU_STATUS[ktap.PASS]
    finally:
        delivery.kill_group(qemu)
        if capture:
            delivery.kill_group(capture)
    assert_captured(tmp_path / "l", status, err)


@pytest.mark.usefixtures("kernels")
@pytest.mark.delivery
@pytest.mark.timeout(120)
def test_capture_reads_qemu_tcp_serial(tmp_path):
    port = delivery.free_port()
    qemu = kernel_qemu("-chardev", f"socket,id=s0,host=127.0.0.1,port={port},server=on,wait=on",
                       "-serial", "chardev:s0")
    try:
        status, err = finish_capture(start_capture("--tcp", f"127.0.0.1:{port}",
                                                   "--log", tmp_path / "l"))
        assert qemu.wait(timeout=60) == ktap.QEMU_STATUS[ktap.PASS]
    finally:
        delivery.kill_group(qemu)
    assert_captured(tmp_path / "l", status, err)


def replay(tmp_path, raw, *args):
    """Write raw into a pty pair once scripts/capture reads the slave; (status, stderr)."""
    master, slave = os.openpty()
    try:
        proc = start_capture("--device", os.ttyname(slave), "--log", tmp_path / "l", *args)
        for offset in range(0, len(raw), 256):  # in pieces, as a UART delivers them
            os.write(master, raw[offset:offset + 256])
        return finish_capture(proc)
    finally:
        os.close(slave)
        os.close(master)


@pytest.mark.delivery
@pytest.mark.timeout(120)
def test_capture_replays_recorded_logs_through_a_pty_byte_exact(tmp_path):
    """The GRUB/OVMF logs recorded above (whatever exists), and one with trailing noise."""
    logs = sorted(LOG_DIR.glob("delivery-*.log")) or sorted(LOG_DIR.glob("tcg.log"))
    if not logs:
        pytest.skip("no recorded log in build/logs: run the delivery boots first")
    for log in logs:
        raw = log.read_bytes()
        if ktap.check_log(raw).verdict != ktap.PASS:
            continue
        status, err = replay(tmp_path, raw + b"\x1b[2Jreboot noise\r\n")
        assert status == 0, (log, err)
        assert (tmp_path / "l").read_bytes() == raw, log


@pytest.mark.timeout(120)
def test_capture_reports_a_truncated_log_as_a_crash_and_a_silent_line_as_timeout(tmp_path):
    raw = synthetic_log().encode()
    cut = tmp_path / "cut.log"
    cut.write_bytes(raw[:len(raw) // 2])
    status, err = finish_capture(start_capture("--command", f"cat {cut}"))
    assert status == 4, err
    status, err = finish_capture(start_capture("--command", f"cat {cut}; sleep 60",
                                               "--timeout", "1"))
    assert status == 124, err
    failing = tmp_path / "fail.log"
    failing.write_bytes(synthetic_log(fail=True).encode())
    status, err = finish_capture(start_capture("--command", f"cat {failing}"))
    assert status == 1, err


# LAVA job templates.

def synthetic_log(fail=False):
    body = ["KTAP version 1", "# switchyard 0.1 (x86-64)", "# cmdline: tests=*", "1..1",
            "    KTAP version 1", "    # Subtest: arch", "    1..3",
            "    ok 1 rdmsr_reads_efer", "    # reason it failed",
            f"    {'not ok' if fail else 'ok'} 2 breakpoint_fires",
            "    ok 3 bts_records_branches # SKIP CPUID.1:EDX.DS=0",
            f"{'not ok' if fail else 'ok'} 1 arch"]
    return "".join(line + "\r\n" for line in body + [ktap.final_line(body)])


@pytest.mark.parametrize("job", LAVA_JOBS, ids=[job.stem for job in LAVA_JOBS])
@pytest.mark.timeout(60)
def test_lava_template_is_valid_and_its_monitor_reads_the_results(tmp_path, job):
    log = tmp_path / "serial.log"
    log.write_text(synthetic_log(fail=True))
    proc = subprocess.run([sys.executable, str(LAVA_CHECK), str(job), "--log", str(log)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    monitor = yaml.safe_load(job.read_text())["actions"][2]["test"]["monitors"][0]
    assert monitor["start"] and monitor["end"]


@pytest.mark.parametrize("job", LAVA_JOBS, ids=[job.stem for job in LAVA_JOBS])
@pytest.mark.timeout(60)
def test_lava_check_rejects_a_start_string_in_the_commands(tmp_path, job):
    data = yaml.safe_load(job.read_text())
    boot = next(a["boot"] for a in data["actions"] if "boot" in a)
    boot["commands"][-2] += " # switchyard 0.1 (x86-64)"
    broken = tmp_path / job.name
    broken.write_text(yaml.safe_dump(data))
    proc = subprocess.run([sys.executable, str(LAVA_CHECK), str(broken)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and re.search(r"start .* occurs in the boot command",
                                              proc.stderr), proc.stderr


@pytest.mark.parametrize("job", LAVA_JOBS, ids=[job.stem for job in LAVA_JOBS])
@pytest.mark.timeout(60)
def test_lava_check_rejects_a_kernel_that_may_run_the_emulated_cpu(tmp_path, job):
    data = yaml.safe_load(job.read_text())
    boot = next(a["boot"] for a in data["actions"] if "boot" in a)
    boot["commands"] = [c.replace(" ds=hardware", "") for c in boot["commands"]]
    broken = tmp_path / job.name
    broken.write_text(yaml.safe_dump(data))
    proc = subprocess.run([sys.executable, str(LAVA_CHECK), str(broken)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "lacks ds=hardware" in proc.stderr, proc.stderr


def test_lava_case_names_keep_the_emulated_label(tmp_path):
    """A result from the model reaches LAVA as ..._emulated, never under a hardware name."""
    body = ["KTAP version 1", "# switchyard 0.1 (x86-64)", "1..1", "    KTAP version 1",
            "    # Subtest: bts", "    1..1", "    ok 1 known_branch_sequence__emulated",
            "ok 1 bts"]
    log = tmp_path / "serial.log"
    log.write_text("".join(line + "\r\n" for line in body + [ktap.final_line(body)]))
    monitor = yaml.safe_load(LAVA_JOBS[0].read_text())["actions"][2]["test"]["monitors"][0]
    pattern = re.compile(monitor["pattern"])
    found = [m.group("test_case_id") for m in pattern.finditer(log.read_text())]
    assert found and all(name.endswith("__emulated") for name in found), found
