"""Which UART the kernel writes to: console=, else the ACPI SPCR's, else COM1 (docs/consoles.md).

These boot the real kernel under TCG. QEMU's microvm, the harness's machine, leaves out tables
given with -acpitable, so the SPCR boots use the pc machine, which adds them to its RSDT; COM2 is
an isa-serial at 0x2f8 writing to a file. QEMU x86 has no memory-mapped 16550 to boot with, so
console=mmio is tested here only where nothing answers or memory does (host tests cover the
parsing and the probe against a 16550 model).
"""

import re
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
from switchyard import log as ktap  # noqa: E402
from switchyard import qemu as switchyard_qemu  # noqa: E402

KERNEL = ROOT / "build" / "switchyard32.elf"
TESTS = "tests=boot.long_mode_is_active"
HEADER_SIZE = 36
SPCR_LENGTH = 80  # revisions 1 to 3
SPACE_MEMORY, SPACE_IO = 0, 1
TYPE_16550, TYPE_PL011 = 0x00, 0x03
BAUD_115200 = 7


def spcr(address, *, space=SPACE_IO, bit_width=8, access_size=1, interface_type=TYPE_16550,
         baud_code=BAUD_115200, pci=None):
    """An SPCR revision 2 (Microsoft's SPCR specification): a UART at address; pci: its
    (device id, vendor id, bus, device, function), else none."""
    body = bytearray(SPCR_LENGTH - HEADER_SIZE)
    at = lambda offset: offset - HEADER_SIZE  # noqa: E731
    body[at(36)] = interface_type
    struct.pack_into("<BBBBQ", body, at(40), space, bit_width, 0, access_size, address)
    body[at(58)] = baud_code
    body[at(60)] = 1  # one stop bit
    device, vendor, bus, slot, function = pci or (0xFFFF, 0xFFFF, 0, 0, 0)  # 0xffff: not PCI
    struct.pack_into("<HHBBB", body, at(64), device, vendor, bus, slot, function)
    table = bytearray(b"SPCR" + struct.pack("<I", SPCR_LENGTH) + bytes([2, 0]) + b"SWYARD"
                      + b"SWITCHYD" + bytes(12)) + body
    table[9] = -sum(table) & 0xFF
    return bytes(table)


PCI_SERIAL = ["-device", "pci-serial,chardev=pciserial"]  # QEMU's 1b36:0002, BAR0 in I/O space


def pci_serial_port(tmp_path):
    """The I/O port the firmware gives the pci-serial's BAR0 on the pc machine of boot(pci=...),
    read from QEMU's monitor ("info pci") while the same PCI devices boot without output."""
    argv = switchyard_qemu.qemu_command(KERNEL, "tcg", machine="pc", cmdline=TESTS)
    exit_device = argv.index("isa-debug-exit,iobase=0xf4,iosize=4")
    del argv[exit_device - 1:exit_device + 1]  # QEMU must stay up: the kernel halts at its end
    argv = [("null" if arg == "stdio" else arg) for arg in argv] + PCI_SERIAL + [
        "-chardev", f"file,id=pciserial,path={tmp_path / 'probe.log'}", "-monitor", "stdio"]
    with subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True) as qemu:
        time.sleep(2)  # SeaBIOS places the BARs in POST, before it loads the kernel
        qemu.stdin.write("info pci\n")
        qemu.stdin.flush()
        time.sleep(1)  # the monitor answers before it reads the next command
        output, _ = qemu.communicate("quit\n", timeout=30)
    found = re.search(r"PCI device 1b36:0002.*?BAR0: I/O at (0x[0-9a-f]+)", output, re.S)
    assert found, output
    return int(found.group(1), 16)


def boot(tmp_path, cmdline, *, table=None, com2=False, pci=False, machine="pc"):
    """Boot with cmdline; table: SPCR bytes for -acpitable; com2: an isa-serial at 0x2f8;
    pci: a pci-serial. Returns (QEMU status, COM1's raw output, COM2's or the PCI UART's)."""
    assert KERNEL.is_file(), f"kernel image {KERNEL} not found: run make"
    argv = switchyard_qemu.qemu_command(KERNEL, "tcg", machine=machine, cmdline=cmdline)
    if table is not None:
        (tmp_path / "spcr.bin").write_bytes(table)
        argv += ["-acpitable", f"file={tmp_path / 'spcr.bin'}"]
    com2_log = tmp_path / "com2.log"
    if com2:
        argv += ["-chardev", f"file,id=com2,path={com2_log}",
                 "-device", "isa-serial,iobase=0x2f8,irq=3,chardev=com2"]
    if pci:
        argv += PCI_SERIAL + ["-chardev", f"file,id=pciserial,path={com2_log}"]
    run = switchyard_qemu.boot(argv, 60)
    assert not run.timed_out, run.stderr
    return run.status, run.raw, com2_log.read_bytes() if com2 or pci else b""


def console_line(result):
    lines = [line for line in result.diagnostics if line.startswith("console: ")]
    assert len(lines) == 1, result.diagnostics[:6]
    return lines[0]


def judged(raw, status, expected_status=33):
    result = ktap.check_log(raw, status)
    assert status == expected_status, (status, result.errors, result.lines[:8])
    assert not result.errors and result.integrity_error is None, result.errors
    return result


