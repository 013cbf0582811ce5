"""Build a hybrid BIOS+UEFI GRUB ISO (grub-mkrescue) that boots switchyard on a serial port.

  scripts/mkiso [--console ttyS1] [--cmdline "tests=arch.*"] [--protocol multiboot] --out ISO

GRUB's console is the kernel's serial port, the menu timeout is 0, and the image boots on BIOS
(El Torito, i386-pc) and on UEFI (x86_64-efi) alike. Needs grub-pc-bin, grub-efi-amd64-bin,
grub-common, xorriso and mtools.
"""

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from switchyard import deploy

DEFAULT_KERNEL = deploy.ROOT / "build" / "switchyard.elf"


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="scripts/mkiso", description=__doc__.split("\n")[0])
    parser.add_argument("--kernel", type=Path, default=DEFAULT_KERNEL,
                        help="the multiboot ELF64 image (default: build/switchyard.elf)")
    parser.add_argument("--cmdline", default="", help="kernel options, without console=")
    parser.add_argument("--console", default="ttyS0",
                        help="serial port of GRUB and the kernel: ttyS0, ttyS1, 0x2f8[,BAUD]")
    parser.add_argument("--protocol", choices=sorted(deploy.PROTOCOLS), default="multiboot2",
                        help="how GRUB loads the kernel (default: %(default)s)")
    parser.add_argument("--out", type=Path, required=True, help="the ISO file to write")
    args = parser.parse_args(argv)
    if not args.kernel.is_file():
        parser.error(f"kernel image not found: {args.kernel} (run make)")
    try:
        args.grub_cfg = deploy.grub_cfg("/boot/switchyard.elf", args.cmdline, args.console,
                                        args.protocol)
    except ValueError as error:
        parser.error(str(error))
    return args


def main(argv):
    args = parse_args(argv)
    with tempfile.TemporaryDirectory() as tree:
        grub_dir = Path(tree, "boot", "grub")
        grub_dir.mkdir(parents=True)
        shutil.copyfile(args.kernel, Path(tree, "boot", "switchyard.elf"))
        (grub_dir / "grub.cfg").write_text(args.grub_cfg)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run(["grub-mkrescue", "-o", str(args.out), tree],
                              capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        print(f"mkiso: grub-mkrescue failed with status {proc.returncode}", file=sys.stderr)
        return 1
    print(f"mkiso: {args.out} ({args.protocol}, console {args.console}, "
          f"cmdline {' '.join(deploy.kernel_cmdline(args.cmdline, args.console))!r})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
