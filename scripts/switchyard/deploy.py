"""Render the boot configurations of deploy/ for scripts/mkiso and scripts/mkpxe. Stdlib only.

The kernel and GRUB share one serial port: `console` is the kernel's option value
(ttyS0, ttyS1 or 0xPORT, optionally ",BAUD"), and grub_serial() turns it into GRUB's `serial`
arguments. Command lines are checked here so that no boot loader rewrites them: GRUB gets each
word single-quoted (no globbing), iPXE gets them as they are (no `$` expansion).
"""

import re
import string
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
CONSOLE = re.compile(r"(ttyS[01]|0x[0-9a-fA-F]{1,4})(?:,([1-9][0-9]*))?")
DEFAULT_BAUD = 115200
PROTOCOLS = {"multiboot2": 0, "multiboot": 1}  # protocol -> GRUB menu entry (deploy/grub.cfg.in)


def parse_console(console):
    """(device, baud) from "ttyS1" or "0x2f8,57600"; ValueError when malformed."""
    match = CONSOLE.fullmatch(console)
    if not match:
        raise ValueError(f"console {console!r}: expected ttyS0, ttyS1 or 0xPORT, optionally ,BAUD")
    return match.group(1), int(match.group(2) or DEFAULT_BAUD)


def grub_serial(console):
    """GRUB's `serial` arguments for the kernel's console= value."""
    device, baud = parse_console(console)
    where = f"--unit={device[4:]}" if device.startswith("ttyS") else f"--port={device.lower()}"
    return f"{where} --speed={baud}"


def kernel_cmdline(cmdline, console):
    """The kernel's words: cmdline plus console= when it is not the default port. Raises
    ValueError for a word no loader passes through unchanged, or a console= in cmdline."""
    words = cmdline.split()
    for word in words:
        if word.startswith("console="):
            raise ValueError("give the serial port with --console, not console= in the cmdline")
        if any(c in word for c in "'\"$\\;{}"):
            raise ValueError(f"cmdline word {word!r}: quotes, $, \\, ; and braces are not "
                             "passed through GRUB and iPXE unchanged")
    device, baud = parse_console(console)
    if (device, baud) != ("ttyS0", DEFAULT_BAUD):
        words.append(f"console={console}")
    return words


def render(template, **values):
    """deploy/TEMPLATE with ${name} replaced; a missing value is an error."""
    return string.Template((DEPLOY / template).read_text()).substitute(values)


def grub_cfg(kernel_path, cmdline, console, protocol="multiboot2"):
    """grub.cfg text that boots kernel_path (a GRUB path) at once on the serial console."""
    words = kernel_cmdline(cmdline, console)
    return render("grub.cfg.in", serial_args=grub_serial(console),
                  default_entry=PROTOCOLS[protocol], kernel=kernel_path,
                  cmdline=" ".join(f"'{word}'" for word in words))


def grub_lava_cfg(console):
    """grub.cfg text for LAVA: GRUB on the serial port, at its prompt, booting nothing."""
    return render("grub-lava.cfg.in", serial_args=grub_serial(console))


def ipxe_script(kernel_name, cmdline, console):
    """boot.ipxe text: fetch kernel_name from the TFTP server that gave the address."""
    return render("boot.ipxe.in", kernel=kernel_name,
                  cmdline=" ".join(kernel_cmdline(cmdline, console)))
