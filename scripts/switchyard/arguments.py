"""The options that run, bench, soak and compare share, and the checks each must pass.

Each add_*() adds one option with the tools' common meaning; check() then holds every option
the parser has to its rule and reports the first that breaks it with parser.error() (usage,
"error: ...", exit status 2), as argparse does for a malformed value. A tool adds its own
options and checks around these.
"""

import shutil
from pathlib import Path

from switchyard import qemu

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_KERNEL = ROOT / "build" / "switchyard32.elf"
ACCELS = ("tcg", "kvm")  # a tool's default order: TCG always, KVM when usable


def add_kernel(parser, what="multiboot ELF32 image"):
    parser.add_argument("--kernel", type=Path, default=DEFAULT_KERNEL,
                        help=f"{what} (default: build/switchyard32.elf)")


def add_qemu(parser):
    """--machine and --qemu: QEMU's -M and its binary."""
    parser.add_argument("--machine", default=qemu.MACHINE, help="QEMU -M (default: %(default)s)")
    parser.add_argument("--qemu", default=qemu.QEMU, help="QEMU binary (default: %(default)s)")


def add_accels(parser, help="accelerator to run, repeatable (default: tcg, and kvm when "
               "/dev/kvm is usable)"):
    """--accel, repeatable: the accelerators a tool runs in turn (accels() gives the list)."""
    parser.add_argument("--accel", action="append", choices=ACCELS, help=help)


def add_smp(parser, default, help):
    parser.add_argument("--smp", type=int, default=default, help=help)


def add_cmdline(parser, help):
    parser.add_argument("--cmdline", default="", help=help)


def add_timeout(parser, default, help):
    """--timeout: seconds per boot before QEMU is killed; None lets the tool choose."""
    parser.add_argument("--timeout", type=float, default=default, help=help)


def positive_seconds(parser, option, value):
    """A number of seconds that must be positive (which also refuses nan)."""
    if not value > 0:
        parser.error(f"{option} must be a positive number of seconds, not {value:g}")


def check(parser, args):
    """The shared options' rules, for those args has: a positive --timeout (when given), at
    least one CPU, an existing kernel image, a QEMU binary on PATH, and a usable /dev/kvm when
    --accel kvm is asked for."""
    if getattr(args, "timeout", None) is not None:
        positive_seconds(parser, "--timeout", args.timeout)
    if getattr(args, "smp", 1) < 1:
        parser.error(f"--smp must be at least 1, not {args.smp}")
    if hasattr(args, "kernel") and not args.kernel.is_file():
        parser.error(f"kernel image not found: {args.kernel} (run make)")
    if hasattr(args, "qemu") and shutil.which(args.qemu) is None:
        parser.error(f"QEMU not found: {args.qemu!r} is not an executable or on PATH "
                     "(install qemu-system-x86, or pass --qemu PATH)")
    asked = args.accel if isinstance(getattr(args, "accel", None), list) else [
        getattr(args, "accel", None)]
    if "kvm" in asked and qemu.kvm_unusable_reason():
        parser.error(f"--accel kvm: {qemu.kvm_unusable_reason()}")


def accels(args):
    """The accelerators --accel named, in order and once each, else ACCELS."""
    return list(dict.fromkeys(args.accel or ACCELS))
