"""Build a TFTP tree that network-boots switchyard, and a dnsmasq configuration that serves it.

  scripts/mkpxe [--console ttyS1] [--cmdline "tests=arch.*"] [--lava] --out DIR
                [--interface eth1] [--dhcp-range 10.0.0.100,10.0.0.200,1h | --proxy-dhcp 10.0.0.0]
                [--tftp-root /srv/tftp]

DIR/tftp holds GRUB's netboot images, made by grub-mknetdir, for BIOS
(boot/grub/i386-pc/core.0) and UEFI (boot/grub/x86_64-efi/core.efi), with one boot/grub/grub.cfg
for both; the kernel (switchyard.elf for GRUB, its ELF32 copy switchyard32.elf for iPXE); and
boot.ipxe, an iPXE script. With --lava, grub.cfg only puts GRUB on the serial port and leaves it
at its grub> prompt, where LAVA's grub boot method types the job's commands.

DIR/dnsmasq.conf serves DHCP and TFTP on the lab interface and hands each client the right file:
core.efi to UEFI, boot.ipxe to iPXE, core.0 to other BIOS PXE ROMs. It leases addresses itself
and is no router and no DNS server. With --proxy-dhcp SUBNET it leases nothing: it answers only
PXE clients, beside the lab's own DHCP server, which leases the addresses (proxy-DHCP).

DIR/tftp holds no absolute path (the kernels are copied without their debug information, which
names the build directory): copy it anywhere, such as a lab's /srv/tftp, and give that place as
--tftp-root, which only dnsmasq.conf names (default: DIR/tftp itself).
"""

import argparse
import ipaddress
import re
import shutil
import subprocess
import sys
from pathlib import Path

from switchyard import deploy

BUILD = deploy.ROOT / "build"
GRUB_PLATFORMS = ("i386-pc", "x86_64-efi")
# A dnsmasq.conf value that needs no quoting: an interface name, a dhcp-range.
CONF_VALUE = re.compile(r"[A-Za-z0-9_.,:@-]+")


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="scripts/mkpxe", description=__doc__.split("\n")[0])
    parser.add_argument("--kernel", type=Path, default=BUILD / "switchyard.elf",
                        help="the multiboot ELF64 image, for GRUB (default: %(default)s)")
    parser.add_argument("--kernel32", type=Path, default=BUILD / "switchyard32.elf",
                        help="its ELF32 copy, for iPXE (default: %(default)s)")
    parser.add_argument("--cmdline", default="", help="kernel options, without console=")
    parser.add_argument("--console", default="ttyS0",
                        help="serial port of GRUB and the kernel: ttyS0, ttyS1, 0x2f8[,BAUD]")
    parser.add_argument("--protocol", choices=sorted(deploy.PROTOCOLS), default="multiboot2",
                        help="how GRUB loads the kernel (default: %(default)s)")
    parser.add_argument("--lava", action="store_true",
                        help="grub.cfg leaves GRUB at its prompt for LAVA's grub boot method")
    parser.add_argument("--interface", default="eth1",
                        help="dnsmasq.conf: the lab's boot network interface (default: %(default)s)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--dhcp-range", default="10.0.0.100,10.0.0.200,1h",
                      help="dnsmasq.conf: the addresses to lease (default: %(default)s)")
    mode.add_argument("--proxy-dhcp", metavar="SUBNET",
                      help="dnsmasq.conf: proxy-DHCP on SUBNET (its network address, e.g. "
                           "10.0.0.0), beside the lab's DHCP server, which leases the addresses")
    parser.add_argument("--tftp-root", type=Path,
                        help="dnsmasq.conf: where the TFTP tree will be (default: DIR/tftp)")
    parser.add_argument("--out", type=Path, required=True, help="the directory to (re)create")
    args = parser.parse_args(argv)
    for image in (args.kernel, args.kernel32):
        if not image.is_file():
            parser.error(f"kernel image not found: {image} (run make)")
    if args.tftp_root is not None and not args.tftp_root.is_absolute():
        parser.error(f"--tftp-root {args.tftp_root}: give an absolute path")
    for name, value in (("interface", args.interface), ("dhcp-range", args.dhcp_range)):
        if not CONF_VALUE.fullmatch(value):
            parser.error(f"--{name} {value!r}: not a dnsmasq.conf value")
    if args.proxy_dhcp is not None:
        try:
            ipaddress.IPv4Address(args.proxy_dhcp)
        except ValueError:
            parser.error(f"--proxy-dhcp {args.proxy_dhcp!r}: give the subnet's IPv4 address")
    try:
        if args.lava:
            args.grub_cfg = deploy.grub_lava_cfg(args.console)
        else:
            args.grub_cfg = deploy.grub_cfg("/switchyard.elf", args.cmdline, args.console,
                                            args.protocol)
        args.ipxe = deploy.ipxe_script("switchyard32.elf", args.cmdline, args.console)
    except ValueError as error:
        parser.error(str(error))
    return args


def run(argv, what):
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        raise SystemExit(f"mkpxe: {what} failed: {proc.returncode}")


def make_netdir(tftp):
    """GRUB's netboot images and modules under tftp/boot/grub; its prefix is (tftp)/boot/grub."""
    for platform in GRUB_PLATFORMS:
        run(["grub-mknetdir", f"--net-directory={tftp}", "--subdir=boot/grub",
             "-d", f"/usr/lib/grub/{platform}"], f"grub-mknetdir ({platform})")


def copy_kernel(image, to):
    """The image without its debug sections, which name the build directory; the loaded
    segments are unchanged."""
    run(["objcopy", "--strip-debug", str(image), str(to)], f"objcopy --strip-debug {image}")


def dnsmasq_conf(args, tftp_root):
    if args.proxy_dhcp:
        return deploy.render("dnsmasq-proxy.conf.in", interface=args.interface,
                             subnet=args.proxy_dhcp, tftp_root=tftp_root)
    return deploy.render("dnsmasq.conf.in", interface=args.interface,
                         dhcp_range=args.dhcp_range, tftp_root=tftp_root)


def main(argv):
    args = parse_args(argv)
    tftp = args.out.resolve() / "tftp"
    if args.out.exists() and any(args.out.iterdir()):
        if not (args.out / "dnsmasq.conf").is_file():
            raise SystemExit(f"mkpxe: {args.out} is not empty and not an earlier mkpxe tree")
        shutil.rmtree(args.out)
    tftp.mkdir(parents=True)
    make_netdir(tftp)
    (tftp / "boot" / "grub" / "grub.cfg").write_text(args.grub_cfg)
    copy_kernel(args.kernel, tftp / "switchyard.elf")
    copy_kernel(args.kernel32, tftp / "switchyard32.elf")
    (tftp / "boot.ipxe").write_text(args.ipxe)
    tftp_root = args.tftp_root or tftp
    (args.out / "dnsmasq.conf").write_text(dnsmasq_conf(args, tftp_root))
    dhcp = f"proxy-DHCP on {args.proxy_dhcp}" if args.proxy_dhcp else f"DHCP {args.dhcp_range}"
    grub = "GRUB stops at its prompt for LAVA" if args.lava else args.protocol
    print(f"mkpxe: {args.out}/tftp and {args.out}/dnsmasq.conf ({args.interface}, {dhcp}, "
          f"TFTP root {tftp_root}; {grub}, console {args.console}, cmdline "
          f"{' '.join(deploy.kernel_cmdline(args.cmdline, args.console))!r})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