@pytest.mark.boot
def test_without_console_the_kernel_takes_the_spcr_uart_on_com2(tmp_path):
    status, com1, com2 = boot(tmp_path, TESTS, table=spcr(0x2F8), com2=True)
    assert com1 == b"", com1[:200]
    result = judged(com2, status)
    assert result.verdict == ktap.PASS
    assert console_line(result) == ("console: port 0x2f8, 115200 baud: from ACPI SPCR revision "
                                    "2, interface type 0x00 (16550); no console=")


@pytest.mark.boot
def test_an_spcr_naming_a_pci_uart_puts_the_log_there(tmp_path):
    port = pci_serial_port(tmp_path)
    table = spcr(port, interface_type=0x12, pci=(0x0002, 0x1B36, 0, 2, 0))
    status, com1, uart = boot(tmp_path, TESTS, table=table, pci=True)
    assert com1 == b"", com1[:200]
    assert console_line(judged(uart, status)) == (
        f"console: port {port:#x}, 115200 baud: from ACPI SPCR revision 2, interface type 0x12 "
        "(16550 described by the GAS); no console=")


@pytest.mark.boot
def test_console_on_the_command_line_wins_over_the_spcr(tmp_path):
    status, com1, com2 = boot(tmp_path, f"{TESTS} console=ttyS0", table=spcr(0x2F8), com2=True)
    assert com2 == b"", com2[:200]
    assert console_line(judged(com1, status)) == \
        "console: port 0x3f8, 115200 baud: from console="


@pytest.mark.boot
@pytest.mark.parametrize("table, reason", [
    (spcr(0x2F8, interface_type=TYPE_PL011),
     "ACPI SPCR revision 2 refused: interface type 0x03 (ARM PL011) is not a 16550"),
    (spcr(0x2E8),
     "ACPI SPCR names port 0x2e8, 115200 baud: no 16550 UART answers: its line status "
     "reads 0xff"),
    (spcr(0xD0000000, space=SPACE_MEMORY, bit_width=32, access_size=3),
     "ACPI SPCR names mmio32 0xd0000000, 115200 baud: no 16550 UART answers: its scratch "
     "register does not keep a value"),
    (spcr(0x10000000, space=SPACE_MEMORY),
     "ACPI SPCR names mmio 0x10000000, 115200 baud: MMIO address 0x10000000 is outside "
     "0xc0000000-0xffffffff, the uncached window the kernel maps for devices"),
    (spcr(0x2F8, baud_code=5), "ACPI SPCR revision 2 refused: baud rate code 5 is reserved"),
], ids=["pl011", "no-uart-at-port", "no-uart-in-memory", "memory-outside-window", "bad-baud"])
def test_an_spcr_uart_the_kernel_cannot_use_leaves_com1_and_says_why(tmp_path, table, reason):
    status, com1, com2 = boot(tmp_path, TESTS, table=table, com2=True)
    assert com2 == b"", com2[:200]
    line = console_line(judged(com1, status))
    assert line.startswith("console: port 0x3f8, 115200 baud: COM1, the default (no console=; "
                           + reason), line


@pytest.mark.boot
def test_without_an_spcr_the_default_is_com1_and_the_log_says_so(tmp_path):
    status, com1, _ = boot(tmp_path, TESTS, machine=switchyard_qemu.MACHINE)
    assert console_line(judged(com1, status)) == (
        "console: port 0x3f8, 115200 baud: COM1, the default (no console=; no ACPI SPCR: the "
        "RSDT or XSDT lists none)")


@pytest.mark.boot
@pytest.mark.parametrize("console, reason", [
    ("mmio,0xd0000000",
     "mmio 0xd0000000, 115200 baud: no 16550 UART answers: its scratch register does not keep "
     "a value"),
    # RAM (QEMU's BIOS image at the top of 4 GiB keeps what is written): it passes the line
    # status and scratch checks; only the divisor latch behind DLAB tells it from a UART.
    ("mmio,0xffff0000",
     "mmio 0xffff0000, 115200 baud: no 16550 UART answers: its divisor latch is not banked "
     "behind LCR.DLAB (0x5a written to DLM, IER read 0x5a): memory, not a UART?"),
    ("mmio32,0x100000000,9600",
     "mmio32 0x100000000, 9600 baud: MMIO address 0x100000000 is outside 0xc0000000-0xffffffff,"
     " the uncached window the kernel maps for devices"),
])
def test_console_mmio_where_no_uart_answers_is_a_usage_error_on_com1(tmp_path, console, reason):
    status, com1, _ = boot(tmp_path, f"{TESTS} console={console}",
                           machine=switchyard_qemu.MACHINE)
    result = judged(com1, status, expected_status=37)
    assert result.verdict == ktap.USAGE, result.verdict
    assert f"error: option 'console': {reason}" in result.diagnostics, result.diagnostics
    assert console_line(result).startswith(
        "console: port 0x3f8, 115200 baud: COM1, the default (console= refused; "), result


@pytest.mark.boot
def test_a_rejected_command_line_is_reported_on_the_spcr_console(tmp_path):
    status, com1, com2 = boot(tmp_path, f"{TESTS} console=ttyS9", table=spcr(0x2F8), com2=True)
    assert com1 == b"", com1[:200]
    result = judged(com2, status, expected_status=37)
    assert any(line.startswith("error: option 'console': port 'ttyS9'")
               for line in result.diagnostics), result.diagnostics
    assert console_line(result) == ("console: port 0x2f8, 115200 baud: from ACPI SPCR revision "
                                    "2, interface type 0x00 (16550); the command line does not "
                                    "stand")
