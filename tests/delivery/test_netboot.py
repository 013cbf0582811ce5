"""Delivery over the network, end to end in QEMU TCG: PXE through iPXE, GRUB netboot and OVMF.

Each path (marked "delivery") must yield a complete, verified KTAP log (verdict PASS, QEMU status
33): the iPXE ROM and GRUB netboot over QEMU's user-net TFTP, OVMF's PXE, and a real dnsmasq on a
tap device in a network namespace made here, all serving one TFTP tree (scripts/mkpxe). Raw logs
are kept in build/logs/delivery-pxe-*.log.
"""

import os
import re
import subprocess
import time

import pytest

import delivery
from delivery import LOG_DIR, kernels  # noqa: F401: kernels is a fixture

NETNS_ADDRESS, NETNS_RANGE = "10.77.0.1/24", "10.77.0.100,10.77.0.150,1h"
# The namespace also advertises an IPv6 prefix (router advertisements only, from a dnsmasq of
# the test's own): iPXE configures IPv4 and IPv6 at once and boots only when both are done, and
# with no router advertisement it waited out its IPv6 solicitations, 13 s, before fetching
# boot.ipxe (docs/lab.md). The lab's dnsmasq gets --no-ping: the 3 s it pings an address before
# offering it finds no one in a namespace of one client.
NETNS_IPV6_ADDRESS, NETNS_IPV6_PREFIX = "fd77::1/64", "fd77::"


@pytest.fixture(scope="session")
def pxe_tree(kernels, tmp_path_factory):
    """One TFTP tree (scripts/mkpxe) for every network path; its dnsmasq.conf is for tap0."""
    out = tmp_path_factory.mktemp("pxe") / "pxe"
    delivery.script("mkpxe", "--cmdline", delivery.CMDLINE, "--interface", "tap0",
           "--dhcp-range", NETNS_RANGE, "--out", out)
    return out


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
    delivery.assert_complete(f"PXE {path}", run, result, loader)


@pytest.mark.skipif(delivery.netns_unusable_reason() is not None,
                    reason=str(delivery.netns_unusable_reason()))
@pytest.mark.delivery
@pytest.mark.timeout(240)
def test_pxe_from_dnsmasq_on_a_tap_in_a_network_namespace(tmp_path, pxe_tree):
    """The lab set-up for real: deploy's dnsmasq.conf, as mkpxe renders it, serves DHCP and
    TFTP on tap0; QEMU's NIC (iPXE) asks for it and gets boot.ipxe, and no router."""
    name = f"switchyard-{os.getpid()}"
    dnsmasq_log = tmp_path / "dnsmasq.log"
    with delivery.network_namespace(name, NETNS_ADDRESS):
        subprocess.run(["ip", "-n", name, "addr", "add", NETNS_IPV6_ADDRESS, "dev", "tap0"],
                       check=True, capture_output=True)
        dnsmasq = subprocess.Popen(
            ["ip", "netns", "exec", name, "dnsmasq", f"--conf-file={pxe_tree / 'dnsmasq.conf'}",
             "--no-ping", "--keep-in-foreground", "--user=root", "--group=root",
             f"--pid-file={tmp_path / 'dnsmasq.pid'}",
             f"--dhcp-leasefile={tmp_path / 'dnsmasq.leases'}",
             f"--log-facility={dnsmasq_log}"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            start_new_session=True)
        advertiser = subprocess.Popen(
            ["ip", "netns", "exec", name, "dnsmasq", "--conf-file=/dev/null", "--port=0",
             "--interface=tap0", "--bind-interfaces", "--enable-ra",
             f"--dhcp-range={NETNS_IPV6_PREFIX},ra-only", "--keep-in-foreground",
             "--user=root", "--group=root", f"--pid-file={tmp_path / 'advertiser.pid'}",
             f"--dhcp-leasefile={tmp_path / 'advertiser.leases'}",
             f"--log-facility={tmp_path / 'advertiser.log'}"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            start_new_session=True)
        try:
            time.sleep(0.3)
            assert dnsmasq.poll() is None, f"dnsmasq exited: {dnsmasq.stderr.read().decode()}"
            assert advertiser.poll() is None, \
                f"the advertiser exited: {advertiser.stderr.read().decode()}"
            argv = ["ip", "netns", "exec", name] + delivery.machine() + [
                "-boot", "n", "-device", "e1000,netdev=n0",
                "-netdev", "tap,id=n0,ifname=tap0,script=no,downscript=no"]
            run, result = delivery.boot(argv, LOG_DIR / "delivery-pxe-dnsmasq.log")
        finally:
            delivery.kill_group(dnsmasq)
            delivery.kill_group(advertiser)
    served = dnsmasq_log.read_text() if dnsmasq_log.exists() else ""
    assert "sent" in served and "switchyard32.elf" in served, served
    # It leases an address and names no router or DNS server (log-dhcp lists what it sent).
    assert re.search(r"option:\s+1 netmask", served), served
    assert not re.search(r"option:\s+(3 router|6 dns-server)", served), served
    delivery.assert_complete("PXE dnsmasq netns", run, result, "multiboot1 loader=\"iPXE")
